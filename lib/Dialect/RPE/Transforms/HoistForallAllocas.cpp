//===- HoistForallAllocas.cpp - stack scratch of sequential foralls -------===//
//
// `scf.forall` is an automatic allocation scope, but `scf-forall-to-for`
// lowers it to an `scf.for`, which is none: every iteration's `memref.alloca`
// would stay on the stack until the function returns (and a
// `memref.alloca_scope` cannot survive inside an `scf.for` body either: it
// lowers to several blocks, so such scopes are inlined first). When the
// forall runs sequentially, its
// iterations can share one scratch buffer: this pass hoists the allocas
// whose sizes are defined outside the loop in front of it, and turns the
// others into `memref.alloc` + `memref.dealloc` at the end of the body.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEHOISTFORALLALLOCASPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

void mlir::rpe::hoistForallAllocas(ArrayRef<scf::ForallOp> loops) {
  for (scf::ForallOp forall : loops) {
    if (forall.getNumResults() != 0)
      continue;
    // A stack scope directly in the body becomes part of the body.
    for (auto scope : llvm::make_early_inc_range(
             forall.getBody()->getOps<memref::AllocaScopeOp>())) {
      Block &body = scope.getBodyRegion().front();
      Operation *ret = body.getTerminator();
      scope->replaceAllUsesWith(ret->getOperands());
      scope->getBlock()->getOperations().splice(
          scope->getIterator(), body.getOperations(), body.begin(),
          ret->getIterator());
      scope.erase();
    }
    // Allocas of this loop's scope (not of nested scopes).
    SmallVector<memref::AllocaOp> allocas;
    forall.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op->hasTrait<OpTrait::AutomaticAllocationScope>())
        return WalkResult::skip();
      if (auto alloca = dyn_cast<memref::AllocaOp>(op))
        allocas.push_back(alloca);
      return WalkResult::advance();
    });
    for (memref::AllocaOp alloca : allocas) {
      bool invariant = llvm::all_of(alloca->getOperands(), [&](Value v) {
        return !forall->isAncestor(v.getParentRegion()->getParentOp());
      });
      if (invariant) {
        alloca->moveBefore(forall);
        continue;
      }
      OpBuilder b(alloca);
      auto alloc = memref::AllocOp::create(
          b, alloca.getLoc(), alloca.getType(), alloca.getDynamicSizes(),
          alloca.getSymbolOperands(), alloca.getAlignmentAttr());
      alloca.replaceAllUsesWith(alloc.getResult());
      alloca.erase();
      b.setInsertionPoint(alloc->getBlock()->getTerminator());
      memref::DeallocOp::create(b, alloc.getLoc(), alloc);
    }
  }
}

namespace {

struct RPEHoistForallAllocasPass
    : rpe::impl::RPEHoistForallAllocasPassBase<RPEHoistForallAllocasPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    getOperation()->walk(
        [&](scf::ForallOp forall) { loops.push_back(forall); });
    rpe::hoistForallAllocas(loops);
  }
};

} // namespace
