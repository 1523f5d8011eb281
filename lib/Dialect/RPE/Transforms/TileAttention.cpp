//===- TileAttention.cpp - FlashAttention-2 tiling of rpe.attention -------===//
//
// rpe.attention -> scf.forall (b, h, query tile) { scf.for (key tile) {
//   scores, bias, score_mod, masks; online softmax; P·V (+ rel_values) } }
// on tensors. Every intermediate is a tile; nothing is Lq×Lk.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPETILEATTENTIONPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

Value minIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}
Value addIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value subIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}

/// A 2-D slice [rows, cols] of a 4-D tensor at (i0, i1, r0, c0), rank-reduced.
Value slice2D(OpBuilder &b, Location loc, Value t, Value i0, Value i1, Value r0,
              Value rows, Value cols) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> offsets = {i0, i1, r0, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     cols};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  auto resultType = RankedTensorType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic}, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, resultType, t, offsets, sizes,
                                        strides);
}

struct TileAttention : OpRewritePattern<AttentionOp> {
  TileAttention(MLIRContext *ctx, const TileAttentionOptions &options,
                int64_t *numToeplitz)
      : OpRewritePattern(ctx), options(options), numToeplitz(numToeplitz) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (options.tileQ <= 0 || options.tileK <= 0)
      return rewriter.notifyMatchFailure(op, "tile sizes must be positive");
    int64_t hoisted = hoistToeplitzTerms(rewriter, op);
    if (numToeplitz)
      *numToeplitz += hoisted;

    Location loc = op.getLoc();
    Value q = op.getQ(), k = op.getK(), v = op.getV();
    Value bias = op.getBias(), lengths = op.getKeyLengths();
    Value qOffset = op.getQOffset(), relValues = op.getRelValues();
    std::optional<BucketingAttrInterface> bucketing = op.getBucketing();
    Region &scoreMod = op.getScoreMod();
    RankedTensorType resultType = op.getResult().getType();
    Type elementType = resultType.getElementType();
    Type f32 = rewriter.getF32Type();

    AttentionSizes dims = getAttentionSizes(rewriter, op);
    Value batch = dims.batch, heads = dims.heads, lq = dims.lq;
    Value headDim = dims.headDim, lk = dims.lk, valueDim = dims.valueDim;
    Value group = dims.group, scale = dims.scale;
    Value zero = indexConst(rewriter, loc, 0);
    Value tileQ = indexConst(rewriter, loc, options.tileQ);
    Value tileK = indexConst(rewriter, loc, options.tileK);
    Value numQTiles = arith::CeilDivUIOp::create(rewriter, loc, lq, tileQ);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType,
                                         dims.resultDynamicSizes);
    auto biasType =
        bias ? cast<RankedTensorType>(bias.getType()) : RankedTensorType();
    MLIRContext *ctx = rewriter.getContext();

    auto forall = scf::ForallOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{batch, heads, numQTiles}, init,
        std::nullopt);
    rewriter.setInsertionPointToStart(forall.getBody());
    SmallVector<Value> ivs = forall.getInductionVars();
    Value b0 = ivs[0], h = ivs[1], qTile = ivs[2];
    Value q0 = arith::MulIOp::create(rewriter, loc, qTile, tileQ);
    Value tq = minIndex(rewriter, loc, tileQ, subIndex(rewriter, loc, lq, q0));
    Value hk = arith::DivUIOp::create(rewriter, loc, h, group);
    // Query position of the tile's first row.
    Value qPos0 = buildQueryPosition(rewriter, loc, q0, qOffset);

    // Keys that can matter: below key_lengths[b] and, with causal or a
    // lookahead, up to the last row's position (plus the lookahead). Whole
    // tiles beyond are skipped.
    Value length;
    if (lengths) {
      Value len32 = tensor::ExtractOp::create(rewriter, loc, lengths, b0);
      length = arith::IndexCastOp::create(rewriter, loc,
                                          rewriter.getIndexType(), len32);
    }
    Value kEnd = buildKeyEnd(
        rewriter, loc, lk, length,
        buildAheadEnd(rewriter, loc, op, addIndex(rewriter, loc, qPos0, tq)));
    // With a window, the keys before the first row's window are skipped too.
    std::optional<uint64_t> window = op.getWindow();
    Value kStart = window ? buildWindowStart(rewriter, loc, qPos0,
                                             static_cast<int64_t>(*window))
                          : zero;

    // q tile (tq×D), scaled, in f32.
    AffineMap id2 = rewriter.getMultiDimIdentityMap(2);
    Value qSlice = slice2D(rewriter, loc, q, b0, h, q0, tq, headDim);
    Value qScaled =
        generic(rewriter, loc, qSlice, {id2},
                emptyTensor(rewriter, loc, {tq, headDim}, f32), id2,
                {kPar, kPar}, [&](OpBuilder &b, Location l, ValueRange args) {
                  yieldValue(b, l,
                             arith::MulFOp::create(
                                 b, l, castFloat(b, l, args[0], f32), scale));
                });
    Value mInit = filledF32(rewriter, loc, {tq}, kNegInf);
    Value lInit = filledF32(rewriter, loc, {tq}, 0.0);
    Value accInit = filledF32(rewriter, loc, {tq, valueDim}, 0.0);

    AffineExpr i, j, d;
    bindDims(ctx, i, j, d);
    auto keyLoop = scf::ForOp::create(
        rewriter, loc, kStart, kEnd, tileK, ValueRange{mInit, lInit, accInit},
        [&](OpBuilder &b, Location l, Value k0, ValueRange iter) {
          Value m = iter[0], lsum = iter[1], acc = iter[2];
          Value tk = minIndex(b, l, tileK, subIndex(b, l, kEnd, k0));
          // kᵀ tile (D×tk) in f32, so that the score loop runs over
          // contiguous keys innermost.
          Value kSlice = slice2D(b, l, k, b0, hk, k0, tk, headDim);
          Value kT =
              generic(b, l, kSlice, {dimsMap(ctx, 2, {j, i})},
                      emptyTensor(b, l, {headDim, tk}, f32), id2, {kPar, kPar},
                      [&](OpBuilder &nb, Location nl, ValueRange args) {
                        yieldValue(nb, nl, castFloat(nb, nl, args[0], f32));
                      });
          // s = (scale·q)·kᵀ over loops (i, d, j): reduction d in the middle.
          AffineExpr li, ld, lj;
          bindDims(ctx, li, ld, lj);
          Value scores = generic(
              b, l, {qScaled, kT},
              {dimsMap(ctx, 3, {li, ld}), dimsMap(ctx, 3, {ld, lj})},
              filledF32(b, l, {tq, tk}, 0.0), dimsMap(ctx, 3, {li, lj}),
              {kPar, kRed, kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value p = arith::MulFOp::create(nb, nl, args[0], args[1]);
                yieldValue(nb, nl, arith::AddFOp::create(nb, nl, args[2], p));
              });
          // Bias, score_mod and masks, element-wise on the tile.
          scores = generic(
              b, l, {}, {}, scores, id2, {kPar, kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                SmallVector<Value> idx = loopIndices(nb, nl, 2);
                Value row = addIndex(nb, nl, q0, idx[0]);
                Value key = addIndex(nb, nl, k0, idx[1]);
                Value qPos = buildQueryPosition(nb, nl, row, qOffset);
                Value s = args[0];
                if (bias) {
                  Value full[] = {b0, h, row, key};
                  SmallVector<Value> at;
                  for (int64_t dim = 0; dim < biasType.getRank(); ++dim)
                    at.push_back(biasType.getDimSize(dim) == 1
                                     ? zero
                                     : full[4 - biasType.getRank() + dim]);
                  s = arith::AddFOp::create(nb, nl, s,
                                            extractF32(nb, nl, bias, at));
                }
                if (!scoreMod.empty())
                  s = inlineScoreMod(nb, scoreMod, {s, b0, h, qPos, key});
                s = applyAttentionMasks(nb, nl, op, s, key, qPos, length);
                yieldValue(nb, nl, s);
              });
          AffineMap rowMap = dimsMap(ctx, 2, {i});
          AffineMap id1 = b.getMultiDimIdentityMap(1);
          // Ordered so that m, l and acc are updated in place (the loop's
          // iter_args bufferize to the same buffers).
          // rowMax = max_j s.
          Value rowMax = generic(
              b, l, scores, {id2}, filledF32(b, l, {tq}, kNegInf), rowMap,
              {kPar, kRed}, [&](OpBuilder &nb, Location nl, ValueRange args) {
                yieldValue(nb, nl,
                           arith::MaximumFOp::create(nb, nl, args[0], args[1]));
              });
          // alpha = exp(m - max(m, rowMax)), 0 while nothing was seen.
          Value alpha = generic(
              b, l, {m, rowMax}, {id1, id1}, emptyTensor(b, l, {tq}, f32), id1,
              {kPar}, [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value isInf =
                    arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                          args[0], f32Const(nb, nl, kNegInf));
                Value mx = arith::MaximumFOp::create(nb, nl, args[0], args[1]);
                Value e = math::ExpOp::create(
                    nb, nl, arith::SubFOp::create(nb, nl, args[0], mx));
                yieldValue(nb, nl,
                           arith::SelectOp::create(nb, nl, isInf,
                                                   f32Const(nb, nl, 0.0), e));
              });
          // m' = max(m, rowMax), in place.
          Value mNew = generic(
              b, l, rowMax, {id1}, m, id1, {kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                yieldValue(nb, nl,
                           arith::MaximumFOp::create(nb, nl, args[0], args[1]));
              });
          // p = exp(s - m'), in place of s (m' = -inf only while the whole
          // row is masked: use 0 so that exp(-inf) = 0).
          Value probs =
              generic(b, l, {mNew}, {rowMap}, scores, id2, {kPar, kPar},
                      [&](OpBuilder &nb, Location nl, ValueRange args) {
                        Value isInf = arith::CmpFOp::create(
                            nb, nl, arith::CmpFPredicate::OEQ, args[0],
                            f32Const(nb, nl, kNegInf));
                        Value mx = arith::SelectOp::create(
                            nb, nl, isInf, f32Const(nb, nl, 0.0), args[0]);
                        Value e = arith::SubFOp::create(nb, nl, args[1], mx);
                        yieldValue(nb, nl, math::ExpOp::create(nb, nl, e));
                      });
          // l' = alpha·l + sum_j p.
          Value lScaled = generic(
              b, l, alpha, {id1}, lsum, id1, {kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                yieldValue(nb, nl,
                           arith::MulFOp::create(nb, nl, args[0], args[1]));
              });
          Value lNew = generic(
              b, l, probs, {id2}, lScaled, rowMap, {kPar, kRed},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                yieldValue(nb, nl,
                           arith::AddFOp::create(nb, nl, args[0], args[1]));
              });
          // acc' = alpha·acc + p·(v + rel_values[bucket]), loops (i, j, e).
          Value accScaled = generic(
              b, l, alpha, {rowMap}, acc, id2, {kPar, kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                yieldValue(nb, nl,
                           arith::MulFOp::create(nb, nl, args[0], args[1]));
              });
          Value vSlice = slice2D(b, l, v, b0, hk, k0, tk, valueDim);
          AffineExpr ai, aj, ae;
          bindDims(ctx, ai, aj, ae);
          Value accNew = generic(
              b, l, {probs, vSlice},
              {dimsMap(ctx, 3, {ai, aj}), dimsMap(ctx, 3, {aj, ae})}, accScaled,
              dimsMap(ctx, 3, {ai, ae}), {kPar, kRed, kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value val = castFloat(nb, nl, args[1], f32);
                if (relValues) {
                  SmallVector<Value> idx = loopIndices(nb, nl, 3);
                  Value row = addIndex(nb, nl, q0, idx[0]);
                  Value qPos = buildQueryPosition(nb, nl, row, qOffset);
                  Value key = addIndex(nb, nl, k0, idx[1]);
                  Value bucket = bucketing->buildBucket(nb, nl, qPos, key);
                  val = arith::AddFOp::create(
                      nb, nl, val,
                      extractF32(nb, nl, relValues, {bucket, idx[2]}));
                }
                Value p = arith::MulFOp::create(nb, nl, args[0], val);
                yieldValue(nb, nl, arith::AddFOp::create(nb, nl, args[2], p));
              });
          scf::YieldOp::create(b, l, ValueRange{mNew, lNew, accNew});
        });

    // out = acc / l, 0 for rows that saw no key, written into the tile of
    // the shared output (destination-passing style: no copy).
    Value acc = keyLoop.getResult(2), lsum = keyLoop.getResult(1);
    Value outTile = slice2D(rewriter, loc, forall.getRegionIterArgs()[0], b0, h,
                            q0, tq, valueDim);
    Value out = generic(
        rewriter, loc, {acc, lsum}, {id2, dimsMap(ctx, 2, {i})}, outTile, id2,
        {kPar, kPar}, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value zeroF = f32Const(nb, nl, 0.0);
          Value empty = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                              args[1], zeroF);
          Value safeSum = arith::SelectOp::create(
              nb, nl, empty, f32Const(nb, nl, 1.0), args[1]);
          Value o = arith::DivFOp::create(nb, nl, args[0], safeSum);
          o = arith::SelectOp::create(nb, nl, empty, zeroF, o);
          yieldValue(nb, nl, castFloat(nb, nl, o, elementType));
        });
    rewriter.setInsertionPointToEnd(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets = {b0, h, q0, rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                       rewriter.getIndexAttr(1), tq, valueDim};
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(rewriter, loc, out,
                                          forall.getRegionIterArgs()[0],
                                          offsets, sizes, strides);
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }

  TileAttentionOptions options;
  int64_t *numToeplitz;
};

} // namespace

void mlir::rpe::populateRPETileAttentionPatterns(
    RewritePatternSet &patterns, const TileAttentionOptions &options) {
  patterns.add<TileAttention>(patterns.getContext(), options, nullptr);
}

namespace {
struct RPETileAttentionPass
    : rpe::CheckedOptionsPass<
          rpe::impl::RPETileAttentionPassBase<RPETileAttentionPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    if (tileQ <= 0 || tileK <= 0)
      return error("rpe-tile-attention: tile-q and tile-k must be positive, "
                   "got " +
                   Twine(static_cast<int64_t>(tileQ)) + " and " +
                   Twine(static_cast<int64_t>(tileK)));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    TileAttentionOptions options{tileQ, tileK};
    int64_t toeplitz = 0;
    RewritePatternSet patterns(&getContext());
    patterns.add<TileAttention>(&getContext(), options, &toeplitz);
    FailureOr<int64_t> rewritten =
        rewriteAttentionOps(getOperation(), std::move(patterns));
    if (failed(rewritten))
      return signalPassFailure();
    numTiled += *rewritten;
    numToeplitz += toeplitz;
  }
};
} // namespace
