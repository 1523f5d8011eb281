//===- ParallelizeLinalg.cpp - linalg ops on per-thread tiles -------------===//
//
// linalg op on tensors -> scf.forall over `num-threads` tiles of its first
// non-trivial parallel loop (upstream tileUsingSCF), which the CPU pipeline
// maps to OpenMP threads.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEPARALLELIZELINALGPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

std::optional<unsigned>
mlir::rpe::getParallelizableLoop(linalg::LinalgOp op, int64_t minIterations) {
  if (!op.hasPureTensorSemantics() || op->getParentOfType<scf::ForallOp>())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t iterations = 1;
  for (int64_t r : ranges)
    iterations = ShapedType::isDynamic(r) || ShapedType::isDynamic(iterations)
                     ? ShapedType::kDynamic
                     : iterations * r;
  if (!ShapedType::isDynamic(iterations) && iterations < minIterations)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel && ranges[dim] != 1)
      return dim;
  return std::nullopt;
}

FailureOr<scf::ForallOp> mlir::rpe::parallelizeLinalgOp(RewriterBase &rewriter,
                                                        linalg::LinalgOp op,
                                                        unsigned loop,
                                                        int64_t numThreads) {
  SmallVector<OpFoldResult> threads(op.getNumLoops(), rewriter.getIndexAttr(0));
  threads[loop] = rewriter.getIndexAttr(numThreads);
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  options.setNumThreads(threads);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled) || tiled->loops.empty())
    return failure();
  auto forall = cast<scf::ForallOp>(tiled->loops.front().getOperation());
  // An init that is a fill: each thread fills its own tile right before
  // the op (the loop's output is what the fill filled), so that the fill
  // and the op meet on the same buffer, where a kernel can start from the
  // fill's value instead of reading it back (rpe-vectorize-contractions).
  if (tiled->tiledOps.size() == 1 && op->getNumResults() == 1) {
    auto tiledOp =
        dyn_cast<DestinationStyleOpInterface>(tiled->tiledOps.front());
    auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (tiledOp && tiledOp.getNumDpsInits() == 1 && fill &&
        fill.hasPureTensorSemantics() &&
        forall.getOutputs()[0] == fill.getResult(0)) {
      OpOperand &tileInit = *tiledOp.getDpsInitOperand(0);
      rewriter.setInsertionPoint(tiledOp);
      Value filled = linalg::FillOp::create(rewriter, fill.getLoc(),
                                            fill.getInputs()[0], tileInit.get())
                         .getResult(0);
      rewriter.modifyOpInPlace(tiledOp, [&] { tileInit.set(filled); });
      rewriter.modifyOpInPlace(forall, [&] {
        forall.getOutputsMutable()[0].set(fill.getOutputs()[0]);
      });
    }
  }
  rewriter.replaceOp(op, tiled->replacements);
  return forall;
}

namespace {

struct RPEParallelizeLinalgPass
    : rpe::impl::RPEParallelizeLinalgPassBase<RPEParallelizeLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    if (numThreads < 2)
      return;
    SmallVector<std::pair<linalg::LinalgOp, unsigned>> work, fills;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<unsigned> loop =
              getParallelizableLoop(op, minIterations))
        (isa<linalg::FillOp>(op) ? fills : work).push_back({op, *loop});
    });
    IRRewriter rewriter(&getContext());
    // Fills last: the ops they initialize fill their own tiles; a fill left
    // without users goes.
    work.append(fills.begin(), fills.end());
    for (auto [op, loop] : work) {
      if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation())) {
        // Sizes the tiled ops read from the fill are the filled tensor's.
        for (OpOperand &use :
             llvm::make_early_inc_range(fill->getResult(0).getUses()))
          if (auto dim = dyn_cast<tensor::DimOp>(use.getOwner()))
            rewriter.modifyOpInPlace(dim,
                                     [&] { use.set(fill.getOutputs()[0]); });
        if (fill->use_empty()) {
          rewriter.eraseOp(fill);
          continue;
        }
      }
      if (failed(parallelizeLinalgOp(rewriter, op, loop, numThreads))) {
        op->emitError("rpe-parallelize-linalg: could not tile this op");
        return signalPassFailure();
      }
      ++numParallelized;
    }
  }
};

} // namespace
