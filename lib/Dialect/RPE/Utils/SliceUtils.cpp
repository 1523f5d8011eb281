//===- SliceUtils.cpp - what a value is computed from ---------------------===//

#include "rpe/Dialect/RPE/Utils/SliceUtils.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

bool mlir::rpe::dependsOn(Value v, BlockArgument arg) {
  if (v == arg)
    return true;
  // Another block argument is computed by no op (getBackwardSlice would
  // start from the op that owns its block).
  if (isa<BlockArgument>(v))
    return false;
  Region *scope = arg.getOwner()->getParent();
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitBlockArguments = true;
  options.filter = [&](Operation *o) {
    return scope->isAncestor(o->getParentRegion());
  };
  SetVector<Operation *> slice;
  (void)getBackwardSlice(v, &slice, options);
  return llvm::any_of(slice, [&](Operation *o) {
    return llvm::is_contained(o->getOperands(), arg);
  });
}
