//===- SimplifyDeallocations.cpp - bounded dealloc simplification ---------===//
//
// buffer-deallocation-simplification, skipped on functions whose dealloc ops
// release so many memrefs that its alias queries dominate compile time.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPESIMPLIFYDEALLOCATIONSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

struct RPESimplifyDeallocationsPass
    : rpe::CheckedOptionsPass<rpe::impl::RPESimplifyDeallocationsPassBase<
          RPESimplifyDeallocationsPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    if (maxMemrefs < 0)
      return error("rpe-simplify-deallocations: max-memrefs must not be "
                   "negative, got " +
                   Twine(static_cast<int64_t>(maxMemrefs)));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    WalkResult large = getOperation()->walk([&](bufferization::DeallocOp op) {
      return static_cast<int64_t>(op.getMemrefs().size()) > maxMemrefs
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (large.wasInterrupted())
      return;
    OpPassManager pipeline(func::FuncOp::getOperationName());
    pipeline.addPass(
        bufferization::createBufferDeallocationSimplificationPass());
    if (failed(runPipeline(pipeline, getOperation())))
      signalPassFailure();
  }
};

} // namespace
