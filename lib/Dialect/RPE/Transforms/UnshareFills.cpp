//===- UnshareFills.cpp - one linalg.fill per destination ----------------===//
//
// Two ops whose inits are the same linalg.fill result (CSE merges identical
// fills: the two gather-trick tables of a DeBERTa head, say) cannot both
// write into one buffer: one-shot bufferization fills one buffer and copies
// it for the other, a copy of constant data as large as the result. Here
// every such use but the first gets a clone of the fill (and of its
// tensor.empty), so that each op fills its own buffer.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEUNSHAREFILLSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

/// A destination-style op whose init is a linalg.fill on tensors that other
/// destination-style ops use as their init too: the fill cloned for it.
struct UnshareFill : OpInterfaceRewritePattern<DestinationStyleOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(DestinationStyleOpInterface op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    bool changed = false;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      auto fill = init.get().getDefiningOp<linalg::FillOp>();
      if (!fill || !fill.hasPureTensorSemantics())
        continue;
      // The first destination use keeps the fill (uses are listed last
      // first: compare positions in the block to find the first).
      Operation *first = nullptr;
      for (OpOperand &use : fill->getResult(0).getUses()) {
        auto user = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
        if (!user || !user.isDpsInit(&use))
          continue;
        if (!first || (use.getOwner()->getBlock() == first->getBlock() &&
                       use.getOwner()->isBeforeInBlock(first)))
          first = use.getOwner();
      }
      if (first == op.getOperation())
        continue;
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(op);
      IRMapping map;
      if (auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        map.map(empty.getResult(), rewriter.clone(*empty)->getResult(0));
      Operation *clone = rewriter.clone(*fill, map);
      rewriter.modifyOpInPlace(op, [&] { init.set(clone->getResult(0)); });
      changed = true;
    }
    return success(changed);
  }
};

struct RPEUnshareFillsPass
    : rpe::impl::RPEUnshareFillsPassBase<RPEUnshareFillsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    rpe::populateRPEUnshareFillsPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::rpe::populateRPEUnshareFillsPatterns(RewritePatternSet &patterns) {
  patterns.add<UnshareFill>(patterns.getContext());
}
