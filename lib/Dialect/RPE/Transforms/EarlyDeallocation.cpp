//===- EarlyDeallocation.cpp - free buffers after their last use ----------===//
//
// Ownership-based deallocation frees every buffer of a block in one
// bufferization.dealloc at the block's end. A model's entry function is one
// block of kernel calls, so every intermediate buffer of every layer would
// stay alive until it returns. This pass moves the buffers that provably
// need no run-time alias check out of that dealloc and frees each with
// memref.dealloc right after the last use of any of its aliases.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEEARLYDEALLOCATIONPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

/// Functions whose every returned value is a distinct memref.alloc of their
/// body: their results alias nothing the caller has.
class FreshCallees {
public:
  explicit FreshCallees(ModuleOp module) : symbols(module) {}

  bool returnsFresh(func::CallOp call) {
    auto [it, inserted] = cache.try_emplace(call.getCalleeAttr(), false);
    if (!inserted)
      return it->second;
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
      return false;
    auto ret = cast<func::ReturnOp>(callee.getBody().front().getTerminator());
    llvm::SmallPtrSet<Value, 4> seen;
    for (Value v : ret.getOperands())
      if (isa<BaseMemRefType>(v.getType()) &&
          (!v.getDefiningOp<memref::AllocOp>() || !seen.insert(v).second))
        return false;
    return it->second = true;
  }

private:
  SymbolTable symbols;
  DenseMap<Attribute, bool> cache;
};

/// The buffer that `m` (a memref a dealloc frees) was allocated as: the
/// source of the extract_strided_metadata that gave its base buffer, or m.
Value allocationOf(Value m) {
  if (auto meta = m.getDefiningOp<memref::ExtractStridedMetadataOp>())
    if (meta.getBaseBuffer() == m)
      return meta.getSource();
  return m;
}

/// The last top-level op of `block` that uses an alias of `root`, or null
/// when some use keeps the buffer alive beyond what the block shows (a
/// return, a retained value, an op that may create an alias we do not
/// follow). `dealloc`'s own use of `freed` does not count.
FailureOr<Operation *> lastUse(Value root, Value freed,
                               bufferization::DeallocOp dealloc, Block &block,
                               FreshCallees &fresh) {
  llvm::SetVector<Value> aliases;
  aliases.insert(root);
  Operation *last = nullptr;
  auto later = [&](Operation *op) {
    Operation *top = block.findAncestorOpInBlock(*op);
    if (!top)
      return false;
    if (!last || last->isBeforeInBlock(top))
      last = top;
    return true;
  };
  for (size_t n = 0; n < aliases.size(); ++n) {
    Value v = aliases[n];
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc.getOperation()) {
        // Freed by this dealloc (the buffer itself) is what we move;
        // retained, or freed under another name, is not.
        if (v != freed || use.getOperandNumber() >= dealloc.getMemrefs().size())
          return failure();
        continue;
      }
      // Returned, yielded out of a region (an alias under the parent op's
      // result), or freed elsewhere: not ours to move.
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          isa<bufferization::DeallocOp, memref::DeallocOp>(user))
        return failure();
      // Reading a descriptor's metadata is no use of the memory.
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        aliases.insert(meta.getBaseBuffer());
        continue;
      }
      if (!later(user))
        return failure();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != v)
          return failure();
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            aliases.insert(r);
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(user)) {
        if (!fresh.returnsFresh(call))
          return failure();
        continue;
      }
      // Any other user: fine if it cannot hand out an alias — only scalar
      // results (no memref, no tensor of to_tensor, no cast to another
      // type), no regions that could yield one, not storing the memref
      // itself somewhere.
      auto store = dyn_cast<memref::StoreOp>(user);
      if (user->getNumRegions() != 0 ||
          (store && store.getValueToStore() == v) ||
          llvm::any_of(user->getResultTypes(),
                       [](Type t) { return !t.isIntOrIndexOrFloat(); }))
        return failure();
    }
  }
  return last;
}

void earlyDeallocations(bufferization::DeallocOp dealloc, FreshCallees &fresh) {
  Block &block = *dealloc->getBlock();
  SmallVector<Value> keptMemrefs, keptConditions;
  bool changed = false;
  for (auto [m, cond] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
    Value root = allocationOf(m);
    Operation *def = root.getDefiningOp();
    bool owned = matchPattern(cond, m_One()) && def &&
                 def->getBlock() == &block &&
                 (isa<memref::AllocOp>(def) ||
                  (isa<func::CallOp>(def) &&
                   fresh.returnsFresh(cast<func::CallOp>(def))));
    FailureOr<Operation *> last = owned
                                      ? lastUse(root, m, dealloc, block, fresh)
                                      : FailureOr<Operation *>(failure());
    if (failed(last)) {
      keptMemrefs.push_back(m);
      keptConditions.push_back(cond);
      continue;
    }
    OpBuilder b(dealloc);
    b.setInsertionPointAfter(*last ? *last : def);
    memref::DeallocOp::create(b, dealloc.getLoc(), root);
    changed = true;
  }
  if (!changed)
    return;
  // The freed buffers alias no retained value, so the ownership results
  // stay what they were.
  OpBuilder b(dealloc);
  auto shrunk = bufferization::DeallocOp::create(
      b, dealloc.getLoc(), keptMemrefs, keptConditions, dealloc.getRetained());
  dealloc.replaceAllUsesWith(shrunk.getResults());
  dealloc.erase();
}

struct RPEEarlyDeallocationPass
    : rpe::impl::RPEEarlyDeallocationPassBase<RPEEarlyDeallocationPass> {
  void runOnOperation() override {
    FreshCallees fresh(getOperation());
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk([&](func::FuncOp fn) {
      for (Block &block : fn.getBody())
        for (auto dealloc : block.getOps<bufferization::DeallocOp>())
          deallocs.push_back(dealloc);
    });
    for (bufferization::DeallocOp dealloc : deallocs)
      earlyDeallocations(dealloc, fresh);
  }
};

} // namespace
