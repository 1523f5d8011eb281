//===- InterchangeReductions.cpp - contractions with an inner axpy --------===//
//
// C[i, j] += A[i, k]·B[k, j] with k innermost lowers to a serial float
// reduction over strided B; with (i, k, j) the innermost loop is an axpy
// over contiguous rows of B and C that LLVM vectorizes. For the GPU, the
// other way round: every reduction inside every parallel loop, so that
// each thread of rpe-gpu-offload owns one output element.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEINTERCHANGEREDUCTIONSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// The interchange that puts the innermost loop (the only reduction) just
/// outside the loop before it, when that one is parallel and indexes the
/// last dimension of every operand that uses it; none otherwise.
std::optional<SmallVector<unsigned>> axpyOrder(linalg::LinalgOp op) {
  unsigned n = op.getNumLoops();
  if (n < 2 || op.getNumReductionLoops() != 1 || op.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators[n - 1] != utils::IteratorType::reduction ||
      iterators[n - 2] != utils::IteratorType::parallel)
    return std::nullopt;
  unsigned p = n - 2;
  for (AffineMap map : op.getIndexingMapsArray()) {
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return std::nullopt;
    bool uses = llvm::any_of(
        map.getResults(), [&](AffineExpr e) { return e.isFunctionOfDim(p); });
    if (uses &&
        (map.getNumResults() == 0 ||
         map.getResults().back() != getAffineDimExpr(p, op->getContext())))
      return std::nullopt;
  }
  // The output must use it (the inner loop then walks an output row).
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() == 0 ||
      out.getResults().back() != getAffineDimExpr(p, op->getContext()))
    return std::nullopt;
  SmallVector<unsigned> order;
  for (unsigned d = 0; d < p; ++d)
    order.push_back(d);
  order.push_back(n - 1);
  order.push_back(p);
  return order;
}

/// The interchange that puts every parallel loop before every reduction
/// loop, each kind in its order; none where they are in that order already.
std::optional<SmallVector<unsigned>>
reductionsInnermostOrder(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto kind :
       {utils::IteratorType::parallel, utils::IteratorType::reduction})
    for (auto [d, iterator] : llvm::enumerate(iterators))
      if (iterator == kind)
        order.push_back(d);
  if (order.size() != iterators.size() ||
      llvm::equal(order, llvm::seq<unsigned>(0, iterators.size())))
    return std::nullopt;
  return order;
}

struct InterchangeReduction : OpInterfaceRewritePattern<linalg::LinalgOp> {
  InterchangeReduction(MLIRContext *ctx, bool innermost)
      : OpInterfaceRewritePattern(ctx), innermost(innermost) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    std::optional<SmallVector<unsigned>> order =
        innermost ? reductionsInnermostOrder(op) : axpyOrder(op);
    if (!order)
      return rewriter.notifyMatchFailure(op, "no inner reduction to move");
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        return rewriter.notifyMatchFailure(op, "cannot generalize");
      generic = *g;
    }
    if (failed(linalg::interchangeGenericOp(rewriter, generic, *order)))
      return rewriter.notifyMatchFailure(op, "interchange failed");
    return success();
  }

private:
  bool innermost;
};

struct RPEInterchangeReductionsPass
    : rpe::impl::RPEInterchangeReductionsPassBase<
          RPEInterchangeReductionsPass> {
  using RPEInterchangeReductionsPassBase::RPEInterchangeReductionsPassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRPEInterchangeReductionsPatterns(patterns, reductionsInnermost);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPEInterchangeReductionsPatterns(
    RewritePatternSet &patterns, bool reductionsInnermost) {
  patterns.add<InterchangeReduction>(patterns.getContext(),
                                     reductionsInnermost);
}
