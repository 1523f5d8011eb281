//===- ReadOnlyArguments.cpp - entry points do not write their inputs -----===//
//
// Callers own the buffers they pass to an entry point: its tensor arguments
// are marked not writable, so bufferization copies instead of writing into
// them.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEREADONLYARGUMENTSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
struct RPEReadOnlyArgumentsPass
    : rpe::impl::RPEReadOnlyArgumentsPassBase<RPEReadOnlyArgumentsPass> {
  void runOnOperation() override {
    StringRef name = bufferization::BufferizationDialect::kWritableAttrName;
    BoolAttr no = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (isa<TensorType>(func.getArgument(i).getType()) &&
            !func.getArgAttr(i, name))
          func.setArgAttr(i, name, no);
    }
  }
};
} // namespace
