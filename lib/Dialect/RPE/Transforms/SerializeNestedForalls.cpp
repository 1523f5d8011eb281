//===- SerializeNestedForalls.cpp - inner scf.forall loops as scf.for -----===//
//
// An scf.forall inside another one runs on the outer iteration's thread
// (OpenMP gives a nested region a team of one by default), but as a nested
// parallel region it still costs a fork each time: such loops become
// scf.for nests before the OpenMP conversion.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPESERIALIZENESTEDFORALLSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

struct RPESerializeNestedForallsPass
    : rpe::impl::RPESerializeNestedForallsPassBase<
          RPESerializeNestedForallsPass> {
  void runOnOperation() override {
    // Post-order: inner loops first.
    SmallVector<scf::ForallOp> nested;
    getOperation()->walk([&](scf::ForallOp forall) {
      if (forall.getNumResults() == 0 &&
          forall->getParentOfType<scf::ForallOp>())
        nested.push_back(forall);
    });
    rpe::hoistForallAllocas(nested);
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : nested) {
      rewriter.setInsertionPoint(forall);
      if (failed(scf::forallToForLoop(rewriter, forall))) {
        forall->emitError("rpe-serialize-nested-foralls: could not lower "
                          "this loop to scf.for");
        return signalPassFailure();
      }
      ++numSerialized;
    }
  }
};

} // namespace
