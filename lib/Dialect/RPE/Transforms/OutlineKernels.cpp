//===- OutlineKernels.cpp - one function per distinct kernel --------------===//
//
// A model's layers repeat the same attention, projections, norms and MLPs.
// Each rpe.attention, and each linalg op that occurs at least `min-repeats`
// times, becomes a call of a private function that holds it; identical ones
// (up to their arguments) share the function, so each kernel is built,
// lowered and compiled by LLVM once instead of once per layer.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEOUTLINEKERNELSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// Whether `v` is a scalar constant, copied into the function rather than
/// passed (tensor constants, such as a layer's weights or bias table, are
/// passed, so that layers that differ only in them share the function).
bool isScalarConstant(Value v) {
  auto constant = v.getDefiningOp<arith::ConstantOp>();
  return constant && v.getType().isIntOrIndexOrFloat();
}

/// An op to outline, with its function built but not yet in the module.
struct Candidate {
  Operation *op;
  /// What the call passes.
  SmallVector<Value> args;
  /// Ops built inside the function that become dead at the call site.
  SmallVector<Operation *> absorbed;
  func::FuncOp fn;
  std::string key;
};

/// The inits of `op` built inside the function: a tensor.empty (a copy of
/// it: its contents are undefined anyway), or a fill of one with a scalar
/// constant (rebuilt in every function that uses it; the shared one goes
/// when no op outside reads it).
SmallVector<Operation *> absorbedInits(Operation *op) {
  // Once each: an op may take the same init twice (two results of one
  // tensor.empty), and each absorbed op is erased once.
  SetVector<Operation *> absorbed;
  SmallVector<Value> inits;
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    llvm::append_range(inits, dps.getDpsInits());
  else if (auto loop = dyn_cast<scf::ForallOp>(op))
    llvm::append_range(inits, loop.getOutputs());
  else if (auto loop = dyn_cast<scf::ForOp>(op))
    llvm::append_range(inits, loop.getInitArgs());
  for (Value v : inits) {
    if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
      auto empty = fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>();
      if (empty && isScalarConstant(fill.getInputs().front())) {
        absorbed.insert(empty);
        absorbed.insert(fill);
      }
    } else if (auto empty = v.getDefiningOp<tensor::EmptyOp>()) {
      absorbed.insert(empty);
    }
  }
  return absorbed.takeVector();
}

Candidate buildCandidate(Operation *op, StringRef name) {
  MLIRContext *ctx = op->getContext();
  Location loc = op->getLoc();
  Candidate c{op, {}, absorbedInits(op), {}, {}};
  DenseSet<Operation *> absorbed(c.absorbed.begin(), c.absorbed.end());
  // Values the function needs: the operands of the op and of what it
  // absorbs, and what their regions read from above.
  SetVector<Value> used;
  auto addUses = [&](Operation *o) {
    for (Value v : o->getOperands())
      if (!absorbed.contains(v.getDefiningOp()))
        used.insert(v);
    for (Region &region : o->getRegions())
      getUsedValuesDefinedAbove(region, used);
  };
  for (Operation *o : c.absorbed)
    addUses(o);
  addUses(op);
  SmallVector<Operation *> constants;
  for (Value v : used) {
    if (isScalarConstant(v))
      constants.push_back(v.getDefiningOp());
    else
      c.args.push_back(v);
  }

  OpBuilder b(ctx);
  auto type = FunctionType::get(ctx, ValueRange(c.args).getTypes(),
                                op->getResultTypes());
  c.fn = func::FuncOp::create(b, loc, name, type);
  c.fn.setPrivate();
  // Kept out of line by LLVM too (convert-func-to-llvm carries `passthrough`
  // over to llvm.func): inlined into every layer, the kernels would cost
  // their compile time per layer again.
  c.fn->setAttr("passthrough",
                ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
  Block *entry = c.fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping map;
  map.map(c.args, entry->getArguments());
  for (Operation *constant : constants)
    b.clone(*constant, map);
  for (Operation *o : c.absorbed)
    b.clone(*o, map);
  Operation *clone = b.clone(*op, map);
  func::ReturnOp::create(b, loc, clone->getResults());
  llvm::raw_string_ostream os(c.key);
  c.fn->print(os, OpPrintingFlags().useLocalScope());
  return c;
}

struct RPEOutlineKernelsPass
    : rpe::CheckedOptionsPass<
          rpe::impl::RPEOutlineKernelsPassBase<RPEOutlineKernelsPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    if (minRepeats < 0)
      return error("rpe-outline-kernels: min-repeats must not be negative, "
                   "got " +
                   Twine(static_cast<int64_t>(minRepeats)));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    ModuleOp module = getOperation();
    SmallVector<Candidate> candidates;
    llvm::StringMap<int64_t> occurrences;
    // Pre-order: a loop outlined as a whole is not looked into.
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!op->getParentOfType<func::FuncOp>())
        return WalkResult::advance();
      if (isa<AttentionOp>(op)) {
        candidates.push_back(buildCandidate(op, "__rpe_attention"));
        return WalkResult::skip();
      }
      // rpe-split-attention-heads' loop: the attention, its per-head tables
      // and the slices of q, k, v in one function, which reads the slices
      // in place (a function boundary would copy each one).
      if (isa<scf::ForallOp, scf::ForOp>(op) &&
          op->hasAttr(kSplitHeadsLoopAttrName)) {
        candidates.push_back(buildCandidate(op, "__rpe_attention_heads"));
        return WalkResult::skip();
      }
      // RoPE of q and k in every layer: its tables and rotation are loops.
      if (isa<RotaryOp>(op)) {
        candidates.push_back(buildCandidate(op, "__rpe_rotary"));
        return WalkResult::skip();
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (minRepeats == 0 || !linalgOp || isa<linalg::FillOp>(op) ||
          !linalgOp.hasPureTensorSemantics())
        return WalkResult::advance();
      candidates.push_back(buildCandidate(op, "__rpe_kernel"));
      ++occurrences[candidates.back().key];
      return WalkResult::skip();
    });

    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> functions;
    // Results of outlined ops -> the calls' results (later candidates
    // recorded the former as arguments).
    DenseMap<Value, Value> replaced;
    for (Candidate &c : candidates) {
      bool always = isa<AttentionOp, RotaryOp, scf::ForallOp, scf::ForOp>(c.op);
      if (!always && occurrences[c.key] < minRepeats) {
        c.fn->erase();
        continue;
      }
      func::FuncOp &callee = functions[c.key];
      if (callee) {
        c.fn->erase();
      } else {
        symbols.insert(c.fn);
        callee = c.fn;
      }
      for (Value &arg : c.args)
        arg = replaced.lookup_or(arg, arg);
      OpBuilder caller(c.op);
      auto call = func::CallOp::create(caller, c.op->getLoc(), callee, c.args);
      for (auto [from, to] : llvm::zip(c.op->getResults(), call.getResults()))
        replaced[from] = to;
      c.op->replaceAllUsesWith(call.getResults());
      c.op->erase();
      for (Operation *o : llvm::reverse(c.absorbed))
        if (o->use_empty())
          o->erase();
    }
  }
};

} // namespace
