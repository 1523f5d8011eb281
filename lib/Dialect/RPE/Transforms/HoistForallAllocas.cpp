//===- HoistForallAllocas.cpp - stack scratch of sequential foralls -------===//
//
// `scf.forall` is an automatic allocation scope, but `scf-forall-to-for`
// lowers it to an `scf.for`, which is none: every iteration's `memref.alloca`
// would stay on the stack until the function returns (and a
// `memref.alloca_scope` cannot survive inside an `scf.for` body either: it
// lowers to several blocks, so such scopes are inlined first). When the
// forall runs sequentially, its
// iterations can share one scratch buffer: this pass hoists the allocas
// whose sizes are defined outside the loop in front of it (also those in
// `scf.for` loops of the body, which free no stack per iteration either),
// and turns the others into `memref.alloc` + `memref.dealloc` around the
// outermost op that can share them.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEHOISTFORALLALLOCASPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

void mlir::rpe::hoistForallAllocas(ArrayRef<scf::ForallOp> loops) {
  // Ops whose lowering frees the stack their body takes: functions, stack
  // scopes, and foralls that stay parallel (the OpenMP lowering wraps each
  // iteration in a stack scope).
  auto isStackScope = [&](Operation *op) {
    if (auto loop = dyn_cast<scf::ForallOp>(op))
      return !llvm::is_contained(loops, loop);
    return isa<FunctionOpInterface, memref::AllocaScopeOp, scf::ParallelOp>(op);
  };
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
    // Allocas of this loop's iterations, also those in the loops inside
    // that free no stack (scf.for, although marked an allocation scope),
    // but not those of stack scopes inside or of nested foralls (taken on
    // their own).
    SmallVector<memref::AllocaOp> allocas;
    forall.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isStackScope(op) || isa<scf::ForallOp>(op))
        return WalkResult::skip();
      if (auto alloca = dyn_cast<memref::AllocaOp>(op))
        allocas.push_back(alloca);
      return WalkResult::advance();
    });
    for (memref::AllocaOp alloca : allocas) {
      auto definedOutside = [&](Operation *op) {
        return llvm::all_of(alloca->getOperands(), [&](Value v) {
          return !op->isAncestor(v.getParentRegion()->getParentOp());
        });
      };
      // The outermost op around the alloca that does not define its sizes
      // (up to a scope that frees the stack its body takes).
      Operation *around = nullptr;
      for (Operation *p = alloca->getParentOp();
           p && !isStackScope(p) && definedOutside(p); p = p->getParentOp())
        around = p;
      // Stack scratch in front of it when that reaches such a scope (the
      // function, or a forall that stays parallel): the loop's iterations,
      // and those of the scf.for loops around it, share it. An alloca in
      // the body of an scf.for would take stack again in each iteration
      // (scf.for is marked an automatic allocation scope, but its lowering
      // to branches saves and restores no stack: DeBERTa with 512 heads
      // overflowed 8 MiB).
      Operation *scope = around ? around->getParentOp() : nullptr;
      if (scope && isStackScope(scope)) {
        alloca->moveBefore(around);
        continue;
      }
      // Otherwise on the heap around that op (a loop inside the body, or
      // the loop itself when sized by a loop around it), or, sized in its
      // own block, freed at the end of the block.
      OpBuilder b(around ? around : alloca.getOperation());
      auto alloc = memref::AllocOp::create(
          b, alloca.getLoc(), alloca.getType(), alloca.getDynamicSizes(),
          alloca.getSymbolOperands(), alloca.getAlignmentAttr());
      alloca.replaceAllUsesWith(alloc.getResult());
      alloca.erase();
      if (around)
        b.setInsertionPointAfter(around);
      else
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
