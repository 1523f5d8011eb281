//===- GPUAttention.cpp - rpe.attention as a SIMT gpu.launch kernel -------===//
//
// rpe.attention -> gpu.launch over (query block, head, batch) with one thread
// per query row. Key and value tiles are staged in workgroup memory; every
// thread keeps its query row, its running max and sum and its output row in
// registers (the head dimensions are static and the loops over them are
// unrolled) and runs the online softmax over the key tiles. Bias, score_mod
// (with its Toeplitz terms tabulated per (head, diagonal) first), masks,
// key_lengths, q_offset, grouped-query heads and rel_values are evaluated
// per element. Nothing of size Lq×Lk exists.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEGPUATTENTIONPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// for (i = 0; i < n; ++i) body(i).
void forIndex(OpBuilder &b, Location loc, Value n,
              function_ref<void(OpBuilder &, Location, Value)> body) {
  scf::ForOp::create(b, loc, indexConst(b, loc, 0), n, indexConst(b, loc, 1),
                     ValueRange{},
                     [&](OpBuilder &nb, Location nl, Value i, ValueRange) {
                       body(nb, nl, i);
                       scf::YieldOp::create(nb, nl);
                     });
}

/// Why `op` cannot become a SIMT kernel with `options`, or "".
std::string unsupportedReason(AttentionOp op,
                              const GPUAttentionOptions &options) {
  auto qType = cast<RankedTensorType>(op.getQ().getType());
  auto vType = cast<RankedTensorType>(op.getV().getType());
  int64_t d = qType.getDimSize(3), dv = vType.getDimSize(3);
  if (d > options.maxHeadDim || dv > options.maxHeadDim)
    return "head dimensions " + std::to_string(d) + " and " +
           std::to_string(dv) + " exceed max-head-dim (" +
           std::to_string(options.maxHeadDim) + ")";
  return "";
}

/// The SIMT kernel's rows for `op`: static head dimensions keep them in
/// registers (unrolled loops), dynamic ones in per-thread private memory of
/// max-head-dim floats; and the bytes of its key, value and probability
/// tiles in workgroup memory.
struct SimtTiles {
  bool inRegisters;
  int64_t kWidth, vWidth, bytes;
};

SimtTiles simtTiles(AttentionOp op, const GPUAttentionOptions &options) {
  int64_t d = cast<RankedTensorType>(op.getQ().getType()).getDimSize(3);
  int64_t dv = cast<RankedTensorType>(op.getV().getType()).getDimSize(3);
  SimtTiles t;
  t.inRegisters = !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv);
  t.kWidth = t.inRegisters ? d : options.maxHeadDim;
  t.vWidth = t.inRegisters ? dv : options.maxHeadDim;
  t.bytes = options.tileK * (t.kWidth + t.vWidth + options.blockRows) * 4;
  return t;
}

} // namespace

Value mlir::rpe::buildGPUBlockKeyEnd(OpBuilder &b, Location loc, AttentionOp op,
                                     const AttentionSizes &dims, Value b0,
                                     Value row0, Value rowsC) {
  Value length;
  if (Value lengths = op.getKeyLengths()) {
    Value len32 = tensor::ExtractOp::create(b, loc, lengths, b0);
    length = arith::IndexCastOp::create(b, loc, b.getIndexType(), len32);
  }
  Value causalEnd;
  if (op.getKeyReach()) {
    Value one = indexConst(b, loc, 1);
    Value lastRow = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, row0, rowsC), dims.lq);
    lastRow = arith::SubIOp::create(b, loc, lastRow, one);
    causalEnd = /*MUT*/ buildAheadEnd(
        b, loc, op,
        arith::AddIOp::create(
            b, loc, buildQueryPosition(b, loc, lastRow, op.getQOffset()), one));
  }
  return buildKeyEnd(b, loc, dims.lk, length, causalEnd);
}

Value mlir::rpe::buildGPUBlockKeyStart(OpBuilder &b, Location loc,
                                       AttentionOp op, Value row0,
                                       int64_t tileK) {
  std::optional<uint64_t> window = op.getWindow();
  if (!window)
    return indexConst(b, loc, 0);
  Value start = buildWindowStart(
      b, loc, buildQueryPosition(b, loc, row0, op.getQOffset()),
      static_cast<int64_t>(*window));
  Value tile = indexConst(b, loc, tileK);
  return arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, start, tile), tile);
}

GPUKernelFrame mlir::rpe::beginGPUKernel(RewriterBase &rewriter, AttentionOp op,
                                         const AttentionSizes &dims,
                                         Value numBlocks) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getResult().getType();
  auto outType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  GPUKernelFrame frame;
  frame.out =
      memref::AllocOp::create(rewriter, loc, outType, dims.resultDynamicSizes);
  // An empty grid is not a valid launch: skip it (the output is empty).
  Value work = arith::MulIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, numBlocks, dims.heads), dims.batch);
  Value nonEmpty =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, work,
                            indexConst(rewriter, loc, 0));
  frame.nonEmpty = scf::IfOp::create(rewriter, loc, nonEmpty,
                                     /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(frame.nonEmpty.thenBlock());
  return frame;
}

void mlir::rpe::finishGPUKernel(RewriterBase &rewriter, AttentionOp op,
                                Block &body, const GPUKernelFrame &frame) {
  rewriter.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(rewriter, op.getLoc());
  rewriter.setInsertionPointAfter(frame.nonEmpty);
  Value result = bufferization::ToTensorOp::create(
      rewriter, op.getLoc(), op.getResult().getType(), frame.out,
      /*restrict=*/true, /*writable=*/true);
  rewriter.replaceOp(op, result);
}

GPURowNormalizer mlir::rpe::buildGPURowNormalizer(OpBuilder &b, Location loc,
                                                  Value lsum) {
  Value zero = f32Const(b, loc, 0.0), oneF = f32Const(b, loc, 1.0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lsum, zero);
  Value safe = arith::SelectOp::create(b, loc, empty, oneF, lsum);
  return {arith::DivFOp::create(b, loc, oneF, safe), empty};
}

Value mlir::rpe::normalizeGPUOutput(OpBuilder &b, Location loc,
                                    const GPURowNormalizer &row, Value acc,
                                    Type elementType) {
  Value o = arith::MulFOp::create(b, loc, acc, row.inverse);
  o = arith::SelectOp::create(b, loc, row.empty, f32Const(b, loc, 0.0), o);
  return castFloat(b, loc, o, elementType);
}

/// `sum` = `scaled` + x (either order), `scaled` = a·b used by that sum
/// only, `sum` by nothing yet (an additive score_mod's body applied to the
/// scaled score): a·b + x as one FMA; else `sum`.
static Value fuseScaledSum(OpBuilder &b, Location l, Value sum, Value scaled) {
  auto add = sum.getDefiningOp<arith::AddFOp>();
  auto mul = scaled.getDefiningOp<arith::MulFOp>();
  if (!add || !mul || !scaled.hasOneUse() || !sum.use_empty() ||
      (add.getLhs() != scaled && add.getRhs() != scaled))
    return sum;
  Value x = add.getLhs() == scaled ? add.getRhs() : add.getLhs();
  Value fma = math::FmaOp::create(b, l, mul.getLhs(), mul.getRhs(), x);
  add->erase();
  mul->erase();
  return fma;
}

Value mlir::rpe::buildGPUScore(OpBuilder &b, Location l, AttentionOp op,
                               Value s, Value b0, Value h, Value row,
                               Value qPos, Value keyRaw, Value key, Value kEnd,
                               Value scale, bool causalMask) {
  // s·scale + a bias as one FMA.
  if (Value bias = op.getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    Value full[] = {b0, h, row, key};
    SmallVector<Value> at;
    for (int64_t dim = 0; dim < biasType.getRank(); ++dim)
      at.push_back(biasType.getDimSize(dim) == 1
                       ? indexConst(b, l, 0)
                       : full[4 - biasType.getRank() + dim]);
    Value term = extractF32(b, l, bias, at);
    s = scale ? math::FmaOp::create(b, l, s, scale, term).getResult()
              : arith::AddFOp::create(b, l, s, term).getResult();
    scale = {};
  }
  if (scale)
    s = arith::MulFOp::create(b, l, s, scale);
  if (!op.getScoreMod().empty()) {
    Value scaled = scale ? s : Value();
    s = inlineScoreMod(b, op.getScoreMod(), {s, b0, h, qPos, key});
    // A body that adds a term to the score (the hoisted Toeplitz, ALiBi
    // and Swin terms do): one FMA.
    if (scaled)
      s = fuseScaledSum(b, l, s, scaled);
  }
  Value masked;
  if (kEnd)
    masked =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, keyRaw, kEnd);
  std::optional<int64_t> reach = op.getKeyReach();
  if (reach && causalMask) {
    Value future = buildAheadMasked(b, l, key, qPos, *reach);
    masked = masked ? arith::OrIOp::create(b, l, masked, future).getResult()
                    : future;
  }
  // The window on every tile (the key loop starts at the first row's
  // window; the later rows' windows start later).
  if (std::optional<uint64_t> window = op.getWindow()) {
    Value past =
        buildWindowMasked(b, l, key, qPos, static_cast<int64_t>(*window));
    masked =
        masked ? arith::OrIOp::create(b, l, masked, past).getResult() : past;
  }
  if (!masked)
    return s;
  return arith::SelectOp::create(b, l, masked, f32Const(b, l, kNegInf), s);
}

namespace {
struct GPUAttention : OpRewritePattern<AttentionOp> {
  GPUAttention(MLIRContext *ctx, const GPUAttentionOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!unsupportedReason(op, options).empty())
      return rewriter.notifyMatchFailure(op, "unsupported on the GPU");
    // Tiles past the workgroup memory are the pass's error (its only failure
    // here). Checked before anything changes the IR: a pattern that changes
    // it and then fails is applied again by the greedy driver, forever.
    SimtTiles tiles = simtTiles(op, options);
    if (tiles.bytes > kGPUStaticSharedBytes)
      return rewriter.notifyMatchFailure(
          op, "the SIMT kernel's tiles exceed the static workgroup memory");
    hoistToeplitzTerms(rewriter, op);

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = op.getQ(), k = op.getK(), v = op.getV();
    Value qOffset = op.getQOffset(), relValues = op.getRelValues();
    std::optional<BucketingAttrInterface> bucketing = op.getBucketing();
    RankedTensorType resultType = op.getResult().getType();
    Type elementType = resultType.getElementType();
    Type f32 = rewriter.getF32Type();
    int64_t headDim = cast<RankedTensorType>(q.getType()).getDimSize(3);
    int64_t valueDim = cast<RankedTensorType>(v.getType()).getDimSize(3);
    int64_t rows = options.blockRows, tileK = options.tileK;
    // Dynamic head dimensions come with a run-time check of the sizes.
    bool inRegisters = tiles.inRegisters;
    int64_t kWidth = tiles.kWidth, vWidth = tiles.vWidth;
    // Registers hold the output row (static dims), the tile's scores and
    // little else. The scaled query rows go to workgroup memory ([d][row]:
    // conflict-free) when they fit next to the key, value and probability
    // tiles in the 48 KiB a block gets without opt-in; otherwise each
    // thread reads its row from global memory (static dims) or keeps it in
    // private memory (dynamic dims).
    bool qShared = inRegisters &&
                   tiles.bytes + rows * headDim * 4 <= kGPUStaticSharedBytes;

    AttentionSizes dims = getAttentionSizes(rewriter, op);
    if (!inRegisters) {
      Value max = indexConst(rewriter, loc, options.maxHeadDim);
      Value fits = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                dims.headDim, max),
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                dims.valueDim, max));
      cf::AssertOp::create(
          rewriter, loc, fits,
          "rpe.attention: head dimension above the GPU kernel's "
          "max-head-dim (" +
              std::to_string(options.maxHeadDim) + ")");
    }
    Value one = indexConst(rewriter, loc, 1);
    Value rowsC = indexConst(rewriter, loc, rows);
    Value numBlocks = arith::CeilDivUIOp::create(rewriter, loc, dims.lq, rowsC);
    GPUKernelFrame frame = beginGPUKernel(rewriter, op, dims, numBlocks);
    Value out = frame.out;

    auto workgroup =
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto kTileType = MemRefType::get({tileK, kWidth}, f32,
                                     MemRefLayoutAttrInterface(), workgroup);
    auto vTileType = MemRefType::get({tileK, vWidth}, f32,
                                     MemRefLayoutAttrInterface(), workgroup);
    auto pTileType = MemRefType::get({tileK, rows}, f32,
                                     MemRefLayoutAttrInterface(), workgroup);
    SmallVector<Type> workgroupTypes = {kTileType, vTileType, pTileType};
    if (qShared)
      workgroupTypes.push_back(MemRefType::get(
          {headDim, rows}, f32, MemRefLayoutAttrInterface(), workgroup));
    SmallVector<Type> privateTypes;
    if (!inRegisters) {
      auto priv = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Private);
      auto rowType = MemRefType::get({options.maxHeadDim}, f32,
                                     MemRefLayoutAttrInterface(), priv);
      privateTypes = {rowType, rowType};
    }
    auto launch = gpu::LaunchOp::create(
        rewriter, loc, numBlocks, dims.heads, dims.batch, rowsC, one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, workgroupTypes, privateTypes);
    Block &body = launch.getBody().front();
    rewriter.setInsertionPointToStart(&body);
    Value kTile = launch.getWorkgroupAttributions()[0];
    Value vTile = launch.getWorkgroupAttributions()[1];
    Value pTile = launch.getWorkgroupAttributions()[2];
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    Value tx = launch.getThreadIds().x;
    Value b0 = blockIds.z, h = blockIds.y;
    Value row0 = arith::MulIOp::create(rewriter, loc, blockIds.x, rowsC);
    Value row = arith::AddIOp::create(rewriter, loc, row0, tx);
    Value lqMinus1 = arith::SubIOp::create(rewriter, loc, dims.lq, one);
    Value active = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, row, dims.lq);
    // Rows past Lq compute on the last row and store nothing: every read
    // stays in bounds.
    Value rowC = arith::MinUIOp::create(rewriter, loc, row, lqMinus1);
    Value qPos = buildQueryPosition(rewriter, loc, rowC, qOffset);
    Value hk = arith::DivUIOp::create(rewriter, loc, h, dims.group);

    // Keys the block can see: the same bound for all its threads, as they
    // stage the tiles together.
    Value kEnd = buildGPUBlockKeyEnd(rewriter, loc, op, dims, b0, row0, rowsC);

    // The scaled query row (qTile, qMem, or read from q) and the output
    // row (registers, or accMem).
    Value qTile, qMem, accMem;
    SmallVector<Value> init = {f32Const(rewriter, loc, kNegInf),
                               f32Const(rewriter, loc, 0.0)};
    if (qShared)
      qTile = launch.getWorkgroupAttributions()[3];
    if (inRegisters) {
      init.append(valueDim, f32Const(rewriter, loc, 0.0));
    } else {
      qMem = launch.getPrivateAttributions()[0];
      accMem = launch.getPrivateAttributions()[1];
      forIndex(rewriter, loc, dims.valueDim,
               [&](OpBuilder &b, Location l, Value e) {
                 memref::StoreOp::create(b, l, f32Const(b, l, 0.0), accMem, e);
               });
    }
    if (qTile || qMem)
      forIndex(rewriter, loc, dims.headDim,
               [&](OpBuilder &b, Location l, Value d) {
                 Value at[] = {b0, h, rowC, d};
                 Value x = arith::MulFOp::create(b, l, extractF32(b, l, q, at),
                                                 dims.scale);
                 if (qTile)
                   memref::StoreOp::create(b, l, x, qTile, ValueRange{d, tx});
                 else
                   memref::StoreOp::create(b, l, x, qMem, d);
               });
    auto queryAt = [&](OpBuilder &b, Location l, Value d) -> Value {
      if (qTile)
        return memref::LoadOp::create(b, l, qTile, ValueRange{d, tx});
      if (qMem)
        return memref::LoadOp::create(b, l, qMem, d);
      Value at[] = {b0, h, rowC, d};
      return arith::MulFOp::create(b, l, extractF32(b, l, q, at), dims.scale);
    };
    Value tileKC = indexConst(rewriter, loc, tileK);
    Value kStart = buildGPUBlockKeyStart(rewriter, loc, op, row0, tileK);
    auto keyLoop = scf::ForOp::create(
        rewriter, loc, kStart, kEnd, tileKC, init,
        [&](OpBuilder &b, Location l, Value k0, ValueRange iter) {
          Value m = iter[0], lsum = iter[1];
          SmallVector<Value> acc(iter.drop_front(2));
          Value lastKey =
              arith::SubIOp::create(b, l, kEnd, indexConst(b, l, 1));
          // Stage the key and value tiles (f32): thread t copies elements
          // t, t + rows, ...; keys past kEnd read the last key.
          auto stage = [&](Value src, Value tile, Value widthC) {
            Value count =
                arith::MulIOp::create(b, l, widthC, indexConst(b, l, tileK));
            scf::ForOp::create(
                b, l, tx, count, rowsC, ValueRange{},
                [&](OpBuilder &nb, Location nl, Value idx, ValueRange) {
                  Value j = arith::DivUIOp::create(nb, nl, idx, widthC);
                  Value d = arith::RemUIOp::create(nb, nl, idx, widthC);
                  Value key = arith::MinUIOp::create(
                      nb, nl, arith::AddIOp::create(nb, nl, k0, j), lastKey);
                  Value at[] = {b0, hk, key, d};
                  Value val = extractF32(nb, nl, src, at);
                  memref::StoreOp::create(nb, nl, val, tile, ValueRange{j, d});
                  scf::YieldOp::create(nb, nl);
                });
          };
          stage(k, kTile, dims.headDim);
          stage(v, vTile, dims.valueDim);
          gpu::BarrierOp::create(b, l);

          // q·k for the tile's keys: a loop over d with one accumulator per
          // key (the query element is read once per d).
          SmallVector<Value> dots(tileK, f32Const(b, l, 0.0));
          auto dotLoop = scf::ForOp::create(
              b, l, indexConst(b, l, 0), dims.headDim, indexConst(b, l, 1),
              dots, [&](OpBuilder &nb, Location nl, Value d, ValueRange sums) {
                Value qd = queryAt(nb, nl, d);
                SmallVector<Value> next;
                for (int64_t j = 0; j < tileK; ++j) {
                  Value kd = memref::LoadOp::create(
                      nb, nl, kTile, ValueRange{indexConst(nb, nl, j), d});
                  next.push_back(math::FmaOp::create(nb, nl, qd, kd, sums[j]));
                }
                scf::YieldOp::create(nb, nl, next);
              });

          // Scores of the tile's keys, with bias, score_mod and masks.
          SmallVector<Value> scores;
          Value tileMax;
          for (int64_t j = 0; j < tileK; ++j) {
            Value jC = indexConst(b, l, j);
            Value keyRaw = arith::AddIOp::create(b, l, k0, jC);
            Value key = arith::MinUIOp::create(b, l, keyRaw, lastKey);
            Value s = buildGPUScore(b, l, op, dotLoop.getResult(j), b0, h, rowC,
                                    qPos, keyRaw, key, kEnd);
            scores.push_back(s);
            tileMax =
                tileMax
                    ? arith::MaximumFOp::create(b, l, tileMax, s).getResult()
                    : s;
          }

          // Online softmax: m' = max(m, max_j s), alpha = exp(m - m') (0
          // while nothing was seen), p = exp(s - m') (m' = -inf only while
          // every key so far is masked: use 0 so that p = 0).
          Value negInf = f32Const(b, l, kNegInf), zeroF = f32Const(b, l, 0.0);
          Value mNew = arith::MaximumFOp::create(b, l, m, tileMax);
          Value mWasInf =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, m, negInf);
          Value alpha = arith::SelectOp::create(
              b, l, mWasInf, zeroF,
              math::ExpOp::create(b, l, arith::SubFOp::create(b, l, m, mNew)));
          Value mNewInf = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                                mNew, negInf);
          Value mSafe = arith::SelectOp::create(b, l, mNewInf, zeroF, mNew);
          // p = exp(s - m') into the thread's column of pTile, so that the
          // P·V loop below runs over keys without unrolling.
          Value lNew = arith::MulFOp::create(b, l, alpha, lsum);
          for (int64_t j = 0; j < tileK; ++j) {
            Value p = math::ExpOp::create(
                b, l, arith::SubFOp::create(b, l, scores[j], mSafe));
            lNew = arith::AddFOp::create(b, l, lNew, p);
            memref::StoreOp::create(b, l, p, pTile,
                                    ValueRange{indexConst(b, l, j), tx});
          }
          // acc[e] = alpha·acc[e] + sum_j p_j·(v[j, e] + rel_values[bucket,
          // e]).
          Value tk = arith::MinUIOp::create(
              b, l, tileKC, arith::SubIOp::create(b, l, kEnd, k0));
          auto valueAt = [&](OpBuilder &nb, Location nl, Value j, Value e,
                             Value bucket) -> Value {
            Value ve = memref::LoadOp::create(nb, nl, vTile, ValueRange{j, e});
            if (relValues)
              ve = arith::AddFOp::create(
                  nb, nl, ve,
                  extractF32(nb, nl, relValues, ValueRange{bucket, e}));
            return ve;
          };
          auto bucketOf = [&](OpBuilder &nb, Location nl, Value j) -> Value {
            if (!relValues)
              return Value();
            Value key = arith::AddIOp::create(nb, nl, k0, j);
            return bucketing->buildBucket(nb, nl, qPos, key);
          };
          if (inRegisters) {
            for (Value &a : acc)
              a = arith::MulFOp::create(b, l, alpha, a);
            // Keys past kEnd have p = 0 and are skipped: their staged
            // values repeat the last key.
            auto pvLoop = scf::ForOp::create(
                b, l, indexConst(b, l, 0), tk, indexConst(b, l, 1), acc,
                [&](OpBuilder &nb, Location nl, Value j, ValueRange accs) {
                  Value p =
                      memref::LoadOp::create(nb, nl, pTile, ValueRange{j, tx});
                  Value bucket = bucketOf(nb, nl, j);
                  SmallVector<Value> next;
                  for (int64_t e = 0; e < valueDim; ++e)
                    next.push_back(math::FmaOp::create(
                        nb, nl, p,
                        valueAt(nb, nl, j, indexConst(nb, nl, e), bucket),
                        accs[e]));
                  scf::YieldOp::create(nb, nl, next);
                });
            acc.assign(pvLoop.getResults().begin(), pvLoop.getResults().end());
          } else {
            forIndex(
                b, l, dims.valueDim, [&](OpBuilder &nb, Location nl, Value e) {
                  Value accE = arith::MulFOp::create(
                      nb, nl, alpha, memref::LoadOp::create(nb, nl, accMem, e));
                  accE = scf::ForOp::create(
                             nb, nl, indexConst(nb, nl, 0), tk,
                             indexConst(nb, nl, 1), ValueRange{accE},
                             [&](OpBuilder &ib, Location il, Value j,
                                 ValueRange a) {
                               Value p = memref::LoadOp::create(
                                   ib, il, pTile, ValueRange{j, tx});
                               Value ve =
                                   valueAt(ib, il, j, e, bucketOf(ib, il, j));
                               scf::YieldOp::create(
                                   ib, il,
                                   math::FmaOp::create(ib, il, p, ve, a[0])
                                       .getResult());
                             })
                             .getResult(0);
                  memref::StoreOp::create(nb, nl, accE, accMem, e);
                });
          }
          // The next tile overwrites the staged keys and values.
          gpu::BarrierOp::create(b, l);
          SmallVector<Value> next = {mNew, lNew};
          next.append(acc);
          scf::YieldOp::create(b, l, next);
        });

    // out = acc / l (0 for a row that saw no key), stored by active rows.
    Value lsum = keyLoop.getResult(1);
    auto store = scf::IfOp::create(rewriter, loc, active,
                                   /*withElseRegion=*/false);
    rewriter.setInsertionPointToStart(store.thenBlock());
    GPURowNormalizer normalizer = buildGPURowNormalizer(rewriter, loc, lsum);
    auto storeOut = [&](OpBuilder &b, Location l, Value e, Value accE) {
      Value at[] = {b0, h, row, e};
      memref::StoreOp::create(
          b, l, normalizeGPUOutput(b, l, normalizer, accE, elementType), out,
          at);
    };
    if (inRegisters) {
      for (int64_t e = 0; e < valueDim; ++e)
        storeOut(rewriter, loc, indexConst(rewriter, loc, e),
                 keyLoop.getResult(2 + e));
    } else {
      forIndex(rewriter, loc, dims.valueDim,
               [&](OpBuilder &b, Location l, Value e) {
                 storeOut(b, l, e, memref::LoadOp::create(b, l, accMem, e));
               });
    }
    finishGPUKernel(rewriter, op, body, frame);
    return success();
  }

  GPUAttentionOptions options;
};

} // namespace

LogicalResult mlir::rpe::checkGPUAttentionOptions(
    const GPUAttentionOptions &o,
    function_ref<LogicalResult(const Twine &)> error) {
  if (o.blockRows <= 0 || o.tileK <= 0 || o.maxHeadDim <= 0)
    return error("block-rows, tile-k and max-head-dim must be positive, got " +
                 Twine(o.blockRows) + ", " + Twine(o.tileK) + " and " +
                 Twine(o.maxHeadDim));
  if (o.tensorCores &&
      (o.mmaBlockRows <= 0 || o.mmaBlockRows % 16 || o.mmaTileK <= 0 ||
       o.mmaTileK % 16 ||
       (o.mmaThreads != 1 && (o.mmaThreads <= 0 || o.mmaThreads % 32))))
    return error("mma-block-rows and mma-tile-k must be positive multiples of "
                 "16 and mma-threads 1 or a positive multiple of 32, got " +
                 Twine(o.mmaBlockRows) + ", " + Twine(o.mmaTileK) + " and " +
                 Twine(o.mmaThreads));
  // A tile of more rows or columns than the 48 KiB of workgroup memory has
  // bytes cannot fit in it; the bound also keeps the sizes computed from
  // these options far from overflowing.
  if (std::max({o.tileK, o.maxHeadDim, o.mmaTileK, o.mmaBlockRows}) >
      kGPUStaticSharedBytes)
    return error("tile-k, max-head-dim, mma-tile-k and mma-block-rows must be "
                 "at most " +
                 Twine(kGPUStaticSharedBytes) +
                 " (no larger tile fits in a block's workgroup memory), got " +
                 Twine(o.tileK) + ", " + Twine(o.maxHeadDim) + ", " +
                 Twine(o.mmaTileK) + " and " + Twine(o.mmaBlockRows));
  // Both are threads per block (a CUDA block has at most 1024).
  if (o.blockRows > 1024)
    return error("block-rows (threads per block) must be at most 1024, got " +
                 Twine(o.blockRows));
  if (o.tensorCores && o.mmaThreads > 1024)
    return error("mma-threads must be at most 1024, got " +
                 Twine(o.mmaThreads));
  return success();
}

void mlir::rpe::populateRPEGPUAttentionPatterns(
    RewritePatternSet &patterns, const GPUAttentionOptions &options) {
  patterns.add<GPUAttention>(patterns.getContext(), options);
}

namespace {
struct RPEGPUAttentionPass
    : rpe::CheckedOptionsPass<
          rpe::impl::RPEGPUAttentionPassBase<RPEGPUAttentionPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  GPUAttentionOptions getOptions() const {
    return GPUAttentionOptions{
        blockRows,    tileK,    maxHeadDim,   tensorCores,   mmaThreads,
        mmaBlockRows, mmaTileK, mmaRegisters, mmaStageViews, mmaLazyRescale};
  }

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    return checkGPUAttentionOptions(getOptions(), [&](const Twine &message) {
      return error("rpe-gpu-attention: " + message);
    });
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    GPUAttentionOptions options = getOptions();
    bool failedOp = false;
    getOperation()->walk([&](AttentionOp op) {
      std::string reason = unsupportedReason(op, options);
      if (!reason.empty()) {
        op.emitOpError() << "cannot run on the GPU: " << reason;
        failedOp = true;
      }
    });
    if (failedOp)
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateRPEGPUAttentionPatterns(patterns, options);
    populateRPEGPUAttentionTensorCorePatterns(patterns, options);
    populateRPEGPUAttentionRegisterPatterns(patterns, options);
    FailureOr<int64_t> rewritten =
        rewriteAttentionOps(getOperation(), std::move(patterns));
    if (failed(rewritten))
      return signalPassFailure();
    numKernels += *rewritten;
    // What no kernel took: the SIMT kernel's tiles would not fit (ptxas
    // would reject the PTX, long after a slow compile), the one reason the
    // SIMT pattern declines an op the checks above let through.
    getOperation()->walk([&](AttentionOp op) {
      failedOp = true;
      op.emitOpError() << "cannot run on the GPU: the SIMT kernel's tiles "
                          "need "
                       << simtTiles(op, options).bytes
                       << " bytes of workgroup memory, above the "
                       << kGPUStaticSharedBytes
                       << " a block gets (tile-k = " << options.tileK
                       << ", block-rows = " << options.blockRows
                       << "); lower tile-k or block-rows";
    });
    if (failedOp)
      return signalPassFailure();
  }
};
} // namespace
