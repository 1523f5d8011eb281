//===- FoldScoreProducers.cpp - front-end bias code into score_mod --------===//
//
// A front end (torch-mlir) writes a relative position bias or a mask as
// element-wise linalg code over Lq×Lk: index generators, bucket arithmetic,
// table gathers (tensor.extract in a generic body), broadcasts, reshapes and
// transposes. The raising leaves that Lq×Lk tensor as the attention's bias
// operand or reads it in score_mod. These patterns move the code itself into
// score_mod instead, the way FlexAttention treats a score_mod: the element at
// (b, h, i, j) is recomputed from the producers' inputs, which are smaller
// than Lq×Lk. The kernels then tabulate what depends on (i, j) only through
// i - j (hoistToeplitzTerms), so a T5 bias written by a front end runs like
// rpe.relative_bias. An additive mask of a band of distances j - i (causal,
// sliding window, bidirectional window) becomes the `causal`, `lookahead` and
// `window` attributes, and sign tests of positions fold (positions are not
// negative).
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// Builds, at the insertion point of `b`, the scalar element of a tensor at
/// given indices, looking through the ops that produce the tensor:
/// element-wise `linalg.generic`s (all loops parallel, permutation output
/// map, projected-permutation or broadcast input maps, bodies of pure ops and
/// `cf.assert`), `tensor.expand_shape` / `collapse_shape`, `linalg.transpose`
/// / `broadcast` / `fill`, `tensor.cast` and splat constants. Anything else is
/// a leaf read with `tensor.extract`. Fails where a leaf would be read at
/// (query, key) directly — an Lq×Lk tensor that folding cannot avoid — or
/// when more than `maxOps` ops would be built.
class ElementMaterializer {
public:
  ElementMaterializer(OpBuilder &b, Location loc, ArrayRef<Value> queryIndices,
                      Value keyIndex, int64_t maxOps)
      : b(b), loc(loc), queryIndices(queryIndices), keyIndex(keyIndex),
        maxOps(maxOps) {}

  FailureOr<Value> elementAt(Value tensor, ArrayRef<Value> indices);

  /// Whether any producer was looked through (else folding changes nothing).
  bool lookedThrough() const { return numProducers != 0; }

private:
  FailureOr<Value> build(Value tensor, ArrayRef<Value> indices);
  FailureOr<Value> generic(linalg::GenericOp op, unsigned result,
                           ArrayRef<Value> indices);
  FailureOr<Value> leaf(Value tensor, ArrayRef<Value> indices);
  /// The source indices of a reshape: `groups[g]` are the dims of the
  /// expanded type that make up dim g of the collapsed one.
  FailureOr<SmallVector<Value>>
  reshapeIndices(RankedTensorType expanded,
                 ArrayRef<ReassociationIndices> groups, ArrayRef<Value> indices,
                 bool toExpanded);
  bool count(int64_t n = 1) {
    numOps += n;
    return numOps <= maxOps;
  }
  Value constIndex(int64_t v) {
    count();
    return indexConst(b, loc, v);
  }

  OpBuilder &b;
  Location loc;
  SmallVector<Value> queryIndices;
  Value keyIndex;
  int64_t maxOps;
  int64_t numOps = 0;
  int64_t numProducers = 0;
  /// Elements built so far: (tensor, indices) -> value.
  SmallVector<std::tuple<Value, SmallVector<Value>, Value>> memo;
};

FailureOr<Value> ElementMaterializer::elementAt(Value tensor,
                                                ArrayRef<Value> indices) {
  for (auto &[t, idx, v] : memo)
    if (t == tensor && ArrayRef<Value>(idx) == indices)
      return v;
  FailureOr<Value> v = build(tensor, indices);
  if (failed(v) || !count(0))
    return failure();
  memo.emplace_back(tensor, SmallVector<Value>(indices), *v);
  return v;
}

FailureOr<Value> ElementMaterializer::build(Value tensor,
                                            ArrayRef<Value> indices) {
  Operation *def = tensor.getDefiningOp();
  if (!def)
    return leaf(tensor, indices);
  ++numProducers;
  if (auto g = dyn_cast<linalg::GenericOp>(def))
    return generic(g, cast<OpResult>(tensor).getResultNumber(), indices);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    FailureOr<SmallVector<Value>> src =
        reshapeIndices(expand.getResultType(), expand.getReassociationIndices(),
                       indices, /*toExpanded=*/false);
    if (failed(src))
      return failure();
    return elementAt(expand.getSrc(), *src);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    FailureOr<SmallVector<Value>> src = reshapeIndices(
        collapse.getSrcType(), collapse.getReassociationIndices(), indices,
        /*toExpanded=*/true);
    if (failed(src))
      return failure();
    return elementAt(collapse.getSrc(), *src);
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<Value> src(indices.size());
    for (auto [d, p] : llvm::enumerate(perm))
      src[p] = indices[d];
    return elementAt(transpose.getInput(), src);
  }
  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def)) {
    ArrayRef<int64_t> added = broadcast.getDimensions();
    SmallVector<Value> src;
    for (auto [d, v] : llvm::enumerate(indices))
      if (!llvm::is_contained(added, static_cast<int64_t>(d)))
        src.push_back(v);
    return elementAt(broadcast.getInput(), src);
  }
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    Value value = fill.getInputs().front();
    if (value.getType() != getElementTypeOrSelf(tensor.getType()))
      return failure();
    return value;
  }
  if (auto castOp = dyn_cast<tensor::CastOp>(def))
    return elementAt(castOp.getSource(), indices);
  SplatElementsAttr splat;
  if (matchPattern(def, m_Constant(&splat))) {
    count();
    return arith::ConstantOp::create(
               b, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()))
        .getResult();
  }
  --numProducers;
  if (isa<tensor::EmptyOp>(def))
    return failure(); // undefined contents
  return leaf(tensor, indices);
}

FailureOr<Value> ElementMaterializer::leaf(Value tensor,
                                           ArrayRef<Value> indices) {
  bool query = llvm::any_of(
      indices, [&](Value v) { return llvm::is_contained(queryIndices, v); });
  bool key = llvm::is_contained(indices, keyIndex);
  if (query && key)
    return failure();
  if (!count())
    return failure();
  return tensor::ExtractOp::create(b, loc, tensor, indices).getResult();
}

FailureOr<Value> ElementMaterializer::generic(linalg::GenericOp op,
                                              unsigned result,
                                              ArrayRef<Value> indices) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 0)
    return failure();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(result));
  if (!outMap.isPermutation())
    return failure();
  SmallVector<Value> loops(op.getNumLoops());
  for (unsigned r = 0; r < outMap.getNumResults(); ++r)
    loops[outMap.getDimPosition(r)] = indices[r];

  IRMapping map;
  Block *body = op.getBody();
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.use_empty())
      continue;
    Value value = operand.get();
    if (!isa<RankedTensorType>(value.getType())) {
      map.map(arg, value);
      continue;
    }
    SmallVector<Value> at;
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        at.push_back(loops[d.getPosition()]);
      else if (auto c = dyn_cast<AffineConstantExpr>(e))
        at.push_back(constIndex(c.getValue()));
      else
        return failure();
    }
    FailureOr<Value> element = elementAt(value, at);
    if (failed(element))
      return failure();
    map.map(arg, *element);
  }
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), loops[index.getDim()]);
      continue;
    }
    if (inner.getNumRegions() != 0 ||
        !(isPure(&inner) || isa<cf::AssertOp>(inner)) || !count())
      return failure();
    b.clone(inner, map);
  }
  return map.lookupOrDefault(body->getTerminator()->getOperand(result));
}

FailureOr<SmallVector<Value>>
ElementMaterializer::reshapeIndices(RankedTensorType expanded,
                                    ArrayRef<ReassociationIndices> groups,
                                    ArrayRef<Value> indices, bool toExpanded) {
  SmallVector<Value> out;
  for (auto [g, group] : llvm::enumerate(groups)) {
    SmallVector<int64_t> nonUnit;
    for (int64_t d : group)
      if (expanded.getDimSize(d) != 1)
        nonUnit.push_back(d);
    bool linear = nonUnit.size() > 1;
    if (linear && llvm::any_of(nonUnit, [&](int64_t d) {
          return expanded.isDynamicDim(d);
        }))
      return failure();
    if (!toExpanded) {
      // Expanded indices (one per dim of the group) -> one collapsed index.
      if (!linear) {
        out.push_back(nonUnit.empty() ? constIndex(0) : indices[nonUnit[0]]);
        continue;
      }
      Value linearIndex = constIndex(0);
      for (int64_t d : group) {
        Value size = constIndex(expanded.getDimSize(d));
        count(2);
        linearIndex = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, linearIndex, size),
            indices[d]);
      }
      out.push_back(linearIndex);
      continue;
    }
    // One collapsed index -> expanded indices, row-major.
    Value rest = indices[g];
    SmallVector<Value> parts(group.size());
    for (int64_t k = group.size() - 1; k >= 0; --k) {
      int64_t d = group[k];
      if (expanded.getDimSize(d) == 1) {
        parts[k] = constIndex(0);
        continue;
      }
      if (!linear) {
        parts[k] = rest;
        continue;
      }
      Value size = constIndex(expanded.getDimSize(d));
      count(2);
      parts[k] = arith::RemUIOp::create(b, loc, rest, size);
      rest = arith::DivUIOp::create(b, loc, rest, size);
    }
    llvm::append_range(out, parts);
  }
  return out;
}

/// Whether `tensor`'s defining op is one the materializer looks through.
bool hasFoldableProducer(Value tensor) {
  Operation *def = tensor.getDefiningOp();
  SplatElementsAttr splat;
  return def &&
         (isa<linalg::GenericOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
              linalg::TransposeOp, linalg::BroadcastOp, linalg::FillOp,
              tensor::CastOp>(def) ||
          matchPattern(def, m_Constant(&splat)));
}

/// The indices at which score_mod reads the bias operand (its static unit
/// dims broadcast).
SmallVector<Value> biasIndices(OpBuilder &b, Location loc,
                               RankedTensorType type, Value batch, Value head,
                               Value row, Value key) {
  SmallVector<Value> all = {batch, head, row, key};
  SmallVector<Value> indices;
  int64_t rank = type.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    Value v = all[4 - rank + d];
    indices.push_back(type.getDimSize(d) == 1 ? indexConst(b, loc, 0) : v);
  }
  return indices;
}

struct FoldScoreProducers : OpRewritePattern<AttentionOp> {
  FoldScoreProducers(MLIRContext *ctx, int64_t maxOps)
      : OpRewritePattern(ctx), maxOps(maxOps) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (maxOps <= 0)
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type(), idx = rewriter.getIndexType();
    Region &region = op.getScoreMod();
    Block *old = region.empty() ? nullptr : &region.front();

    // Dry runs into a scratch block: which reads fold.
    Block scratch;
    SmallVector<Location> locs(5, loc);
    for (Type t : {f32, idx, idx, idx, idx})
      scratch.addArgument(t, loc);
    OpBuilder sb(op.getContext());
    sb.setInsertionPointToStart(&scratch);
    // Only reads of an Lq×Lk tensor (at the query and the key position) are
    // folded: smaller ones (ALiBi slopes per head, a B×Lk padding mask) are
    // cheaper read than recomputed per element.
    auto tryFold = [&](Block &args, Value tensor, ArrayRef<Value> indices,
                       Value row) {
      Value query = args.getArgument(3), key = args.getArgument(4);
      if (!llvm::is_contained(indices, key) ||
          !(llvm::is_contained(indices, query) ||
            llvm::is_contained(indices, row)))
        return false;
      ElementMaterializer m(sb, loc, {query, row}, key, maxOps);
      return succeeded(m.elementAt(tensor, indices)) && m.lookedThrough();
    };
    Value bias = op.getBias();
    bool foldBias = false;
    if (bias && hasFoldableProducer(bias)) {
      Value row = scratch.getArgument(3);
      if (Value off = op.getQOffset())
        row = arith::SubIOp::create(sb, loc, row, off);
      SmallVector<Value> at =
          biasIndices(sb, loc, cast<RankedTensorType>(bias.getType()),
                      scratch.getArgument(1), scratch.getArgument(2), row,
                      scratch.getArgument(4));
      foldBias = tryFold(scratch, bias, at, row);
    }
    SmallVector<tensor::ExtractOp> reads;
    if (old)
      for (Operation &inner : *old)
        if (auto extract = dyn_cast<tensor::ExtractOp>(inner))
          if (!region.isAncestor(extract.getTensor().getParentRegion()) &&
              hasFoldableProducer(extract.getTensor()) &&
              tryFold(*old, extract.getTensor(),
                      llvm::to_vector(extract.getIndices()),
                      old->getArgument(3)))
            reads.push_back(extract);
    scratch.clear();
    if (!foldBias && reads.empty())
      return rewriter.notifyMatchFailure(op, "no foldable score producer");

    for (tensor::ExtractOp extract : reads) {
      rewriter.setInsertionPoint(extract);
      ElementMaterializer m(rewriter, extract.getLoc(), {old->getArgument(3)},
                            old->getArgument(4), maxOps);
      FailureOr<Value> v = m.elementAt(extract.getTensor(),
                                       llvm::to_vector(extract.getIndices()));
      assert(succeeded(v) && "dry run succeeded");
      rewriter.replaceOp(extract, *v);
    }
    if (!foldBias)
      return success();

    // s' = s + bias[b, h, row, j], then the old region's body.
    Block *block = rewriter.createBlock(&region, region.begin(),
                                        {f32, idx, idx, idx, idx}, locs);
    Value row = block->getArgument(3);
    if (Value off = op.getQOffset())
      row = arith::SubIOp::create(rewriter, loc, row, off);
    SmallVector<Value> at =
        biasIndices(rewriter, loc, cast<RankedTensorType>(bias.getType()),
                    block->getArgument(1), block->getArgument(2), row,
                    block->getArgument(4));
    ElementMaterializer m(rewriter, loc, {block->getArgument(3), row},
                          block->getArgument(4), maxOps);
    FailureOr<Value> v = m.elementAt(bias, at);
    assert(succeeded(v) && "dry run succeeded");
    Value s = arith::AddFOp::create(rewriter, loc, block->getArgument(0),
                                    castFloat(rewriter, loc, *v, f32));
    if (old) {
      SmallVector<Value> args = {s};
      llvm::append_range(args, block->getArguments().drop_front());
      rewriter.mergeBlocks(old, block, args);
    } else {
      YieldOp::create(rewriter, loc, ValueRange{s});
    }
    rewriter.modifyOpInPlace(op, [&] { op.getBiasMutable().clear(); });
    return success();
  }

  int64_t maxOps;
};

/// Whether `v` is a float constant for which `pred` holds.
bool isFloatConstant(Value v, function_ref<bool(const APFloat &)> pred) {
  APFloat value(0.0);
  return matchPattern(v, m_ConstantFloat(&value)) && pred(value);
}

/// A mask value: -inf, or at most -FLT_MAX (torch.finfo(float32).min).
bool isMaskValue(const APFloat &v) {
  if (v.isInfinity())
    return v.isNegative();
  return v.convertToDouble() <=
         -static_cast<double>(std::numeric_limits<float>::max());
}

/// `coefJ·j + coefI·i + constant` of score_mod's key and query positions.
struct PositionForm {
  int64_t coefJ = 0, coefI = 0, constant = 0;
};

/// `v` as a PositionForm: positions, integer constants (|c| < 2^30), their
/// sums and differences, through integer casts of 32 bits or more.
std::optional<PositionForm> positionForm(Value v, Block &block,
                                         unsigned depth = 0) {
  constexpr int64_t kMaxConstant = int64_t(1) << 30;
  if (depth > 6)
    return std::nullopt;
  int64_t arg = positionArgument(v, block);
  if (arg == 3)
    return PositionForm{0, 1, 0};
  if (arg == 4)
    return PositionForm{1, 0, 0};
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant))) {
    if (constant.getSignificantBits() > 31)
      return std::nullopt;
    return PositionForm{0, 0, constant.getSExtValue()};
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &block)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(def)) {
    Type t = v.getType();
    if (!t.isIndex() && t.getIntOrFloatBitWidth() < 32)
      return std::nullopt;
    return positionForm(def->getOperand(0), block, depth + 1);
  }
  if (!isa<arith::AddIOp, arith::SubIOp>(def))
    return std::nullopt;
  std::optional<PositionForm> a =
      positionForm(def->getOperand(0), block, depth + 1);
  std::optional<PositionForm> b =
      positionForm(def->getOperand(1), block, depth + 1);
  if (!a || !b)
    return std::nullopt;
  int64_t sign = isa<arith::SubIOp>(def) ? -1 : 1;
  PositionForm f{a->coefJ + sign * b->coefJ, a->coefI + sign * b->coefI,
                 a->constant + sign * b->constant};
  if (std::abs(f.coefJ) > 1 || std::abs(f.coefI) > 1 ||
      std::abs(f.constant) >= kMaxConstant)
    return std::nullopt;
  return f;
}

/// The keys a mask keeps, as a band of the distance d = j - i: lo <= d <= hi
/// (either side may be open).
struct Band {
  std::optional<int64_t> lo, hi;
};

/// Narrows `band` by the comparison `lhs pred rhs` (signed; the keys kept
/// where it holds) of forms that are d = j - i up to constants. Fails on
/// anything else.
bool narrowBandBy(const PositionForm &lhs, const PositionForm &rhs,
                  arith::CmpIPredicate pred, Band &band) {
  // (lhs - rhs) pred 0, as (d + c) pred 0 with d = j - i.
  int64_t coefJ = lhs.coefJ - rhs.coefJ, coefI = lhs.coefI - rhs.coefI;
  int64_t c = lhs.constant - rhs.constant;
  using P = arith::CmpIPredicate;
  if (coefJ != -coefI || coefJ == 0)
    return false;
  if (coefJ < 0) {
    // -(d - c) pred 0 <=> (d - c) swapped-pred 0.
    c = -c;
    pred = swapCmpIOperands(pred);
  }
  auto lower = [&](int64_t v) {
    band.lo = band.lo ? std::max(*band.lo, v) : v;
  };
  auto upper = [&](int64_t v) {
    band.hi = band.hi ? std::min(*band.hi, v) : v;
  };
  switch (pred) {
  case P::slt:
    upper(-c - 1);
    return true;
  case P::sle:
    upper(-c);
    return true;
  case P::sgt:
    lower(-c + 1);
    return true;
  case P::sge:
    lower(-c);
    return true;
  case P::eq:
    lower(-c);
    upper(-c);
    return true;
  default:
    return false;
  }
}

/// Narrows `band` to where `cond` is `keepWhen`: conjunctions (of kept
/// conditions) and disjunctions (of masked ones) of comparisons of j - i
/// with constants, of `|j - i|` (math.absi) below constants (ModernBERT's
/// bidirectional window), negations, constants. Fails on anything else.
bool narrowBand(Value cond, bool keepWhen, Band &band, Block &block,
                unsigned depth = 0) {
  if (depth > 8)
    return false;
  APInt constant;
  if (matchPattern(cond, m_ConstantInt(&constant)))
    // Always kept: no constraint; never kept: not a band.
    return constant.isOne() == keepWhen;
  Operation *def = cond.getDefiningOp();
  if (!def || def->getBlock() != &block)
    return false;
  if ((keepWhen && isa<arith::AndIOp>(def)) ||
      (!keepWhen && isa<arith::OrIOp>(def)))
    return narrowBand(def->getOperand(0), keepWhen, band, block, depth + 1) &&
           narrowBand(def->getOperand(1), keepWhen, band, block, depth + 1);
  if (auto xorOp = dyn_cast<arith::XOrIOp>(def)) {
    for (unsigned k : {0u, 1u})
      if (matchPattern(xorOp->getOperand(1 - k), m_One()))
        return narrowBand(xorOp->getOperand(k), !keepWhen, band, block,
                          depth + 1);
    return false;
  }
  auto cmp = dyn_cast<arith::CmpIOp>(def);
  if (!cmp)
    return false;
  using P = arith::CmpIPredicate;
  Value lhsValue = cmp.getLhs(), rhsValue = cmp.getRhs();
  P pred = cmp.getPredicate();
  auto absOperand = [&](Value v) -> Value {
    auto abs = v.getDefiningOp<math::AbsIOp>();
    return abs && abs->getBlock() == &block ? abs.getOperand() : Value();
  };
  if (!absOperand(lhsValue) && absOperand(rhsValue)) {
    std::swap(lhsValue, rhsValue);
    pred = swapCmpIOperands(pred);
  }
  if (Value x = absOperand(lhsValue)) {
    // Kept where |x| <= k: -k <= x <= k.
    std::optional<PositionForm> form = positionForm(x, block);
    std::optional<PositionForm> bound = positionForm(rhsValue, block);
    if (!form || !bound || bound->coefJ != 0 || bound->coefI != 0)
      return false;
    if (!keepWhen)
      pred = arith::invertPredicate(pred);
    int64_t k = bound->constant;
    if (pred == P::slt)
      --k;
    else if (pred != P::sle)
      return false;
    return narrowBandBy(*form, PositionForm{0, 0, k}, P::sle, band) &&
           narrowBandBy(*form, PositionForm{0, 0, -k}, P::sge, band);
  }
  std::optional<PositionForm> lhs = positionForm(lhsValue, block);
  std::optional<PositionForm> rhs = positionForm(rhsValue, block);
  if (!lhs || !rhs)
    return false;
  if (pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge) {
    // Unsigned only as `j ? i` (positions are not negative).
    auto isPosition = [](const PositionForm &f) {
      return f.constant == 0 && f.coefJ + f.coefI == 1 &&
             (f.coefJ == 0 || f.coefI == 0);
    };
    if (!isPosition(*lhs) || !isPosition(*rhs))
      return false;
    pred = pred == P::ult   ? P::slt
           : pred == P::ule ? P::sle
           : pred == P::ugt ? P::sgt
                            : P::sge;
  }
  if (!keepWhen)
    pred = arith::invertPredicate(pred);
  return narrowBandBy(*lhs, *rhs, pred, band);
}

/// Terms of the sum score_mod yields that mask a band of distances:
/// `select(keep, 0, M)` or `select(masked, M, 0)` (M = -inf or at most
/// -FLT_MAX) where `keep` is a band i - W < j <= i + A written as
/// comparisons of positions and constants (transformers' causal and
/// sliding-window masks, ModernBERT's bidirectional one), become `causal` (the
/// band ends at d = 0) or `lookahead = A` (at d = A > 0) and `window = W` (it
/// starts at d = 1 - W), only without q_offset and key_lengths and, for a
/// window, with static lengths Lq <= Lk + W - 1: then no row is fully masked,
/// and M and -inf give the same probabilities (exp underflows to 0). A constant
/// ±0 term goes: it changes at most the sign of a zero score, which softmax
/// does not see (a front end's all-true mask, once its position test has
/// folded).
struct RecognizeBandMask : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getScoreMod().empty())
      return failure();
    bool mayMask = !op.getQOffset() && !op.getKeyLengths();
    Block &block = op.getScoreMod().front();
    Value yielded = cast<YieldOp>(block.getTerminator()).getValues().front();
    // The summands of the addf tree the score_mod yields.
    SmallVector<Value> worklist = {yielded};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      auto add = v.getDefiningOp<arith::AddFOp>();
      if (!add || add->getBlock() != &block || (v != yielded && !v.hasOneUse()))
        continue;
      for (unsigned k : {0u, 1u}) {
        Value term = add->getOperand(k);
        bool zero =
            isFloatConstant(term, [](const APFloat &x) { return x.isZero(); });
        std::optional<int64_t> window, reach;
        if (!zero && (!mayMask || !bandMask(op, term, block, reach, window))) {
          worklist.push_back(term);
          continue;
        }
        rewriter.replaceOp(add, add->getOperand(1 - k));
        rewriter.modifyOpInPlace(op, [&] {
          // The tighter of the op's reach and the band's.
          std::optional<int64_t> old = op.getKeyReach();
          if (reach && (!old || *reach < *old)) {
            op.setCausal(*reach == 0);
            if (*reach == 0)
              op.removeLookaheadAttr();
            else
              op.setLookahead(*reach);
          }
          if (window) {
            std::optional<uint64_t> old = op.getWindow();
            op.setWindow(old ? std::min<uint64_t>(*old, *window) : *window);
          }
        });
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "no band mask term");
  }

  /// Whether `v` is a mask term the attributes can express: sets `reach`
  /// (0: causal, else the lookahead) and `window` to them.
  static bool bandMask(AttentionOp op, Value v, Block &block,
                       std::optional<int64_t> &reach,
                       std::optional<int64_t> &window) {
    auto select = v.getDefiningOp<arith::SelectOp>();
    if (!select)
      return false;
    auto isZero = [](const APFloat &x) { return x.isZero(); };
    bool keepWhen;
    if (isFloatConstant(select.getTrueValue(), isMaskValue) &&
        isFloatConstant(select.getFalseValue(), isZero))
      keepWhen = false;
    else if (isFloatConstant(select.getTrueValue(), isZero) &&
             isFloatConstant(select.getFalseValue(), isMaskValue))
      keepWhen = true;
    else
      return false;
    Band band;
    if (!narrowBand(select.getCondition(), keepWhen, band, block) ||
        (!band.lo && !band.hi))
      return false;
    // The band must end at or after the diagonal (causal, lookahead) and
    // start at or before it.
    if ((band.hi && *band.hi < 0) || (band.lo && *band.lo > 0))
      return false;
    reach = band.hi;
    if (band.lo) {
      int64_t w = 1 - *band.lo;
      auto qType = cast<RankedTensorType>(op.getQ().getType());
      auto kType = cast<RankedTensorType>(op.getK().getType());
      int64_t lq = qType.getDimSize(2), lk = kType.getDimSize(2);
      // Row i sees no key when i >= Lk + W - 1.
      if (ShapedType::isDynamic(lq) || ShapedType::isDynamic(lk) ||
          lq > lk + w - 1)
        return false;
      window = w;
    }
    return true;
  }
};

/// Sign tests of positions in score_mod: the key position is in [0, Lk), the
/// query position in [0, Lq) without q_offset. `x >= c`, `x > c` with c < 0
/// (c <= 0 for >=) are true, the opposite tests false (front ends build
/// `position >= 0` masks).
struct FoldPositionSignTests : OpRewritePattern<arith::CmpIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::CmpIOp cmp,
                                PatternRewriter &rewriter) const override {
    auto op = dyn_cast<AttentionOp>(cmp->getParentOp());
    if (!op || cmp->getBlock() != &op.getScoreMod().front())
      return failure();
    Block &block = *cmp->getBlock();
    arith::CmpIPredicate pred = cmp.getPredicate();
    Value x = cmp.getLhs(), c = cmp.getRhs();
    if (positionArgument(x, block) < 0) {
      std::swap(x, c);
      pred = swapCmpIOperands(pred);
    }
    int64_t arg = positionArgument(x, block);
    APInt constant;
    if (arg < 0 || (arg == 3 && op.getQOffset()) ||
        !matchPattern(c, m_ConstantInt(&constant)))
      return failure();
    // x >= 0: decide `x pred c` where possible.
    int64_t k = constant.getSExtValue();
    std::optional<bool> result;
    using P = arith::CmpIPredicate;
    if ((pred == P::sge && k <= 0) || (pred == P::sgt && k < 0) ||
        (pred == P::ne && k < 0))
      result = true;
    else if ((pred == P::slt && k <= 0) || (pred == P::sle && k < 0) ||
             (pred == P::eq && k < 0))
      result = false;
    if (!result)
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        cmp, rewriter.getBoolAttr(*result));
    return success();
  }
};

} // namespace

void mlir::rpe::populateRPEFoldScoreProducersPatterns(
    RewritePatternSet &patterns, int64_t maxOps) {
  patterns.add<FoldScoreProducers>(patterns.getContext(), maxOps);
  patterns.add<RecognizeBandMask, FoldPositionSignTests>(patterns.getContext());
  // The producers' bounds checks are repeated in score_mod.
  populateRPEEraseUnusedChecksPatterns(patterns);
  // A score_mod left yielding its score (the mask became `causal`) goes.
  AttentionOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}
