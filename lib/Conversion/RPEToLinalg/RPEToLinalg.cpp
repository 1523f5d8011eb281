//===- RPEToLinalg.cpp - rpe to linalg reference lowering -------*- C++ -*-===//
//
// Every rpe op becomes linalg.generic ops on tensors. Values are computed in
// f32 (rotary angles in f64) and converted to the result element type at the
// end. Bucket arithmetic always comes from BucketingAttrInterface::buildBucket.
//
//===----------------------------------------------------------------------===//

#include "rpe/Conversion/RPEToLinalg/RPEToLinalg.h"
#include "rpe/Conversion/Passes.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_CONVERTRPETOLINALGPASS
#include "rpe/Conversion/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

//===----------------------------------------------------------------------===//
// rpe.bucket
//===----------------------------------------------------------------------===//

struct LowerBucket : OpRewritePattern<BucketOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BucketOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getBucketing().buildBucket(rewriter, op.getLoc(),
                                                         op.getI(), op.getJ()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// rpe.relative_bias / rpe.alibi
//===----------------------------------------------------------------------===//

struct LowerRelativeBias : OpRewritePattern<RelativeBiasOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RelativeBiasOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getResult().getType();
    SmallVector<OpFoldResult> sizes =
        mixedSizes(rewriter, type, op.getDynamicSizes());
    Value init = emptyTensor(rewriter, loc, sizes, type.getElementType());
    AffineMap id = rewriter.getMultiDimIdentityMap(3);
    BucketingAttrInterface bucketing = op.getBucketing();
    Value table = op.getTable(), qOffset = op.getQOffset();
    if (!bucketing.isToeplitz()) {
      Value result = generic(
          rewriter, loc, {}, {}, init, id, {kPar, kPar, kPar},
          [&](OpBuilder &b, Location l, ValueRange) {
            SmallVector<Value> idx = loopIndices(b, l, 3);
            Value i = buildQueryPosition(b, l, idx[1], qOffset);
            Value bucket = bucketing.buildBucket(b, l, i, idx[2]);
            yieldValue(b, l,
                       tensor::ExtractOp::create(b, l, table,
                                                 ValueRange{bucket, idx[0]}));
          });
      rewriter.replaceOp(op, result);
      return success();
    }
    // Toeplitz: the (Lq + Lk - 1) diagonals of every head once,
    // diag[h, r] = table[bucket(r - shift, 0), h] with shift = Lk - 1 -
    // q_offset (the fused kernels' diagonal tables: query position
    // i + q_offset and key j read r = i - j + Lk - 1), then bias[h, i, j] =
    // diag[h, i - j + Lk - 1]: a bucket per diagonal instead of one per
    // element and head, and rows that read their diagonal contiguously
    // (backwards).
    Value lq = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[1]);
    Value lk = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[2]);
    Value lastKey =
        arith::SubIOp::create(rewriter, loc, lk, indexConst(rewriter, loc, 1));
    Value shift =
        qOffset
            ? arith::SubIOp::create(rewriter, loc, lastKey, qOffset).getResult()
            : lastKey;
    // No diagonal without a query or a key. (One op-building call per
    // argument list: the IR's order must not depend on the compiler.)
    Value diagonals = arith::AddIOp::create(rewriter, loc, lq, lastKey);
    Value length = arith::MaxSIOp::create(rewriter, loc, diagonals,
                                          indexConst(rewriter, loc, 0));
    Value diag =
        buildTableDiagonals(rewriter, loc, table, length, shift, bucketing);
    Value result = generic(
        rewriter, loc, {}, {}, init, id, {kPar, kPar, kPar},
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> idx = loopIndices(b, l, 3);
          Value r = arith::AddIOp::create(
              b, l, arith::SubIOp::create(b, l, idx[1], idx[2]), lastKey);
          yieldValue(
              b, l,
              tensor::ExtractOp::create(b, l, diag, ValueRange{idx[0], r}));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerAlibi : OpRewritePattern<AlibiOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AlibiOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getResult().getType();
    SmallVector<OpFoldResult> sizes =
        mixedSizes(rewriter, type, op.getDynamicSizes());
    Value init = emptyTensor(rewriter, loc, sizes, type.getElementType());
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = rewriter.getMultiDimIdentityMap(3);

    // The slopes, an H-vector built once, are an input indexed by h.
    Value slopes = buildAlibiSlopes(rewriter, loc, op);
    bool symmetric = op.getSymmetric();
    Value qOffset = op.getQOffset();
    Type elementType = type.getElementType();
    Value result = generic(
        rewriter, loc, slopes, {dimsMap(ctx, 3, {getAffineDimExpr(0, ctx)})},
        init, id, {kPar, kPar, kPar},
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> idx = loopIndices(b, l, 3);
          Value v = buildAlibiBias(b, l, args[0],
                                   buildQueryPosition(b, l, idx[1], qOffset),
                                   idx[2], symmetric);
          yieldValue(b, l, castFloat(b, l, v, elementType));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// rpe.rotary
//===----------------------------------------------------------------------===//

/// f64 arithmetic for the RoPE frequencies.
struct F64Builder {
  OpBuilder &b;
  Location l;
  Value c(double v) { return f64Const(b, l, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
  Value max(Value x, Value y) { return arith::MaximumFOp::create(b, l, x, y); }
  Value min(Value x, Value y) { return arith::MinimumFOp::create(b, l, x, y); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, l, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, l, cond, x, y);
  }
};

/// ω_t of pair t (index) for rotary dimension `rotaryDim` (index), θ =
/// exp(logTheta), under `scaling` (null: none). `logGrowth`: for
/// rope_dynamic, ln(factor·S/O - (factor - 1)) (f64).
Value buildRotaryFrequency(OpBuilder &ob, Location l, Value tIndex,
                           Value rotaryDim, double logTheta, Attribute scaling,
                           Value logGrowth) {
  F64Builder f{ob, l};
  Type f64 = ob.getF64Type();
  Value t = castIndexToFloat(ob, l, tIndex, f64);
  Value r = castIndexToFloat(ob, l, rotaryDim, f64);
  Value twoT = f.mul(f.c(2.0), t);
  // ln ω_t = -(2t/R)·ln θ.
  Value logOmega = f.mul(f.div(twoT, r), f.c(-logTheta));
  if (auto dyn = dyn_cast_if_present<RopeDynamicAttr>(scaling)) {
    // θ' = θ·g^(R/(R-2)): ln ω_t -= (2t/(R-2))·ln g (0 at t = 0, also when
    // R = 2).
    Value term = f.mul(f.div(twoT, f.sub(r, f.c(2.0))), logGrowth);
    Value first = f.cmp(arith::CmpFPredicate::OEQ, t, f.c(0.0));
    logOmega = f.sub(logOmega, f.select(first, f.c(0.0), term));
  }
  Value omega = math::ExpOp::create(ob, l, logOmega);
  if (auto lin = dyn_cast_if_present<RopeLinearAttr>(scaling))
    return f.div(omega, f.c(lin.getFactor().convertToDouble()));
  if (auto llama = dyn_cast_if_present<RopeLlama3Attr>(scaling)) {
    double factor = llama.getFactor().convertToDouble();
    double low = llama.getLowFreqFactor().convertToDouble();
    double high = llama.getHighFreqFactor().convertToDouble();
    double original = static_cast<double>(llama.getOriginalMaxPosition());
    Value wavelen = f.div(f.c(2.0 * M_PI), omega);
    Value scaled = f.div(omega, f.c(factor));
    // s = (O/λ - low) / (high - low); (1 - s)·ω/factor + s·ω.
    Value smooth =
        f.div(f.sub(f.div(f.c(original), wavelen), f.c(low)), f.c(high - low));
    Value mixed =
        f.add(f.mul(f.sub(f.c(1.0), smooth), scaled), f.mul(smooth, omega));
    Value longWave =
        f.cmp(arith::CmpFPredicate::OGT, wavelen, f.c(original / low));
    Value shortWave =
        f.cmp(arith::CmpFPredicate::OLT, wavelen, f.c(original / high));
    return f.select(longWave, scaled, f.select(shortWave, omega, mixed));
  }
  if (auto yarn = dyn_cast_if_present<RopeYarnAttr>(scaling)) {
    double factor = yarn.getFactor().convertToDouble();
    double original = static_cast<double>(yarn.getOriginalMaxPosition());
    // c(n) = R·ln(O / (2πn)) / (2 ln θ).
    auto correction = [&](double rotations) {
      return f.div(f.mul(r, f.c(std::log(original / (2 * M_PI * rotations)))),
                   f.c(2.0 * logTheta));
    };
    Value lo =
        f.max(math::FloorOp::create(
                  ob, l, correction(yarn.getBetaFast().convertToDouble())),
              f.c(0.0));
    Value hi =
        f.min(math::CeilOp::create(
                  ob, l, correction(yarn.getBetaSlow().convertToDouble())),
              f.sub(r, f.c(1.0)));
    hi = f.select(f.cmp(arith::CmpFPredicate::OEQ, lo, hi),
                  f.add(hi, f.c(0.001)), hi);
    Value ramp =
        f.min(f.max(f.div(f.sub(t, lo), f.sub(hi, lo)), f.c(0.0)), f.c(1.0));
    // Interpolated (ω/factor) where ramp = 1, extrapolated (ω) where 0.
    return f.add(f.mul(f.div(omega, f.c(factor)), ramp),
                 f.mul(omega, f.sub(f.c(1.0), ramp)));
  }
  return omega;
}

struct LowerRotary : OpRewritePattern<RotaryOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RotaryOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getX(), positions = op.getPositions();
    auto type = cast<RankedTensorType>(x.getType());
    unsigned rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();
    Value init =
        emptyTensor(rewriter, loc, tensor::getMixedSizes(rewriter, loc, x),
                    type.getElementType());
    Value rotaryDim = op.getRotaryDim()
                          ? indexConst(rewriter, loc, *op.getRotaryDim())
                          : dimValue(rewriter, loc, x, rank - 1);
    double logTheta = std::log(op.getTheta().convertToDouble());
    bool interleaved = op.getInterleaved();

    auto posType = cast<RankedTensorType>(positions.getType());
    unsigned posRank = posType.getRank();
    Type elementType = type.getElementType();
    Type f32 = rewriter.getF32Type(), f64 = rewriter.getF64Type();
    Value two = indexConst(rewriter, loc, 2),
          one = indexConst(rewriter, loc, 1);

    // rope_dynamic: ln g, g = factor·S/O - (factor - 1), S = max(max
    // position + 1, O), over all positions.
    Attribute scaling = op.getScalingAttr();
    Value logGrowth;
    if (auto dyn = dyn_cast_if_present<RopeDynamicAttr>(scaling)) {
      Type i64 = rewriter.getI64Type();
      Value lowest = arith::ConstantOp::create(
          rewriter, loc,
          rewriter.getI64IntegerAttr(std::numeric_limits<int64_t>::min()));
      Value acc =
          linalg::FillOp::create(
              rewriter, loc, lowest,
              tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{}, i64)
                  .getResult())
              .getResult(0);
      SmallVector<utils::IteratorType> red(posRank,
                                           utils::IteratorType::reduction);
      Value maxPos = generic(
          rewriter, loc, positions, {rewriter.getMultiDimIdentityMap(posRank)},
          acc, AffineMap::get(posRank, 0, ctx), red,
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value p = args[0];
            if (p.getType() != i64)
              p = arith::ExtSIOp::create(b, l, i64, p);
            yieldValue(b, l, arith::MaxSIOp::create(b, l, p, args[1]));
          });
      Value top = tensor::ExtractOp::create(rewriter, loc, maxPos);
      F64Builder f{rewriter, loc};
      double factor = dyn.getFactor().convertToDouble();
      double original = static_cast<double>(dyn.getOriginalMaxPosition());
      Value length = arith::SIToFPOp::create(
          rewriter, loc, f64,
          arith::AddIOp::create(
              rewriter, loc, top,
              arith::ConstantOp::create(rewriter, loc,
                                        rewriter.getI64IntegerAttr(1))));
      length = f.max(length, f.c(original));
      Value growth =
          f.sub(f.mul(f.c(factor / original), length), f.c(factor - 1.0));
      logGrowth = math::LogOp::create(rewriter, loc, growth);
    }
    // YaRN scales the rotated dimensions (cos and sin, as transformers).
    double magnitude = 1.0;
    if (auto yarn = dyn_cast_if_present<RopeYarnAttr>(scaling))
      magnitude = yarn.getAttentionFactor();

    // cos/sin tables [positions..., t] for t < max(R/2, 1), built once:
    // O(L·R) trigonometry instead of O(B·H·L·D). Angles in f64
    // (ω_t = exp(-(2t/R) ln θ) or its scaled form, φ = p·ω_t), tables in
    // f32.
    Value half = arith::DivUIOp::create(rewriter, loc, rotaryDim, two);
    Value tableHalf = arith::MaxUIOp::create(rewriter, loc, half, one);
    SmallVector<OpFoldResult> tableSizes =
        tensor::getMixedSizes(rewriter, loc, positions);
    tableSizes.push_back(tableHalf);
    SmallVector<AffineExpr> posOnly;
    for (unsigned d = 0; d < posRank; ++d)
      posOnly.push_back(getAffineDimExpr(d, ctx));
    AffineMap tableId = rewriter.getMultiDimIdentityMap(posRank + 1);
    SmallVector<utils::IteratorType> tableIts(posRank + 1, kPar);
    auto trigTable = [&](bool sine) {
      return generic(
          rewriter, loc, positions, {dimsMap(ctx, posRank + 1, posOnly)},
          emptyTensor(rewriter, loc, tableSizes, f32), tableId, tableIts,
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value t = linalg::IndexOp::create(b, l, posRank);
            Value omega = buildRotaryFrequency(b, l, t, rotaryDim, logTheta,
                                               scaling, logGrowth);
            Value pos = arith::SIToFPOp::create(b, l, f64, args[0]);
            Value phi = arith::MulFOp::create(b, l, pos, omega);
            Value v = sine ? math::SinOp::create(b, l, phi).getResult()
                           : math::CosOp::create(b, l, phi).getResult();
            if (magnitude != 1.0)
              v = arith::MulFOp::create(
                  b, l, v,
                  arith::ConstantOp::create(b, l,
                                            b.getF64FloatAttr(magnitude)));
            yieldValue(b, l, arith::TruncFOp::create(b, l, f32, v));
          });
    };
    Value cosTable = trigTable(false), sinTable = trigTable(true);

    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> its(rank, kPar);
    Value result = generic(
        rewriter, loc, {x}, {id}, init, id, its,
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> idx = loopIndices(b, l, rank);
          Value d = idx[rank - 1];
          Value zero = indexConst(b, l, 0), one = indexConst(b, l, 1),
                two = indexConst(b, l, 2);
          Value inRot = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              d, rotaryDim);
          // Pair index t, partner dim, and whether d is the first of its pair.
          Value t, partner, isFirst;
          if (interleaved) {
            t = arith::DivUIOp::create(b, l, d, two);
            Value parity = arith::RemUIOp::create(b, l, d, two);
            isFirst = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            parity, zero);
            partner = arith::SelectOp::create(
                b, l, isFirst, arith::AddIOp::create(b, l, d, one),
                arith::SubIOp::create(b, l, d, one));
          } else {
            Value half = arith::DivUIOp::create(b, l, rotaryDim, two);
            isFirst =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, d, half);
            t = arith::SelectOp::create(b, l, isFirst, d,
                                        arith::SubIOp::create(b, l, d, half));
            partner = arith::SelectOp::create(
                b, l, isFirst, arith::AddIOp::create(b, l, d, half),
                arith::SubIOp::create(b, l, d, half));
          }
          // Dims >= R pass through; keep their (unused) indices in range.
          partner = arith::SelectOp::create(b, l, inRot, partner, d);
          t = arith::SelectOp::create(b, l, inRot, t, zero);
          SmallVector<Value> partnerIdx(idx);
          partnerIdx[rank - 1] = partner;
          Value xd = castFloat(b, l, args[0], f32);
          Value xp = castFloat(
              b, l, tensor::ExtractOp::create(b, l, x, partnerIdx), f32);
          SmallVector<Value> at;
          if (posRank == 2)
            at.push_back(idx[0]);
          at.push_back(idx[rank - 2]);
          at.push_back(t);
          Value c = tensor::ExtractOp::create(b, l, cosTable, at);
          Value s = tensor::ExtractOp::create(b, l, sinTable, at);
          // y_a = x_a cos - x_b sin (first), y_b = x_b cos + x_a sin.
          Value xs = arith::MulFOp::create(b, l, xp, s);
          Value signedXs = arith::SelectOp::create(
              b, l, isFirst, arith::NegFOp::create(b, l, xs), xs);
          Value rotated = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, xd, c), signedXs);
          Value y = arith::SelectOp::create(b, l, inRot, rotated, xd);
          yieldValue(b, l, castFloat(b, l, y, elementType));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// rpe.shaw_logits / rpe.shaw_values / rpe.disentangled_bias
//===----------------------------------------------------------------------===//

/// The Shaw contractions: over loops (b, h, i, x, y) with y the reduction,
/// out[b,h,i,x] += input[b,h,i,<inputDim>] * emb[bucket(i, <j>), <d>], where
/// the key loop j and the embedding column d are x and y in either order.
/// shaw_logits reduces over d (x = j), shaw_values over j (x = d).
Value buildShawContraction(PatternRewriter &rewriter, Location loc,
                           BucketingAttrInterface bucketing, Value input,
                           Value emb, ArrayRef<OpFoldResult> sizes,
                           bool reduceOverKeys, Type resultElementType) {
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr b0, h, i, x, y;
  bindDims(ctx, b0, h, i, x, y);
  unsigned jLoop = reduceOverKeys ? 4 : 3, dLoop = reduceOverKeys ? 3 : 4;
  Value acc =
      generic(rewriter, loc, input, {dimsMap(ctx, 5, {b0, h, i, y})},
              filledF32(rewriter, loc, sizes, 0.0),
              dimsMap(ctx, 5, {b0, h, i, x}), {kPar, kPar, kPar, kPar, kRed},
              [&](OpBuilder &b, Location l, ValueRange args) {
                SmallVector<Value> idx = loopIndices(b, l, 5);
                Value bucket = bucketing.buildBucket(b, l, idx[2], idx[jLoop]);
                Value e = extractF32(b, l, emb, {bucket, idx[dLoop]});
                Value prod = arith::MulFOp::create(
                    b, l, castFloat(b, l, args[0], b.getF32Type()), e);
                yieldValue(b, l, arith::AddFOp::create(b, l, args[1], prod));
              });
  return convertTensor(rewriter, loc, acc, resultElementType);
}

struct LowerShawLogits : OpRewritePattern<ShawLogitsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShawLogitsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value q = op.getQ();
    RankedTensorType type = op.getResult().getType();
    SmallVector<OpFoldResult> sizes = {
        dimOf(rewriter, loc, q, 0), dimOf(rewriter, loc, q, 1),
        dimOf(rewriter, loc, q, 2),
        op.getKeyLength()
            ? OpFoldResult(op.getKeyLength())
            : OpFoldResult(rewriter.getIndexAttr(type.getDimSize(3)))};
    rewriter.replaceOp(
        op, buildShawContraction(rewriter, loc, op.getBucketing(), q,
                                 op.getEmb(), sizes, /*reduceOverKeys=*/false,
                                 type.getElementType()));
    return success();
  }
};

struct LowerShawValues : OpRewritePattern<ShawValuesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ShawValuesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value p = op.getP(), emb = op.getEmb();
    SmallVector<OpFoldResult> sizes = {
        dimOf(rewriter, loc, p, 0), dimOf(rewriter, loc, p, 1),
        dimOf(rewriter, loc, p, 2), dimOf(rewriter, loc, emb, 1)};
    rewriter.replaceOp(op, buildShawContraction(
                               rewriter, loc, op.getBucketing(), p, emb, sizes,
                               /*reduceOverKeys=*/true,
                               op.getResult().getType().getElementType()));
    return success();
  }
};

struct LowerDisentangledBias : OpRewritePattern<DisentangledBiasOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DisentangledBiasOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value q = op.getQ(), k = op.getK();
    Value posQ = op.getPosQ(), posK = op.getPosK();
    RankedTensorType type = op.getResult().getType();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<OpFoldResult> sizes = {
        dimOf(rewriter, loc, q, 0), dimOf(rewriter, loc, q, 1),
        dimOf(rewriter, loc, q, 2), dimOf(rewriter, loc, k, 2)};
    Value init = filledF32(rewriter, loc, sizes, 0.0);
    // Loops (b, h, i, j, d).
    AffineExpr b0, h, i, j, d;
    bindDims(ctx, b0, h, i, j, d);
    BucketingAttrInterface bucketing = op.getBucketing();
    bool c2p = op.getC2p(), p2c = op.getP2c();
    Value acc = generic(
        rewriter, loc, {q, k},
        {dimsMap(ctx, 5, {b0, h, i, d}), dimsMap(ctx, 5, {b0, h, j, d})}, init,
        dimsMap(ctx, 5, {b0, h, i, j}), {kPar, kPar, kPar, kPar, kRed},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Type f32 = b.getF32Type();
          SmallVector<Value> idx = loopIndices(b, l, 5);
          Value bucket = bucketing.buildBucket(b, l, idx[2], idx[3]);
          Value sum = args[2];
          if (c2p) {
            Value pk = extractF32(b, l, posK, {idx[1], bucket, idx[4]});
            sum = arith::AddFOp::create(
                b, l, sum,
                arith::MulFOp::create(b, l, castFloat(b, l, args[0], f32), pk));
          }
          if (p2c) {
            Value pq = extractF32(b, l, posQ, {idx[1], bucket, idx[4]});
            sum = arith::AddFOp::create(
                b, l, sum,
                arith::MulFOp::create(b, l, castFloat(b, l, args[1], f32), pq));
          }
          yieldValue(b, l, sum);
        });
    rewriter.replaceOp(
        op, convertTensor(rewriter, loc, acc, type.getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// rpe.attention
//===----------------------------------------------------------------------===//

struct LowerAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = op.getQ(), k = op.getK(), v = op.getV();
    Value qOffset = op.getQOffset();
    RankedTensorType type = op.getResult().getType();
    auto qType = cast<RankedTensorType>(q.getType());
    auto kType = cast<RankedTensorType>(k.getType());

    OpFoldResult batch = dimOf(rewriter, loc, q, 0);
    OpFoldResult heads = dimOf(rewriter, loc, q, 1);
    OpFoldResult lq = dimOf(rewriter, loc, q, 2);
    OpFoldResult lk = dimOf(rewriter, loc, k, 2);
    OpFoldResult dv = dimOf(rewriter, loc, v, 3);

    // Grouped-query heads: query head h reads kv head h / group. A static
    // group goes into the indexing maps; a dynamic one is computed here.
    int64_t h = qType.getDimSize(1), hkv = kType.getDimSize(1);
    std::optional<int64_t> staticGroup;
    Value dynGroup;
    if (!ShapedType::isDynamic(h) && !ShapedType::isDynamic(hkv))
      staticGroup = h / hkv;
    else
      dynGroup =
          arith::DivUIOp::create(rewriter, loc, dimValue(rewriter, loc, q, 1),
                                 dimValue(rewriter, loc, k, 1));
    auto kvHead = [&](AffineExpr head) {
      return *staticGroup == 1 ? head : head.floorDiv(*staticGroup);
    };

    // 1. s[b,h,i,j] = sum_d q[b,h,i,d] k[b,h/g,j,d]; loops (b, h, i, j, d).
    Value scores;
    {
      AffineExpr b0, hh, i, j, d;
      bindDims(ctx, b0, hh, i, j, d);
      SmallVector<Value> inputs = {q};
      SmallVector<AffineMap> maps = {dimsMap(ctx, 5, {b0, hh, i, d})};
      if (staticGroup) {
        inputs.push_back(k);
        maps.push_back(dimsMap(ctx, 5, {b0, kvHead(hh), j, d}));
      }
      Value init = filledF32(rewriter, loc, {batch, heads, lq, lk}, 0.0);
      scores = generic(
          rewriter, loc, inputs, maps, init, dimsMap(ctx, 5, {b0, hh, i, j}),
          {kPar, kPar, kPar, kPar, kRed},
          [&](OpBuilder &b, Location l, ValueRange args) {
            Type f32 = b.getF32Type();
            Value kv;
            if (staticGroup) {
              kv = castFloat(b, l, args[1], f32);
            } else {
              SmallVector<Value> idx = loopIndices(b, l, 5);
              Value kh = arith::DivUIOp::create(b, l, idx[1], dynGroup);
              kv = extractF32(b, l, k, {idx[0], kh, idx[3], idx[4]});
            }
            Value prod =
                arith::MulFOp::create(b, l, castFloat(b, l, args[0], f32), kv);
            yieldValue(b, l, arith::AddFOp::create(b, l, args.back(), prod));
          });
    }

    // 2. Scale, bias, score_mod and masks, element-wise over (b, h, i, j).
    Value scale =
        buildAttentionScale(rewriter, loc, op, dimValue(rewriter, loc, q, 3));
    {
      AffineExpr b0, hh, i, j;
      bindDims(ctx, b0, hh, i, j);
      AffineMap id = rewriter.getMultiDimIdentityMap(4);
      SmallVector<Value> inputs = {scores};
      SmallVector<AffineMap> maps = {id};
      int biasArg = -1, lengthArg = -1;
      if (Value bias = op.getBias()) {
        auto biasType = cast<RankedTensorType>(bias.getType());
        AffineExpr full[] = {b0, hh, i, j};
        SmallVector<AffineExpr> exprs;
        for (int64_t dim = 0; dim < biasType.getRank(); ++dim)
          exprs.push_back(biasType.getDimSize(dim) == 1
                              ? getAffineConstantExpr(0, ctx)
                              : full[4 - biasType.getRank() + dim]);
        biasArg = inputs.size();
        inputs.push_back(bias);
        maps.push_back(dimsMap(ctx, 4, exprs));
      }
      if (Value lengths = op.getKeyLengths()) {
        lengthArg = inputs.size();
        inputs.push_back(lengths);
        maps.push_back(dimsMap(ctx, 4, {b0}));
      }
      Region &scoreMod = op.getScoreMod();
      Value init = emptyTensor(rewriter, loc, {batch, heads, lq, lk},
                               rewriter.getF32Type());
      scores = generic(
          rewriter, loc, inputs, maps, init, id, {kPar, kPar, kPar, kPar},
          [&](OpBuilder &b, Location l, ValueRange args) {
            Type f32 = b.getF32Type();
            SmallVector<Value> idx = loopIndices(b, l, 4);
            Value qPos = buildQueryPosition(b, l, idx[2], qOffset);
            Value s = arith::MulFOp::create(b, l, args[0], scale);
            if (biasArg >= 0)
              s = arith::AddFOp::create(b, l, s,
                                        castFloat(b, l, args[biasArg], f32));
            if (!scoreMod.empty())
              s = inlineScoreMod(b, scoreMod,
                                 {s, idx[0], idx[1], qPos, idx[3]});
            Value len;
            if (lengthArg >= 0)
              len = arith::IndexCastOp::create(b, l, b.getIndexType(),
                                               args[lengthArg]);
            s = applyAttentionMasks(b, l, op, s, idx[3], qPos, len);
            yieldValue(b, l, s);
          });
    }

    // 3. Softmax over j, safe for fully masked rows: m = max_j s (or 0 if
    // every s is -inf), e = exp(s - m), l = sum_j e; p = e / l, 0 if l = 0.
    AffineExpr b0, hh, i, j;
    bindDims(ctx, b0, hh, i, j);
    AffineMap id4 = rewriter.getMultiDimIdentityMap(4);
    AffineMap rowMap = dimsMap(ctx, 4, {b0, hh, i});
    SmallVector<utils::IteratorType> rowReduce = {kPar, kPar, kPar, kRed};
    Value rowMax = generic(
        rewriter, loc, scores, {id4},
        filledF32(rewriter, loc, {batch, heads, lq},
                  -std::numeric_limits<double>::infinity()),
        rowMap, rowReduce, [&](OpBuilder &b, Location l, ValueRange args) {
          yieldValue(b, l, arith::MaximumFOp::create(b, l, args[0], args[1]));
        });
    Value exps = generic(
        rewriter, loc, {scores, rowMax}, {id4, rowMap},
        emptyTensor(rewriter, loc, {batch, heads, lq, lk},
                    rewriter.getF32Type()),
        id4, {kPar, kPar, kPar, kPar},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value negInf =
              f32Const(b, l, -std::numeric_limits<double>::infinity());
          Value allMasked = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OEQ, args[1], negInf);
          Value m = arith::SelectOp::create(b, l, allMasked,
                                            f32Const(b, l, 0.0), args[1]);
          yieldValue(b, l,
                     math::ExpOp::create(
                         b, l, arith::SubFOp::create(b, l, args[0], m)));
        });
    Value rowSum = generic(
        rewriter, loc, exps, {id4},
        filledF32(rewriter, loc, {batch, heads, lq}, 0.0), rowMap, rowReduce,
        [&](OpBuilder &b, Location l, ValueRange args) {
          yieldValue(b, l, arith::AddFOp::create(b, l, args[0], args[1]));
        });

    // 4. acc[b,h,i,e] = sum_j e_ij (v[b,h/g,j,e] + rel_values[bucket, e]);
    // loops (b, h, i, e, j).
    Value acc;
    {
      AffineExpr b0, hh, i, e, j;
      bindDims(ctx, b0, hh, i, e, j);
      SmallVector<Value> inputs = {exps};
      SmallVector<AffineMap> maps = {dimsMap(ctx, 5, {b0, hh, i, j})};
      if (staticGroup) {
        inputs.push_back(v);
        maps.push_back(dimsMap(ctx, 5, {b0, kvHead(hh), j, e}));
      }
      Value relValues = op.getRelValues();
      std::optional<BucketingAttrInterface> bucketing = op.getBucketing();
      acc = generic(
          rewriter, loc, inputs, maps,
          filledF32(rewriter, loc, {batch, heads, lq, dv}, 0.0),
          dimsMap(ctx, 5, {b0, hh, i, e}), {kPar, kPar, kPar, kPar, kRed},
          [&](OpBuilder &b, Location l, ValueRange args) {
            Type f32 = b.getF32Type();
            SmallVector<Value> idx;
            if (!staticGroup || relValues)
              idx = loopIndices(b, l, 5);
            Value val;
            if (staticGroup) {
              val = castFloat(b, l, args[1], f32);
            } else {
              Value kh = arith::DivUIOp::create(b, l, idx[1], dynGroup);
              val = extractF32(b, l, v, {idx[0], kh, idx[4], idx[3]});
            }
            if (relValues) {
              Value bucket = bucketing->buildBucket(
                  b, l, buildQueryPosition(b, l, idx[2], qOffset), idx[4]);
              val = arith::AddFOp::create(
                  b, l, val, extractF32(b, l, relValues, {bucket, idx[3]}));
            }
            Value prod = arith::MulFOp::create(b, l, args[0], val);
            yieldValue(b, l, arith::AddFOp::create(b, l, args.back(), prod));
          });
    }

    // 5. out = acc / l (0 for fully masked rows), in the result type.
    AffineExpr e;
    bindDims(ctx, b0, hh, i, e);
    Type elementType = type.getElementType();
    Value out = generic(
        rewriter, loc, {acc, rowSum}, {id4, dimsMap(ctx, 4, {b0, hh, i})},
        emptyTensor(rewriter, loc, {batch, heads, lq, dv}, elementType), id4,
        {kPar, kPar, kPar, kPar},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value zero = f32Const(b, l, 0.0);
          Value empty = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                              args[1], zero);
          Value safeSum = arith::SelectOp::create(b, l, empty,
                                                  f32Const(b, l, 1.0), args[1]);
          Value o = arith::DivFOp::create(b, l, args[0], safeSum);
          o = arith::SelectOp::create(b, l, empty, zero, o);
          yieldValue(b, l, castFloat(b, l, o, elementType));
        });
    rewriter.replaceOp(op, out);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertRPEToLinalgPass
    : rpe::impl::ConvertRPEToLinalgPassBase<ConvertRPEToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<RPEDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // As rpe-fuse-attention does: the reference lowering clamps q_offset
    // the same way, so both paths agree on offsets beyond ±2^62.
    clampQueryOffsets(getOperation());
    RewritePatternSet patterns(ctx);
    populateRPEToLinalgConversionPatterns(patterns);
    int64_t before = 0;
    getOperation()->walk([&](Operation *op) {
      if (isa<RPEDialect>(op->getDialect()) && !isa<YieldOp>(op))
        ++before;
    });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    numOpsLowered += before;
  }
};

} // namespace

void mlir::rpe::populateRPEToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  patterns
      .add<LowerAlibi, LowerAttention, LowerBucket, LowerDisentangledBias,
           LowerRelativeBias, LowerRotary, LowerShawLogits, LowerShawValues>(
          patterns.getContext());
}
