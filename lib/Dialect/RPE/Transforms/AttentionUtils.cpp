//===- AttentionUtils.cpp - helpers shared by the attention kernels -------===//

#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Conversion/RPEToLinalg/LinalgBuilders.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

/// Sizes shared by both hoistings: the diagonal length and the shift
/// `Lk - 1 - q_offset` such that `r = i - j + shift`.
struct Diagonal {
  Value length, shift, zero;
};

Diagonal diagonalOf(OpBuilder &b, AttentionOp op, int64_t padding) {
  Location loc = op.getLoc();
  Value lq = dimValue(b, loc, op.getQ(), 2);
  Value lk = dimValue(b, loc, op.getK(), 2);
  Value one = indexConst(b, loc, 1);
  Value lkMinus1 = arith::SubIOp::create(b, loc, lk, one);
  Value length = arith::SubIOp::create(
      b, loc, arith::AddIOp::create(b, loc, lq, lk), one);
  if (padding > 0)
    length = arith::AddIOp::create(b, loc, length, indexConst(b, loc, padding));
  Value shift = op.getQOffset()
                    ? arith::SubIOp::create(b, loc, lkMinus1, op.getQOffset())
                          .getResult()
                    : lkMinus1;
  return {length, shift, indexConst(b, loc, 0)};
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

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Diagonal diagonal = diagonalOf(rewriter, op, padding);
  for (tensor::ExtractOp extract : lookups) {
    rewriter.setInsertionPoint(op);
    Value table = extract.getTensor();
    auto bucketing =
        extract.getIndices()[0].getDefiningOp<BucketOp>().getBucketing();
    auto tableType = cast<RankedTensorType>(table.getType());
    Value heads = dimValue(rewriter, loc, table, 1);
    Value init = emptyTensor(rewriter, loc, {heads, diagonal.length},
                             tableType.getElementType());
    Value diag =
        generic(rewriter, loc, {}, {}, init, rewriter.getMultiDimIdentityMap(2),
                {kPar, kPar}, [&](OpBuilder &b, Location l, ValueRange) {
                  SmallVector<Value> idx = loopIndices(b, l, 2);
                  // The query position at distance r - shift from key 0.
                  Value d = arith::SubIOp::create(b, l, idx[1], diagonal.shift);
                  Value bucket = bucketing.buildBucket(b, l, d, diagonal.zero);
                  yieldValue(b, l,
                             tensor::ExtractOp::create(
                                 b, l, table, ValueRange{bucket, idx[0]}));
                });
    if (diagonals)
      diagonals->push_back(diag);
    rewriter.setInsertionPoint(extract);
    Value r = diagonalIndex(rewriter, extract.getLoc(), block, diagonal.shift);
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
  Diagonal diagonal = diagonalOf(rewriter, op, padding);
  Type i32 = rewriter.getI32Type();
  for (BucketOp bucket : buckets) {
    rewriter.setInsertionPoint(op);
    auto bucketing = bucket.getBucketing();
    Value init = emptyTensor(rewriter, loc, {diagonal.length}, i32);
    Value diag = generic(
        rewriter, loc, {}, {}, init, rewriter.getMultiDimIdentityMap(1), {kPar},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value r = loopIndices(b, l, 1)[0];
          Value d = arith::SubIOp::create(b, l, r, diagonal.shift);
          Value index = bucketing.buildBucket(b, l, d, diagonal.zero);
          yieldValue(b, l, arith::IndexCastOp::create(b, l, i32, index));
        });
    if (diagonals)
      diagonals->push_back(diag);
    rewriter.setInsertionPoint(bucket);
    Location bl = bucket.getLoc();
    Value r = diagonalIndex(rewriter, bl, block, diagonal.shift);
    Value value = tensor::ExtractOp::create(rewriter, bl, diag, r);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        bucket, rewriter.getIndexType(), value);
  }
  return buckets.size();
}
