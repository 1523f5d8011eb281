//===- AttentionUtils.cpp - helpers shared by the attention kernels -------===//

#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Conversion/RPEToLinalg/LinalgBuilders.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"

#include "rpe/Conversion/RPEToLinalg/ElementBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// The Toeplitz bucket `%i, %j` with `%i`, `%j` the region's query and key
/// arguments, or null.
BucketOp toeplitzBucketOf(Value v, Block &block) {
  auto bucket = v.getDefiningOp<BucketOp>();
  if (!bucket || bucket->getBlock() != &block ||
      !bucket.getBucketing().isToeplitz() ||
      bucket.getI() != block.getArgument(3) ||
      bucket.getJ() != block.getArgument(4))
    return BucketOp();
  return bucket;
}

/// Length `Lq + Lk - 1 + padding` of a diagonal.
Value diagonalLength(OpBuilder &b, AttentionOp op, int64_t padding) {
  Location loc = op.getLoc();
  Value lq = dimValue(b, loc, op.getQ(), 2);
  Value lk = dimValue(b, loc, op.getK(), 2);
  Value length = arith::AddIOp::create(b, loc, lq, lk);
  return arith::AddIOp::create(b, loc, length,
                               indexConst(b, loc, padding - 1));
}

/// `i - j + shift` at the insertion point.
Value diagonalIndex(OpBuilder &b, Location loc, Block &block, Value shift) {
  Value d = arith::SubIOp::create(b, loc, block.getArgument(3),
                                  block.getArgument(4));
  return arith::AddIOp::create(b, loc, d, shift);
}

} // namespace

int64_t mlir::rpe::hoistToeplitzLookups(RewriterBase &rewriter, AttentionOp op,
                                        int64_t padding,
                                        SmallVectorImpl<Value> *diagonals) {
  Region &region = op.getScoreMod();
  if (region.empty())
    return 0;
  Block &block = region.front();
  Value hArg = block.getArgument(2);
  SmallVector<tensor::ExtractOp> lookups;
  for (auto extract : block.getOps<tensor::ExtractOp>()) {
    if (extract.getIndices().size() != 2 ||
        !toeplitzBucketOf(extract.getIndices()[0], block) ||
        extract.getIndices()[1] != hArg ||
        region.isAncestor(extract.getTensor().getParentRegion()))
      continue;
    lookups.push_back(extract);
  }
  if (lookups.empty())
    return 0;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Value shift = buildDiagonalShift(rewriter, op);
  for (tensor::ExtractOp extract : lookups) {
    rewriter.setInsertionPoint(op);
    auto bucketing =
        extract.getIndices()[0].getDefiningOp<BucketOp>().getBucketing();
    Value diag = buildToeplitzDiagonal(rewriter, op, extract.getTensor(),
                                       bucketing, padding);
    if (diagonals)
      diagonals->push_back(diag);
    rewriter.setInsertionPoint(extract);
    Value r = diagonalIndex(rewriter, extract.getLoc(), block, shift);
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(extract, diag,
                                                   ValueRange{hArg, r});
  }
  return lookups.size();
}

int64_t mlir::rpe::hoistToeplitzBuckets(RewriterBase &rewriter, AttentionOp op,
                                        int64_t padding,
                                        SmallVectorImpl<Value> *diagonals) {
  Region &region = op.getScoreMod();
  if (region.empty())
    return 0;
  Block &block = region.front();
  SmallVector<BucketOp> buckets;
  for (auto bucket : block.getOps<BucketOp>())
    if (toeplitzBucketOf(bucket.getResult(), block))
      buckets.push_back(bucket);
  if (buckets.empty())
    return 0;

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Value shift = buildDiagonalShift(rewriter, op);
  Value length = diagonalLength(rewriter, op, padding);
  Value zero = indexConst(rewriter, loc, 0);
  Type i32 = rewriter.getI32Type();
  for (BucketOp bucket : buckets) {
    rewriter.setInsertionPoint(op);
    auto bucketing = bucket.getBucketing();
    Value init = emptyTensor(rewriter, loc, {length}, i32);
    Value diag = generic(
        rewriter, loc, {}, {}, init, rewriter.getMultiDimIdentityMap(1), {kPar},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value r = loopIndices(b, l, 1)[0];
          Value d = arith::SubIOp::create(b, l, r, shift);
          Value index = bucketing.buildBucket(b, l, d, zero);
          yieldValue(b, l, arith::IndexCastOp::create(b, l, i32, index));
        });
    if (diagonals)
      diagonals->push_back(diag);
    rewriter.setInsertionPoint(bucket);
    Location bl = bucket.getLoc();
    Value r = diagonalIndex(rewriter, bl, block, shift);
    Value value = tensor::ExtractOp::create(rewriter, bl, diag, r);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        bucket, rewriter.getIndexType(), value);
  }
  return buckets.size();
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
  Location loc = op.getLoc();
  Value shift = buildDiagonalShift(b, op);
  Value length = diagonalLength(b, op, padding);
  Value zero = indexConst(b, loc, 0);
  auto tableType = cast<RankedTensorType>(table.getType());
  Value columns = dimValue(b, loc, table, 1);
  Value init =
      emptyTensor(b, loc, {columns, length}, tableType.getElementType());
  return generic(b, loc, {}, {}, init, b.getMultiDimIdentityMap(2),
                 {kPar, kPar}, [&](OpBuilder &nb, Location l, ValueRange) {
                   SmallVector<Value> idx = loopIndices(nb, l, 2);
                   // The query position at distance r - shift from key 0.
                   Value d = arith::SubIOp::create(nb, l, idx[1], shift);
                   Value bucket = bucketing.buildBucket(nb, l, d, zero);
                   yieldValue(nb, l,
                              tensor::ExtractOp::create(
                                  nb, l, table, ValueRange{bucket, idx[0]}));
                 });
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

Value mlir::rpe::buildKeyEnd(OpBuilder &b, Location loc, Value lk,
                             Value length, Value causalEnd) {
  Value zero = indexConst(b, loc, 0);
  Value end = lk;
  for (Value bound : {length, causalEnd})
    if (bound)
      end = arith::MinSIOp::create(
          b, loc, end, arith::MaxSIOp::create(b, loc, bound, zero));
  return end;
}
