//===- RaiseRotary.cpp - front-end RoPE (rotate_half) → rpe.rotary --------===//
//
// transformers' LLaMA-family models apply RoPE as
//
//   inv_freq = 1 / theta^(2t/R)                    (a constant, f32)
//   freqs    = positions[..., None] * inv_freq     (f32)
//   emb      = cat(freqs, freqs, dim=-1)
//   y        = x * cos(emb) + rotate_half(x) * sin(emb)
//   rotate_half(x) = cat(-x[..., R/2:], x[..., :R/2], dim=-1)
//
// which torch-mlir exports as linalg generics, tensor.concat and
// tensor.extract_slice on tensors. This pattern recognises that code and
// replaces it by `rpe.rotary %x, %positions {theta}` (half layout, R = D),
// when the constant inv_freq is theta^(-2t/R) for one theta at every t, or
// those frequencies under transformers' "linear" or "llama3" scaling (then
// with `scaling = #rpe.rope_linear<...>` / `#rpe.rope_llama3<...>`). A
// rotation of the first R dims concatenated with the rest of x becomes one
// rpe.rotary with `rotary_dim = R`.
// rpe computes the angles in f64; transformers' f32 angles differ by a few
// ulps of p·ω (see docs/Decisions.md).
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/LinalgMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// The input of `generic` that block argument `v` stands for, with its map.
std::pair<Value, AffineMap> inputOf(linalg::GenericOp generic, Value v) {
  unsigned n = cast<BlockArgument>(v).getArgNumber();
  return {generic.getDpsInputs()[n], generic.getIndexingMapsArray()[n]};
}

/// `a * b` element-wise: the operand read through the identity map (x, or
/// rotate_half(x)) and the other one (a cos/sin table) with its map.
struct Product {
  Value full, table;
  AffineMap tableMap;
};

std::optional<Product> matchProduct(Value v) {
  linalg::GenericOp generic;
  auto mul = elementwiseBody<arith::MulFOp>(v, generic);
  if (!mul || generic.getNumDpsInputs() != 2)
    return std::nullopt;
  auto [a, mapA] = inputOf(generic, mul.getLhs());
  auto [b, mapB] = inputOf(generic, mul.getRhs());
  if (a == b)
    return std::nullopt;
  if (mapA.isIdentity() && a.getType() == v.getType())
    return Product{a, b, mapB};
  if (mapB.isIdentity() && b.getType() == v.getType())
    return Product{b, a, mapA};
  return std::nullopt;
}

/// `s` is x[..., offset : offset + size] along the last dimension, all of
/// every other dimension, unit strides.
bool isLastDimSlice(Value s, Value x, int64_t offset, int64_t size) {
  auto slice = s.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSource() != x || !slice.hasUnitStride())
    return false;
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> off =
        getConstantIntValue(slice.getMixedOffsets()[d]);
    std::optional<int64_t> sz = getConstantIntValue(slice.getMixedSizes()[d]);
    if (d == rank - 1) {
      if (off != offset || sz != size)
        return false;
    } else if (off != 0 || !sz || *sz != type.getDimSize(d)) {
      return false;
    }
  }
  return slice.getResultType().getRank() == rank;
}

/// `r` is rotate_half(x) = concat(-x[..., h:], x[..., :h]) along the last
/// dimension, h = D/2.
bool isRotateHalf(Value r, Value x) {
  auto concat = r.getDefiningOp<tensor::ConcatOp>();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), d = type.getDimSize(rank - 1);
  if (!concat || concat.getInputs().size() != 2 ||
      static_cast<int64_t>(concat.getDim()) != rank - 1 ||
      ShapedType::isDynamic(d) || d % 2 != 0)
    return false;
  linalg::GenericOp neg;
  auto negf = elementwiseBody<arith::NegFOp>(concat.getInputs()[0], neg);
  if (!negf || neg.getNumDpsInputs() != 1 ||
      !neg.getIndexingMapsArray()[0].isIdentity())
    return false;
  return isLastDimSlice(neg.getDpsInputs()[0], x, d / 2, d / 2) &&
         isLastDimSlice(concat.getInputs()[1], x, 0, d / 2);
}

/// `shape` without its unit dimensions.
SmallVector<int64_t> nonUnitDims(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims;
  llvm::copy_if(shape, std::back_inserter(dims),
                [](int64_t d) { return d != 1; });
  return dims;
}

/// The trigonometric table under a product: through an expand_shape that
/// only inserts unit dimensions to OpTy(emb) element-wise; returns emb.
template <typename OpTy> Value trigArgument(Value table) {
  if (auto expand = table.getDefiningOp<tensor::ExpandShapeOp>()) {
    if (nonUnitDims(expand.getSrcType().getShape()) !=
        nonUnitDims(expand.getResultType().getShape()))
      return Value();
    table = expand.getSrc();
  }
  linalg::GenericOp generic;
  auto trig = elementwiseBody<OpTy>(table, generic);
  if (!trig || generic.getNumDpsInputs() != 1 ||
      !generic.getIndexingMapsArray()[0].isIdentity())
    return Value();
  return generic.getDpsInputs()[0];
}

/// emb = concat(freqs, freqs) along its last dimension, freqs =
/// sitofp(positions) * inv_freq with positions [..., L, 1] and inv_freq a
/// constant vector. Returns the positions and inv_freq.
std::optional<std::pair<Value, SmallVector<float>>> matchAngles(Value emb) {
  auto concat = emb.getDefiningOp<tensor::ConcatOp>();
  if (!concat || concat.getInputs().size() != 2 ||
      concat.getInputs()[0] != concat.getInputs()[1] ||
      static_cast<int64_t>(concat.getDim()) !=
          concat.getResultType().getRank() - 1)
    return std::nullopt;
  linalg::GenericOp freqs;
  auto mul = elementwiseBody<arith::MulFOp>(concat.getInputs()[0], freqs);
  if (!mul || freqs.getNumDpsInputs() != 2)
    return std::nullopt;
  int64_t rank = freqs.getNumLoops();
  MLIRContext *ctx = freqs.getContext();
  for (auto [p, f] : {std::pair{mul.getLhs(), mul.getRhs()},
                      std::pair{mul.getRhs(), mul.getLhs()}}) {
    auto [pos, posMap] = inputOf(freqs, p);
    auto [inv, invMap] = inputOf(freqs, f);
    std::optional<SmallVector<float>> invFreq = constantF32Vector(inv);
    if (!invFreq ||
        invMap != AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, ctx)))
      continue;
    // sitofp(positions), positions [..., L, 1] read with the last dim 0.
    linalg::GenericOp cast;
    auto sitofp = elementwiseBody<arith::SIToFPOp>(pos, cast);
    if (!sitofp || cast.getNumDpsInputs() != 1 ||
        !cast.getIndexingMapsArray()[0].isIdentity())
      continue;
    Value ints = cast.getDpsInputs()[0];
    auto type = cast.getDpsInputs()[0].getType();
    auto shaped = dyn_cast<RankedTensorType>(type);
    if (!shaped || shaped.getRank() != rank || shaped.getDimSize(rank - 1) != 1)
      continue;
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      exprs.push_back(getAffineDimExpr(d, ctx));
    exprs.push_back(getAffineConstantExpr(0, ctx));
    if (posMap != AffineMap::get(rank, 0, exprs, ctx))
      continue;
    return std::pair{ints, *invFreq};
  }
  return std::nullopt;
}

/// ω_t = θ^(-2t/R) under `scaling` (null, rope_linear or rope_llama3), in
/// f64 as the lowering of rpe.rotary computes it.
double scaledFrequency(int64_t t, int64_t r, double theta, Attribute scaling) {
  double omega = std::exp(-(2.0 * t / r) * std::log(theta));
  if (auto linear = dyn_cast_if_present<RopeLinearAttr>(scaling))
    return omega / linear.getFactor().convertToDouble();
  auto llama = dyn_cast_if_present<RopeLlama3Attr>(scaling);
  if (!llama)
    return omega;
  double factor = llama.getFactor().convertToDouble();
  double low = llama.getLowFreqFactor().convertToDouble();
  double high = llama.getHighFreqFactor().convertToDouble();
  double original = static_cast<double>(llama.getOriginalMaxPosition());
  double wavelength = 2.0 * M_PI / omega;
  if (wavelength > original / low)
    return omega / factor;
  if (wavelength < original / high)
    return omega;
  double smooth = (original / wavelength - low) / (high - low);
  return (1.0 - smooth) * omega / factor + smooth * omega;
}

/// Whether `values[t]` (f32) is `want` within `ulps` units of 2^-23·|want|.
bool near(float value, double want, double ulps) {
  return std::abs(want - value) <= ulps * std::ldexp(std::abs(want), -23);
}

/// Whether `values` are the first frequencies of rpe.rotary's for θ, R and
/// `scaling` within `ulps`.
bool matchesFrequencies(ArrayRef<float> values, int64_t r, double theta,
                        Attribute scaling, double ulps) {
  for (auto [t, value] : llvm::enumerate(values))
    if (!near(value, scaledFrequency(t, r, theta, scaling), ulps))
      return false;
  return true;
}

/// θ from ω_k = θ^(-2k/R) (0 < ω_k < 1, k > 0), rounded to an integer when
/// that is within 1e-4 relative (the configs' rope_theta); 0 if none.
double thetaFrom(double omega, int64_t k, int64_t r) {
  if (!(omega > 0.0 && omega < 1.0) || k <= 0)
    return 0.0;
  double theta = std::exp(-std::log(omega) * r / (2.0 * k));
  if (std::abs(theta - std::round(theta)) <= 1e-4 * theta)
    theta = std::round(theta);
  return theta;
}

/// `x` rounded to 1, 2, ..., 7 significant digits, then `x` itself: the
/// candidates for a parameter recovered from f32 values, simplest first.
SmallVector<double> roundings(double x) {
  SmallVector<double> out;
  if (!(x > 0.0) || !std::isfinite(x))
    return out;
  int exponent = static_cast<int>(std::floor(std::log10(x)));
  for (int digits = 1; digits <= 7; ++digits) {
    double unit = std::pow(10.0, exponent - digits + 1);
    double rounded = std::round(x / unit) * unit;
    if (rounded > 0.0 && !llvm::is_contained(out, rounded))
      out.push_back(rounded);
  }
  if (!llvm::is_contained(out, x))
    out.push_back(x);
  return out;
}

/// θ and the scaling (null: none) whose rpe.rotary frequencies are the
/// constant inv_freq `values`. transformers computes inv_freq in f32:
/// θ^(-2t/R) within two ulps; with a scaling (`inv_freq / factor`, and
/// llama3's f32 smoothing) within four.
struct Frequencies {
  double theta;
  Attribute scaling;
};

/// Unscaled: values[0] = 1, θ from the last entry (most digits of θ).
std::optional<Frequencies> matchUnscaled(ArrayRef<float> values) {
  int64_t half = values.size();
  if (half < 2 || values[0] != 1.0f)
    return std::nullopt;
  double theta = thetaFrom(values[half - 1], half - 1, 2 * half);
  if (theta <= 1.0 || !matchesFrequencies(values, 2 * half, theta, {}, 2.0))
    return std::nullopt;
  return Frequencies{theta, {}};
}

/// rope_linear: every ω_t / factor, so values[0] = 1 / factor.
std::optional<Frequencies> matchLinear(MLIRContext *ctx,
                                       ArrayRef<float> values) {
  int64_t half = values.size();
  if (half < 2 || !(values[0] > 0.0f) || values[0] == 1.0f)
    return std::nullopt;
  for (double factor : roundings(1.0 / values[0])) {
    double theta = thetaFrom(values[half - 1] * factor, half - 1, 2 * half);
    auto scaling = RopeLinearAttr::get(ctx, APFloat(factor));
    if (theta > 1.0 &&
        matchesFrequencies(values, 2 * half, theta, scaling, 4.0))
      return Frequencies{theta, scaling};
  }
  return std::nullopt;
}

/// rope_llama3: ω_t for the short waves (a prefix, t = 0 at least), ω_t /
/// factor for the long ones (a suffix), smoothed in between. Only the
/// ratios O / low_freq_factor and O / high_freq_factor show in the
/// frequencies, so low_freq_factor is taken as 1 (as in every Llama 3
/// config) and O and high_freq_factor fitted to the smoothed entries (with
/// fewer than two of them: high_freq_factor 4, 2, 8 or 16 and the O that
/// fits).
std::optional<Frequencies> matchLlama3(MLIRContext *ctx,
                                       ArrayRef<float> values) {
  int64_t half = values.size(), r = 2 * half;
  if (half < 3 || values[0] != 1.0f)
    return std::nullopt;
  // θ from the longest prefix of unscaled frequencies that is not all.
  double theta = 0.0;
  int64_t high = 0; // The number of unscaled entries.
  for (int64_t k = half - 2; k >= 1 && !high; --k) {
    theta = thetaFrom(values[k], k, r);
    if (theta > 1.0 &&
        matchesFrequencies(values.take_front(k + 1), r, theta, {}, 2.0))
      high = k + 1;
  }
  if (!high)
    return std::nullopt;
  auto omega = [&](int64_t t) { return scaledFrequency(t, r, theta, {}); };
  auto wavelength = [&](int64_t t) { return 2.0 * M_PI / omega(t); };
  double factor = omega(half - 1) / values[half - 1];
  if (!(factor > 1.0) || !std::isfinite(factor))
    return std::nullopt;
  int64_t low = half - 1; // The first entry of the ω / factor suffix.
  while (low > high && near(values[low - 1], omega(low - 1) / factor, 4.0))
    --low;
  for (double f : roundings(factor)) {
    // s_t = (O/λ_t - 1) / (high_freq_factor - 1) in the smoothed entries.
    auto smooth = [&](int64_t t) {
      return (values[t] / omega(t) - 1.0 / f) / (1.0 - 1.0 / f);
    };
    SmallVector<std::pair<double, double>> candidates; // (high factor, O)
    auto addOriginal = [&](double hff, double original) {
      for (double o : roundings(original))
        if (o == std::round(o))
          candidates.push_back({hff, o});
      candidates.push_back({hff, std::round(original)});
    };
    if (low - high >= 2) {
      // s = a/λ + c: c = -1 / (hff - 1), a = O / (hff - 1).
      double x1 = 1.0 / wavelength(high), x2 = 1.0 / wavelength(low - 1);
      double a = (smooth(low - 1) - smooth(high)) / (x2 - x1);
      double c = smooth(high) - a * x1;
      if (!(c < 0.0))
        continue;
      for (double hff : roundings(1.0 - 1.0 / c))
        addOriginal(hff, -a / c);
    } else {
      for (double hff : {4.0, 2.0, 8.0, 16.0}) {
        if (low - high == 1)
          addOriginal(hff,
                      (smooth(high) * (hff - 1.0) + 1.0) * wavelength(high));
        else
          for (int n = 1; n <= 40; ++n)
            candidates.push_back({hff, std::ldexp(1.0, n)});
      }
    }
    for (auto [hff, original] : candidates) {
      if (!(hff > 1.0) || !(original >= 1.0 && original <= 0x1p40))
        continue;
      auto scaling =
          RopeLlama3Attr::get(ctx, APFloat(f), APFloat(1.0), APFloat(hff),
                              static_cast<int64_t>(original));
      if (matchesFrequencies(values, 2 * half, theta, scaling, 4.0))
        return Frequencies{theta, scaling};
    }
  }
  return std::nullopt;
}

/// x·cos(emb) + rotate_half(x)·sin(emb) → rpe.rotary.
struct RaiseRotary : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp add,
                                PatternRewriter &rewriter) const override {
    if (add.getNumResults() != 1)
      return rewriter.notifyMatchFailure(add, "not on tensors");
    linalg::GenericOp generic;
    auto addf = elementwiseBody<arith::AddFOp>(add.getResult(0), generic);
    if (!addf || add.getNumDpsInputs() != 2 ||
        !llvm::all_of(add.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return rewriter.notifyMatchFailure(add, "not an element-wise sum");
    auto type = dyn_cast<RankedTensorType>(add.getResult(0).getType());
    if (!type || type.getRank() < 2 || !type.getElementType().isF32())
      return failure();
    int64_t rank = type.getRank();
    MLIRContext *ctx = getContext();
    for (auto [first, second] : {std::pair{0u, 1u}, std::pair{1u, 0u}}) {
      std::optional<Product> cosTerm = matchProduct(add.getDpsInputs()[first]);
      std::optional<Product> sinTerm = matchProduct(add.getDpsInputs()[second]);
      if (!cosTerm || !sinTerm || !isRotateHalf(sinTerm->full, cosTerm->full))
        continue;
      Value x = cosTerm->full;
      Value emb = trigArgument<math::CosOp>(cosTerm->table);
      if (!emb || emb != trigArgument<math::SinOp>(sinTerm->table) ||
          cosTerm->tableMap != sinTerm->tableMap ||
          cosTerm->table.getType() != sinTerm->table.getType())
        continue;
      // The tables are read at (L, D) from x's last two dims, and at 0 or
      // the batch dim (positions per batch) before them.
      AffineMap map = cosTerm->tableMap;
      auto tableType = cast<RankedTensorType>(cosTerm->table.getType());
      if (map.getNumResults() != static_cast<unsigned>(rank) ||
          map.getResult(rank - 1) != getAffineDimExpr(rank - 1, ctx) ||
          map.getResult(rank - 2) != getAffineDimExpr(rank - 2, ctx))
        continue;
      bool perBatch = false, ok = true;
      for (int64_t d = 0; d + 2 < rank; ++d) {
        AffineExpr e = map.getResult(d);
        if (e == getAffineConstantExpr(0, ctx) && tableType.getDimSize(d) == 1)
          continue;
        if (d == 0 && e == getAffineDimExpr(0, ctx)) {
          perBatch = true;
          continue;
        }
        ok = false;
      }
      if (!ok)
        continue;
      std::optional<std::pair<Value, SmallVector<float>>> angles =
          matchAngles(emb);
      if (!angles || static_cast<int64_t>(angles->second.size()) !=
                         type.getDimSize(rank - 1) / 2)
        continue;
      ArrayRef<float> values = angles->second;
      std::optional<Frequencies> frequencies = matchUnscaled(values);
      if (!frequencies)
        frequencies = matchLinear(ctx, values);
      if (!frequencies)
        frequencies = matchLlama3(ctx, values);
      if (!frequencies)
        continue;
      // Positions [B', L, 1] (B' = 1 or B) → L, or B×L per batch.
      Value ints = angles->first;
      auto intsType = cast<RankedTensorType>(ints.getType());
      int64_t intsRank = intsType.getRank();
      if (intsRank < 2 || (perBatch && intsRank != 3))
        continue;
      if (!perBatch && llvm::any_of(intsType.getShape().drop_back(2),
                                    [](int64_t s) { return s != 1; }))
        continue;
      Location loc = add.getLoc();
      SmallVector<ReassociationIndices> groups;
      if (perBatch) {
        groups = {{0}, {1, 2}};
      } else {
        groups.emplace_back();
        for (int64_t d = 0; d < intsRank; ++d)
          groups.back().push_back(d);
      }
      Value positions =
          tensor::CollapseShapeOp::create(rewriter, loc, ints, groups);
      auto rotary =
          RotaryOp::create(rewriter, loc, type, x, positions,
                           rewriter.getF64FloatAttr(frequencies->theta),
                           /*rotary_dim=*/IntegerAttr(),
                           /*interleaved=*/UnitAttr(), frequencies->scaling);
      rewriter.replaceOp(add, rotary.getResult());
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not x·cos + rotate_half(x)·sin");
  }
};

/// concat(rotary(x[..., :R]), x[..., R:]) along the last dimension
/// (transformers' partial rotary: GPT-NeoX, Phi, StableLM rotate the first
/// R = partial_rotary_factor·D dims of q and k) → rpe.rotary %x {rotary_dim =
/// R}, the same frequencies θ^(-2t/R).
struct RaisePartialRotary : OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = concat.getResultType();
    int64_t rank = type.getRank();
    if (concat.getInputs().size() != 2 ||
        static_cast<int64_t>(concat.getDim()) != rank - 1)
      return failure();
    auto inner = concat.getInputs()[0].getDefiningOp<RotaryOp>();
    if (!inner)
      return failure();
    auto slice = inner.getX().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getSource().getType() != type)
      return failure();
    Value x = slice.getSource();
    int64_t d = type.getDimSize(rank - 1);
    int64_t r = slice.getResultType().getDimSize(rank - 1);
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(r) || r >= d ||
        (inner.getRotaryDim() &&
         static_cast<int64_t>(*inner.getRotaryDim()) != r) ||
        !isLastDimSlice(inner.getX(), x, 0, r) ||
        !isLastDimSlice(concat.getInputs()[1], x, r, d - r))
      return rewriter.notifyMatchFailure(concat, "not cat(rotary(x[..., :R]), "
                                                 "x[..., R:])");
    auto rotary = RotaryOp::create(
        rewriter, concat.getLoc(), type, x, inner.getPositions(),
        inner.getThetaAttr(), rewriter.getI64IntegerAttr(r),
        inner.getInterleavedAttr(), inner.getScalingAttr());
    rewriter.replaceOp(concat, rotary.getResult());
    return success();
  }
};

} // namespace

void mlir::rpe::populateRPERaiseRotaryPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseRotary, RaisePartialRotary>(patterns.getContext());
}
