//===- RaiseAttention.cpp - raise linalg attention to rpe.attention -------===//
//
// rpe-fuse-attention (a) and (c): unfused attention written in linalg on
// tensors, as front ends emit it,
//
//   s   = contraction(q[b,h,i,d], k[b,h,j,d])            (generic, zero init)
//   s'  = s * c  |  s / c                                (optional, scalar c)
//   s'' = s' + bias | masked fills | f(s')               (optional, any order)
//   p   = linalg.softmax(s'', dim 3) | max/sub/exp/sum/div generics
//   o   = contraction(p[b,h,i,j], v[b,h,j,e])            (generic, zero init)
//   o'  = o + rpe.shaw_values(p, emb)                    (optional)
//
// becomes rpe.attention q, k, v [bias(...)] [rel_values(...) by ...] scale = c
// with the steps after the first bias (or all, when the first is not an
// addition) in score_mod; f is any element-wise function of the score
// alone (a softcap c·tanh(s/c)), its body cloned.
// Every intermediate must be used only inside the pattern.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/LinalgMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

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

/// `init` is a zero fill.
bool isZeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

/// The permutation `perm` such that transposing an operand read through
/// `actual` by `perm` (result dim k = operand dim perm[k]) gives the operand
/// that `expected` reads: both maps are projections with the same dims.
std::optional<SmallVector<int64_t>> permutationTo(AffineMap actual,
                                                  AffineMap expected) {
  if (actual.getNumResults() != expected.getNumResults() ||
      !actual.isProjectedPermutation() || !expected.isProjectedPermutation())
    return std::nullopt;
  SmallVector<int64_t> perm;
  for (AffineExpr e : expected.getResults()) {
    auto it = llvm::find(actual.getResults(), e);
    if (it == actual.getResults().end())
      return std::nullopt;
    perm.push_back(std::distance(actual.getResults().begin(), it));
  }
  return perm;
}

/// A contraction generic out[d0,d1,d2,d3] += a[mapA] * b[mapB] over a
/// reduction d4, zero-initialised, on f32. Operands may be stored with
/// their dimensions permuted (front ends read B×L×H×D projections through
/// transposed maps): `perms` receives, per input, the permutation to the
/// layout mapA / mapB read (identity when none).
bool isContraction(linalg::GenericOp op, AffineMap mapA, AffineMap mapB,
                   SmallVector<SmallVector<int64_t>> *perms = nullptr) {
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
  if (maps[2] != dims(ctx, 5, {0, 1, 2, 3}))
    return false;
  SmallVector<SmallVector<int64_t>> found;
  for (auto [actual, expected] : {std::pair{maps[0], mapA}, {maps[1], mapB}}) {
    std::optional<SmallVector<int64_t>> perm = permutationTo(actual, expected);
    if (!perm || (!perms && !llvm::equal(*perm, llvm::seq<int64_t>(0, 4))))
      return false;
    found.push_back(*perm);
  }
  if (perms)
    *perms = std::move(found);
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

/// How a per-row value (b,h,i) is read in a 4-D loop nest: (d0,d1,d2) on a
/// B×H×L tensor, or (d0,d1,d2,0) on a B×H×L×1 one (front ends keep the
/// reduced dimension).
bool isRowMap(AffineMap map, Type type) {
  MLIRContext *ctx = map.getContext();
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped)
    return false;
  if (shaped.getRank() == 3)
    return map == dims(ctx, 4, {0, 1, 2});
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  return shaped.getRank() == 4 && shaped.getDimSize(3) == 1 &&
         map ==
             AffineMap::get(4, 0,
                            {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                             getAffineDimExpr(2, ctx), zero},
                            ctx);
}

/// The row-wise (last dimension) reduction of `input` with `combine`:
/// generic (b,h,i,j) -> (b,h,i) or (b,h,i,0), init filled with a constant.
template <typename CombineOp> bool isRowReduction(Value result, Value input) {
  auto op = result.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 1 || op.getDpsInputs()[0] != input ||
      op.getNumLoops() != 4 || op.getNumDpsInits() != 1)
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!isIdentity4(maps[0]) || !isRowMap(maps[1], result.getType()))
    return false;
  auto combine = singleBodyOp<CombineOp>(op);
  return combine && op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
}

/// The subtraction under the exp that `op` yields (exp(a - b) in one body).
arith::SubFOp subUnderExp(linalg::GenericOp op) {
  auto yield = cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
  auto exp = yield.getValues().front().getDefiningOp<math::ExpOp>();
  return exp ? exp.getOperand().getDefiningOp<arith::SubFOp>()
             : arith::SubFOp();
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
  SmallVector<AffineMap> divMaps = div.getIndexingMapsArray();
  if (!isIdentity4(divMaps[0]) || !isRowMap(divMaps[1], sum.getType()) ||
      !isRowReduction<arith::AddFOp>(sum, e))
    return failure();
  auto exp = e.getDefiningOp<linalg::GenericOp>();
  if (!exp || exp.getNumLoops() != 4)
    return failure();
  // e = exp(s - max) in one generic, or exp of a separate subtraction
  // (front ends emit one generic per torch op).
  linalg::GenericOp sub = exp;
  if (exp.getNumDpsInputs() == 1) {
    Block &expBody = exp.getRegion().front();
    auto expOp = singleBodyOp<math::ExpOp>(exp);
    if (!expOp || expOp.getOperand() != expBody.getArgument(0) ||
        !isIdentity4(exp.getIndexingMapsArray()[0]) ||
        !exp.getDpsInputs()[0].hasOneUse())
      return failure();
    sub = exp.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
    if (!sub || sub.getNumLoops() != 4 || !singleBodyOp<arith::SubFOp>(sub))
      return failure();
    ops.push_back(sub);
  }
  if (sub.getNumDpsInputs() != 2)
    return failure();
  SmallVector<AffineMap> subMaps = sub.getIndexingMapsArray();
  if (!isIdentity4(subMaps[0]) ||
      !isRowMap(subMaps[1], sub.getDpsInputs()[1].getType()))
    return failure();
  Block &subBody = sub.getRegion().front();
  arith::SubFOp subOp =
      sub == exp ? subUnderExp(sub) : singleBodyOp<arith::SubFOp>(sub);
  if (!subOp || subOp.getLhs() != subBody.getArgument(0) ||
      subOp.getRhs() != subBody.getArgument(1))
    return failure();
  Value s = sub.getDpsInputs()[0], max = sub.getDpsInputs()[1];
  // B×H×L -> B×H×L×1 of the reduced maximum (front ends).
  if (auto expand = max.getDefiningOp<tensor::ExpandShapeOp>()) {
    if (expand.getSrcType().getRank() != 3 || !max.hasOneUse())
      return failure();
    ops.push_back(expand);
    max = expand.getSrc();
  }
  if (!isRowReduction<arith::MaximumFOp>(max, s) &&
      !isRowReduction<arith::MaxNumFOp>(max, s))
    return failure();
  for (Value v : {p, sum, e, max})
    ops.push_back(v.getDefiningOp());
  return s;
}

/// The value of a float constant, or of arith.truncf of one (rounded to
/// the result type as truncf does).
std::optional<double> scalarConstant(Value v) {
  FloatAttr cst;
  if (matchPattern(v, m_Constant(&cst)))
    return cst.getValueAsDouble();
  auto trunc = v.getDefiningOp<arith::TruncFOp>();
  if (!trunc || !matchPattern(trunc.getIn(), m_Constant(&cst)))
    return std::nullopt;
  llvm::APFloat value = cst.getValue();
  bool losesInfo = false;
  value.convert(cast<FloatType>(trunc.getType()).getFloatSemantics(),
                llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToDouble();
}

/// The value of a scalar constant held in a tensor whose elements are all
/// equal: a splat constant, a fill of a constant, or a generic without
/// inputs that yields a constant (torch-mlir's 0-D tensors).
std::optional<double> splatConstant(Value tensor) {
  DenseElementsAttr dense;
  if (matchPattern(tensor, m_Constant(&dense)) && dense.isSplat() &&
      isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>())
    return scalarConstant(fill.getInputs()[0]);
  auto op = tensor.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 0 || op.getNumResults() != 1)
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value v = yield.getValues().front();
  if (v.getParentRegion() == &op.getRegion())
    return std::nullopt;
  return scalarConstant(v);
}

/// `x * c` or `x / c` element-wise over 4-D `x` with a scalar constant c (an
/// operand of the body, or a 0-D / splat tensor input), used only by `user`:
/// returns x and the factor c or 1/c.
std::optional<std::pair<Value, double>> peelOperandScale(Value v,
                                                         Operation *user) {
  auto op = v.getDefiningOp<linalg::GenericOp>();
  if (!op || !v.hasOneUse() || *v.getUsers().begin() != user ||
      op.getNumDpsInits() != 1 || op.getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      op.getNumDpsInputs() < 1 || op.getNumDpsInputs() > 2)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!maps[0].isIdentity() || !maps.back().isIdentity() ||
      op.getDpsInputs()[0].getType() != v.getType())
    return std::nullopt;
  Block &body = op.getRegion().front();
  Operation *binop = singleBodyOp<arith::MulFOp>(op);
  if (!binop)
    binop = singleBodyOp<arith::DivFOp>(op);
  if (!binop || binop->getOperand(0) != body.getArgument(0) ||
      cast<linalg::YieldOp>(body.getTerminator()).getValues().front() !=
          binop->getResult(0))
    return std::nullopt;
  std::optional<double> c;
  Value factor = binop->getOperand(1);
  if (op.getNumDpsInputs() == 2) {
    // The factor is the second input, read the same at every element.
    if (factor != body.getArgument(1) ||
        llvm::any_of(maps[1].getResults(),
                     [](AffineExpr e) { return !isa<AffineConstantExpr>(e); }))
      return std::nullopt;
    c = splatConstant(op.getDpsInputs()[1]);
  } else if (factor.getParentRegion() != &op.getRegion()) {
    c = scalarConstant(factor);
  }
  if (!c || *c == 0.0 || !std::isfinite(*c))
    return std::nullopt;
  return std::pair{op.getDpsInputs()[0],
                   isa<arith::MulFOp>(binop) ? *c : 1.0 / *c};
}

/// A step applied to the scores between q·kᵀ and the softmax: a term read at
/// (b,h,i,j) through `map`, added (`s + value`) or, when `fill` is set, a
/// masked fill (`select(value, fill, s)`, or `select(value, s, fill)` when
/// `fillWhenFalse`); or, when `function` is set, that element-wise generic
/// of the scores alone (a scaling by `factor` when that is set, a softcap's
/// tanh, ...).
struct ScoreStep {
  Value value;
  AffineMap map;
  Value fill = {};
  bool fillWhenFalse = false;
  linalg::GenericOp function = {};
  std::optional<double> factor = std::nullopt;

  bool isMaskedFill() const { return static_cast<bool>(fill); }
  bool isFunction() const { return static_cast<bool>(function); }
};

/// A generic computing each score from that score alone (and constants):
/// one 4-D input and init read and written at (b,h,i,j), all loops
/// parallel, a body of arith and math ops without side effects on f32.
bool isScoreFunction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      !llvm::all_of(op.getIndexingMapsArray(), isIdentity4) ||
      !llvm::all_of(op.getIteratorTypesArray(),
                    [](IteratorType t) { return t == IteratorType::parallel; }))
    return false;
  Block &body = op.getRegion().front();
  if (!body.getArgument(0).getType().isF32() ||
      !getElementTypeOrSelf(op.getResult(0).getType()).isF32() ||
      !body.getArgument(1).use_empty())
    return false;
  for (Operation &inner : body.without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) ||
        inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
      return false;
    for (Value operand : inner.getOperands())
      if (operand.getParentRegion() != &op.getRegion() &&
          !matchPattern(operand, m_Constant()))
        return false;
  }
  return true;
}

/// How a bias tensor may be read in the (b,h,i,j) nest: H×Lq×Lk through
/// (d1,d2,d3), or B×H×Lq×Lk through (d0,d1,d2,d3) where any dim of static
/// size 1 may read index 0 instead (a broadcast, e.g. a B×1×Lq×Lk mask).
bool isBiasMap(AffineMap map, Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || map.getNumDims() != 4)
    return false;
  MLIRContext *ctx = map.getContext();
  // H×Lq×Lk, or B×H×Lk (a bias of the key only: BLOOM's ALiBi, padding
  // masks).
  if (shaped.getRank() == 3)
    return map == dims(ctx, 4, {1, 2, 3}) || map == dims(ctx, 4, {0, 1, 3});
  if (shaped.getRank() != 4 || map.getNumResults() != 4)
    return false;
  for (auto [k, e] : llvm::enumerate(map.getResults())) {
    if (e == getAffineDimExpr(k, ctx))
      continue;
    auto c = dyn_cast<AffineConstantExpr>(e);
    if (!c || c.getValue() != 0 || shaped.getDimSize(k) != 1)
      return false;
  }
  return true;
}

/// Peels the steps between q·kᵀ and the softmax, from the softmax side:
/// bias additions (s + b), masked fills, and element-wise functions of the
/// score alone (scalings s * c, s / c with c constant among them). The
/// scalings next to q·kᵀ become `scale`; the other steps go into `steps`
/// (closest to the softmax first). Returns the value under the steps.
Value peelScoreSteps(Value s, double &scale,
                     SmallVectorImpl<ScoreStep> &steps) {
  // The softmax input's uses are checked by the caller; every value below
  // it must feed only the next step.
  for (bool first = true;; first = false) {
    auto op = s.getDefiningOp<linalg::GenericOp>();
    if (!op || op.getNumDpsInits() != 1 || op.getNumLoops() != 4 ||
        (!first && !s.hasOneUse()))
      break;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    Block &body = op.getRegion().front();
    // s * c or s / c (c maybe rounded to f32 in the body: torch-mlir keeps
    // Python's double and truncates it there).
    if (op.getNumDpsInputs() == 1 && isIdentity4(maps[0])) {
      auto yield = cast<linalg::YieldOp>(body.getTerminator());
      Operation *binop = yield.getValues().front().getDefiningOp();
      bool hasCst = false;
      double c = 0.0;
      if (binop && binop->getNumOperands() == 2)
        if (std::optional<double> v = scalarConstant(binop->getOperand(1))) {
          hasCst = true;
          c = *v;
        }
      size_t expected =
          hasCst && binop->getOperand(1).getDefiningOp<arith::TruncFOp>() ? 3
                                                                          : 2;
      if (body.getOperations().size() == expected && binop &&
          isa<arith::MulFOp, arith::DivFOp>(binop) &&
          binop->getOperand(0) == body.getArgument(0) && hasCst &&
          isScoreFunction(op)) {
        ScoreStep step;
        step.function = op;
        step.factor = isa<arith::MulFOp>(binop) ? c : 1.0 / c;
        steps.push_back(step);
        s = op.getDpsInputs()[0];
        continue;
      }
      // s + 0 or s - 0: transformers adds a zero position bias where a layer
      // has none (T5's cross-attention), which torch-mlir folds to a
      // constant. Only the sign of a zero score could change; exp does not
      // see it.
      if (body.getOperations().size() == expected && binop &&
          isa<arith::AddFOp, arith::SubFOp>(binop) &&
          binop->getOperand(0) == body.getArgument(0) && hasCst && c == 0.0) {
        s = op.getDpsInputs()[0];
        continue;
      }
      // Any other function of the score (Gemma 2's softcap c·tanh(s/c)).
      if (isScoreFunction(op)) {
        ScoreStep step;
        step.function = op;
        steps.push_back(step);
        s = op.getDpsInputs()[0];
        continue;
      }
      break;
    }
    // select(mask, c, s) or select(mask, s, c) with a scalar constant c (a
    // masked fill, as masked_fill exports).
    if (op.getNumDpsInputs() == 2) {
      auto select = singleBodyOp<arith::SelectOp>(op);
      Value x = op.getDpsInputs()[1], mask = op.getDpsInputs()[0];
      if (select && select.getCondition() == body.getArgument(0) &&
          isIdentity4(maps[1]) &&
          cast<RankedTensorType>(x.getType()).getRank() == 4 &&
          isBiasMap(maps[0], mask.getType())) {
        bool whenFalse = select.getFalseValue() != body.getArgument(1);
        Value fill = whenFalse ? select.getFalseValue() : select.getTrueValue();
        Value kept = whenFalse ? select.getTrueValue() : select.getFalseValue();
        if (kept != body.getArgument(1) || !scalarConstant(fill))
          break;
        steps.push_back({mask, maps[0], fill, whenFalse});
        s = x;
        continue;
      }
    }
    // s + bias. Either operand may be the scores (identity map, 4-D).
    if (op.getNumDpsInputs() == 2) {
      auto add = singleBodyOp<arith::AddFOp>(op);
      if (!add || !((add.getLhs() == body.getArgument(0) &&
                     add.getRhs() == body.getArgument(1)) ||
                    (add.getLhs() == body.getArgument(1) &&
                     add.getRhs() == body.getArgument(0))))
        break;
      for (unsigned scores : {0u, 1u}) {
        Value b = op.getDpsInputs()[1 - scores];
        Value x = op.getDpsInputs()[scores];
        if (!isIdentity4(maps[scores]) ||
            cast<RankedTensorType>(x.getType()).getRank() != 4 ||
            !isBiasMap(maps[1 - scores], b.getType()))
          continue;
        steps.push_back({b, maps[1 - scores]});
        s = x;
        break;
      }
      if (s == op.getResult(0))
        break;
      continue;
    }
    break;
  }
  // The scalings next to q·kᵀ are the attention's scale; the rest of the
  // steps, scalings above a bias or a function among them, stay in order.
  while (!steps.empty() && steps.back().factor) {
    scale *= *steps.back().factor;
    steps.pop_back();
  }
  return s;
}

struct AttentionParts {
  Value q, k, v, p;
  SmallVector<ScoreStep> steps;
  /// Per q, k, v: the permutation to B×H×L×D (identity: none).
  SmallVector<SmallVector<int64_t>> perms;
  double scale = 1.0;
};

/// Matches the unfused attention ending in the P·V contraction `pv`.
/// `pUses` is the number of uses allowed on the probabilities.
FailureOr<AttentionParts> matchAttention(linalg::GenericOp pv, unsigned pUses) {
  MLIRContext *ctx = pv.getContext();
  SmallVector<SmallVector<int64_t>> pvPerms;
  if (!isContraction(pv, dims(ctx, 5, {0, 1, 2, 4}), dims(ctx, 5, {0, 1, 4, 3}),
                     &pvPerms) ||
      !llvm::equal(pvPerms[0], llvm::seq<int64_t>(0, 4)))
    return failure();
  AttentionParts parts;
  parts.perms = pvPerms;
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
  Value s = peelScoreSteps(*scores, parts.scale, parts.steps);
  auto qk = s.getDefiningOp<linalg::GenericOp>();
  SmallVector<SmallVector<int64_t>> qkPerms;
  if (!qk || !isContraction(qk, dims(ctx, 5, {0, 1, 2, 4}),
                            dims(ctx, 5, {0, 1, 3, 4}), &qkPerms))
    return failure();
  parts.q = qk.getDpsInputs()[0];
  parts.k = qk.getDpsInputs()[1];
  // q or k scaled before q·kᵀ (DeBERTa divides k by sqrt(D·factor), a 0-D
  // tensor): the factor joins the scale. Rounding differs from scaling each
  // element of k by at most an ulp of the score.
  for (Value *operand : {&parts.q, &parts.k})
    if (auto peeled = peelOperandScale(*operand, qk)) {
      *operand = peeled->first;
      parts.scale *= peeled->second;
    }
  parts.perms = {qkPerms[0], qkPerms[1], parts.perms[1]};
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
  // Added bias terms read in score_mod are f32 (its scores are); masks of a
  // masked fill are i1, filled with an f32 constant.
  for (size_t t = 0; t < parts.steps.size(); ++t) {
    const ScoreStep &term = parts.steps[t];
    if (term.isFunction())
      continue;
    Type element = getElementTypeOrSelf(term.value.getType());
    if (term.isMaskedFill()
            ? !element.isInteger(1) || !term.fill.getType().isF32()
            : t + 1 < parts.steps.size() && !element.isF32())
      return failure();
  }
  // Types: f32 4-D tensors with q, k, v heads equal (no GQA here).
  for (Value t : {parts.q, parts.k, parts.v}) {
    auto type = dyn_cast<RankedTensorType>(t.getType());
    if (!type || type.getRank() != 4 || !type.getElementType().isF32())
      return failure();
  }
  return parts;
}

/// Grouped-query K/V as front ends write them: B×Hkv×L×D broadcast to
/// B×Hkv×G×L×D (a copy generic reading (d0, d1, d3, d4)) and collapsed to
/// B×(Hkv·G)×L×D. Returns the B×Hkv×L×D source, or null.
Value groupedSource(Value v) {
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getSrcType().getRank() != 5)
    return Value();
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  if (groups != SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}})
    return Value();
  auto bcast = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  if (!bcast || bcast.getNumDpsInputs() != 1 || bcast.getNumLoops() != 5 ||
      bcast.getNumParallelLoops() != 5)
    return Value();
  Block &body = bcast.getRegion().front();
  if (body.getOperations().size() != 1 ||
      cast<linalg::YieldOp>(body.getTerminator()).getValues().front() !=
          body.getArgument(0))
    return Value();
  MLIRContext *ctx = v.getContext();
  SmallVector<AffineMap> maps = bcast.getIndexingMapsArray();
  if (maps[0] != dims(ctx, 5, {0, 1, 3, 4}) || !maps[1].isIdentity())
    return Value();
  return bcast.getDpsInputs()[0];
}

/// `value` transposed by `perm` (itself when the identity).
Value transposed(PatternRewriter &rewriter, Location loc, Value value,
                 ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : perm)
    sizes.push_back(tensor::getMixedSize(rewriter, loc, value, d));
  Value init =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, value, init, perm)
      .getResult()[0];
}

AttentionOp buildAttention(PatternRewriter &rewriter, Location loc,
                           const AttentionParts &parts, Type resultType,
                           Value relValues = {},
                           BucketingAttrInterface bucketing = {}) {
  Value q = transposed(rewriter, loc, parts.q, parts.perms[0]);
  Value k = transposed(rewriter, loc, parts.k, parts.perms[1]);
  Value v = transposed(rewriter, loc, parts.v, parts.perms[2]);
  // Repeated K/V heads: attention reads the kv heads (GQA) instead.
  Value kSource = groupedSource(k), vSource = groupedSource(v);
  if (kSource && vSource &&
      cast<RankedTensorType>(kSource.getType()).getDimSize(1) ==
          cast<RankedTensorType>(vSource.getType()).getDimSize(1)) {
    k = kSource;
    v = vSource;
  }
  // The bias closest to the scores is the bias operand when it is added;
  // further terms (a front end adds the relative bias, then the mask) are
  // applied in score_mod, in the front end's order.
  ArrayRef<ScoreStep> modTerms = parts.steps;
  Value bias;
  if (!modTerms.empty() && !modTerms.back().isMaskedFill() &&
      !modTerms.back().isFunction()) {
    bias = modTerms.back().value;
    modTerms = modTerms.drop_back();
  }
  // A B×H×Lk bias operand is B×H×1×Lk (broadcast along the rows).
  if (bias &&
      parts.steps.back().map == dims(rewriter.getContext(), 4, {0, 1, 3})) {
    auto type = cast<RankedTensorType>(bias.getType());
    auto expanded = RankedTensorType::get(
        {type.getDimSize(0), type.getDimSize(1), 1, type.getDimSize(2)},
        type.getElementType());
    bias = tensor::ExpandShapeOp::create(
        rewriter, loc, expanded, bias,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  }
  auto attention = AttentionOp::create(
      rewriter, loc, resultType, q, k, v, bias, /*key_lengths=*/Value(),
      /*q_offset=*/Value(), relValues, rewriter.getF64FloatAttr(parts.scale),
      /*causal=*/UnitAttr(), bucketing, /*window=*/IntegerAttr(),
      /*lookahead=*/IntegerAttr());
  if (modTerms.empty())
    return attention;
  OpBuilder::InsertionGuard guard(rewriter);
  Type f32 = rewriter.getF32Type(), idx = rewriter.getIndexType();
  SmallVector<Location> locs(5, loc);
  Block *block = rewriter.createBlock(&attention.getScoreMod(), {},
                                      {f32, idx, idx, idx, idx}, locs);
  Value score = block->getArgument(0);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  for (const ScoreStep &term : llvm::reverse(modTerms)) {
    if (term.isFunction()) {
      // The generic's body on the score, its constants cloned in.
      linalg::GenericOp function = term.function;
      Block &body = function.getRegion().front();
      IRMapping mapping;
      mapping.map(body.getArgument(0), score);
      for (Operation &inner : body.without_terminator()) {
        for (Value operand : inner.getOperands())
          if (!mapping.contains(operand) &&
              operand.getParentRegion() != &function.getRegion())
            mapping.map(operand,
                        rewriter.clone(*operand.getDefiningOp())->getResult(0));
        rewriter.clone(inner, mapping);
      }
      score = mapping.lookup(body.getTerminator()->getOperand(0));
      continue;
    }
    SmallVector<Value> indices;
    for (AffineExpr e : term.map.getResults())
      indices.push_back(
          isa<AffineDimExpr>(e)
              ? block->getArgument(1 + cast<AffineDimExpr>(e).getPosition())
              : zero);
    Value x = tensor::ExtractOp::create(rewriter, loc, term.value, indices);
    if (!term.isMaskedFill()) {
      score = arith::AddFOp::create(rewriter, loc, score, x);
      continue;
    }
    // The constant, rounded to f32 when the front end truncated it.
    Value fill = arith::ConstantOp::create(
        rewriter, loc, rewriter.getF32FloatAttr(*scalarConstant(term.fill)));
    score = term.fillWhenFalse
                ? arith::SelectOp::create(rewriter, loc, x, score, fill)
                : arith::SelectOp::create(rewriter, loc, x, fill, score);
  }
  YieldOp::create(rewriter, loc, ValueRange{score});
  return attention;
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
