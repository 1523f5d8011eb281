//===- NormalizeAttention.cpp - front-end attention into rpe's 4-D form ---===//
//
// Front ends (torch-mlir's FX importer, linalg-on-tensors) write attention
// as linalg.batch_matmul on batch·heads-collapsed tensors between
// tensor.collapse_shape / expand_shape and linalg.transpose. This pass
// rewrites such IR into the form rpe-fuse-attention raises, with upstream
// patterns where they exist:
//
//   1. linalg.batch_matmul and linalg.transpose -> linalg.generic;
//   2. reshapes folded into generics by expansion (upstream), so that the
//      contractions and the element-wise steps between them run over
//      (b, h, i, j) again, and expand(collapse(x)) folded away;
//   3. pure permutations and broadcasts (generics that only copy their one
//      input) fused into the contractions that read them (upstream
//      elementwise fusion, restricted to these producers: the softmax and
//      the scalings must stay separate ops for the raising to see them).
//
// Everything stays valid linalg on tensors; nothing rpe-specific is
// created.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPENORMALIZEATTENTIONPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

/// batch_matmul and transpose -> generic (upstream generalization).
template <typename NamedOp> struct GeneralizeOp : OpRewritePattern<NamedOp> {
  using OpRewritePattern<NamedOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(NamedOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return failure();
    return success();
  }
};

/// A generic that only copies its single input (a permutation, a broadcast
/// or a plain copy).
bool isCopyGeneric(Operation *op) {
  auto generic = dyn_cast_if_present<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return body.getOperations().size() == 1 &&
         yield.getValues().front() == body.getArgument(0);
}

/// A generic with a reduction loop (a contraction or a row reduction).
bool hasReduction(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.getNumReductionLoops() > 0;
}

/// A generic with two inputs and a reduction loop (a batch matmul).
bool isContractionGeneric(Operation *op) {
  auto generic = dyn_cast_if_present<linalg::GenericOp>(op);
  return generic && generic.getNumDpsInputs() == 2 &&
         generic.getNumDpsInits() == 1 && generic.getNumReductionLoops() == 1;
}

/// A generic whose loops are all parallel (scores scaled, a bias added on
/// the batch·heads-collapsed scores, as BLOOM's baddbmm writes ALiBi).
bool isElementwiseGeneric(Operation *op) {
  auto generic = dyn_cast_if_present<linalg::GenericOp>(op);
  return generic && generic.getNumDpsInits() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops();
}

/// An unused generic whose body only checks (a front end's gather bounds
/// checks) besides pure ops: its checks guard nothing.
struct EraseUnusedCheckingGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->use_empty() || isMemoryEffectFree(op) ||
        !rpe::isPureUpToChecks(op))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// The batch·heads split: B·H×…  <->  B×H×… with groups [[0, 1], [2], [3]].
bool isHeadsSplit(ArrayRef<ReassociationIndices> groups) {
  return groups.size() == 3 && groups[0] == ReassociationIndices{0, 1} &&
         groups[1] == ReassociationIndices{2} &&
         groups[2] == ReassociationIndices{3};
}

/// A generic on batch·heads-collapsed scores: an input collapsed by the
/// heads split or a result expanded by it.
bool onCollapsedHeads(linalg::GenericOp op) {
  for (Value input : op.getDpsInputs())
    if (auto c = input.getDefiningOp<tensor::CollapseShapeOp>())
      if (isHeadsSplit(c.getReassociationIndices()))
        return true;
  for (Operation *user : op->getUsers())
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(user))
      if (isHeadsSplit(e.getReassociationIndices()))
        return true;
  return false;
}

/// An input of a generic on batch·heads-collapsed scores read with a
/// constant 0 for a unit dimension (BLOOM's ALiBi: (b·h, 0, j) of a
/// B·H×1×L tensor) -> the input without those dimensions, read with the
/// remaining results: upstream's reshape propagation only takes projected
/// permutations.
struct DropBroadcastUnitDims : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !onCollapsedHeads(op))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    bool changed = false;
    SmallVector<Value> inputs(op.getDpsInputs());
    for (auto [index, operand] : llvm::enumerate(op.getDpsInputOperands())) {
      AffineMap map = maps[index];
      auto type = dyn_cast<RankedTensorType>(operand->get().getType());
      if (!type)
        continue;
      // Groups of the collapse: each kept dimension with the unit
      // dimensions read as 0 after it (or before the first kept one).
      SmallVector<ReassociationIndices> groups;
      SmallVector<AffineExpr> kept;
      ReassociationIndices pending;
      bool readable = true;
      for (auto [d, e] : llvm::enumerate(map.getResults())) {
        auto c = dyn_cast<AffineConstantExpr>(e);
        if (c && c.getValue() == 0 && type.getDimSize(d) == 1) {
          (groups.empty() ? pending : groups.back()).push_back(d);
          continue;
        }
        if (!isa<AffineDimExpr>(e)) {
          readable = false;
          break;
        }
        ReassociationIndices group = pending;
        pending.clear();
        group.push_back(d);
        groups.push_back(group);
        kept.push_back(e);
      }
      // Nothing to drop, or nothing to keep.
      if (!readable || groups.empty() ||
          kept.size() == static_cast<size_t>(map.getNumResults()))
        continue;
      inputs[index] = tensor::CollapseShapeOp::create(rewriter, op.getLoc(),
                                                      operand->get(), groups);
      maps[index] = AffineMap::get(map.getNumDims(), 0, kept, op.getContext());
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable().assign(inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct RPENormalizeAttentionPass
    : rpe::impl::RPENormalizeAttentionPassBase<RPENormalizeAttentionPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    rpe::populateRPENormalizeAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPENormalizeAttentionPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<GeneralizeOp<linalg::BatchMatmulOp>,
               GeneralizeOp<linalg::TransposeOp>, DropBroadcastUnitDims>(ctx);
  populateRPEEraseUnusedChecksPatterns(patterns);
  // Only the batch·heads split (B·H×…  <->  B×H×…, groups [[0, 1], [2],
  // [3]]) of contractions, copies and element-wise steps, not of row
  // reductions: one expanded by its consumer's unit dimension would no
  // longer read as one. The heads collapse of grouped-query K/V ([[0],
  // [1, 2], ...]) stays for the raising to see GQA.
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, [](OpOperand
                                                                     *operand) {
    Operation *producer = operand->get().getDefiningOp();
    Operation *owner = operand->getOwner();
    auto reshape = [](Operation *op) -> Operation * {
      return isa_and_present<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)
                 ? op
                 : nullptr;
    };
    Operation *r = reshape(producer) ? producer : reshape(owner);
    Operation *other = r == producer ? owner : producer;
    if (!r || !(isContractionGeneric(other) || isCopyGeneric(other) ||
                isElementwiseGeneric(other)))
      return false;
    SmallVector<ReassociationIndices> groups =
        isa<tensor::CollapseShapeOp>(r)
            ? cast<tensor::CollapseShapeOp>(r).getReassociationIndices()
            : cast<tensor::ExpandShapeOp>(r).getReassociationIndices();
    return isHeadsSplit(groups);
  });
  // Permutations only (broadcasts, e.g. GQA's repeated K/V, stay visible).
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [](OpOperand *operand) {
        auto producer = dyn_cast_if_present<linalg::GenericOp>(
            operand->get().getDefiningOp());
        return isCopyGeneric(producer) &&
               producer.getIndexingMapsArray()[0].isPermutation() &&
               hasReduction(operand->getOwner());
      });
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
  // fill -> expand_shape becomes a fill of the expanded tensor (zero inits
  // of the contractions).
  linalg::FillOp::getCanonicalizationPatterns(patterns, ctx);
}

void mlir::rpe::populateRPEEraseUnusedChecksPatterns(
    RewritePatternSet &patterns) {
  patterns.add<EraseUnusedCheckingGeneric>(patterns.getContext());
}
