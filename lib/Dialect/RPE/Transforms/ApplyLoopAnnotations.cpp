//===- ApplyLoopAnnotations.cpp - loop metadata that reaches LLVM IR ------===//
//
// A `scf.for` carrying the discardable attribute `llvm.loop_annotation`
// leaves it, through scf-to-cf and cf-to-llvm, as a discardable attribute
// of the loop's latch branch (`llvm.br`); the translation to LLVM IR reads
// only the branch's `loop_annotation` property, so the annotation would be
// lost. This pass moves it there.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEAPPLYLOOPANNOTATIONSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kAnnotation = "llvm.loop_annotation";

/// Moves the discardable annotation of `op` (llvm.br or llvm.cond_br) into
/// its property; an existing property wins.
template <typename BranchOp> LogicalResult apply(BranchOp op) {
  Attribute attr = op->getDiscardableAttr(kAnnotation);
  if (!attr)
    return success();
  auto annotation = dyn_cast<LLVM::LoopAnnotationAttr>(attr);
  if (!annotation)
    return op->emitError() << "'" << kAnnotation
                           << "' must be an #llvm.loop_annotation, got "
                           << attr;
  op->removeDiscardableAttr(kAnnotation);
  if (!op.getLoopAnnotationAttr())
    op.setLoopAnnotationAttr(annotation);
  return success();
}

struct RPEApplyLoopAnnotationsPass
    : rpe::impl::RPEApplyLoopAnnotationsPassBase<RPEApplyLoopAnnotationsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](Operation *op) {
      LogicalResult applied = success();
      if (auto br = dyn_cast<LLVM::BrOp>(op))
        applied = apply(br);
      else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
        applied = apply(condBr);
      return failed(applied) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
