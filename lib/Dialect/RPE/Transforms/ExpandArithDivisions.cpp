//===- ExpandArithDivisions.cpp - arith-expand without min / max ---------===//
//
// Expands the arith ops that convert-arith-to-llvm cannot lower (ceil and
// floor divisions, scaling casts) and leaves the float min / max ops to the
// LLVM intrinsics.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEEXPANDARITHDIVISIONSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
struct RPEExpandArithDivisionsPass
    : rpe::impl::RPEExpandArithDivisionsPassBase<RPEExpandArithDivisionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandScalingExtTruncPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
