//===- GPUAttentionTensorCores.cpp - f16/bf16 attention on tensor cores ---===//
//
// f16 / bf16 rpe.attention -> gpu.launch over (query block, head, batch)
// whose two matmuls per key tile are warp-level vector ops on workgroup
// memory:
//
//   S[rows, keys]  = Q[rows, D] · K[keys, D]ᵀ        (16-bit in, f32 out)
//   softmax step   : a few adjacent lanes per row: scale, bias, score_mod,
//                    masks, running max and sum (gpu.shuffle), P = exp(S - m)
//                    in the 16-bit type, O *= alpha
//   O[rows, Dv]   += P[rows, keys] · V[keys, Dv]     (16-bit in, f32 acc)
//
// Warp w owns the 16-row slices w, w + warps, ... of both matmuls; each
// 16×8 output tile is a loop of vector.contract over 16-wide slices of the
// reduction read by vector.transfer_read from workgroup memory. Every such
// nest carries the `rpe.mma` attribute, and rpe-gpu-tensor-cores turns it
// into nvgpu.ldmatrix + mma.sync (m16n8k16); before that the same IR runs
// anywhere (every thread computing its warp's tiles), which is how the host
// emulation (one thread per block) tests the kernel. Nothing of size Lq×Lk
// exists: S and P hold one key tile of the block's rows.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEGPUTENSORCORESPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr StringLiteral kMmaAttr = "rpe.mma";

/// The workgroup bytes of a block of `rows` rows and `tileK` keys.
int64_t sharedBytes(int64_t rows, int64_t tileK, int64_t d, int64_t dv) {
  return rows * d * 2 + tileK * d * 2 + tileK * dv * 2 + rows * tileK * 4 +
         rows * tileK * 2 + rows * dv * 4 + 2 * rows * 4;
}

/// A tensor-core block: query rows and keys per tile.
struct BlockShape {
  int64_t rows = 0, tileK = 0;
};

/// The block for `op`: options.mmaBlockRows halved while the buffers exceed
/// 48 KiB, down to 16 rows, then the key tile down to 16 keys (D = 256);
/// none (rows 0) when `op` is not for the tensor-core kernel.
BlockShape tensorCoreBlock(AttentionOp op, const GPUAttentionOptions &options) {
  std::optional<std::pair<int64_t, int64_t>> dims = getTensorCoreHeadDims(op);
  if (!options.tensorCores || !dims)
    return {};
  int64_t d = dims->first, dv = dims->second;
  BlockShape block{options.mmaBlockRows, options.mmaTileK};
  auto fits = [&] {
    return sharedBytes(block.rows, block.tileK, d, dv) <= kGPUStaticSharedBytes;
  };
  while (block.rows > 16 && !fits())
    block.rows /= 2;
  while (block.tileK > 16 && !fits())
    block.tileK /= 2;
  return fits() ? block : BlockShape{};
}

/// for (i = lb; i < ub; i += step) body(i).
void forRange(OpBuilder &b, Location loc, Value lb, Value ub, Value step,
              function_ref<void(OpBuilder &, Location, Value)> body) {
  scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                     [&](OpBuilder &nb, Location nl, Value i, ValueRange) {
                       body(nb, nl, i);
                       scf::YieldOp::create(nb, nl);
                     });
}

/// C[r0:r0+16, :n] (+)= A[r0:r0+16, :k] · B for every 16-row slice r0 the
/// calling thread's warp owns: B is read as [n][k] (`bTransposed` false:
/// B[n][k] row-major, q·kᵀ) or from a [k][n] buffer (p·v). Each 16×8 tile
/// of C is one `rpe.mma` nest; `accumulate` reads C first, else starts at 0.
void buildWarpMatmul(OpBuilder &b, Location loc, Value a, Value bMat, Value c,
                     int64_t rows, int64_t n, int64_t k, bool bTransposed,
                     bool accumulate, Value warp, Value numWarps) {
  MLIRContext *ctx = b.getContext();
  Type f16 = cast<MemRefType>(a.getType()).getElementType(); // or bf16
  Type f32 = b.getF32Type();
  auto aType = VectorType::get({16, 16}, f16);
  auto bType = VectorType::get({8, 16}, f16);
  auto cType = VectorType::get({16, 8}, f32);
  AffineExpr m, nn, kk;
  bindDims(ctx, m, nn, kk);
  auto maps = b.getAffineMapArrayAttr({AffineMap::get(3, 0, {m, kk}, ctx),
                                       AffineMap::get(3, 0, {nn, kk}, ctx),
                                       AffineMap::get(3, 0, {m, nn}, ctx)});
  auto iterators = b.getArrayAttr(
      {vector::IteratorTypeAttr::get(ctx, vector::IteratorType::parallel),
       vector::IteratorTypeAttr::get(ctx, vector::IteratorType::parallel),
       vector::IteratorTypeAttr::get(ctx, vector::IteratorType::reduction)});
  SmallVector<bool> inBounds = {true, true};
  Value padF16 = arith::ConstantOp::create(b, loc, b.getZeroAttr(f16));
  Value padF32 = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
  // [k][n] buffer read as an 8×16 (n × k) vector.
  AffineMap transposed =
      AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, ctx);
  forRange(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, rows / 16),
      indexConst(b, loc, 1), [&](OpBuilder &b1, Location l, Value mt) {
        // The warp-uniform ownership test stays outside the marked nest
        // (upstream's conversion would try its scalar arithmetic).
        Value owner = affine::AffineApplyOp::create(
            b1, l,
            AffineMap::get(1, 1,
                           b1.getAffineDimExpr(0) % b1.getAffineSymbolExpr(0)),
            ValueRange{mt, numWarps});
        Value mine =
            arith::CmpIOp::create(b1, l, arith::CmpIPredicate::eq, owner, warp);
        auto ifOp = scf::IfOp::create(b1, l, mine, /*withElseRegion=*/false);
        OpBuilder b2 = OpBuilder::atBlockBegin(ifOp.thenBlock());
        Value r0 = arith::MulIOp::create(b2, l, mt, indexConst(b2, l, 16));
        auto nest = scf::ForOp::create(
            b2, l, indexConst(b2, l, 0), indexConst(b2, l, n),
            indexConst(b2, l, 8), ValueRange{},
            [&](OpBuilder &b3, Location l3, Value n0, ValueRange) {
              Value init =
                  accumulate
                      ? vector::TransferReadOp::create(
                            b3, l3, cType, c, ValueRange{r0, n0}, padF32,
                            ArrayRef<bool>(inBounds))
                            .getResult()
                      : arith::ConstantOp::create(
                            b3, l3,
                            DenseElementsAttr::get(cType, b3.getZeroAttr(f32)))
                            .getResult();
              auto kLoop = scf::ForOp::create(
                  b3, l3, indexConst(b3, l3, 0), indexConst(b3, l3, k),
                  indexConst(b3, l3, 16), ValueRange{init},
                  [&](OpBuilder &b4, Location l4, Value k0, ValueRange acc) {
                    Value av = vector::TransferReadOp::create(
                        b4, l4, aType, a, ValueRange{r0, k0}, padF16,
                        ArrayRef<bool>(inBounds));
                    Value bv =
                        bTransposed
                            ? vector::TransferReadOp::create(
                                  b4, l4, bType, bMat, ValueRange{k0, n0},
                                  padF16, transposed, ArrayRef<bool>(inBounds))
                                  .getResult()
                            : vector::TransferReadOp::create(
                                  b4, l4, bType, bMat, ValueRange{n0, k0},
                                  padF16, ArrayRef<bool>(inBounds))
                                  .getResult();
                    // f32 operands (exact): the form every vector lowering
                    // takes; rpe-gpu-tensor-cores folds the extensions into
                    // an f16 mma.
                    av = arith::ExtFOp::create(
                        b4, l4, VectorType::get({16, 16}, f32), av);
                    bv = arith::ExtFOp::create(
                        b4, l4, VectorType::get({8, 16}, f32), bv);
                    Value next = vector::ContractionOp::create(
                        b4, l4, av, bv, acc[0], maps, iterators);
                    scf::YieldOp::create(b4, l4, next);
                  });
              vector::TransferWriteOp::create(b3, l3, kLoop.getResult(0), c,
                                              ValueRange{r0, n0},
                                              ArrayRef<bool>(inBounds));
              scf::YieldOp::create(b3, l3);
            });
        nest->setAttr(kMmaAttr, UnitAttr::get(ctx));
      });
}

struct GPUAttentionTensorCores : OpRewritePattern<AttentionOp> {
  GPUAttentionTensorCores(MLIRContext *ctx, const GPUAttentionOptions &options)
      : OpRewritePattern(ctx, /*benefit=*/2), options(options) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    BlockShape block = tensorCoreBlock(op, options);
    int64_t rows = block.rows;
    if (rows == 0)
      return rewriter.notifyMatchFailure(op, "not for the tensor-core kernel");
    hoistToeplitzTerms(rewriter, op);

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = op.getQ(), k = op.getK(), v = op.getV();
    RankedTensorType resultType = op.getResult().getType();
    Type elementType = resultType.getElementType();
    // The mma operand type: f16 or bf16 (q, k, v and P).
    Type f16 = cast<RankedTensorType>(q.getType()).getElementType();
    Type f32 = rewriter.getF32Type();
    int64_t headDim = cast<RankedTensorType>(q.getType()).getDimSize(3);
    int64_t valueDim = cast<RankedTensorType>(v.getType()).getDimSize(3);
    int64_t tileK = block.tileK, threads = options.mmaThreads;
    // Lanes per row in the score step: the most (a power of two, at most a
    // warp) that still gives every row of the block a thread group.
    int64_t rowThreads = 1;
    while (rowThreads < 32 && threads / (2 * rowThreads) >= rows)
      rowThreads *= 2;

    AttentionSizes dims = getAttentionSizes(rewriter, op);
    Value one = indexConst(rewriter, loc, 1);
    Value rowsC = indexConst(rewriter, loc, rows);
    Value numBlocks = arith::CeilDivUIOp::create(rewriter, loc, dims.lq, rowsC);
    GPUKernelFrame frame = beginGPUKernel(rewriter, op, dims, numBlocks);
    Value out = frame.out;

    auto workgroup =
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto shared = [&](ArrayRef<int64_t> shape, Type type) {
      return MemRefType::get(shape, type, MemRefLayoutAttrInterface(),
                             workgroup);
    };
    // The 16-bit tiles are bytes viewed as f16 / bf16: rpe-gpu-tensor-cores
    // reads bf16 tiles through f16 views of the same bytes (MLIR 22 converts
    // only f16 reads to ldmatrix), then makes the mma a bf16 one.
    Type i8 = rewriter.getI8Type();
    SmallVector<Type> workgroupTypes = {shared({rows * headDim * 2}, i8),
                                        shared({tileK * headDim * 2}, i8),
                                        shared({tileK * valueDim * 2}, i8),
                                        shared({rows, tileK}, f32),
                                        shared({rows * tileK * 2}, i8),
                                        shared({rows, valueDim}, f32),
                                        shared({2, rows}, f32)};
    Value threadsC = indexConst(rewriter, loc, threads);
    auto launch = gpu::LaunchOp::create(
        rewriter, loc, numBlocks, dims.heads, dims.batch, threadsC, one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, workgroupTypes, TypeRange{});
    Block &body = launch.getBody().front();
    rewriter.setInsertionPointToStart(&body);
    ArrayRef<BlockArgument> wg = launch.getWorkgroupAttributions();
    auto view = [&](Value bytes, int64_t r, int64_t c) -> Value {
      return memref::ViewOp::create(rewriter, loc, shared({r, c}, f16), bytes,
                                    indexConst(rewriter, loc, 0), ValueRange{});
    };
    Value qs = view(wg[0], rows, headDim), ks = view(wg[1], tileK, headDim),
          vs = view(wg[2], tileK, valueDim), sTile = wg[3],
          pTile = view(wg[4], rows, tileK), oTile = wg[5], stats = wg[6];
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    Value tx = launch.getThreadIds().x;
    Value step = launch.getBlockSize().x;
    Value b0 = blockIds.z, h = blockIds.y;
    Value row0 = arith::MulIOp::create(rewriter, loc, blockIds.x, rowsC);
    Value lastRow = arith::SubIOp::create(rewriter, loc, dims.lq, one);
    Value hk = arith::DivUIOp::create(rewriter, loc, h, dims.group);
    Value warp = affine::AffineApplyOp::create(
        rewriter, loc,
        AffineMap::get(1, 0, rewriter.getAffineDimExpr(0).floorDiv(32)), tx);
    Value numWarps = affine::AffineApplyOp::create(
        rewriter, loc,
        AffineMap::get(1, 0, rewriter.getAffineDimExpr(0).ceilDiv(32)), step);
    Value kEnd = buildGPUBlockKeyEnd(rewriter, loc, op, dims, b0, row0, rowsC);
    Value lastKey = arith::SubIOp::create(rewriter, loc, kEnd, one);

    // for (idx = tx; idx < count·width; idx += threads) body(idx / width,
    // idx % width): the block's threads share a 2-D loop.
    auto forShared =
        [&](OpBuilder &b, Location l, int64_t count, int64_t width,
            function_ref<void(OpBuilder &, Location, Value, Value)> fn) {
          forRange(b, l, tx, indexConst(b, l, count * width), step,
                   [&](OpBuilder &nb, Location nl, Value idx) {
                     Value w = indexConst(nb, nl, width);
                     fn(nb, nl, arith::DivUIOp::create(nb, nl, idx, w),
                        arith::RemUIOp::create(nb, nl, idx, w));
                   });
        };
    // Query rows past Lq repeat the last row (stored nowhere); O = 0,
    // m = -inf, l = 0.
    forShared(rewriter, loc, rows, headDim,
              [&](OpBuilder &b, Location l, Value r, Value d) {
                Value row = arith::MinUIOp::create(
                    b, l, arith::AddIOp::create(b, l, row0, r), lastRow);
                Value x = tensor::ExtractOp::create(b, l, q,
                                                    ValueRange{b0, h, row, d});
                memref::StoreOp::create(b, l, x, qs, ValueRange{r, d});
              });
    forShared(rewriter, loc, rows, valueDim,
              [&](OpBuilder &b, Location l, Value r, Value e) {
                memref::StoreOp::create(b, l, f32Const(b, l, 0.0), oTile,
                                        ValueRange{r, e});
              });
    forShared(rewriter, loc, 1, rows,
              [&](OpBuilder &b, Location l, Value, Value r) {
                memref::StoreOp::create(b, l, f32Const(b, l, kNegInf), stats,
                                        ValueRange{indexConst(b, l, 0), r});
                memref::StoreOp::create(b, l, f32Const(b, l, 0.0), stats,
                                        ValueRange{indexConst(b, l, 1), r});
              });

    forRange(
        rewriter, loc, buildGPUBlockKeyStart(rewriter, loc, op, row0, tileK),
        kEnd, indexConst(rewriter, loc, tileK),
        [&](OpBuilder &b, Location l, Value k0) {
          // Stage the key and value tiles; keys past kEnd repeat the last
          // key (their scores are masked, their p is 0).
          gpu::BarrierOp::create(b, l);
          auto stage = [&](Value src, Value tile, int64_t width) {
            forShared(
                b, l, tileK, width,
                [&](OpBuilder &nb, Location nl, Value j, Value d) {
                  Value key = arith::MinUIOp::create(
                      nb, nl, arith::AddIOp::create(nb, nl, k0, j), lastKey);
                  Value x = tensor::ExtractOp::create(
                      nb, nl, src, ValueRange{b0, hk, key, d});
                  memref::StoreOp::create(nb, nl, x, tile, ValueRange{j, d});
                });
          };
          stage(k, ks, headDim);
          stage(v, vs, valueDim);
          gpu::BarrierOp::create(b, l);
          buildWarpMatmul(b, l, qs, ks, sTile, rows, tileK, headDim,
                          /*bTransposed=*/false, /*accumulate=*/false, warp,
                          numWarps);
          gpu::BarrierOp::create(b, l);

          // `rowThreads` adjacent lanes per row (all of them in one warp),
          // each taking every rowThreads-th key and value column: scores,
          // online softmax, P (f16), O *= alpha.
          Value rowThreadsC = indexConst(b, l, rowThreads);
          Value part = arith::RemUIOp::create(b, l, tx, rowThreadsC);
          forRange(
              b, l, arith::DivUIOp::create(b, l, tx, rowThreadsC), rowsC,
              indexConst(b, l, threads / rowThreads),
              [&](OpBuilder &rb, Location rl, Value r) {
                Value row = arith::AddIOp::create(rb, rl, row0, r);
                Value rowC = arith::MinUIOp::create(rb, rl, row, lastRow);
                Value qPos = buildQueryPosition(rb, rl, rowC, op.getQOffset());
                Value c0 = indexConst(rb, rl, 0), c1 = indexConst(rb, rl, 1);
                Value m =
                    memref::LoadOp::create(rb, rl, stats, ValueRange{c0, r});
                Value lsum =
                    memref::LoadOp::create(rb, rl, stats, ValueRange{c1, r});
                // The row's lanes combine their partial max / sum (butterfly).
                auto rowReduce = [&](Value x, bool isMax) {
                  for (int64_t offset = 1; offset < rowThreads; offset *= 2) {
                    Value other =
                        gpu::ShuffleOp::create(rb, rl, x, offset, /*width=*/32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
                    x = isMax ? arith::MaximumFOp::create(rb, rl, x, other)
                                    .getResult()
                              : arith::AddFOp::create(rb, rl, x, other)
                                    .getResult();
                  }
                  return x;
                };
                auto maxLoop = scf::ForOp::create(
                    rb, rl, part, indexConst(rb, rl, tileK), rowThreadsC,
                    ValueRange{f32Const(rb, rl, kNegInf)},
                    [&](OpBuilder &nb, Location nl, Value j, ValueRange it) {
                      Value keyRaw = arith::AddIOp::create(nb, nl, k0, j);
                      Value key =
                          arith::MinUIOp::create(nb, nl, keyRaw, lastKey);
                      Value dot = memref::LoadOp::create(nb, nl, sTile,
                                                         ValueRange{r, j});
                      Value s =
                          buildGPUScore(nb, nl, op, dot, b0, h, rowC, qPos,
                                        keyRaw, key, kEnd, dims.scale);
                      memref::StoreOp::create(nb, nl, s, sTile,
                                              ValueRange{r, j});
                      scf::YieldOp::create(
                          nb, nl,
                          arith::MaximumFOp::create(nb, nl, it[0], s)
                              .getResult());
                    });
                // m' = max(m, max_j s); alpha = exp(m - m') (0 while nothing
                // was seen); p = exp(s - m') with m' = 0 while every key is
                // masked.
                Value negInf = f32Const(rb, rl, kNegInf);
                Value zeroF = f32Const(rb, rl, 0.0);
                Value mNew = arith::MaximumFOp::create(
                    rb, rl, m, rowReduce(maxLoop.getResult(0), /*isMax=*/true));
                Value alpha = arith::SelectOp::create(
                    rb, rl,
                    arith::CmpFOp::create(rb, rl, arith::CmpFPredicate::OEQ, m,
                                          negInf),
                    zeroF,
                    math::ExpOp::create(
                        rb, rl, arith::SubFOp::create(rb, rl, m, mNew)));
                Value mSafe = arith::SelectOp::create(
                    rb, rl,
                    arith::CmpFOp::create(rb, rl, arith::CmpFPredicate::OEQ,
                                          mNew, negInf),
                    zeroF, mNew);
                auto sumLoop = scf::ForOp::create(
                    rb, rl, part, indexConst(rb, rl, tileK), rowThreadsC,
                    ValueRange{zeroF},
                    [&](OpBuilder &nb, Location nl, Value j, ValueRange it) {
                      Value s = memref::LoadOp::create(nb, nl, sTile,
                                                       ValueRange{r, j});
                      Value p = math::ExpOp::create(
                          nb, nl, arith::SubFOp::create(nb, nl, s, mSafe));
                      memref::StoreOp::create(
                          nb, nl, arith::TruncFOp::create(nb, nl, f16, p),
                          pTile, ValueRange{r, j});
                      scf::YieldOp::create(
                          nb, nl,
                          arith::AddFOp::create(nb, nl, it[0], p).getResult());
                    });
                Value lNew = arith::AddFOp::create(
                    rb, rl, arith::MulFOp::create(rb, rl, alpha, lsum),
                    rowReduce(sumLoop.getResult(0), /*isMax=*/false));
                forRange(rb, rl, part, indexConst(rb, rl, valueDim),
                         rowThreadsC, [&](OpBuilder &nb, Location nl, Value e) {
                           Value o = memref::LoadOp::create(nb, nl, oTile,
                                                            ValueRange{r, e});
                           memref::StoreOp::create(
                               nb, nl, arith::MulFOp::create(nb, nl, alpha, o),
                               oTile, ValueRange{r, e});
                         });
                // The row's first lane keeps its statistics (every lane read
                // them before the shuffles).
                auto first = scf::IfOp::create(
                    rb, rl,
                    arith::CmpIOp::create(rb, rl, arith::CmpIPredicate::eq,
                                          part, c0),
                    /*withElseRegion=*/false);
                OpBuilder fb = OpBuilder::atBlockBegin(first.thenBlock());
                memref::StoreOp::create(fb, rl, mNew, stats, ValueRange{c0, r});
                memref::StoreOp::create(fb, rl, lNew, stats, ValueRange{c1, r});
              });
          gpu::BarrierOp::create(b, l);
          buildWarpMatmul(b, l, pTile, vs, oTile, rows, valueDim, tileK,
                          /*bTransposed=*/true, /*accumulate=*/true, warp,
                          numWarps);
        });

    // out = O / l (0 for a row that saw no key), rows below Lq only.
    gpu::BarrierOp::create(rewriter, loc);
    forShared(
        rewriter, loc, rows, valueDim,
        [&](OpBuilder &b, Location l, Value r, Value e) {
          Value row = arith::AddIOp::create(b, l, row0, r);
          Value active = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                               row, dims.lq);
          auto store = scf::IfOp::create(b, l, active,
                                         /*withElseRegion=*/false);
          OpBuilder sb = OpBuilder::atBlockBegin(store.thenBlock());
          Value lsum = memref::LoadOp::create(
              sb, l, stats, ValueRange{indexConst(sb, l, 1), r});
          Value acc = memref::LoadOp::create(sb, l, oTile, ValueRange{r, e});
          memref::StoreOp::create(
              sb, l,
              normalizeGPUOutput(sb, l, buildGPURowNormalizer(sb, l, lsum), acc,
                                 elementType),
              out, ValueRange{b0, h, row, e});
        });
    finishGPUKernel(rewriter, op, body, frame);
    return success();
  }

  GPUAttentionOptions options;
};

} // namespace

void mlir::rpe::populateRPEGPUAttentionTensorCorePatterns(
    RewritePatternSet &patterns, const GPUAttentionOptions &options) {
  if (options.tensorCores)
    patterns.add<GPUAttentionTensorCores>(patterns.getContext(), options);
}

/// Replaces the bf16 transfer_reads of `nest` (of memref.views of workgroup
/// bytes) by f16 reads of f16 views of the same bytes: upstream converts the
/// f16 ones to ldmatrix, which moves bits. Returns whether there were any.
static FailureOr<bool> readBF16AsF16(RewriterBase &rewriter, Operation *nest) {
  SmallVector<vector::TransferReadOp> reads;
  nest->walk([&](vector::TransferReadOp read) {
    if (read.getVectorType().getElementType().isBF16())
      reads.push_back(read);
  });
  Type f16 = rewriter.getF16Type();
  DenseMap<Value, Value> f16Views;
  for (vector::TransferReadOp read : reads) {
    auto view = read.getBase().getDefiningOp<memref::ViewOp>();
    if (!view)
      return read.emitError("rpe-gpu-tensor-cores: a bf16 read of an mma "
                            "nest must read a memref.view of bytes"),
             failure();
    Value &f16View = f16Views[view];
    if (!f16View) {
      rewriter.setInsertionPointAfter(view);
      MemRefType type = view.getType();
      f16View = memref::ViewOp::create(
          rewriter, view.getLoc(),
          MemRefType::get(type.getShape(), f16, type.getLayout(),
                          type.getMemorySpace()),
          view.getSource(), view.getByteShift(), view.getSizes());
    }
    rewriter.setInsertionPoint(read);
    Value pad = arith::ConstantOp::create(rewriter, read.getLoc(),
                                          rewriter.getZeroAttr(f16));
    auto f16Read = vector::TransferReadOp::create(
        rewriter, read.getLoc(),
        VectorType::get(read.getVectorType().getShape(), f16), f16View,
        read.getIndices(), read.getPermutationMapAttr(), pad, Value(),
        read.getInBoundsAttr());
    for (OpOperand &use : llvm::make_early_inc_range(read->getUses())) {
      auto ext = dyn_cast<arith::ExtFOp>(use.getOwner());
      if (!ext)
        return read.emitError("rpe-gpu-tensor-cores: a bf16 read of an mma "
                              "nest must feed arith.extf"),
               failure();
      rewriter.setInsertionPoint(ext);
      rewriter.replaceOpWithNewOp<arith::ExtFOp>(ext, ext.getType(),
                                                 f16Read.getResult());
    }
    rewriter.eraseOp(read);
  }
  return !reads.empty();
}

/// nvgpu.mma.sync (f16 types, bf16 bits) -> nvvm.mma.sync with bf16
/// multiplicands: the operands unpacked as NVGPUToNVVM does for f16 (A and B
/// rows as i32 pairs, C row-major), the result packed back.
static void useBF16Mma(RewriterBase &rewriter, Operation *nest) {
  SmallVector<nvgpu::MmaSyncOp> mmas;
  nest->walk([&](nvgpu::MmaSyncOp mma) { mmas.push_back(mma); });
  MLIRContext *ctx = rewriter.getContext();
  Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
  for (nvgpu::MmaSyncOp mma : mmas) {
    rewriter.setInsertionPoint(mma);
    Location loc = mma.getLoc();
    auto pairs = [&](Value v) {
      SmallVector<Value> regs;
      for (int64_t i = 0, e = cast<VectorType>(v.getType()).getDimSize(0);
           i < e; ++i)
        regs.push_back(LLVM::BitcastOp::create(
            rewriter, loc, i32,
            vector::ExtractOp::create(rewriter, loc, v, ArrayRef<int64_t>{i})));
      return regs;
    };
    SmallVector<Value> a = pairs(mma.getMatrixA());
    SmallVector<Value> b = pairs(mma.getMatrixB());
    SmallVector<Value> acc;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        acc.push_back(vector::ExtractOp::create(rewriter, loc, mma.getMatrixC(),
                                                ArrayRef<int64_t>{i, j}));
    auto result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    auto op = NVVM::MmaOp::create(
        rewriter, loc, result, a, b, acc, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> elems;
    for (int64_t i = 0; i < 4; ++i)
      elems.push_back(LLVM::ExtractValueOp::create(rewriter, loc, op,
                                                   ArrayRef<int64_t>{i}));
    rewriter.replaceOp(mma,
                       vector::FromElementsOp::create(
                           rewriter, loc, VectorType::get({2, 2}, f32), elems));
  }
}

LogicalResult mlir::rpe::convertMarkedToTensorCores(RewriterBase &rewriter,
                                                    Operation *root) {
  SmallVector<Operation *> nests;
  root->walk([&](Operation *op) {
    if (op->hasAttr(kMmaAttr))
      nests.push_back(op);
  });
  for (Operation *nest : nests) {
    FailureOr<bool> bf16 = readBF16AsF16(rewriter, nest);
    if (failed(bf16))
      return failure();
    RewritePatternSet prepare(root->getContext());
    vector::populateFoldArithExtensionPatterns(prepare);
    populatePrepareVectorToMMAPatterns(prepare, /*useNvGpu=*/true);
    if (failed(applyPatternsGreedily(nest, std::move(prepare))))
      return nest->emitError("rpe-gpu-tensor-cores: the mma nest did not "
                             "reach a fixed point");
    // Only the m16n8k16 f16 shape is converted (upstream builds invalid
    // nvgpu.mma.sync ops from other shapes).
    auto isMmaShape = [](vector::ContractionOp contract) {
      auto f16Vector = [](Type t, int64_t rows, int64_t cols) {
        auto v = dyn_cast<VectorType>(t);
        return v && v.getShape() == ArrayRef<int64_t>{rows, cols} &&
               v.getElementType().isF16();
      };
      auto acc = dyn_cast<VectorType>(contract.getAccType());
      return f16Vector(contract.getLhsType(), 16, 16) &&
             f16Vector(contract.getRhsType(), 8, 16) && acc &&
             acc.getShape() == ArrayRef<int64_t>{16, 8} &&
             acc.getElementType().isF32();
    };
    WalkResult shapes = nest->walk([&](vector::ContractionOp contract) {
      return isMmaShape(contract) ? WalkResult::advance()
                                  : WalkResult::interrupt();
    });
    if (shapes.wasInterrupted())
      return nest->emitError(
          "rpe-gpu-tensor-cores: a vector.contract of the mma nest is not "
          "16x16 · 8x16 f16 into 16x8 f32 (m16n8k16)");
    if (failed(convertVectorToNVVMCompatibleMMASync(rewriter, nest)))
      return failure();
    // The conversion leaves the original vector ops behind, unused.
    (void)applyPatternsGreedily(nest, RewritePatternSet(root->getContext()));
    WalkResult left = nest->walk(
        [](vector::ContractionOp) { return WalkResult::interrupt(); });
    if (left.wasInterrupted())
      return nest->emitError("rpe-gpu-tensor-cores: a vector.contract of the "
                             "mma nest did not become nvgpu.mma.sync");
    if (*bf16)
      useBF16Mma(rewriter, nest);
    nest->removeAttr(kMmaAttr);
  }
  return success();
}

namespace {
struct RPEGPUTensorCoresPass
    : rpe::impl::RPEGPUTensorCoresPassBase<RPEGPUTensorCoresPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    if (failed(convertMarkedToTensorCores(rewriter, getOperation())))
      return signalPassFailure();
  }
};
} // namespace
