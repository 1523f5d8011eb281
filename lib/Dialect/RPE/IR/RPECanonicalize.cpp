//===- RPECanonicalize.cpp - rpe canonicalization patterns ------*- C++ -*-===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// A table with a single bucket row gives the same value for every (i, j):
/// the bias is a broadcast of that row.
///
///   rpe.relative_bias %t by #rpe.clip<max_distance = 0> : 1×H -> H×Lq×Lk
/// becomes
///   %row = tensor.collapse_shape %t [[0, 1]] : 1×H -> H
///   linalg.broadcast ins(%row) outs(tensor.empty) dimensions = [1, 2]
struct SingleBucketBiasToBroadcast : OpRewritePattern<RelativeBiasOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RelativeBiasOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getBucketing().getNumBuckets() != 1)
      return rewriter.notifyMatchFailure(op, "more than one bucket");
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getResult().getType();
    Value row = tensor::CollapseShapeOp::create(
        rewriter, loc, op.getTable(), ArrayRef<ReassociationIndices>{{0, 1}});
    auto rowType = RankedTensorType::get({resultType.getDimSize(0)},
                                         resultType.getElementType());
    if (row.getType() != rowType)
      row = tensor::CastOp::create(rewriter, loc, rowType, row);
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType,
                                         op.getDynamicSizes());
    auto broadcast = linalg::BroadcastOp::create(rewriter, loc, row, init,
                                                 ArrayRef<int64_t>{1, 2});
    rewriter.replaceOp(op, broadcast->getResults());
    return success();
  }
};

/// R(p2)·R(p1)·x = R(p1 + p2)·x when both rotations use the same
/// frequencies (theta, rotary_dim, scaling: none, linear or llama3) and
/// layout.
struct ComposeRotary : OpRewritePattern<RotaryOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotaryOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getX().getDefiningOp<RotaryOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not an rpe.rotary");
    if (inner.getTheta() != op.getTheta() ||
        inner.getInterleaved() != op.getInterleaved() ||
        inner.getEffectiveRotaryDim() != op.getEffectiveRotaryDim() ||
        ShapedType::isDynamic(op.getEffectiveRotaryDim()))
      return rewriter.notifyMatchFailure(op, "different frequencies or layout");
    if (inner.getPositions().getType() != op.getPositions().getType())
      return rewriter.notifyMatchFailure(op, "position shapes differ");
    // Scaled frequencies compose only when they are the same and do not
    // depend on the positions (rope_dynamic) or scale the result (YaRN's
    // attention factor would apply twice).
    Attribute scaling = op.getScalingAttr();
    if (scaling != inner.getScalingAttr())
      return rewriter.notifyMatchFailure(op, "different scalings");
    if (isa_and_present<RopeDynamicAttr, RopeYarnAttr>(scaling))
      return rewriter.notifyMatchFailure(
          op, "scaling depends on the positions or scales the result");
    Value sum = arith::AddIOp::create(rewriter, op.getLoc(),
                                      inner.getPositions(), op.getPositions());
    rewriter.modifyOpInPlace(op, [&] {
      op.getXMutable().assign(inner.getX());
      op.getPositionsMutable().assign(sum);
    });
    return success();
  }
};

/// Adding a zero bias changes nothing: drop it.
struct DropZeroBias : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value bias = op.getBias();
    if (!bias || !matchPattern(bias, m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(op, "no splat-zero bias");
    rewriter.modifyOpInPlace(op, [&] { op.getBiasMutable().clear(); });
    return success();
  }
};

/// A score_mod that yields its score unchanged (what is left once a mask
/// became `causal`): drop the region.
struct DropIdentityScoreMod : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Region &region = op.getScoreMod();
    if (region.empty() || !llvm::hasSingleElement(region.front()))
      return rewriter.notifyMatchFailure(op, "no trivial score_mod");
    auto yield = cast<YieldOp>(region.front().getTerminator());
    if (yield.getValues().size() != 1 ||
        yield.getValues().front() != region.front().getArgument(0))
      return rewriter.notifyMatchFailure(op, "score_mod changes the score");
    rewriter.eraseBlock(&region.front());
    return success();
  }
};

/// The q_offset of `op` as a 128-bit constant (room for position sums
/// without wrapping; 0 when absent), or std::nullopt when it is not a
/// constant.
std::optional<APInt> constantQueryOffset(AttentionOp op) {
  APInt offset(64, 0);
  if (Value off = op.getQOffset())
    if (!matchPattern(off, m_ConstantInt(&offset)))
      return std::nullopt;
  return offset.sextOrTrunc(128);
}

/// A window no query position reaches past (every position i + q_offset
/// below W: static Lq, q_offset absent or constant) masks nothing: drop it.
struct DropIdleWindow : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<uint64_t> window = op.getWindow();
    int64_t lq = cast<RankedTensorType>(op.getQ().getType()).getDimSize(2);
    if (!window || ShapedType::isDynamic(lq))
      return rewriter.notifyMatchFailure(op, "no window or a dynamic Lq");
    std::optional<APInt> offset = constantQueryOffset(op);
    if (!offset)
      return rewriter.notifyMatchFailure(op, "q_offset is not a constant");
    // The last position, lq - 1 + q_offset, below W (in 128 bits: no wrap).
    APInt last = *offset + APInt(128, lq - 1, true);
    if (lq > 0 && !last.slt(APInt(128, *window)))
      return rewriter.notifyMatchFailure(op, "the window masks keys");
    rewriter.modifyOpInPlace(op, [&] { op.removeWindowAttr(); });
    return success();
  }
};

/// A lookahead no key reaches past (the last key, Lk - 1, at most the first
/// position q_offset plus the lookahead: static Lk, q_offset absent or
/// constant) masks nothing: drop it. (A q_offset beyond ±2^62 is clamped at
/// run time towards 0; the lookahead stays idle: Lk < 2^62.)
struct DropIdleLookahead : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<uint64_t> lookahead = op.getLookahead();
    int64_t lk = cast<RankedTensorType>(op.getK().getType()).getDimSize(2);
    if (!lookahead || ShapedType::isDynamic(lk))
      return rewriter.notifyMatchFailure(op, "no lookahead or a dynamic Lk");
    std::optional<APInt> offset = constantQueryOffset(op);
    if (!offset)
      return rewriter.notifyMatchFailure(op, "q_offset is not a constant");
    APInt reach = *offset + APInt(128, *lookahead);
    if (!APInt(128, lk - 1, true).sle(reach))
      return rewriter.notifyMatchFailure(op, "the lookahead masks keys");
    rewriter.modifyOpInPlace(op, [&] { op.removeLookaheadAttr(); });
    return success();
  }
};

} // namespace

void RelativeBiasOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                 MLIRContext *context) {
  results.add<SingleBucketBiasToBroadcast>(context);
}

void RotaryOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<ComposeRotary>(context);
}

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<DropZeroBias, DropIdentityScoreMod, DropIdleWindow,
              DropIdleLookahead>(context);
}
