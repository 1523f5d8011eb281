//===- RaiseBuckets.cpp - front-end bucket code in score_mod → rpe.bucket -===//
//
// Front ends spell a relative position scheme as integer and float
// arithmetic on the positions, or as a gather from a constant index tensor
// (Swin's relative_position_index); rpe-fuse-attention moves that code into
// the score_mod of the attention. When the lengths are static, the code is a
// function on a finite domain: these patterns evaluate it there (by folding
// its ops on constant positions) and, when it equals a bucketing scheme of
// rpe at every position, replace it by `rpe.bucket` with that scheme. The IR
// then says what it computes, the constant index tensor goes away, and the
// kernels treat it like a fused `rpe.relative_bias`.
//
// Candidates: `window2d` (Wh·Ww = Lq = Lk, (2Wh−1)(2Ww−1) table rows),
// `clip`, `t5` (both directions) and `log`, with parameters derived from the
// table's rows and from the constants of the code (T5's log(M/e) gives M);
// a candidate is taken only when it matches at every (i, j) of the domain.
// Code that reads i and j only through their difference is evaluated once
// per diagonal, so long sequences stay cheap.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/LinalgMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// A scalar value of score_mod computed from the positions %i, %j and
/// constants only, evaluated by folding its ops on constant positions.
class PositionFunction {
public:
  /// The code of `root` within `body` (whose arguments are
  /// (s, b, h, i, j)); none when it reads anything else.
  static std::optional<PositionFunction> get(Value root, Block &body) {
    PositionFunction f;
    f.root = root;
    f.i = body.getArgument(3);
    f.j = body.getArgument(4);
    llvm::SetVector<Operation *> slice;
    SmallVector<Value> worklist = {root};
    bool readsPositions = false;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (v == f.i || v == f.j) {
        readsPositions = true;
        continue;
      }
      if (matchPattern(v, m_Constant()))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &body || def->getNumResults() != 1 ||
          def->getNumRegions() != 0 || !isPure(def))
        return std::nullopt;
      if (!slice.insert(def))
        continue;
      for (Value operand : def->getOperands())
        worklist.push_back(operand);
    }
    if (!readsPositions || slice.empty())
      return std::nullopt;
    f.ops.assign(slice.begin(), slice.end());
    f.opSet.insert(slice.begin(), slice.end());
    llvm::sort(f.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    f.findDifference();
    return f;
  }

  /// Whether the code reads i and j only through one difference d = j − i
  /// (or i − j, `diffSign` −1), possibly of index_casts of them.
  bool readsOnlyDifference() const { return difference != nullptr; }

  /// The value at (i, j); none if some op does not fold.
  std::optional<int64_t> evaluate(int64_t iv, int64_t jv) const {
    DenseMap<Value, Attribute> env;
    Builder b(root.getContext());
    env[i] = b.getIndexAttr(iv);
    env[j] = b.getIndexAttr(jv);
    return run(env);
  }

  /// The value at j − i = d (readsOnlyDifference()).
  std::optional<int64_t> evaluateDifference(int64_t d) const {
    DenseMap<Value, Attribute> env;
    Value result = difference->getResult(0);
    env[result] = IntegerAttr::get(result.getType(), diffSign * d);
    return run(env);
  }

  /// Float and integer constants the code uses (candidate parameters).
  void collectConstants(SmallVectorImpl<double> &floats,
                        SmallVectorImpl<int64_t> &ints) const {
    for (Operation *op : ops)
      for (Value operand : op->getOperands()) {
        Attribute attr;
        if (!matchPattern(operand, m_Constant(&attr)))
          continue;
        if (auto f = dyn_cast<FloatAttr>(attr))
          floats.push_back(f.getValueAsDouble());
        else if (auto n = dyn_cast<IntegerAttr>(attr))
          ints.push_back(n.getValue().getSExtValue());
      }
  }

private:
  /// d = subi(J, I) with J ∈ {j, index_cast j}, I likewise, where i and j
  /// (and the casts) have no other use in the code.
  void findDifference() {
    auto position = [&](Value v, Value arg) {
      if (v == arg)
        return true;
      auto cast = v.getDefiningOp<arith::IndexCastOp>();
      return cast && cast.getIn() == arg;
    };
    for (Operation *op : ops) {
      auto sub = dyn_cast<arith::SubIOp>(op);
      if (!sub)
        continue;
      int sign = 0;
      if (position(sub.getLhs(), j) && position(sub.getRhs(), i))
        sign = 1;
      else if (position(sub.getLhs(), i) && position(sub.getRhs(), j))
        sign = -1;
      if (!sign)
        continue;
      // Nothing else in the code may read the positions.
      bool only = llvm::all_of(ops, [&](Operation *other) {
        if (other == op || other == sub.getLhs().getDefiningOp() ||
            other == sub.getRhs().getDefiningOp())
          return true;
        return llvm::none_of(other->getOperands(), [&](Value v) {
          return v == i || v == j || v == sub.getLhs() || v == sub.getRhs();
        });
      });
      if (only) {
        difference = op;
        diffSign = sign;
        return;
      }
    }
  }

  /// The value of `root` from those in `env` (the positions, or the
  /// difference), folding on demand: a select evaluates only the operand
  /// it picks, so a branch that does not fold where it is not taken (T5's
  /// log of distance 0) does not matter.
  std::optional<int64_t> run(DenseMap<Value, Attribute> &env) const {
    Attribute value = eval(root, env);
    if (auto n = dyn_cast_if_present<IntegerAttr>(value))
      return n.getType().isInteger(1) ? n.getValue().getZExtValue()
                                      : n.getValue().getSExtValue();
    return std::nullopt;
  }

  Attribute eval(Value v, DenseMap<Value, Attribute> &env) const {
    if (Attribute known = env.lookup(v))
      return known;
    Attribute result;
    if (matchPattern(v, m_Constant(&result)))
      return result;
    Operation *op = v.getDefiningOp();
    if (!op || !opSet.contains(op))
      return {};
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      auto cond =
          dyn_cast_if_present<IntegerAttr>(eval(select.getCondition(), env));
      if (!cond)
        return {};
      result = eval(cond.getValue().isOne() ? select.getTrueValue()
                                            : select.getFalseValue(),
                    env);
      return env[v] = result;
    }
    SmallVector<Attribute> operands;
    for (Value operand : op->getOperands()) {
      operands.push_back(eval(operand, env));
      if (!operands.back())
        return {};
    }
    if (isa<tensor::ExtractOp>(op)) {
      auto type = cast<RankedTensorType>(op->getOperand(0).getType());
      if (!type.hasStaticShape())
        return {};
      int64_t flat = 0;
      for (auto [k, index] : llvm::enumerate(ArrayRef(operands).drop_front())) {
        auto n = dyn_cast<IntegerAttr>(index);
        if (!n)
          return {};
        int64_t position = n.getValue().getSExtValue();
        if (position < 0 || position >= type.getDimSize(k))
          return {};
        flat = flat * type.getDimSize(k) + position;
      }
      result = constantElement(operands[0], flat);
    } else if (auto trunc = dyn_cast<arith::TruncFOp>(op);
               trunc && !trunc.getRoundingmode()) {
      // Upstream does not fold an inexact truncation; front ends round
      // their f64 constants (T5's log(M/e)) to f32 this way.
      auto in = dyn_cast<FloatAttr>(operands[0]);
      if (!in)
        return {};
      APFloat value = in.getValue();
      bool losesInfo;
      value.convert(cast<FloatType>(trunc.getType()).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
      result = FloatAttr::get(trunc.getType(), value);
    } else {
      SmallVector<OpFoldResult> folded;
      if (failed(op->fold(operands, folded)) || folded.size() != 1)
        return {};
      result = dyn_cast<Attribute>(folded[0]);
      if (!result)
        result = eval(cast<Value>(folded[0]), env);
    }
    if (result)
      env[v] = result;
    return result;
  }

  Value root, i, j;
  SmallVector<Operation *> ops;
  /// The same ops, for membership tests.
  llvm::SmallPtrSet<Operation *, 16> opSet;
  Operation *difference = nullptr;
  int diffSign = 1;
};

/// The values of a position function on the attention's domain: every
/// (i, j), or every diagonal when it reads only j − i.
struct Tabulated {
  int64_t iBegin = 0, lq = 0, lk = 0;
  bool byDifference = false;
  /// byDifference: value at d = j − i, indexed d − dMin; else at (i, j),
  /// row-major.
  SmallVector<int64_t> values;
  int64_t dMin() const { return -(iBegin + lq - 1); }

  bool matches(BucketingAttrInterface scheme) const {
    if (byDifference) {
      if (!scheme.isToeplitz())
        return false;
      for (auto [k, v] : llvm::enumerate(values))
        if (scheme.bucket(0, dMin() + static_cast<int64_t>(k)) != v)
          return false;
      return true;
    }
    for (int64_t r = 0; r < lq; ++r)
      for (int64_t c = 0; c < lk; ++c)
        if (scheme.bucket(iBegin + r, c) != values[r * lk + c])
          return false;
    return true;
  }
};

/// Static (Lq, Lk) and the first query position of `op`.
std::optional<Tabulated> domainOf(AttentionOp op) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  auto k = cast<RankedTensorType>(op.getK().getType());
  Tabulated t;
  t.lq = q.getDimSize(2);
  t.lk = k.getDimSize(2);
  if (ShapedType::isDynamic(t.lq) || ShapedType::isDynamic(t.lk) || t.lq == 0 ||
      t.lk == 0)
    return std::nullopt;
  if (Value offset = op.getQOffset()) {
    APInt value;
    if (!matchPattern(offset, m_ConstantInt(&value)))
      return std::nullopt;
    t.iBegin = value.getSExtValue();
  }
  return t;
}

/// `f` on the domain `t`: once per diagonal when it reads only j − i (at
/// most `limits.maxDiagonals` of them), else at every pair (at most
/// `limits.maxPairs`).
std::optional<Tabulated> tabulate(const PositionFunction &f, Tabulated t,
                                  const RaiseBucketsLimits &limits) {
  if (f.readsOnlyDifference() && t.lq + t.lk - 1 <= limits.maxDiagonals) {
    t.byDifference = true;
    for (int64_t d = t.dMin(), e = t.lk - t.iBegin; d < e; ++d) {
      std::optional<int64_t> v = f.evaluateDifference(d);
      if (!v)
        return std::nullopt;
      t.values.push_back(*v);
    }
    return t;
  }
  if (t.lq > limits.maxPairs / t.lk)
    return std::nullopt;
  for (int64_t r = 0; r < t.lq; ++r)
    for (int64_t c = 0; c < t.lk; ++c) {
      std::optional<int64_t> v = f.evaluate(t.iBegin + r, c);
      if (!v)
        return std::nullopt;
      t.values.push_back(*v);
    }
  return t;
}

/// The bucketing schemes with `numBuckets` buckets that `f` may compute.
SmallVector<BucketingAttrInterface>
candidateSchemes(MLIRContext *ctx, int64_t numBuckets, const Tabulated &t,
                 const PositionFunction &f) {
  SmallVector<BucketingAttrInterface> schemes;
  if (numBuckets <= 0 || numBuckets > kMaxBucketParam)
    return schemes;
  // Swin: a Wh×Ww window over Lq = Lk = Wh·Ww tokens.
  if (t.lq == t.lk && t.iBegin == 0)
    for (int64_t h = 1; h <= t.lq && h <= (1 << 14); ++h)
      if (t.lq % h == 0 && t.lq / h <= (1 << 14) &&
          (2 * h - 1) * (2 * (t.lq / h) - 1) == numBuckets)
        schemes.push_back(Window2DBucketingAttr::get(ctx, h, t.lq / h));
  if (numBuckets % 2 == 1)
    schemes.push_back(ClipBucketingAttr::get(ctx, (numBuckets - 1) / 2));
  SmallVector<double> floats;
  SmallVector<int64_t> ints;
  f.collectConstants(floats, ints);
  // A distance M appears inside a logarithm ln(M/e), or as an integer. The
  // first candidate that matches is taken: when the domain is too short to
  // tell distances apart (all of it within e), the logarithm's M, then
  // T5's default, say what the model meant.
  auto distances = [&](int64_t e, int64_t shift) {
    llvm::SetVector<int64_t> out;
    for (double x : floats) // ln(M/e); an integral float is e itself
      if (x > 0 && x < 21 && x != std::floor(x))
        out.insert(static_cast<int64_t>(std::llround(e * std::exp(x))) + shift);
    out.insert(128);
    for (int64_t n : ints)
      out.insert(n);
    return out.takeVector();
  };
  for (bool bidirectional : {true, false}) {
    int64_t half = bidirectional ? numBuckets / 2 : numBuckets;
    int64_t exact = half / 2;
    if ((bidirectional && numBuckets % 2) ||
        numBuckets < (bidirectional ? 4 : 2))
      continue;
    for (int64_t m : distances(exact, 0))
      if (m > exact && m <= kMaxBucketParam)
        schemes.push_back(
            T5BucketingAttr::get(ctx, numBuckets, m, bidirectional));
  }
  if (numBuckets % 2 == 0) {
    int64_t span = numBuckets / 2;
    // DeBERTa-v2: position_buckets = span, ln((M − 1)/(span/2)) gives M.
    for (int64_t m : distances(span / 2, 1))
      if (span >= 2 && m > span / 2 + 1 && m <= kMaxBucketParam)
        schemes.push_back(LogBucketingAttr::get(ctx, span, m));
    // position_buckets = 0: buckets are the clamped distance itself.
    schemes.push_back(LogBucketingAttr::get(ctx, 0, span));
  }
  return schemes;
}

/// score_mod's bucket-like index code → rpe.bucket: an index of a
/// tensor.extract in the score_mod of a static-length rpe.attention (the row
/// of a bucket table, or the bucket column of a DeBERTa-style projection
/// gathered at [b, h, i, bucket]).
struct RaiseBucketIndex : OpRewritePattern<tensor::ExtractOp> {
  RaiseBucketIndex(MLIRContext *ctx, RaiseBucketsLimits limits)
      : OpRewritePattern(ctx), limits(limits) {}
  RaiseBucketsLimits limits;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto attention = dyn_cast<AttentionOp>(extract->getParentOp());
    if (!attention || extract.getIndices().empty())
      return failure();
    std::optional<Tabulated> domain = domainOf(attention);
    if (!domain)
      return failure();
    Block &body = attention.getScoreMod().front();
    for (auto [pos, index] : llvm::enumerate(extract.getIndices())) {
      int64_t numBuckets = extract.getTensor().getType().getDimSize(pos);
      if (isa<BlockArgument>(index) || index.getDefiningOp<BucketOp>() ||
          !index.getType().isIndex() || ShapedType::isDynamic(numBuckets))
        continue;
      std::optional<PositionFunction> f = PositionFunction::get(index, body);
      if (!f)
        continue;
      std::optional<Tabulated> table = tabulate(*f, *domain, limits);
      if (!table)
        continue;
      for (BucketingAttrInterface scheme :
           candidateSchemes(getContext(), numBuckets, *table, *f)) {
        if (scheme.getNumBuckets() != numBuckets || !table->matches(scheme))
          continue;
        rewriter.setInsertionPoint(extract);
        Value bucket =
            BucketOp::create(rewriter, index.getLoc(), body.getArgument(3),
                             body.getArgument(4), scheme);
        rewriter.modifyOpInPlace(extract, [&, pos = pos] {
          extract.getIndicesMutable()[pos].set(bucket);
        });
        return success();
      }
    }
    return failure();
  }
};

/// A front end's bounds check in score_mod that holds at every position of
/// the (static) domain is dropped: it would keep the code it checks alive.
struct DropProvenAsserts : OpRewritePattern<cf::AssertOp> {
  DropProvenAsserts(MLIRContext *ctx, RaiseBucketsLimits limits)
      : OpRewritePattern(ctx), limits(limits) {}
  RaiseBucketsLimits limits;

  LogicalResult matchAndRewrite(cf::AssertOp assertOp,
                                PatternRewriter &rewriter) const override {
    auto attention = dyn_cast<AttentionOp>(assertOp->getParentOp());
    if (!attention)
      return failure();
    std::optional<Tabulated> domain = domainOf(attention);
    if (!domain)
      return failure();
    std::optional<PositionFunction> f = PositionFunction::get(
        assertOp.getArg(), attention.getScoreMod().front());
    if (!f)
      return failure();
    std::optional<Tabulated> table = tabulate(*f, *domain, limits);
    if (!table || llvm::any_of(table->values, [](int64_t v) { return v != 1; }))
      return failure();
    rewriter.eraseOp(assertOp);
    return success();
  }
};

} // namespace

void mlir::rpe::populateRPERaiseBucketsPatterns(RewritePatternSet &patterns,
                                                RaiseBucketsLimits limits) {
  patterns.add<RaiseBucketIndex, DropProvenAsserts>(patterns.getContext(),
                                                    limits);
}
