//===- AttentionUtils.cpp - helpers shared by the attention kernels -------===//

#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

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

/// Whether `lhs` and `rhs` are the query and key positions (in either order,
/// both plain or both cast to one type); sets `lhsIsQuery`.
bool arePositionPair(Value lhs, Value rhs, Block &block, bool &lhsIsQuery) {
  int64_t l = positionArgument(lhs, block), r = positionArgument(rhs, block);
  if (l < 0 || r < 0 || l == r || lhs.getType() != rhs.getType())
    return false;
  lhsIsQuery = l == 3;
  return true;
}

/// Whether `op` is a function of the diagonal i - j of the region's query and
/// key positions: `i - j` or `j - i` (of the positions or of their casts to
/// one integer type), a comparison of them, or a Toeplitz `rpe.bucket(i, j)`.
bool isDiagonalLeaf(Operation &op, Block &block) {
  bool lhsIsQuery;
  if (auto sub = dyn_cast<arith::SubIOp>(op))
    return arePositionPair(sub.getLhs(), sub.getRhs(), block, lhsIsQuery);
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    return arePositionPair(cmp.getLhs(), cmp.getRhs(), block, lhsIsQuery);
  auto bucket = dyn_cast<BucketOp>(op);
  return bucket && bucket.getBucketing().isToeplitz() &&
         bucket.getI() == block.getArgument(3) &&
         bucket.getJ() == block.getArgument(4);
}

/// What the tabulated terms depend on: the diagonal `i - j` (Toeplitz), or,
/// with `window` set, the difference of the window's plane offsets
/// `P(i) - P(j)` (Window2DBucketingAttr::buildPlaneOffset), a function of
/// which the window's `rpe.bucket(i, j)` is.
struct TermGeometry {
  Window2DBucketingAttr window;

  bool isLeaf(Operation &op, Block &block) const {
    if (!window)
      return isDiagonalLeaf(op, block);
    auto bucket = dyn_cast<BucketOp>(op);
    return bucket && bucket.getBucketing() == window &&
           bucket.getI() == block.getArgument(3) &&
           bucket.getJ() == block.getArgument(4);
  }
  /// Position t's coordinate: t, or its plane offset.
  Value coordinate(OpBuilder &b, Location loc, Value t) const {
    return window ? window.buildPlaneOffset(b, loc, t) : t;
  }
};

/// A diagonal leaf (not a bucket) rebuilt from `d = i - j` (index).
Value buildDiagonalLeaf(OpBuilder &b, Location loc, Operation &leaf,
                        Block &block, Value d) {
  bool lhsIsQuery = false;
  Value zero = indexConst(b, loc, 0);
  if (auto sub = dyn_cast<arith::SubIOp>(leaf)) {
    arePositionPair(sub.getLhs(), sub.getRhs(), block, lhsIsQuery);
    Value v = lhsIsQuery ? d : arith::SubIOp::create(b, loc, zero, d);
    if (!sub.getType().isIndex())
      v = arith::IndexCastOp::create(b, loc, sub.getType(), v);
    return v;
  }
  // pred(i, j) <=> pred(i - j, 0): positions are small and not negative, so
  // the unsigned predicates are the signed ones.
  auto cmp = cast<arith::CmpIOp>(leaf);
  arePositionPair(cmp.getLhs(), cmp.getRhs(), block, lhsIsQuery);
  arith::CmpIPredicate pred = cmp.getPredicate();
  if (!lhsIsQuery)
    pred = swapCmpIOperands(pred);
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::ult:
    pred = P::slt;
    break;
  case P::ule:
    pred = P::sle;
    break;
  case P::ugt:
    pred = P::sgt;
    break;
  case P::uge:
    pred = P::sge;
    break;
  default:
    break;
  }
  return arith::CmpIOp::create(b, loc, pred, d, zero);
}

/// The ops of `block` that `root` depends on, in block order.
SmallVector<Operation *> backwardSlice(Value root, Block &block,
                                       const TermGeometry &geometry) {
  DenseSet<Operation *> seen;
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &block || !seen.insert(def).second)
      continue;
    if (!geometry.isLeaf(*def, block))
      llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> slice;
  for (Operation &op : block)
    if (seen.count(&op))
      slice.push_back(&op);
  return slice;
}

} // namespace

namespace {

/// hoistToeplitzTerms and hoistWindowTerms: the terms that depend on the
/// positions only through `geometry`'s leaves.
int64_t hoistTerms(RewriterBase &rewriter, AttentionOp op, int64_t padding,
                   SmallVectorImpl<Value> *tables, const TermGeometry &geometry,
                   SmallVectorImpl<Value> *narrowedTables, bool shareBuckets) {
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
    if (geometry.isLeaf(inner, block))
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
      SmallVector<Operation *> slice = backwardSlice(v, block, geometry);
      if (!v.getType().isIntOrFloat() &&
          llvm::none_of(slice, [](Operation *o) { return isa<BucketOp>(o); }))
        continue;
      roots.insert(v);
    }
  }
  if (roots.empty())
    return 0;

  // Checks of diagonal values (a front end's bounds checks of a gather's
  // bucket) move into the first table: they hold for every diagonal exactly
  // when they hold for every element.
  SmallVector<Operation *> checks;
  for (Operation &inner : block)
    if (auto check = dyn_cast<cf::AssertOp>(inner);
        check && dependenceOf(check.getArg()) <= Dependence::Diagonal)
      checks.push_back(check);

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Value shift, length, lastDiagonal;
  Value zero = indexConst(rewriter, loc, 0);
  if (!geometry.window) {
    shift = buildDiagonalShift(rewriter, op);
    length = diagonalLength(rewriter, op, padding);
    // Padding entries repeat the last diagonal, so that what they compute
    // (a gather) stays in bounds.
    if (padding > 0)
      lastDiagonal = diagonalLength(rewriter, op, -1);
  } else {
    // Query positions [o, o + Lq), keys [0, Lk): the coordinate differences
    // run over [C(o) - C(Lk - 1), C(o + Lq - 1) - C(0)] (C is monotonic);
    // every bucket is in range, so padding entries need no clamp.
    auto coord = [&](Value t) { return geometry.coordinate(rewriter, loc, t); };
    Value one = indexConst(rewriter, loc, 1);
    Value off = op.getQOffset() ? op.getQOffset() : zero;
    Value lq = dimValue(rewriter, loc, op.getQ(), 2);
    Value lk = dimValue(rewriter, loc, op.getK(), 2);
    Value lastKey = arith::SubIOp::create(rewriter, loc, lk, one);
    Value lastQuery = arith::SubIOp::create(
        rewriter, loc, arith::AddIOp::create(rewriter, loc, off, lq), one);
    shift = arith::SubIOp::create(rewriter, loc, coord(lastKey), coord(off));
    Value last = arith::AddIOp::create(
        rewriter, loc,
        arith::SubIOp::create(rewriter, loc, coord(lastQuery), coord(zero)),
        shift);
    // Without a query or a key the range is empty.
    length = arith::AddIOp::create(
        rewriter, loc,
        arith::MaxSIOp::create(rewriter, loc,
                               arith::AddIOp::create(rewriter, loc, last, one),
                               zero),
        indexConst(rewriter, loc, padding));
  }
  // A bucket leaf at d = i - j (or the difference of plane offsets).
  auto buildLeafBucket = [&](OpBuilder &b, Location l, BucketOp bucket,
                             Value d) -> Value {
    if (geometry.window)
      return geometry.window.buildBucketFromPlaneDifference(b, l, d);
    return bucket.getBucketing().buildBucket(b, l, d, zero);
  };
  // The diagonal entry r of a table, padding entries clamped.
  auto clampDiagonal = [&](OpBuilder &b, Location l, Value r) -> Value {
    return lastDiagonal ? arith::MinSIOp::create(b, l, r, lastDiagonal) : r;
  };
  // A bucket is below its number of buckets: stored as i32 when that fits.
  auto fitsI32 = [](BucketOp bucket) {
    return bucket.getBucketing().getNumBuckets() <=
           std::numeric_limits<int32_t>::max();
  };
  // With `shareBuckets`, per-head tables read their buckets from a table of
  // their own, computed once per diagonal (a T5 bucket's logarithm once, not
  // once per head).
  DenseMap<Operation *, Value> bucketTables;
  auto bucketTable = [&](BucketOp bucket) -> Value {
    Value &table = bucketTables[bucket];
    if (table)
      return table;
    bool fits = fitsI32(bucket);
    Type type = fits ? Type(rewriter.getI32Type()) : rewriter.getIndexType();
    Value init = emptyTensor(rewriter, loc,
                             {indexConst(rewriter, loc, 1), length}, type);
    table =
        generic(rewriter, loc, {}, {}, init, rewriter.getMultiDimIdentityMap(2),
                {kPar, kPar}, [&](OpBuilder &b, Location l, ValueRange) {
                  Value r =
                      clampDiagonal(b, l, linalg::IndexOp::create(b, l, 1));
                  Value d = arith::SubIOp::create(b, l, r, shift);
                  Value entry = buildLeafBucket(b, l, bucket, d);
                  if (fits)
                    entry = arith::IndexCastOp::create(b, l, type, entry);
                  yieldValue(b, l, entry);
                });
    return table;
  };
  for (Value root : roots) {
    SmallVector<Operation *> slice = backwardSlice(root, block, geometry);
    if (root == roots.front() && !checks.empty()) {
      DenseSet<Operation *> members(slice.begin(), slice.end());
      for (Operation *check : checks) {
        members.insert(check);
        for (Operation *o :
             backwardSlice(cast<cf::AssertOp>(check).getArg(), block, geometry))
          members.insert(o);
      }
      slice.clear();
      for (Operation &inner : block)
        if (members.count(&inner))
          slice.push_back(&inner);
    }
    bool perHead = llvm::any_of(slice, [&](Operation *o) {
      return llvm::is_contained(o->getOperands(), hArg);
    });
    // With `narrowedTables`, a bucket is stored as i32 when that fits.
    auto bucket = root.getDefiningOp<BucketOp>();
    bool narrow = narrowedTables && bucket && fitsI32(bucket);
    Type entryType = narrow ? rewriter.getI32Type() : root.getType();
    // table[h, r] = root at h and i - j = r - shift.
    rewriter.setInsertionPoint(op);
    bool sharedBuckets = perHead && shareBuckets;
    if (sharedBuckets)
      for (Operation *o : slice)
        if (auto leaf = dyn_cast<BucketOp>(o);
            leaf && geometry.isLeaf(*o, block))
          bucketTable(leaf);
    Value rows = perHead ? dimValue(rewriter, loc, op.getQ(), 1)
                         : indexConst(rewriter, loc, 1);
    Value init = emptyTensor(rewriter, loc, {rows, length}, entryType);
    Value table = generic(
        rewriter, loc, {}, {}, init, rewriter.getMultiDimIdentityMap(2),
        {kPar, kPar}, [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> idx = loopIndices(b, l, 2);
          Value r = clampDiagonal(b, l, idx[1]);
          // i - j, or P(i) - P(j).
          Value d = arith::SubIOp::create(b, l, r, shift);
          IRMapping map;
          map.map(hArg, idx[0]);
          for (Operation *o : slice) {
            auto leaf = dyn_cast<BucketOp>(o);
            if (leaf && geometry.isLeaf(*o, block) && sharedBuckets) {
              Value entry = tensor::ExtractOp::create(
                  b, l, bucketTables.lookup(leaf), ValueRange{zero, idx[1]});
              if (!entry.getType().isIndex())
                entry =
                    arith::IndexCastOp::create(b, l, b.getIndexType(), entry);
              map.map(leaf.getResult(), entry);
            } else if (leaf && geometry.isLeaf(*o, block)) {
              map.map(leaf.getResult(), buildLeafBucket(b, l, leaf, d));
            } else if (geometry.isLeaf(*o, block)) {
              map.map(o->getResult(0), buildDiagonalLeaf(b, l, *o, block, d));
            } else {
              b.clone(*o, map);
            }
          }
          Value entry = map.lookup(root);
          if (narrow)
            entry = arith::IndexCastOp::create(b, l, entryType, entry);
          yieldValue(b, l, entry);
        });
    if (tables)
      tables->push_back(table);
    if (narrow)
      narrowedTables->push_back(table);
    // root -> table[h or 0, C(i) - C(j) + shift], right after its
    // definition.
    rewriter.setInsertionPointAfterValue(root);
    Location rl = root.getLoc();
    Value r = arith::AddIOp::create(
        rewriter, rl,
        arith::SubIOp::create(rewriter, rl,
                              geometry.coordinate(rewriter, rl, iArg),
                              geometry.coordinate(rewriter, rl, jArg)),
        shift);
    Value lookup = tensor::ExtractOp::create(
        rewriter, rl, table, ValueRange{perHead ? hArg : zero, r});
    if (narrow)
      lookup = arith::IndexCastOp::create(rewriter, rl, root.getType(), lookup);
    rewriter.replaceAllUsesWith(root, lookup);
  }
  for (Operation *check : checks)
    rewriter.eraseOp(check);
  // The tabulated ops are dead now.
  SmallVector<Operation *> ops;
  for (Operation &inner : block.without_terminator())
    ops.push_back(&inner);
  for (Operation *inner : llvm::reverse(ops))
    if (inner->use_empty() && isPure(inner))
      rewriter.eraseOp(inner);
  return roots.size();
}

} // namespace

int64_t mlir::rpe::hoistToeplitzTerms(RewriterBase &rewriter, AttentionOp op,
                                      int64_t padding,
                                      SmallVectorImpl<Value> *tables,
                                      SmallVectorImpl<Value> *narrowedTables,
                                      bool shareBuckets) {
  return hoistTerms(rewriter, op, padding, tables, TermGeometry{},
                    narrowedTables, shareBuckets);
}

int64_t mlir::rpe::hoistWindowTerms(RewriterBase &rewriter, AttentionOp op,
                                    int64_t padding,
                                    SmallVectorImpl<Value> *tables,
                                    bool shareBuckets) {
  if (op.getScoreMod().empty())
    return 0;
  // One table set per window bucketing of score_mod.
  SetVector<Attribute> windows;
  op.getScoreMod().walk([&](BucketOp bucket) {
    if (auto w = dyn_cast<Window2DBucketingAttr>(bucket.getBucketing()))
      windows.insert(w);
  });
  int64_t hoisted = 0;
  for (Attribute w : windows)
    hoisted += hoistTerms(rewriter, op, padding, tables,
                          TermGeometry{cast<Window2DBucketingAttr>(w)},
                          /*narrowedTables=*/nullptr, shareBuckets);
  return hoisted;
}

bool mlir::rpe::isPureUpToChecks(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto g = dyn_cast<linalg::GenericOp>(op);
  return g && g.hasPureTensorSemantics() &&
         llvm::all_of(g.getBody()->without_terminator(), [](Operation &o) {
           return o.getNumRegions() == 0 &&
                  (isMemoryEffectFree(&o) || isa<cf::AssertOp>(o));
         });
}

int64_t mlir::rpe::positionArgument(Value v, Block &block) {
  if (auto castOp = v.getDefiningOp<arith::IndexCastOp>()) {
    Type t = castOp.getType();
    if (!t.isSignlessInteger() || t.getIntOrFloatBitWidth() < 32)
      return -1;
    v = castOp.getIn();
  }
  for (unsigned a : {3u, 4u})
    if (v == block.getArgument(a))
      return a;
  return -1;
}

arith::CmpIPredicate mlir::rpe::swapCmpIOperands(arith::CmpIPredicate pred) {
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::slt:
    return P::sgt;
  case P::sgt:
    return P::slt;
  case P::sle:
    return P::sge;
  case P::sge:
    return P::sle;
  case P::ult:
    return P::ugt;
  case P::ugt:
    return P::ult;
  case P::ule:
    return P::uge;
  case P::uge:
    return P::ule;
  default:
    return pred; // eq, ne
  }
}

Value mlir::rpe::buildDiagonalShift(OpBuilder &b, AttentionOp op) {
  Location loc = op.getLoc();
  Value lk = dimValue(b, loc, op.getK(), 2);
  Value shift = arith::SubIOp::create(b, loc, lk, indexConst(b, loc, 1));
  if (Value off = op.getQOffset())
    shift = arith::SubIOp::create(b, loc, shift, off);
  return shift;
}

Value mlir::rpe::buildToeplitzDiagonal(OpBuilder &b, AttentionOp op,
                                       Value table,
                                       BucketingAttrInterface bucketing,
                                       int64_t padding) {
  // (One op-building call per statement: the IR's order must not depend
  // on the order in which the C++ compiler evaluates arguments.)
  Value shift = buildDiagonalShift(b, op);
  Value length = diagonalLength(b, op, padding);
  return buildTableDiagonals(b, op.getLoc(), table, length, shift, bucketing);
}

Value mlir::rpe::buildBucketDiagonal(OpBuilder &b, AttentionOp op,
                                     BucketingAttrInterface bucketing,
                                     int64_t padding) {
  Value shift = buildDiagonalShift(b, op);
  Value length = diagonalLength(b, op, padding);
  return buildDiagonalTable(
      b, op.getLoc(), indexConst(b, op.getLoc(), 1), length, shift,
      b.getIndexType(), bucketing,
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
  s.scale = buildAttentionScale(b, loc, op, s.headDim);
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

Value mlir::rpe::buildAheadEnd(OpBuilder &b, Location loc, AttentionOp op,
                               Value posEnd) {
  std::optional<int64_t> reach = op.getKeyReach();
  if (!reach)
    return Value();
  if (*reach == 0)
    return posEnd;
  return arith::AddIOp::create(b, loc, posEnd, indexConst(b, loc, *reach));
}

Value mlir::rpe::buildWindowStart(OpBuilder &b, Location loc, Value firstPos,
                                  int64_t window) {
  Value start =
      arith::SubIOp::create(b, loc, firstPos, indexConst(b, loc, window - 1));
  return arith::MaxSIOp::create(b, loc, start, indexConst(b, loc, 0));
}

std::optional<std::pair<int64_t, int64_t>>
mlir::rpe::getTensorCoreHeadDims(AttentionOp op) {
  if (op.getRelValues())
    return std::nullopt;
  auto qType = cast<RankedTensorType>(op.getQ().getType());
  auto kType = cast<RankedTensorType>(op.getK().getType());
  auto vType = cast<RankedTensorType>(op.getV().getType());
  Type elem = qType.getElementType();
  if (!(elem.isF16() || elem.isBF16()) || kType.getElementType() != elem ||
      vType.getElementType() != elem)
    return std::nullopt;
  int64_t d = qType.getDimSize(3), dv = vType.getDimSize(3);
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv) || d % 16 ||
      dv % 8 || d == 0 || dv == 0)
    return std::nullopt;
  return std::make_pair(d, dv);
}
