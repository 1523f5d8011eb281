//===- InternalizeFunctions.cpp - private LLVM functions stay inside ------===//
//
// Private llvm.func definitions get internal linkage: they do not leave the
// object or shared library built from the module.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEINTERNALIZEFUNCTIONSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
struct RPEInternalizeFunctionsPass
    : rpe::impl::RPEInternalizeFunctionsPassBase<RPEInternalizeFunctionsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>())
      if (func.isPrivate() && !func.isExternal() &&
          func.getLinkage() == LLVM::Linkage::External)
        func.setLinkage(LLVM::Linkage::Internal);
  }
};
} // namespace
