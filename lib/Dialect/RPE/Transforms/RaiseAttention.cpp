//===- RaiseAttention.cpp - raise linalg attention to rpe.attention -------===//
//
// rpe-fuse-attention (a) and (c): unfused attention written in linalg on
// tensors, as front ends emit it,
//
//   s   = contraction(q[b,h,i,d], k[b,h,j,d])            (generic, zero init)
//   s'  = s * c  |  s / c                                (optional, scalar c)
//   s'' = s' + bias                                      (optional)
//   p   = linalg.softmax(s'', dim 3) | max/sub/exp/sum/div generics
//   o   = contraction(p[b,h,i,j], v[b,h,j,e])            (generic, zero init)
//   o'  = o + rpe.shaw_values(p, emb)                    (optional)
//
// becomes rpe.attention q, k, v [bias(...)] [rel_values(...) by ...] scale = c.
// Every intermediate must be used only inside the pattern.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rpe;

namespace {

using utils::IteratorType;

AffineMap dims(MLIRContext *ctx, unsigned n, ArrayRef<unsigned> results) {
  SmallVector<AffineExpr> exprs;
  for (unsigned r : results)
    exprs.push_back(getAffineDimExpr(r, ctx));
  return AffineMap::get(n, 0, exprs, ctx);
}

/// The single op in a linalg body before its yield, if it is the only one.
template <typename OpTy> OpTy singleBodyOp(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return OpTy();
  return dyn_cast<OpTy>(body.front());
}

/// `init` is a zero fill.
bool isZeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// A contraction generic out[d0,d1,d2,d3] += a[mapA] * b[mapB] over a
/// reduction d4, zero-initialised, on f32.
bool isContraction(linalg::GenericOp op, AffineMap mapA, AffineMap mapB) {
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 5)
    return false;
  SmallVector<IteratorType> its = op.getIteratorTypesArray();
  if (its !=
      SmallVector<IteratorType>{IteratorType::parallel, IteratorType::parallel,
                                IteratorType::parallel, IteratorType::parallel,
                                IteratorType::reduction})
    return false;
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != mapA || maps[1] != mapB ||
      maps[2] != dims(ctx, 5, {0, 1, 2, 3}))
    return false;
  if (!isZeroFill(op.getDpsInits()[0]))
    return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
  if (!mul || !add)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1),
        acc = body.getArgument(2);
  bool mulOk = (mul.getLhs() == a && mul.getRhs() == b) ||
               (mul.getLhs() == b && mul.getRhs() == a);
  bool addOk = (add.getLhs() == acc && add.getRhs() == mul) ||
               (add.getLhs() == mul && add.getRhs() == acc);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return mulOk && addOk && yield.getValues().front() == add.getResult();
}

bool isIdentity4(AffineMap map) {
  return map.isIdentity() && map.getNumDims() == 4;
}

/// The row-wise (last dimension) reduction of `input` with `combine`:
/// generic (b,h,i,j) -> (b,h,i), init filled with a constant.
template <typename CombineOp> bool isRowReduction(Value result, Value input) {
  auto op = result.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 1 || op.getDpsInputs()[0] != input ||
      op.getNumLoops() != 4)
    return false;
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!isIdentity4(maps[0]) || maps[1] != dims(ctx, 4, {0, 1, 2}))
    return false;
  auto combine = singleBodyOp<CombineOp>(op);
  return combine && op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
}

/// Matches softmax over the last dimension of a 4-D tensor; returns its
/// input, and the ops of the pattern in `ops`.
FailureOr<Value> matchSoftmax(Value p, SmallVectorImpl<Operation *> &ops) {
  if (auto softmax = p.getDefiningOp<linalg::SoftmaxOp>()) {
    if (softmax.getDimension() != 3)
      return failure();
    ops.push_back(softmax);
    return softmax.getInput();
  }
  // Decomposed: p = e / sum_j e, e = exp(s - max_j s).
  auto div = p.getDefiningOp<linalg::GenericOp>();
  if (!div || div.getNumDpsInputs() != 2 || div.getNumLoops() != 4)
    return failure();
  auto divOp = singleBodyOp<arith::DivFOp>(div);
  Block &divBody = div.getRegion().front();
  if (!divOp || divOp.getLhs() != divBody.getArgument(0) ||
      divOp.getRhs() != divBody.getArgument(1))
    return failure();
  Value e = div.getDpsInputs()[0], sum = div.getDpsInputs()[1];
  MLIRContext *ctx = p.getContext();
  SmallVector<AffineMap> divMaps = div.getIndexingMapsArray();
  if (!isIdentity4(divMaps[0]) || divMaps[1] != dims(ctx, 4, {0, 1, 2}) ||
      !isRowReduction<arith::AddFOp>(sum, e))
    return failure();
  auto exp = e.getDefiningOp<linalg::GenericOp>();
  if (!exp || exp.getNumDpsInputs() != 2 || exp.getNumLoops() != 4)
    return failure();
  SmallVector<AffineMap> expMaps = exp.getIndexingMapsArray();
  if (!isIdentity4(expMaps[0]) || expMaps[1] != dims(ctx, 4, {0, 1, 2}))
    return failure();
  Block &expBody = exp.getRegion().front();
  auto yield = cast<linalg::YieldOp>(expBody.getTerminator());
  auto expOp = yield.getValues().front().getDefiningOp<math::ExpOp>();
  auto sub = expOp ? expOp.getOperand().getDefiningOp<arith::SubFOp>()
                   : arith::SubFOp();
  if (!sub || sub.getLhs() != expBody.getArgument(0) ||
      sub.getRhs() != expBody.getArgument(1))
    return failure();
  Value s = exp.getDpsInputs()[0], max = exp.getDpsInputs()[1];
  if (!isRowReduction<arith::MaximumFOp>(max, s) &&
      !isRowReduction<arith::MaxNumFOp>(max, s))
    return failure();
  for (Value v : {p, sum, e, max})
    ops.push_back(v.getDefiningOp());
  return s;
}

/// Peels the steps between q·kᵀ and the softmax, from the softmax side:
/// a bias addition (s + b) and scalings (s * c, s / c, c constant) below
/// it. Updates `scale` and `bias`; returns the value under the steps.
Value peelScoreSteps(Value s, double &scale, Value &bias) {
  bool sawScale = false;
  // The softmax input's uses are checked by the caller; every value below
  // it must feed only the next step.
  for (bool first = true;; first = false) {
    auto op = s.getDefiningOp<linalg::GenericOp>();
    if (!op || op.getNumDpsInits() != 1 || op.getNumLoops() != 4 ||
        (!first && !s.hasOneUse()))
      return s;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    Block &body = op.getRegion().front();
    // s * c or s / c.
    if (op.getNumDpsInputs() == 1 && isIdentity4(maps[0])) {
      Operation *binop = &body.front();
      FloatAttr cst;
      if (body.getOperations().size() == 2 &&
          isa<arith::MulFOp, arith::DivFOp>(binop) &&
          binop->getOperand(0) == body.getArgument(0) &&
          matchPattern(binop->getOperand(1), m_Constant(&cst))) {
        double c = cst.getValueAsDouble();
        scale *= isa<arith::MulFOp>(binop) ? c : 1.0 / c;
        sawScale = true;
        s = op.getDpsInputs()[0];
        continue;
      }
      return s;
    }
    // s + bias, only outside every scale: (s + b)·c would scale the bias.
    if (op.getNumDpsInputs() == 2 && isIdentity4(maps[0]) && !bias &&
        !sawScale) {
      auto add = singleBodyOp<arith::AddFOp>(op);
      MLIRContext *ctx = op.getContext();
      AffineMap biasMap = maps[1];
      Value b = op.getDpsInputs()[1];
      auto bType = cast<RankedTensorType>(b.getType());
      bool rank3 = bType.getRank() == 3 && biasMap == dims(ctx, 4, {1, 2, 3});
      bool rank4 = bType.getRank() == 4 && isIdentity4(biasMap);
      if (add && (rank3 || rank4) &&
          ((add.getLhs() == body.getArgument(0) &&
            add.getRhs() == body.getArgument(1)) ||
           (add.getLhs() == body.getArgument(1) &&
            add.getRhs() == body.getArgument(0)))) {
        bias = b;
        s = op.getDpsInputs()[0];
        continue;
      }
    }
    return s;
  }
}

struct AttentionParts {
  Value q, k, v, bias, p;
  double scale = 1.0;
};

/// Matches the unfused attention ending in the P·V contraction `pv`.
/// `pUses` is the number of uses allowed on the probabilities.
FailureOr<AttentionParts> matchAttention(linalg::GenericOp pv, unsigned pUses) {
  MLIRContext *ctx = pv.getContext();
  if (!isContraction(pv, dims(ctx, 5, {0, 1, 2, 4}),
                     dims(ctx, 5, {0, 1, 4, 3})))
    return failure();
  AttentionParts parts;
  parts.p = pv.getDpsInputs()[0];
  parts.v = pv.getDpsInputs()[1];
  if (static_cast<unsigned>(std::distance(parts.p.getUses().begin(),
                                          parts.p.getUses().end())) != pUses)
    return failure();
  SmallVector<Operation *> softmaxOps;
  FailureOr<Value> scores = matchSoftmax(parts.p, softmaxOps);
  if (failed(scores))
    return failure();
  // Internal values of the decomposed softmax are used only inside it.
  Value s = peelScoreSteps(*scores, parts.scale, parts.bias);
  auto qk = s.getDefiningOp<linalg::GenericOp>();
  if (!qk || !isContraction(qk, dims(ctx, 5, {0, 1, 2, 4}),
                            dims(ctx, 5, {0, 1, 3, 4})))
    return failure();
  parts.q = qk.getDpsInputs()[0];
  parts.k = qk.getDpsInputs()[1];
  // Every value between q·kᵀ and the softmax has one use (the next step),
  // except that a decomposed softmax reads its input twice.
  unsigned allowed = isa<linalg::SoftmaxOp>(softmaxOps.front()) ? 1 : 2;
  if (static_cast<unsigned>(std::distance(
          (*scores).getUses().begin(), (*scores).getUses().end())) != allowed)
    return failure();
  if (s != *scores && !s.hasOneUse())
    return failure();
  for (Operation *op : softmaxOps)
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers())
        if (user != pv && !llvm::is_contained(softmaxOps, user) &&
            !(pUses > 1 && r == parts.p))
          return failure();
  // Types: f32 4-D tensors with q, k, v heads equal (no GQA here).
  for (Value t : {parts.q, parts.k, parts.v}) {
    auto type = dyn_cast<RankedTensorType>(t.getType());
    if (!type || type.getRank() != 4 || !type.getElementType().isF32())
      return failure();
  }
  return parts;
}

AttentionOp buildAttention(PatternRewriter &rewriter, Location loc,
                           const AttentionParts &parts, Type resultType,
                           Value relValues = {},
                           BucketingAttrInterface bucketing = {}) {
  return AttentionOp::create(rewriter, loc, resultType, parts.q, parts.k,
                             parts.v, parts.bias, /*key_lengths=*/Value(),
                             /*q_offset=*/Value(), relValues,
                             rewriter.getF64FloatAttr(parts.scale),
                             /*causal=*/UnitAttr(), bucketing);
}

/// (a): the P·V contraction of a recognised attention -> rpe.attention.
struct RaiseAttention : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp pv,
                                PatternRewriter &rewriter) const override {
    FailureOr<AttentionParts> parts = matchAttention(pv, /*pUses=*/1);
    if (failed(parts))
      return rewriter.notifyMatchFailure(pv, "not an unfused attention");
    AttentionOp attention =
        buildAttention(rewriter, pv.getLoc(), *parts, pv.getResultTypes()[0]);
    rewriter.replaceOp(pv, attention.getResult());
    return success();
  }
};

/// (c): pv + shaw_values(p, emb) with the same probabilities -> attention
/// with rel_values.
struct RaiseAttentionWithRelValues : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::AddFOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [a, b] : {std::pair{add.getLhs(), add.getRhs()},
                        std::pair{add.getRhs(), add.getLhs()}}) {
      auto pv = a.getDefiningOp<linalg::GenericOp>();
      auto sv = b.getDefiningOp<ShawValuesOp>();
      if (!pv || !sv || !a.hasOneUse() || !b.hasOneUse())
        continue;
      FailureOr<AttentionParts> parts = matchAttention(pv, /*pUses=*/2);
      if (failed(parts) || sv.getP() != parts->p)
        continue;
      AttentionOp attention =
          buildAttention(rewriter, add.getLoc(), *parts, add.getType(),
                         sv.getEmb(), sv.getBucketing());
      rewriter.replaceOp(add, attention.getResult());
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not attention + shaw_values");
  }
};

} // namespace

void mlir::rpe::populateRPERaiseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttention, RaiseAttentionWithRelValues>(
      patterns.getContext());
}
