//===- OwnedResults.cpp - each result of an entry point owns its buffer ---===//
//
// Callers free every memref result of an entry point: one that is an
// argument, a constant global or another result's buffer is copied into a
// buffer of its own.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEOWNEDRESULTSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
/// Whether the caller may not free `root` as a result: an argument (of the
/// function, or of a block: the buffer it stands for is unknown here) or a
/// constant global.
bool isForeign(Value root) {
  return isa<BlockArgument>(root) || root.getDefiningOp<memref::GetGlobalOp>();
}

struct RPEOwnedResultsPass
    : rpe::impl::RPEOwnedResultsPassBase<RPEOwnedResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      func.walk([&](func::ReturnOp ret) { ownResults(ret); });
    }
  }

  static void ownResults(func::ReturnOp ret) {
    llvm::SmallPtrSet<Value, 4> roots;
    for (OpOperand &operand : ret->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        continue;
      // The buffer the result views (through view-like ops).
      Value root = memref::skipViewLikeOps(cast<MemrefValue>(operand.get()));
      if (roots.insert(root).second && !isForeign(root))
        continue;
      OpBuilder b(ret);
      Location loc = ret.getLoc();
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.isDynamicDim(d))
          sizes.push_back(memref::DimOp::create(b, loc, operand.get(), d));
      Value own = memref::AllocOp::create(b, loc, type, sizes);
      memref::CopyOp::create(b, loc, operand.get(), own);
      operand.set(own);
    }
  }
};
} // namespace
