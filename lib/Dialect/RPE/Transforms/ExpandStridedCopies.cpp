//===- ExpandStridedCopies.cpp - copies of strided buffers as loops -------===//
//
// finalize-memref-to-llvm lowers a memref.copy between two contiguous
// buffers to llvm.memcpy, and any other to a call of memrefCopy (the MLIR
// C runner utils), which moves one element at a time with a call to memcpy
// each: ~1 GB/s. Bufferization makes such copies of slices — a head's
// q, k, v taken out of B×H×L×D tensors, an output inserted into its place —
// and they cost DeBERTa attention a sixth of its time. Here they become
// linalg.copy, whose loops LLVM vectorizes (or turns each row into a
// memcpy).
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEEXPANDSTRIDEDCOPIESPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

/// Whether finalize-memref-to-llvm copies `type` with llvm.memcpy (its own
/// test: an identity layout, or a static shape laid out row-major).
bool copiedByMemcpy(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    (memref.hasStaticShape() && memref.getNumElements() > 0 &&
                     memref::isStaticShapeAndContiguousRowMajor(memref)));
}

struct ExpandStridedCopy : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    Type source = op.getSource().getType(), target = op.getTarget().getType();
    if (copiedByMemcpy(source) && copiedByMemcpy(target))
      return rewriter.notifyMatchFailure(op, "lowered to llvm.memcpy");
    auto sourceType = dyn_cast<MemRefType>(source);
    auto targetType = dyn_cast<MemRefType>(target);
    if (!sourceType || !targetType || sourceType.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "unranked or rank 0");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }
};

struct RPEExpandStridedCopiesPass
    : rpe::impl::RPEExpandStridedCopiesPassBase<RPEExpandStridedCopiesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    rpe::populateRPEExpandStridedCopiesPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::rpe::populateRPEExpandStridedCopiesPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ExpandStridedCopy>(patterns.getContext());
}
