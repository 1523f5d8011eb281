//===- EmitCInterface.cpp - mark C entry points -----------------*- C++ -*-===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEEMITCINTERFACEPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
struct RPEEmitCInterfacePass
    : rpe::impl::RPEEmitCInterfacePassBase<RPEEmitCInterfacePass> {
  void runOnOperation() override {
    StringRef name = LLVM::LLVMDialect::getEmitCWrapperAttrName();
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() && !func->hasAttr(name))
        func->setAttr(name, UnitAttr::get(&getContext()));
  }
};
} // namespace
