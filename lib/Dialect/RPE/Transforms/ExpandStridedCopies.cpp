//===- ExpandStridedCopies.cpp - copies of strided buffers as loops -------===//
//
// finalize-memref-to-llvm lowers a memref.copy between two contiguous
// buffers to llvm.memcpy, and any other to a call of memrefCopy (the MLIR
// C runner utils), which moves one element at a time with a call to memcpy
// each: ~1 GB/s. Bufferization makes such copies of slices — a head's
// q, k, v taken out of B×H×L×D tensors, an output inserted into its place —
// and they cost DeBERTa attention a sixth of its time. Here they become
// loops: over rows of a static length that both buffers hold contiguously,
// vector loads and stores of each row; otherwise linalg.copy, whose loops
// LLVM vectorizes (or turns each row into a memcpy).
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/VectorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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

/// The elements per vector load of a row copy of `type` (rows of a static
/// length, unit stride): the whole row when it is at most
/// `options.rowChunkBytes`, else chunks of that many bytes that divide it,
/// at most `options.maxRowChunks` of them; 0 when the rows do not fit that
/// form.
int64_t rowChunk(MemRefType type,
                 const rpe::ExpandStridedCopiesOptions &options) {
  int64_t n = type.getShape().back();
  Type element = type.getElementType();
  // Vectors laid out as the memref (not i0, whose 0 bytes would divide
  // the chunk, nor i24 or f80, which LLVM packs in a vector).
  if (ShapedType::isDynamic(n) || n == 0 ||
      !rpe::isVectorMemoryElement(element))
    return 0;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return 0;
  // In bytes: row-chunk-bytes * 8 could overflow.
  int64_t chunk = std::min<int64_t>(
      n, options.rowChunkBytes / (element.getIntOrFloatBitWidth() / 8));
  // The chunks of a row are unrolled.
  return chunk > 0 && n % chunk == 0 && n / chunk <= options.maxRowChunks
             ? chunk
             : 0;
}

struct ExpandStridedCopy : OpRewritePattern<memref::CopyOp> {
  ExpandStridedCopy(MLIRContext *ctx,
                    const rpe::ExpandStridedCopiesOptions &options)
      : OpRewritePattern(ctx), options(options) {}
  rpe::ExpandStridedCopiesOptions options;

  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    Type source = op.getSource().getType(), target = op.getTarget().getType();
    if (copiedByMemcpy(source) && copiedByMemcpy(target))
      return rewriter.notifyMatchFailure(op, "lowered to llvm.memcpy");
    auto sourceType = dyn_cast<MemRefType>(source);
    auto targetType = dyn_cast<MemRefType>(target);
    if (!sourceType || !targetType || sourceType.getRank() == 0)
      return rewriter.notifyMatchFailure(op, "unranked or rank 0");
    // Rows of a static length: LLVM unrolls linalg.copy's inner loop fully
    // and, unable to tell the two buffers apart, leaves its loads and
    // stores scalar (64 vmovss pairs per row of a head's output).
    if (int64_t chunk = rowChunk(sourceType, options);
        chunk && chunk == rowChunk(targetType, options)) {
      copyRows(rewriter, op, chunk);
      return success();
    }
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
    return success();
  }

  /// A loop over the rows (all dimensions but the last) with a vector load
  /// and store per `chunk` elements of each row.
  static void copyRows(PatternRewriter &rewriter, memref::CopyOp op,
                       int64_t chunk) {
    Location loc = op.getLoc();
    Value source = op.getSource(), target = op.getTarget();
    auto type = cast<MemRefType>(source.getType());
    int64_t rank = type.getRank();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> lbs(rank - 1, zero), steps(rank - 1, one), ubs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      ubs.push_back(rewriter.createOrFold<memref::DimOp>(loc, source, d));
    auto vectorType = VectorType::get({chunk}, type.getElementType());
    scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location l, ValueRange rows) {
          for (int64_t c = 0; c < type.getShape().back(); c += chunk) {
            SmallVector<Value> at(rows);
            at.push_back(arith::ConstantIndexOp::create(b, l, c));
            Value row = vector::LoadOp::create(b, l, vectorType, source, at);
            vector::StoreOp::create(b, l, row, target, at);
          }
        });
    rewriter.eraseOp(op);
  }
};

struct RPEExpandStridedCopiesPass
    : rpe::CheckedOptionsPass<rpe::impl::RPEExpandStridedCopiesPassBase<
          RPEExpandStridedCopiesPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    if (rowChunkBytes <= 0)
      return error("rpe-expand-strided-copies: row-chunk-bytes must be "
                   "positive, got " +
                   Twine(rowChunkBytes));
    if (maxRowChunks < 0)
      return error("rpe-expand-strided-copies: max-row-chunks must not be "
                   "negative, got " +
                   Twine(maxRowChunks));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    rpe::populateRPEExpandStridedCopiesPatterns(patterns,
                                                {rowChunkBytes, maxRowChunks});
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::rpe::populateRPEExpandStridedCopiesPatterns(
    RewritePatternSet &patterns,
    const rpe::ExpandStridedCopiesOptions &options) {
  patterns.add<ExpandStridedCopy>(patterns.getContext(), options);
}
