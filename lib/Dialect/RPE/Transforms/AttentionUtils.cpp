//===- AttentionUtils.cpp - helpers shared by the attention kernels -------===//

#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Conversion/RPEToLinalg/ElementBuilders.h"
#include "rpe/Conversion/RPEToLinalg/LinalgBuilders.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// Length `Lq + Lk - 1 + padding` of a diagonal.
Value diagonalLength(OpBuilder &b, AttentionOp op, int64_t padding) {
  Location loc = op.getLoc();
  Value lq = dimValue(b, loc, op.getQ(), 2);
  Value lk = dimValue(b, loc, op.getK(), 2);
  Value length = arith::AddIOp::create(b, loc, lq, lk);
  return arith::AddIOp::create(b, loc, length, indexConst(b, loc, padding - 1));
}

} // namespace

namespace {

/// How a score_mod value depends on the region's arguments.
enum class Dependence { None, Head, Diagonal, Other };

/// Whether `op` is `i - j`, `j - i` or a Toeplitz `rpe.bucket(i, j)` of the
/// region's query and key arguments: a function of the diagonal.
bool isDiagonalLeaf(Operation &op, Block &block) {
  Value i = block.getArgument(3), j = block.getArgument(4);
  if (auto sub = dyn_cast<arith::SubIOp>(op))
    return (sub.getLhs() == i && sub.getRhs() == j) ||
           (sub.getLhs() == j && sub.getRhs() == i);
  auto bucket = dyn_cast<BucketOp>(op);
  return bucket && bucket.getBucketing().isToeplitz() && bucket.getI() == i &&
         bucket.getJ() == j;
}

/// The ops of `block` that `root` depends on, in block order.
SmallVector<Operation *> backwardSlice(Value root, Block &block) {
  DenseSet<Operation *> seen;
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &block || !seen.insert(def).second)
      continue;
    if (!isDiagonalLeaf(*def, block))
      llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> slice;
  for (Operation &op : block)
    if (seen.count(&op))
      slice.push_back(&op);
  return slice;
}

} // namespace

int64_t mlir::rpe::hoistToeplitzTerms(RewriterBase &rewriter, AttentionOp op,
                                      int64_t padding,
                                      SmallVectorImpl<Value> *tables) {
  Region &region = op.getScoreMod();
  if (region.empty())
    return 0;
  Block &block = region.front();
  Value hArg = block.getArgument(2), iArg = block.getArgument(3),
        jArg = block.getArgument(4);

  // Classify every value; the arguments other than h vary per element.
  DenseMap<Value, Dependence> dependence;
  for (unsigned a : {0u, 1u, 3u, 4u})
    dependence[block.getArgument(a)] = Dependence::Other;
  dependence[hArg] = Dependence::Head;
  auto dependenceOf = [&](Value v) {
    auto it = dependence.find(v);
    return it == dependence.end() ? Dependence::None : it->second;
  };
  for (Operation &inner : block.without_terminator()) {
    Dependence d = Dependence::None;
    if (isDiagonalLeaf(inner, block))
      d = Dependence::Diagonal;
    else if (!isPure(&inner) || inner.getNumRegions() != 0)
      d = Dependence::Other;
    else
      for (Value v : inner.getOperands())
        d = std::max(d, dependenceOf(v));
    for (Value r : inner.getResults())
      dependence[r] = d;
  }

  // Roots: diagonal values used by per-element ops (or yielded). Index values
  // are tabulated only when they hold a bucket: `i - j + c` is cheaper as it
  // is than as a table.
  SetVector<Value> roots;
  for (Operation &user : block) {
    bool perElement = user.hasTrait<OpTrait::IsTerminator>() ||
                      llvm::any_of(user.getResults(), [&](Value r) {
                        return dependenceOf(r) == Dependence::Other;
                      });
    if (!perElement)
      continue;
    for (Value v : user.getOperands()) {
      if (dependenceOf(v) != Dependence::Diagonal ||
          !v.getType().isIntOrIndexOrFloat())
        continue;
      SmallVector<Operation *> slice = backwardSlice(v, block);
      if (!v.getType().isIntOrFloat() &&
          llvm::none_of(slice, [](Operation *o) { return isa<BucketOp>(o); }))
        continue;
      roots.insert(v);
    }
  }
  if (roots.empty())
    return 0;

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Value shift = buildDiagonalShift(rewriter, op);
  Value length = diagonalLength(rewriter, op, padding);
  Value zero = indexConst(rewriter, loc, 0);
  for (Value root : roots) {
    SmallVector<Operation *> slice = backwardSlice(root, block);
    bool perHead = llvm::any_of(slice, [&](Operation *o) {
      return llvm::is_contained(o->getOperands(), hArg);
    });
    // table[h, r] = root at h and i - j = r - shift.
    rewriter.setInsertionPoint(op);
    Value rows = perHead ? dimValue(rewriter, loc, op.getQ(), 1)
                         : indexConst(rewriter, loc, 1);
    Value init = emptyTensor(rewriter, loc, {rows, length}, root.getType());
    Value table = generic(
        rewriter, loc, {}, {}, init, rewriter.getMultiDimIdentityMap(2),
        {kPar, kPar}, [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> idx = loopIndices(b, l, 2);
          Value d = arith::SubIOp::create(b, l, idx[1], shift); // i - j
          IRMapping map;
          map.map(hArg, idx[0]);
          for (Operation *o : slice) {
            if (auto bucket = dyn_cast<BucketOp>(o)) {
              map.map(bucket.getResult(),
                      bucket.getBucketing().buildBucket(b, l, d, zero));
            } else if (auto sub = dyn_cast<arith::SubIOp>(o);
                       sub && isDiagonalLeaf(*o, block)) {
              map.map(sub.getResult(),
                      sub.getLhs() == iArg
                          ? d
                          : arith::SubIOp::create(b, l, zero, d).getResult());
            } else {
              b.clone(*o, map);
            }
          }
          yieldValue(b, l, map.lookup(root));
        });
    if (tables)
      tables->push_back(table);
    // root -> table[h or 0, i - j + shift], right after its definition.
    rewriter.setInsertionPointAfterValue(root);
    Location rl = root.getLoc();
    Value r = arith::AddIOp::create(
        rewriter, rl, arith::SubIOp::create(rewriter, rl, iArg, jArg), shift);
    Value lookup = tensor::ExtractOp::create(
        rewriter, rl, table, ValueRange{perHead ? hArg : zero, r});
    rewriter.replaceAllUsesWith(root, lookup);
  }
  // The tabulated ops are dead now.
  SmallVector<Operation *> ops;
  for (Operation &inner : block.without_terminator())
    ops.push_back(&inner);
  for (Operation *inner : llvm::reverse(ops))
    if (inner->use_empty() && isPure(inner))
      rewriter.eraseOp(inner);
  return roots.size();
}

Value mlir::rpe::buildDiagonalShift(OpBuilder &b, AttentionOp op) {
  Location loc = op.getLoc();
  Value lk = dimValue(b, loc, op.getK(), 2);
  Value shift = arith::SubIOp::create(b, loc, lk, indexConst(b, loc, 1));
  if (Value off = op.getQOffset())
    shift = arith::SubIOp::create(b, loc, shift, off);
  return shift;
}

namespace {

/// A rows × (Lq + Lk - 1 + padding) tensor along the attention's diagonal:
/// entry (c, r) is `entry(c, bucket(r - shift, 0))`.
Value buildDiagonalTable(
    OpBuilder &b, AttentionOp op, Value rows, Type elementType,
    BucketingAttrInterface bucketing, int64_t padding,
    function_ref<Value(OpBuilder &, Location, Value, Value)> entry) {
  Location loc = op.getLoc();
  Value shift = buildDiagonalShift(b, op);
  Value length = diagonalLength(b, op, padding);
  Value zero = indexConst(b, loc, 0);
  Value init = emptyTensor(b, loc, {rows, length}, elementType);
  return generic(b, loc, {}, {}, init, b.getMultiDimIdentityMap(2),
                 {kPar, kPar}, [&](OpBuilder &nb, Location l, ValueRange) {
                   SmallVector<Value> idx = loopIndices(nb, l, 2);
                   // The query position at distance r - shift from key 0.
                   Value d = arith::SubIOp::create(nb, l, idx[1], shift);
                   Value bucket = bucketing.buildBucket(nb, l, d, zero);
                   yieldValue(nb, l, entry(nb, l, idx[0], bucket));
                 });
}

} // namespace

Value mlir::rpe::buildToeplitzDiagonal(OpBuilder &b, AttentionOp op,
                                       Value table,
                                       BucketingAttrInterface bucketing,
                                       int64_t padding) {
  auto tableType = cast<RankedTensorType>(table.getType());
  return buildDiagonalTable(
      b, op, dimValue(b, op.getLoc(), table, 1), tableType.getElementType(),
      bucketing, padding,
      [&](OpBuilder &nb, Location l, Value column, Value bucket) -> Value {
        return tensor::ExtractOp::create(nb, l, table,
                                         ValueRange{bucket, column});
      });
}

Value mlir::rpe::buildBucketDiagonal(OpBuilder &b, AttentionOp op,
                                     BucketingAttrInterface bucketing,
                                     int64_t padding) {
  return buildDiagonalTable(
      b, op, indexConst(b, op.getLoc(), 1), b.getIndexType(), bucketing,
      padding,
      [](OpBuilder &, Location, Value, Value bucket) { return bucket; });
}

FailureOr<int64_t>
mlir::rpe::rewriteAttentionOps(Operation *root, RewritePatternSet &&patterns) {
  auto count = [&] {
    int64_t n = 0;
    root->walk([&](AttentionOp) { ++n; });
    return n;
  };
  int64_t before = count();
  GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  if (failed(applyPatternsGreedily(root, std::move(patterns), config)))
    return failure();
  return before - count();
}

AttentionSizes mlir::rpe::getAttentionSizes(OpBuilder &b, AttentionOp op) {
  Location loc = op.getLoc();
  AttentionSizes s;
  s.batch = dimValue(b, loc, op.getQ(), 0);
  s.heads = dimValue(b, loc, op.getQ(), 1);
  s.lq = dimValue(b, loc, op.getQ(), 2);
  s.headDim = dimValue(b, loc, op.getQ(), 3);
  s.kvHeads = dimValue(b, loc, op.getK(), 1);
  s.lk = dimValue(b, loc, op.getK(), 2);
  s.valueDim = dimValue(b, loc, op.getV(), 3);
  s.group = arith::DivUIOp::create(b, loc, s.heads, s.kvHeads);
  Type f32 = b.getF32Type();
  if (std::optional<double> scale = op.getStaticScale()) {
    s.scale = f32Const(b, loc, *scale);
  } else {
    Value d = castIndexToFloat(b, loc, s.headDim, f32);
    s.scale = arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0),
                                    math::SqrtOp::create(b, loc, d));
  }
  Value sizes[] = {s.batch, s.heads, s.lq, s.valueDim};
  RankedTensorType resultType = op.getResult().getType();
  for (int64_t d = 0; d < 4; ++d)
    if (resultType.isDynamicDim(d))
      s.resultDynamicSizes.push_back(sizes[d]);
  return s;
}

Value mlir::rpe::buildKeyEnd(OpBuilder &b, Location loc, Value lk, Value length,
                             Value causalEnd) {
  Value zero = indexConst(b, loc, 0);
  Value end = lk;
  for (Value bound : {length, causalEnd})
    if (bound)
      end = arith::MinSIOp::create(b, loc, end,
                                   arith::MaxSIOp::create(b, loc, bound, zero));
  return end;
}
