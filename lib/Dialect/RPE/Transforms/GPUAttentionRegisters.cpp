//===- GPUAttentionRegisters.cpp - register-resident tensor-core attention ===//
//
// f16 / bf16 rpe.attention -> gpu.launch over (query block, head, batch) in
// the FlashAttention-2 structure: each warp owns 16·m query rows for the
// whole kernel, and everything per row lives in the registers of the
// m16n8k16 `mma.sync` fragments:
//
//   Q fragments    loaded once from global memory;
//   per key tile   K and V staged in workgroup memory (rows padded by 8
//                  elements: conflict-free fragment loads), then
//                  S = Q·Kᵀ into f32 accumulator fragments, scale, bias,
//                  score_mod and masks on the fragments, the row max over
//                  the four lanes that share a row (two xor shuffles),
//                  P = exp(S - m) in place, O *= alpha, and O += P·V with
//                  P's A fragments taken straight from S's accumulators;
//   at the end     the row sums over the four lanes, O / l to global memory.
//
// Fragment layout (PTX ISA, mma.m16n8k16 with .f16/.bf16): lane = 4·g + t;
// A (16×16) element i at row g + 8·((i/2)%2), column 2t + i%2 + 8·(i/4); B
// (16×8) element i at row 2t + i%2 + 8·(i/2), column g; C (16×8) element i at
// row g + 8·(i/2), column 2t + i%2.
//
// "Registers" are private memory indexed by constants only (unrolled loops),
// which LLVM promotes to registers. With one thread per block (the host
// emulation), the thread plays every lane: each step between two exchanges
// of data among lanes becomes a loop over the 32 lanes, registers are
// indexed by lane as well, and mma.sync and the shuffles are computed from
// the same fragment layout. The kernel logic (which lane holds which element)
// is the same code in both forms. Nothing of size Lq×Lk exists.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

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

#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::rpe;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
/// Elements of padding per staged K / V row (16 bytes): the fragment loads
/// of the 8 rows a warp reads at once fall into different banks.
constexpr int64_t kRowPad = 8;

/// A lane of a warp and its fragment coordinates (lane = 4·g + t).
struct Lane {
  Value id, g, t;
};

/// A per-lane array of `size` registers: SSA values on the GPU (loops carry
/// them), private memory of 32·size elements indexed by lane in the
/// emulation.
struct Registers {
  Value memory;
  int64_t size = 0;
  SmallVector<Value> values;
};

/// The GPU form's register values of `regs`, in order (loop and branch
/// operands).
SmallVector<Value> valuesOf(ArrayRef<Registers *> regs) {
  SmallVector<Value> all;
  for (Registers *r : regs)
    llvm::append_range(all, r->values);
  return all;
}

/// Sets the GPU form's register values of `regs` from `values`, in order.
void setValues(ArrayRef<Registers *> regs, ValueRange values) {
  for (Registers *r : regs)
    for (Value &x : r->values) {
      x = values.front();
      values = values.drop_front();
    }
}

/// The value of fragment element `i` as seen by lane `lane`: `i` is a
/// constant on the GPU (`at` its value), a loop index in the emulation
/// (`at` -1).
using Fragment = std::function<Value(OpBuilder &, Location, const Lane &,
                                     Value i, int64_t at)>;
/// This lane's B fragment, loaded by the warp at once (ldmatrix; the GPU
/// form only): a vector<Nx2x...> and the row where the fragment starts
/// (its rows r and r + 1: elements 0-1 and 2-3).
using FragmentLoad =
    std::function<std::pair<Value, int64_t>(OpBuilder &, Location)>;

/// Emits warp-level code either for a real warp (one lane per thread) or
/// for the host emulation (one thread plays the 32 lanes in turn).
class WarpBuilder {
public:
  WarpBuilder(bool emulate, Value laneId, Type elem)
      : emulate(emulate), laneId(laneId), elem(elem) {}

  /// 2^x for the softmax: MUFU.EX2 with denormals flushed on the GPU (an
  /// exp below 2^-126 adds nothing next to the row's 1 = exp(max - max)),
  /// math.exp2 in the emulation.
  Value exp2(OpBuilder &b, Location l, Value x) const {
    if (emulate)
      return math::Exp2Op::create(b, l, x);
    return LLVM::CallIntrinsicOp::create(
               b, l, x.getType(),
               b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), x)
        .getResult(0);
  }

  Lane lane(OpBuilder &b, Location l, Value id) const {
    Value four = indexConst(b, l, 4);
    return {id, arith::DivUIOp::create(b, l, id, four),
            arith::RemUIOp::create(b, l, id, four)};
  }

  /// body(lane) for every lane of the warp: the lane's own thread on the
  /// GPU, a loop over the lanes in the emulation.
  void
  perLane(OpBuilder &b, Location l,
          function_ref<void(OpBuilder &, Location, const Lane &)> body) const {
    if (!emulate)
      return body(b, l, lane(b, l, laneId));
    scf::ForOp::create(b, l, indexConst(b, l, 0), indexConst(b, l, 32),
                       indexConst(b, l, 1), ValueRange{},
                       [&](OpBuilder &nb, Location nl, Value id, ValueRange) {
                         body(nb, nl, lane(nb, nl, id));
                         scf::YieldOp::create(nb, nl);
                       });
  }

  /// Whether `pred(lane)` holds for some lane of the warp: one vote on the
  /// GPU (the same value in every lane), an or over the lanes in the
  /// emulation.
  Value
  anyLane(OpBuilder &b, Location l,
          function_ref<Value(OpBuilder &, Location, const Lane &)> pred) const {
    if (!emulate) {
      Value all = arith::ConstantIntOp::create(b, l, -1, 32);
      return NVVM::VoteSyncOp::create(
          b, l, b.getI1Type(), all, pred(b, l, lane(b, l, laneId)),
          NVVM::VoteSyncKindAttr::get(b.getContext(), NVVM::VoteSyncKind::any));
    }
    Value none = arith::ConstantIntOp::create(b, l, 0, 1);
    auto loop = scf::ForOp::create(
        b, l, indexConst(b, l, 0), indexConst(b, l, 32), indexConst(b, l, 1),
        ValueRange{none},
        [&](OpBuilder &nb, Location nl, Value id, ValueRange acc) {
          Value x = arith::OrIOp::create(nb, nl, acc.front(),
                                         pred(nb, nl, lane(nb, nl, id)));
          scf::YieldOp::create(nb, nl, x);
        });
    return loop.getResult(0);
  }

  /// Register `offset + i` of `lane` (`at`: i's value on the GPU).
  Value load(OpBuilder &b, Location l, const Registers &r, const Lane &lane,
             int64_t offset, Value i, int64_t at) const {
    if (!emulate)
      return r.values[offset + at];
    Value index = arith::AddIOp::create(
        b, l, arith::MulIOp::create(b, l, lane.id, indexConst(b, l, r.size)),
        arith::AddIOp::create(b, l, i, indexConst(b, l, offset)));
    return memref::LoadOp::create(b, l, r.memory, index);
  }
  Value load(OpBuilder &b, Location l, const Registers &r, const Lane &lane,
             int64_t i) const {
    return load(b, l, r, lane, i, indexConst(b, l, 0), 0);
  }
  void store(OpBuilder &b, Location l, Value x, Registers &r, const Lane &lane,
             int64_t i) const {
    if (!emulate) {
      r.values[i] = x;
      return;
    }
    Value index = arith::AddIOp::create(
        b, l, arith::MulIOp::create(b, l, lane.id, indexConst(b, l, r.size)),
        indexConst(b, l, i));
    memref::StoreOp::create(b, l, x, r.memory, index);
  }

  /// Registers [c, c + 4) of `acc` += A · B (m16n8k16, f32 accumulation),
  /// A and B given by their fragments.
  void mma(OpBuilder &b, Location l, const Fragment &a, const Fragment &bFrag,
           Registers &acc, int64_t c,
           const FragmentLoad &bLoad = nullptr) const {
    if (emulate)
      return emulatedMma(b, l, a, bFrag, acc, c);
    MLIRContext *ctx = b.getContext();
    Lane me = lane(b, l, laneId);
    Type f32 = b.getF32Type(), i32 = b.getI32Type();
    std::pair<Value, int64_t> loaded =
        bLoad ? bLoad(b, l) : std::pair<Value, int64_t>(Value(), 0);
    Value whole = loaded.first;
    int64_t firstRow = loaded.second;
    auto pack = [&](const Fragment &f, int64_t i, Value all = {}) -> Value {
      Value pair =
          all ? vector::ExtractOp::create(b, l, all,
                                          ArrayRef<int64_t>{firstRow + i / 2})
                    .getResult()
              : vector::FromElementsOp::create(
                    b, l, VectorType::get({2}, elem),
                    ValueRange{f(b, l, me, indexConst(b, l, i), i),
                               f(b, l, me, indexConst(b, l, i + 1), i + 1)})
                    .getResult();
      // nvvm.mma.sync takes f16 pairs as vector<2xf16>, bf16 ones as i32.
      return elem.isF16() ? pair : LLVM::BitcastOp::create(b, l, i32, pair);
    };
    SmallVector<Value> aRegs, bRegs, cRegs;
    for (int64_t i = 0; i < 8; i += 2)
      aRegs.push_back(pack(a, i));
    for (int64_t i = 0; i < 4; i += 2)
      bRegs.push_back(pack(bFrag, i, whole));
    for (int64_t i = 0; i < 4; ++i)
      cRegs.push_back(load(b, l, acc, me, c + i));
    NVVM::MMATypes type =
        elem.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
    auto result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    auto op = NVVM::MmaOp::create(
        b, l, result, aRegs, bRegs, cRegs, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t i = 0; i < 4; ++i)
      store(b, l, LLVM::ExtractValueOp::create(b, l, op, ArrayRef<int64_t>{i}),
            acc, me, c + i);
  }

  /// Every register of `r` becomes the max (or sum) over the four lanes
  /// that hold the same rows (lanes 4g .. 4g + 3), in the butterfly order of
  /// two xor shuffles.
  void quadReduce(OpBuilder &b, Location l, Registers &r, bool isMax) const {
    auto idx = llvm::seq<int64_t>(0, r.size);
    auto combine = [&](OpBuilder &cb, Value x, Value y) -> Value {
      if (isMax)
        return arith::MaximumFOp::create(cb, l, x, y);
      return arith::AddFOp::create(cb, l, x, y);
    };
    if (!emulate) {
      Lane me = lane(b, l, laneId);
      for (int64_t i : idx) {
        Value x = load(b, l, r, me, i);
        for (int64_t offset : {1, 2})
          x = combine(b, x,
                      gpu::ShuffleOp::create(b, l, x, offset, /*width=*/32,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult());
        store(b, l, x, r, me, i);
      }
      return;
    }
    scf::ForOp::create(
        b, l, indexConst(b, l, 0), indexConst(b, l, 32), indexConst(b, l, 4),
        ValueRange{}, [&](OpBuilder &nb, Location nl, Value base, ValueRange) {
          SmallVector<Lane> quad;
          for (int64_t j = 0; j < 4; ++j)
            quad.push_back(lane(
                nb, nl,
                arith::AddIOp::create(nb, nl, base, indexConst(nb, nl, j))));
          for (int64_t i : idx) {
            SmallVector<Value> x;
            for (const Lane &q : quad)
              x.push_back(load(nb, nl, r, q, i));
            Value all =
                combine(nb, combine(nb, x[0], x[1]), combine(nb, x[2], x[3]));
            for (const Lane &q : quad)
              store(nb, nl, all, r, q, i);
          }
          scf::YieldOp::create(nb, nl);
        });
  }

private:
  /// The emulation's mma: every lane's four accumulators from the A and B
  /// elements the fragment layout places in other lanes.
  void emulatedMma(OpBuilder &b, Location l, const Fragment &a,
                   const Fragment &bFrag, Registers &acc, int64_t c) const {
    Type f32 = b.getF32Type();
    perLane(b, l, [&](OpBuilder &lb, Location ll, const Lane &me) {
      for (int64_t i = 0; i < 4; ++i) {
        int64_t half = i / 2;
        // Column 2t + i%2 of row g + 8·half.
        Value col = arith::AddIOp::create(
            lb, ll, arith::MulIOp::create(lb, ll, me.t, indexConst(lb, ll, 2)),
            indexConst(lb, ll, i % 2));
        auto kLoop = scf::ForOp::create(
            lb, ll, indexConst(lb, ll, 0), indexConst(lb, ll, 16),
            indexConst(lb, ll, 1), ValueRange{load(lb, ll, acc, me, c + i)},
            [&](OpBuilder &kb, Location kl, Value k, ValueRange it) {
              auto ci = [&](int64_t n) { return indexConst(kb, kl, n); };
              // k = 8·hi + 2·tk + lo.
              Value lo = arith::RemUIOp::create(kb, kl, k, ci(2));
              Value tk = arith::DivUIOp::create(
                  kb, kl, arith::RemUIOp::create(kb, kl, k, ci(8)), ci(2));
              Value hi = arith::DivUIOp::create(kb, kl, k, ci(8));
              // A[g + 8·half][k]: lane 4g + tk, element lo + 2·half + 4·hi.
              Value aLane = arith::AddIOp::create(
                  kb, kl, arith::MulIOp::create(kb, kl, me.g, ci(4)), tk);
              Value aIdx = arith::AddIOp::create(
                  kb, kl, arith::AddIOp::create(kb, kl, lo, ci(2 * half)),
                  arith::MulIOp::create(kb, kl, hi, ci(4)));
              // B[k][col]: lane 4·col + tk, element lo + 2·hi.
              Value bLane = arith::AddIOp::create(
                  kb, kl, arith::MulIOp::create(kb, kl, col, ci(4)), tk);
              Value bIdx = arith::AddIOp::create(
                  kb, kl, lo, arith::MulIOp::create(kb, kl, hi, ci(2)));
              Value x = arith::ExtFOp::create(
                  kb, kl, f32, a(kb, kl, lane(kb, kl, aLane), aIdx, -1));
              Value y = arith::ExtFOp::create(
                  kb, kl, f32, bFrag(kb, kl, lane(kb, kl, bLane), bIdx, -1));
              scf::YieldOp::create(
                  kb, kl,
                  ValueRange{arith::AddFOp::create(
                      kb, kl, it[0], arith::MulFOp::create(kb, kl, x, y))});
            });
        store(lb, ll, kLoop.getResult(0), acc, me, c + i);
      }
    });
  }

  bool emulate;
  Value laneId;
  Type elem;
};

/// A builder at the end of `block`: before its terminator where it has one
/// (an scf.if with results gets its yields from the code built there).
OpBuilder atBlockEnd(Block *block) {
  OpBuilder b = OpBuilder::atBlockBegin(block);
  if (block->mightHaveTerminator())
    b.setInsertionPoint(block->getTerminator());
  return b;
}

/// for (idx = tx; idx < count·width; idx += threads) fn(idx / width,
/// idx % width), as a loop of a known trip count (ceil(count·width /
/// threads); the last iteration guarded where threads do not divide
/// count·width), which LLVM unrolls.
void forShared(OpBuilder &b, Location l, Value tx, int64_t threads,
               int64_t count, int64_t width,
               function_ref<void(OpBuilder &, Location, Value, Value)> fn) {
  int64_t total = count * width;
  scf::ForOp::create(
      b, l, indexConst(b, l, 0),
      indexConst(b, l, llvm::divideCeil(total, threads)), indexConst(b, l, 1),
      ValueRange{}, [&](OpBuilder &nb, Location nl, Value i, ValueRange) {
        Value idx = arith::AddIOp::create(
            nb, nl, tx,
            arith::MulIOp::create(nb, nl, i, indexConst(nb, nl, threads)));
        auto body = [&](OpBuilder &bb) {
          Value w = indexConst(bb, nl, width);
          fn(bb, nl, arith::DivUIOp::create(bb, nl, idx, w),
             arith::RemUIOp::create(bb, nl, idx, w));
        };
        if (total % threads == 0) {
          body(nb);
        } else {
          auto inRange = scf::IfOp::create(
              nb, nl,
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, idx,
                                    indexConst(nb, nl, total)),
              /*withElseRegion=*/false);
          OpBuilder ib = atBlockEnd(inRange.thenBlock());
          body(ib);
        }
        scf::YieldOp::create(nb, nl);
      });
}

/// 16-row tiles a warp owns at most.
constexpr int64_t kMaxWarpTiles = 2;

/// The shape of a register-resident block.
struct RegisterBlock {
  /// Warps per block (1 in the emulation), 16-row tiles per warp, keys per
  /// tile; warps 0 when `op` is not for this kernel.
  int64_t warps = 0, mTiles = 0, tileK = 0;
};

RegisterBlock registerBlock(AttentionOp op, const GPUAttentionOptions &o) {
  std::optional<std::pair<int64_t, int64_t>> dims = getTensorCoreHeadDims(op);
  if (!o.tensorCores || !o.mmaRegisters || !dims)
    return {};
  int64_t d = dims->first, dv = dims->second;
  // D = 256 needs more registers than a thread has (Q, S and O): the
  // shared-memory kernel takes it.
  if (d > 128 || dv > 128)
    return {};
  RegisterBlock block;
  int64_t tiles = o.mmaBlockRows / 16;
  block.warps = o.mmaThreads == 1 ? 1 : std::min(o.mmaThreads / 32, tiles);
  while (tiles % block.warps)
    --block.warps;
  // At most two 16-row tiles per warp: the S and O fragments of four (at
  // D = 64) exceed a thread's 255 registers (ptxas spilled 940 bytes), and
  // the unrolled nests grow with them (64 tiles, emulated, did not compile
  // in minutes). Rows past warps x 2 x 16 go to more blocks.
  block.mTiles = std::min<int64_t>(tiles / block.warps, kMaxWarpTiles);
  // Two 16-row tiles per warp double S and O: at D or Dv above 64 that
  // spills (ptxas, 48-200 bytes), so there a warp keeps one (fewer rows
  // per block). The emulation has no registers to run out of.
  if (std::max(d, dv) > 64 && o.mmaThreads != 1)
    block.mTiles = 1;
  // S and O together stay within the registers of a thread (ptxas: no
  // spills at D = 128 with 32 keys, at D = 64 with 64).
  block.tileK =
      std::max(d, dv) > 64 ? std::min<int64_t>(o.mmaTileK, 32) : o.mmaTileK;
  // Two K and V tiles (double buffering).
  auto bytes = [&] { return 2 * block.tileK * (d + dv + 2 * kRowPad) * 2; };
  while (block.tileK > 16 && bytes() > kGPUStaticSharedBytes)
    block.tileK /= 2;
  return block;
}

struct GPUAttentionRegisters : OpRewritePattern<AttentionOp> {
  GPUAttentionRegisters(MLIRContext *ctx, const GPUAttentionOptions &options)
      : OpRewritePattern(ctx, /*benefit=*/3), options(options) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    RegisterBlock block = registerBlock(op, options);
    if (block.warps == 0)
      return rewriter.notifyMatchFailure(
          op, "not for the register-resident tensor-core kernel");
    hoistToeplitzTerms(rewriter, op);

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = op.getQ(), k = op.getK(), v = op.getV();
    Type elementType = op.getResult().getType().getElementType();
    Type elem = cast<RankedTensorType>(q.getType()).getElementType();
    Type f32 = rewriter.getF32Type();
    int64_t d = cast<RankedTensorType>(q.getType()).getDimSize(3);
    int64_t dv = cast<RankedTensorType>(v.getType()).getDimSize(3);
    bool emulate = options.mmaThreads == 1;
    int64_t mTiles = block.mTiles, tileK = block.tileK;
    int64_t warpRows = 16 * mTiles, rows = warpRows * block.warps;
    int64_t kChunks = d / 16, sTiles = tileK / 8, oTiles = dv / 8;
    int64_t pChunks = tileK / 16;

    AttentionSizes dims = getAttentionSizes(rewriter, op);
    // Without a bias or score_mod, a positive constant scale goes into the
    // exponent: the scores stay q·k (the row maxima of q·k, scale > 0) and
    // exp(scale·(s - m)) = 2^(s·c - m·c) with c = scale·log2(e), one FMA.
    // Otherwise the scores are scaled (one FMA with the bias) and c =
    // log2(e).
    std::optional<double> staticScale = op.getStaticScale();
    bool foldScale = !op.getBias() && op.getScoreMod().empty() && staticScale &&
                     *staticScale > 0 && std::isfinite(*staticScale);
    double expScale = llvm::numbers::log2e * (foldScale ? *staticScale : 1.0);
    Value one = indexConst(rewriter, loc, 1);
    Value rowsC = indexConst(rewriter, loc, rows);
    Value numBlocks = arith::CeilDivUIOp::create(rewriter, loc, dims.lq, rowsC);
    GPUKernelFrame frame = beginGPUKernel(rewriter, op, dims, numBlocks);

    auto space = [&](gpu::AddressSpace s, ArrayRef<int64_t> shape, Type type) {
      return MemRefType::get(shape, type, MemRefLayoutAttrInterface(),
                             gpu::AddressSpaceAttr::get(ctx, s));
    };
    // Registers: Q fragments [m][kc][8], S / P [m][n][4], O [m][n][4], and
    // per row half [m][2]: running max, partial sum, tile max. The
    // emulation keeps every lane's in private memory.
    int64_t qSize = mTiles * kChunks * 8, sSize = mTiles * sTiles * 4,
            oSize = mTiles * oTiles * 4, statSize = mTiles * 2;
    SmallVector<int64_t> sizes = {qSize,    sSize,    oSize,
                                  statSize, statSize, statSize};
    SmallVector<Type> privateTypes;
    if (emulate)
      for (auto [i, size] : llvm::enumerate(sizes))
        privateTypes.push_back(space(gpu::AddressSpace::Private, {32 * size},
                                     i == 0 ? elem : f32));
    SmallVector<Type> workgroupTypes = {
        space(gpu::AddressSpace::Workgroup, {2, tileK, d + kRowPad}, elem),
        space(gpu::AddressSpace::Workgroup, {2, tileK, dv + kRowPad}, elem)};
    int64_t threads = emulate ? 1 : 32 * block.warps;
    Value threadsC = indexConst(rewriter, loc, threads);
    // K and V as buffers (read only), for the 16-byte loads of the staging.
    auto bufferOf = [&](Value t) -> Value {
      auto type = cast<RankedTensorType>(t.getType());
      int64_t dyn = ShapedType::kDynamic;
      auto layout = StridedLayoutAttr::get(ctx, dyn, {dyn, dyn, dyn, 1});
      return bufferization::ToBufferOp::create(
          rewriter, loc, MemRefType::get(type.getShape(), elem, layout), t,
          rewriter.getUnitAttr());
    };
    Value kBuf = bufferOf(k), vBuf = bufferOf(v);
    auto launch = gpu::LaunchOp::create(
        rewriter, loc, numBlocks, dims.heads, dims.batch, threadsC, one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, workgroupTypes, privateTypes);
    Block &body = launch.getBody().front();
    rewriter.setInsertionPointToStart(&body);
    ArrayRef<BlockArgument> wg = launch.getWorkgroupAttributions();
    ArrayRef<BlockArgument> priv = launch.getPrivateAttributions();
    Value ks = wg[0], vs = wg[1];
    SmallVector<Registers> regs;
    for (auto [i, size] : llvm::enumerate(sizes))
      regs.push_back(Registers{emulate ? Value(priv[i]) : Value(), size,
                               SmallVector<Value>(emulate ? 0 : size)});
    Registers &qRegs = regs[0], &sRegs = regs[1], &oRegs = regs[2],
              &mRegs = regs[3], &lRegs = regs[4], &tileMax = regs[5];

    gpu::KernelDim3 blockIds = launch.getBlockIds();
    Value tx = launch.getThreadIds().x;
    Value b0 = blockIds.z, h = blockIds.y;
    Value row0 = arith::MulIOp::create(rewriter, loc, blockIds.x, rowsC);
    Value lastRow = arith::SubIOp::create(rewriter, loc, dims.lq, one);
    Value hk = arith::DivUIOp::create(rewriter, loc, h, dims.group);
    Value laneId = arith::RemUIOp::create(rewriter, loc, tx,
                                          indexConst(rewriter, loc, 32));
    Value warpId = arith::DivUIOp::create(rewriter, loc, tx,
                                          indexConst(rewriter, loc, 32));
    Value warpRow0 = arith::AddIOp::create(
        rewriter, loc, row0,
        arith::MulIOp::create(rewriter, loc, warpId,
                              indexConst(rewriter, loc, warpRows)));
    Value kEnd = buildGPUBlockKeyEnd(rewriter, loc, op, dims, b0, row0, rowsC);
    Value lastKey = arith::SubIOp::create(rewriter, loc, kEnd, one);
    WarpBuilder warp(emulate, laneId, elem);

    // Row `half` (0: g, 1: g + 8) of m-tile `m` of this warp.
    auto rowOf = [&](OpBuilder &b, Location l, const Lane &lane, int64_t m,
                     Value half) {
      Value r = arith::AddIOp::create(
          b, l, warpRow0,
          arith::AddIOp::create(b, l, lane.g, indexConst(b, l, 16 * m)));
      return arith::AddIOp::create(
          b, l, r, arith::MulIOp::create(b, l, half, indexConst(b, l, 8)));
    };
    auto add = [](OpBuilder &b, Location l, Value x, Value y) -> Value {
      return arith::AddIOp::create(b, l, x, y);
    };
    auto mul = [](OpBuilder &b, Location l, Value x, int64_t c) -> Value {
      return arith::MulIOp::create(b, l, x, indexConst(b, l, c));
    };
    // Whether every run of 8 elements of K and V starts 16-byte aligned on
    // this device: the start and the outer strides (in elements) multiples
    // of 16 bytes (the innermost stride is 1).
    int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
    Value aligned;
    for (Value buf : {kBuf, vBuf}) {
      auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, buf);
      Value start = arith::AddIOp::create(
          rewriter, loc,
          memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, buf),
          mul(rewriter, loc, meta.getOffset(), elemBytes));
      SmallVector<Value> checks = {start};
      for (Value stride : meta.getStrides().drop_back())
        checks.push_back(mul(rewriter, loc, stride, elemBytes));
      for (Value x : checks) {
        Value ok = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(rewriter, loc, x,
                                   indexConst(rewriter, loc, 16)),
            indexConst(rewriter, loc, 0));
        aligned =
            aligned
                ? arith::AndIOp::create(rewriter, loc, aligned, ok).getResult()
                : ok;
      }
    }

    // B fragment element i of `lane` (B[k][n], 16 × 8): k = kBase + 2t +
    // i%2 + 8·(i/2), n = nBase + g.
    auto bElement = [&](OpBuilder &b, Location l, const Lane &lane, Value i,
                        int64_t kBase, int64_t nBase) {
      Value lo = arith::RemUIOp::create(b, l, i, indexConst(b, l, 2));
      Value hi = arith::DivUIOp::create(b, l, i, indexConst(b, l, 2));
      Value kk = add(b, l, add(b, l, mul(b, l, lane.t, 2), lo),
                     add(b, l, mul(b, l, hi, 8), indexConst(b, l, kBase)));
      return std::make_pair(kk, add(b, l, lane.g, indexConst(b, l, nBase)));
    };

    // O = 0, m = -inf, l = 0; the Q fragments (rows past Lq repeat the
    // last row).
    warp.perLane(rewriter, loc, [&](OpBuilder &b, Location l, const Lane &me) {
      for (int64_t i = 0; i < oSize; ++i)
        warp.store(b, l, f32Const(b, l, 0.0), oRegs, me, i);
      for (int64_t i = 0; i < statSize; ++i) {
        warp.store(b, l, f32Const(b, l, kNegInf), mRegs, me, i);
        warp.store(b, l, f32Const(b, l, 0.0), lRegs, me, i);
      }
      for (int64_t m = 0; m < mTiles; ++m)
        for (int64_t half = 0; half < 2; ++half) {
          Value row = arith::MinUIOp::create(
              b, l, rowOf(b, l, me, m, indexConst(b, l, half)), lastRow);
          for (int64_t kc = 0; kc < kChunks; ++kc)
            for (int64_t i = 0; i < 8; ++i) {
              if ((i / 2) % 2 != half)
                continue;
              Value col = add(b, l, mul(b, l, me.t, 2),
                              indexConst(b, l, 16 * kc + i % 2 + 8 * (i / 4)));
              Value x = tensor::ExtractOp::create(b, l, q,
                                                  ValueRange{b0, h, row, col});
              warp.store(b, l, x, qRegs, me, (m * kChunks + kc) * 8 + i);
            }
        }
    });

    // Staging: tile `start` of K and V (keys past kEnd repeat the last key:
    // their scores are masked, their p is 0) into slot `slot` of the two
    // workgroup tiles. Each thread copies runs of 8 elements: where K and V
    // are aligned for it, one 16-byte cp.async on the GPU (a 16-byte load
    // and store in the emulation), else eight 2-byte loads and a 16-byte
    // store (the tiles' rows are 16-byte multiples).
    auto stage = [&](OpBuilder &b, Location l, Value start, Value slot) {
      // One branch for the whole tile (uniform over the block), each side
      // a loop of a known trip count.
      auto ifAligned = scf::IfOp::create(b, l, aligned,
                                         /*withElseRegion=*/true);
      auto copy = [&](OpBuilder &cb, Value src, Value buf, Value tile,
                      int64_t width, bool async) {
        forShared(
            cb, l, tx, threads, tileK, width / 8,
            [&](OpBuilder &nb, Location nl, Value j, Value run) {
              Value key = arith::MinUIOp::create(nb, nl, add(nb, nl, start, j),
                                                 lastKey);
              Value c0 = mul(nb, nl, run, 8);
              auto vecType = VectorType::get({8}, elem);
              if (async && emulate) {
                Value x = vector::LoadOp::create(
                    nb, nl, vecType, buf, ValueRange{b0, hk, key, c0},
                    /*nontemporal=*/false, llvm::MaybeAlign());
                vector::StoreOp::create(nb, nl, x, tile,
                                        ValueRange{slot, j, c0});
                return;
              }
              if (async) {
                nvgpu::DeviceAsyncCopyOp::create(
                    nb, nl, nvgpu::DeviceAsyncTokenType::get(ctx), tile,
                    ValueRange{slot, j, c0}, buf, ValueRange{b0, hk, key, c0},
                    nb.getIndexAttr(8), /*srcElements=*/Value(),
                    /*bypassL1=*/nb.getUnitAttr());
                return;
              }
              SmallVector<Value> xs;
              for (int64_t e = 0; e < 8; ++e)
                xs.push_back(tensor::ExtractOp::create(
                    nb, nl, src,
                    ValueRange{b0, hk, key,
                               add(nb, nl, c0, indexConst(nb, nl, e))}));
              vector::StoreOp::create(
                  nb, nl, vector::FromElementsOp::create(nb, nl, vecType, xs),
                  tile, ValueRange{slot, j, c0}, /*nontemporal=*/false,
                  emulate ? llvm::MaybeAlign() : llvm::MaybeAlign(16));
            });
      };
      // A full tile (no key past kEnd), where the threads' runs (idx = tx +
      // threads·i, row idx / runs, run idx % runs) fall in columns: with
      // `apart` = threads / runs rows between a thread's rows (or, fewer
      // threads than runs, `perRow` = runs / threads runs of each row per
      // thread, the emulation's case), a thread's runs of one column of the
      // tile are one strided view. Its offset and stride are computed once,
      // so each 16-byte copy only adds a multiple of the stride: no clamp,
      // no 64-bit multiply per run.
      auto columnsFit = [&](int64_t width) {
        int64_t runs = width / 8;
        return threads % runs == 0 ? tileK % (threads / runs) == 0
                                   : runs % threads == 0;
      };
      auto copyRows = [&](OpBuilder &cb, Value buf, Value tile, int64_t width) {
        int64_t runs = width / 8;
        int64_t apart = std::max<int64_t>(threads / runs, 1);
        int64_t perRow = std::max<int64_t>(runs / threads, 1);
        int64_t iters = tileK / apart;
        Value r0 = arith::DivUIOp::create(cb, l, tx, indexConst(cb, l, runs));
        Value run0 = arith::RemUIOp::create(cb, l, tx, indexConst(cb, l, runs));
        Value zero = indexConst(cb, l, 0);
        // Loops of known trip counts (LLVM unrolls them on the GPU; the
        // emulation's one thread keeps them rolled).
        auto loop = [&](OpBuilder &b, int64_t n,
                        function_ref<void(OpBuilder &, Value)> body) {
          scf::ForOp::create(
              b, l, zero, indexConst(b, l, n), indexConst(b, l, 1),
              ValueRange{}, [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                body(nb, iv);
                scf::YieldOp::create(nb, l);
              });
        };
        loop(cb, perRow, [&](OpBuilder &pb, Value c) {
          Value col = mul(pb, l, add(pb, l, run0, mul(pb, l, c, threads)), 8);
          SmallVector<OpFoldResult> offsets = {b0, hk, add(pb, l, start, r0),
                                               col};
          SmallVector<OpFoldResult> sizes = {
              pb.getIndexAttr(1), pb.getIndexAttr(1), pb.getIndexAttr(iters),
              pb.getIndexAttr(8)};
          // One row per thread (iters 1): stride 1, as a unit dimension's
          // stride is not used; with `apart` the unit dimension kept would
          // have a stride no source dimension has, which upstream's
          // expand-strided-metadata cannot map back (it crashed).
          SmallVector<OpFoldResult> strides = {
              pb.getIndexAttr(1), pb.getIndexAttr(1),
              pb.getIndexAttr(iters == 1 ? 1 : apart), pb.getIndexAttr(1)};
          MemRefType viewType = memref::SubViewOp::inferRankReducedResultType(
              {iters, 8}, cast<MemRefType>(buf.getType()), offsets, sizes,
              strides);
          Value view = memref::SubViewOp::create(pb, l, viewType, buf, offsets,
                                                 sizes, strides);
          loop(pb, iters, [&](OpBuilder &ib, Value i) {
            Value row = add(ib, l, r0, mul(ib, l, i, apart));
            if (emulate) {
              Value x = vector::LoadOp::create(
                  ib, l, VectorType::get({8}, elem), view, ValueRange{i, zero});
              vector::StoreOp::create(ib, l, x, tile,
                                      ValueRange{slot, row, col});
              return;
            }
            nvgpu::DeviceAsyncCopyOp::create(
                ib, l, nvgpu::DeviceAsyncTokenType::get(ctx), tile,
                ValueRange{slot, row, col}, view, ValueRange{i, zero},
                ib.getIndexAttr(8), /*srcElements=*/Value(),
                /*bypassL1=*/ib.getUnitAttr());
          });
        });
      };
      OpBuilder ab = atBlockEnd(ifAligned.thenBlock());
      Block *clamped = ifAligned.thenBlock();
      if (options.mmaStageViews && columnsFit(d) && columnsFit(dv)) {
        Value full = arith::CmpIOp::create(
            ab, l, arith::CmpIPredicate::ule,
            add(ab, l, start, indexConst(ab, l, tileK)), kEnd);
        auto ifFull = scf::IfOp::create(ab, l, full, /*withElseRegion=*/true);
        OpBuilder fb = atBlockEnd(ifFull.thenBlock());
        copyRows(fb, kBuf, ks, d);
        copyRows(fb, vBuf, vs, dv);
        clamped = ifFull.elseBlock();
      }
      for (bool async : {true, false}) {
        OpBuilder cb = atBlockEnd(async ? clamped : ifAligned.elseBlock());
        copy(cb, k, kBuf, ks, d, async);
        copy(cb, v, vBuf, vs, dv, async);
      }
    };
    // A cp.async group per tile, and one per iteration (empty where
    // nothing went async): the wait below counts groups.
    auto commit = [&](OpBuilder &b, Location l) {
      if (!emulate)
        NVVM::CpAsyncCommitGroupOp::create(b, l);
    };
    // The first tile (0, or with a window the first row's window start), in
    // its slot, where there are keys at all.
    Value kStart = buildGPUBlockKeyStart(rewriter, loc, op, row0, tileK);
    {
      Value any = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ugt, kEnd, kStart);
      auto ifAny = scf::IfOp::create(rewriter, loc, any,
                                     /*withElseRegion=*/false);
      OpBuilder fb = OpBuilder::atBlockBegin(ifAny.thenBlock());
      Value firstSlot = arith::RemUIOp::create(
          fb, loc,
          arith::DivUIOp::create(fb, loc, kStart, indexConst(fb, loc, tileK)),
          indexConst(fb, loc, 2));
      stage(fb, loc, kStart, firstSlot);
      commit(rewriter, loc);
    }

    // On the GPU the key loop carries O, m and l.
    SmallVector<Registers *> carried = {&oRegs, &mRegs, &lRegs};
    // (The emulation's registers hold no values: nothing is carried.)
    SmallVector<Value> init = valuesOf(carried);
    auto keyLoop = scf::ForOp::create(
        rewriter, loc, kStart, kEnd, indexConst(rewriter, loc, tileK), init,
        [&](OpBuilder &b, Location l, Value k0, ValueRange iterArgs) {
          setValues(carried, iterArgs);
          // Double buffering: this tile is in slot (k0 / tileK) % 2; the next
          // one goes to the other slot while this one is computed (its
          // cp.async group in flight, this tile's complete after the wait).
          Value slot = arith::RemUIOp::create(
              b, l, arith::DivUIOp::create(b, l, k0, indexConst(b, l, tileK)),
              indexConst(b, l, 2));
          Value next = add(b, l, k0, indexConst(b, l, tileK));
          auto ifNext = scf::IfOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, next,
                                    kEnd),
              /*withElseRegion=*/false);
          OpBuilder nb = OpBuilder::atBlockBegin(ifNext.thenBlock());
          stage(nb, l, next,
                arith::SubIOp::create(nb, l, indexConst(nb, l, 1), slot));
          commit(b, l);
          // Every group but the one just committed is complete: this tile.
          if (!emulate)
            NVVM::CpAsyncWaitGroupOp::create(b, l, b.getI32IntegerAttr(1));
          gpu::BarrierOp::create(b, l);
          // This tile's ldmatrix results by (K: 0, V: 1; first fragment):
          // an x4 load gives two fragments.
          std::map<std::tuple<int, int64_t, int64_t>, Value> loaded;
          // S = Q · Kᵀ: B[kk][n] = K[8·nt + n][16·kc + kk].
          for (int64_t nt = 0; nt < sTiles; ++nt)
            for (int64_t kc = 0; kc < kChunks; ++kc) {
              Fragment kFrag = [&, nt, kc](OpBuilder &fb, Location fl,
                                           const Lane &lane, Value i, int64_t) {
                auto [col, key] = bElement(fb, fl, lane, i, 16 * kc, 8 * nt);
                return memref::LoadOp::create(fb, fl, ks,
                                              ValueRange{slot, key, col})
                    .getResult();
              };
              // The warp's ldmatrix: lane 8j + i gives the row K[8·nt +
              // i][16·kc0 + 8j]; lane (g, t) gets row g, columns 2t and
              // 2t + 1 of each 8 × 8 matrix j, so matrices 0-1 are B's
              // elements 0-1 and 2-3 of chunk kc0, matrices 2-3 those of
              // chunk kc0 + 1 (x4, for an even number of chunks; else x2,
              // lanes 0-15).
              FragmentLoad kLoad = [&, nt, kc](OpBuilder &fb, Location fl) {
                int64_t tiles = kChunks % 2 == 0 ? 4 : 2;
                int64_t kc0 = tiles == 4 ? kc & ~int64_t(1) : kc;
                Value &whole = loaded[{0, nt, kc0}];
                if (!whole) {
                  Value i = tiles == 4
                                ? laneId
                                : arith::RemUIOp::create(fb, fl, laneId,
                                                         indexConst(fb, fl, 16))
                                      .getResult();
                  Value key = add(
                      fb, fl,
                      arith::RemUIOp::create(fb, fl, i, indexConst(fb, fl, 8)),
                      indexConst(fb, fl, 8 * nt));
                  Value col = add(fb, fl,
                                  mul(fb, fl,
                                      arith::DivUIOp::create(
                                          fb, fl, i, indexConst(fb, fl, 8)),
                                      8),
                                  indexConst(fb, fl, 16 * kc0));
                  whole = nvgpu::LdMatrixOp::create(
                      fb, fl, VectorType::get({tiles, 2}, elem), ks,
                      ValueRange{slot, key, col}, /*transpose=*/false, tiles);
                }
                return std::make_pair(whole, 2 * (kc - kc0));
              };
              for (int64_t m = 0; m < mTiles; ++m) {
                int64_t c = (m * sTiles + nt) * 4;
                if (kc == 0)
                  warp.perLane(b, l,
                               [&](OpBuilder &zb, Location zl, const Lane &me) {
                                 for (int64_t i = 0; i < 4; ++i)
                                   warp.store(zb, zl, f32Const(zb, zl, 0.0),
                                              sRegs, me, c + i);
                               });
                Fragment qFrag = [&, m, kc](OpBuilder &fb, Location fl,
                                            const Lane &lane, Value i,
                                            int64_t at) {
                  return warp.load(fb, fl, qRegs, lane, (m * kChunks + kc) * 8,
                                   i, at);
                };
                warp.mma(b, l, qFrag, kFrag, sRegs, c, kLoad);
              }
            }

          // Scores (scale, bias, score_mod, masks) and each row's tile max.
          // A full tile (k0 + tileK <= kEnd: every tile but the last) reads
          // its keys unclamped and tests only the causal (lookahead) mask; a
          // full tile below the diagonal (plus the lookahead) of every row of
          // the warp, not even that.
          enum class TileKind { Unmasked, Full, Partial };
          auto scores = [&](OpBuilder &sb0, Location sl0, TileKind kind) {
            bool full = kind != TileKind::Partial;
            warp.perLane(
                sb0, sl0, [&](OpBuilder &sb, Location sl, const Lane &me) {
                  for (int64_t m = 0; m < mTiles; ++m)
                    for (int64_t half = 0; half < 2; ++half) {
                      Value rowC = arith::MinUIOp::create(
                          sb, sl,
                          rowOf(sb, sl, me, m, indexConst(sb, sl, half)),
                          lastRow);
                      Value qPos =
                          buildQueryPosition(sb, sl, rowC, op.getQOffset());
                      Value mx = f32Const(sb, sl, kNegInf);
                      for (int64_t nt = 0; nt < sTiles; ++nt)
                        for (int64_t lo = 0; lo < 2; ++lo) {
                          int64_t c = (m * sTiles + nt) * 4 + 2 * half + lo;
                          Value keyRaw =
                              add(sb, sl, k0,
                                  add(sb, sl, mul(sb, sl, me.t, 2),
                                      indexConst(sb, sl, 8 * nt + lo)));
                          Value key = full ? keyRaw
                                           : arith::MinUIOp::create(
                                                 sb, sl, keyRaw, lastKey)
                                                 .getResult();
                          Value dot = warp.load(sb, sl, sRegs, me, c);
                          Value s =
                              buildGPUScore(sb, sl, op, dot, b0, h, rowC, qPos,
                                            keyRaw, key, full ? Value() : kEnd,
                                            foldScale ? Value() : dims.scale,
                                            kind != TileKind::Unmasked);
                          warp.store(sb, sl, s, sRegs, me, c);
                          mx = arith::MaximumFOp::create(sb, sl, mx, s);
                        }
                      warp.store(sb, sl, mx, tileMax, me, 2 * m + half);
                    }
                });
          };
          Value full = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::ule,
              add(b, l, k0, indexConst(b, l, tileK)), kEnd);
          // (condition, kind) in order; the last else is a partial tile.
          SmallVector<std::pair<Value, TileKind>> cases;
          if (std::optional<int64_t> reach = op.getKeyReach()) {
            // The warp's first row (clamped like the rows) sees the tile's
            // last key: so do all its rows (query positions increase).
            Value firstRow = arith::MinUIOp::create(b, l, warpRow0, lastRow);
            Value ahead = buildAheadMasked(
                b, l, add(b, l, k0, indexConst(b, l, tileK - 1)),
                buildQueryPosition(b, l, firstRow, op.getQOffset()), *reach);
            Value seen = arith::XOrIOp::create(
                b, l, ahead, arith::ConstantIntOp::create(b, l, 1, 1));
            cases.push_back(
                {arith::AndIOp::create(b, l, full, seen), TileKind::Unmasked});
          }
          cases.push_back({full, TileKind::Full});
          SmallVector<Registers *> scored = {&sRegs, &tileMax};
          SmallVector<Type> scoredTypes;
          if (!emulate)
            scoredTypes.assign(sSize + statSize, f32);
          // Each branch starts from the dot products.
          SmallVector<Value> before = valuesOf(scored);
          std::function<void(OpBuilder &, size_t)> branch = [&](OpBuilder &bb,
                                                                size_t i) {
            if (i == cases.size()) {
              setValues(scored, before);
              return scores(bb, l, TileKind::Partial);
            }
            auto ifOp = scf::IfOp::create(bb, l, scoredTypes, cases[i].first,
                                          /*withElseRegion=*/true);
            for (bool isThen : {true, false}) {
              OpBuilder cb =
                  atBlockEnd(isThen ? ifOp.thenBlock() : ifOp.elseBlock());
              if (isThen) {
                setValues(scored, before);
                scores(cb, l, cases[i].second);
              } else {
                branch(cb, i + 1);
              }
              if (!emulate)
                scf::YieldOp::create(cb, l, valuesOf(scored));
            }
            setValues(scored, ifOp.getResults());
          };
          branch(b, 0);
          warp.quadReduce(b, l, tileMax, /*isMax=*/true);

          // O *= alpha in row half `half` of m tile `m`.
          auto rescale = [&](OpBuilder &sb, Location sl, const Lane &me,
                             int64_t m, int64_t half, Value alpha) {
            for (int64_t nt = 0; nt < oTiles; ++nt)
              for (int64_t lo = 0; lo < 2; ++lo) {
                int64_t c = (m * oTiles + nt) * 4 + 2 * half + lo;
                warp.store(sb, sl,
                           arith::MulFOp::create(
                               sb, sl, alpha, warp.load(sb, sl, oRegs, me, c)),
                           oRegs, me, c);
              }
          };
          // O *= alpha with each row's alpha held in tileMax, skipped by the
          // whole warp where no row's maximum grew: one vote in place of
          // 4 * Dv / 8 multiplies per row half.
          auto lazyRescale = [&](OpBuilder &rb0, Location rl) {
            Value grew = warp.anyLane(
                rb0, rl, [&](OpBuilder &vb, Location vl, const Lane &me) {
                  Value any = arith::ConstantIntOp::create(vb, vl, 0, 1);
                  for (int64_t stat = 0; stat < statSize; ++stat)
                    any = arith::OrIOp::create(
                        vb, vl, any,
                        arith::CmpFOp::create(
                            vb, vl, arith::CmpFPredicate::UNE,
                            warp.load(vb, vl, tileMax, me, stat),
                            f32Const(vb, vl, 1.0)));
                  return any;
                });
            SmallVector<Registers *> rescaled = {&oRegs};
            SmallVector<Type> rescaledTypes;
            if (!emulate)
              rescaledTypes.assign(oSize, f32);
            SmallVector<Value> unscaled = valuesOf(rescaled);
            auto ifGrew = scf::IfOp::create(rb0, rl, rescaledTypes, grew,
                                            /*withElseRegion=*/!emulate);
            OpBuilder rb = atBlockEnd(ifGrew.thenBlock());
            warp.perLane(
                rb, rl, [&](OpBuilder &sb, Location sl, const Lane &me) {
                  for (int64_t m = 0; m < mTiles; ++m)
                    for (int64_t half = 0; half < 2; ++half)
                      rescale(sb, sl, me, m, half,
                              warp.load(sb, sl, tileMax, me, 2 * m + half));
                });
            if (emulate)
              return;
            scf::YieldOp::create(rb, rl, valuesOf(rescaled));
            OpBuilder eb = atBlockEnd(ifGrew.elseBlock());
            scf::YieldOp::create(eb, rl, unscaled);
            setValues(rescaled, ifGrew.getResults());
          };

          // m' = max(m, tile max); alpha = exp(m - m') (0 while nothing was
          // seen); p = exp(s - m') with m' = 0 while every key is masked;
          // l = alpha·l + this lane's p; O *= alpha. Each exp is an exp2 of
          // one FMA: exp(s - m') = 2^(s·c - m'·c) (c: expScale).
          warp.perLane(b, l, [&](OpBuilder &sb, Location sl, const Lane &me) {
            Value negInf = f32Const(sb, sl, kNegInf);
            Value zeroF = f32Const(sb, sl, 0.0);
            Value log2e = f32Const(sb, sl, expScale);
            for (int64_t m = 0; m < mTiles; ++m)
              for (int64_t half = 0; half < 2; ++half) {
                int64_t stat = 2 * m + half;
                Value mOld = warp.load(sb, sl, mRegs, me, stat);
                Value mNew = arith::MaximumFOp::create(
                    sb, sl, mOld, warp.load(sb, sl, tileMax, me, stat));
                Value alpha = arith::SelectOp::create(
                    sb, sl,
                    arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OEQ,
                                          mOld, negInf),
                    zeroF,
                    warp.exp2(sb, sl,
                              arith::MulFOp::create(
                                  sb, sl,
                                  arith::SubFOp::create(sb, sl, mOld, mNew),
                                  log2e)));
                // Lazily: exactly 1 where the maximum did not grow (the
                // common case once a row has seen its largest scores; a row
                // that saw no key yet has O = l = 0 either way).
                if (options.mmaLazyRescale)
                  alpha = arith::SelectOp::create(
                      sb, sl,
                      arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OEQ,
                                            mOld, mNew),
                      f32Const(sb, sl, 1.0), alpha);
                Value mSafe = arith::SelectOp::create(
                    sb, sl,
                    arith::CmpFOp::create(sb, sl, arith::CmpFPredicate::OEQ,
                                          mNew, negInf),
                    zeroF, mNew);
                Value sum = arith::MulFOp::create(
                    sb, sl, alpha, warp.load(sb, sl, lRegs, me, stat));
                Value mScaled = arith::NegFOp::create(
                    sb, sl, arith::MulFOp::create(sb, sl, mSafe, log2e));
                for (int64_t nt = 0; nt < sTiles; ++nt)
                  for (int64_t lo = 0; lo < 2; ++lo) {
                    int64_t c = (m * sTiles + nt) * 4 + 2 * half + lo;
                    Value p =
                        warp.exp2(sb, sl,
                                  math::FmaOp::create(
                                      sb, sl, warp.load(sb, sl, sRegs, me, c),
                                      log2e, mScaled));
                    warp.store(sb, sl, p, sRegs, me, c);
                    sum = arith::AddFOp::create(sb, sl, sum, p);
                  }
                if (options.mmaLazyRescale)
                  warp.store(sb, sl, alpha, tileMax, me, stat);
                else
                  rescale(sb, sl, me, m, half, alpha);
                warp.store(sb, sl, mNew, mRegs, me, stat);
                warp.store(sb, sl, sum, lRegs, me, stat);
              }
          });
          if (options.mmaLazyRescale)
            lazyRescale(b, l);

          // O += P · V: P's A fragment of key chunk pc is S's accumulators
          // of key tiles 2·pc and 2·pc + 1 (element i: tile 2·pc + i/4,
          // register i%4), as f16 / bf16; B[kk][n] = V[16·pc + kk][8·nt + n].
          // Column tiles in pairs (one x4 ldmatrix), each pair over the key
          // chunks in order.
          int64_t vPair = oTiles % 2 == 0 ? 2 : 1;
          for (int64_t nt0 = 0; nt0 < oTiles; nt0 += vPair)
            for (int64_t pc = 0; pc < pChunks; ++pc)
              for (int64_t nt = nt0; nt < nt0 + vPair; ++nt) {
                Fragment vFrag = [&, nt, pc](OpBuilder &fb, Location fl,
                                             const Lane &lane, Value i,
                                             int64_t) {
                  auto [key, col] = bElement(fb, fl, lane, i, 16 * pc, 8 * nt);
                  return memref::LoadOp::create(fb, fl, vs,
                                                ValueRange{slot, key, col})
                      .getResult();
                };
                // ldmatrix.trans: lane 16j + i gives the row V[16·pc +
                // i][8·(nt0 + j)]; lane (g, t) gets V[16·pc + 2t + {0, 1}][8·nt
                // + g] and 8 keys on (B's elements 0-1 and 2-3) in matrices
                // 2j and 2j + 1 (x4 for a pair of column tiles, else x2).
                FragmentLoad vLoad = [&, nt, nt0, pc](OpBuilder &fb,
                                                      Location fl) {
                  int64_t tiles = 2 * vPair;
                  Value &whole = loaded[{1, nt0, pc}];
                  if (!whole) {
                    Value key = add(fb, fl,
                                    arith::RemUIOp::create(
                                        fb, fl, laneId, indexConst(fb, fl, 16)),
                                    indexConst(fb, fl, 16 * pc));
                    Value col = indexConst(fb, fl, 8 * nt0);
                    if (tiles == 4)
                      col = add(fb, fl,
                                mul(fb, fl,
                                    arith::DivUIOp::create(
                                        fb, fl, laneId, indexConst(fb, fl, 16)),
                                    8),
                                col);
                    whole = nvgpu::LdMatrixOp::create(
                        fb, fl, VectorType::get({tiles, 2}, elem), vs,
                        ValueRange{slot, key, col}, /*transpose=*/true, tiles);
                  }
                  return std::make_pair(whole, 2 * (nt - nt0));
                };
                for (int64_t m = 0; m < mTiles; ++m) {
                  Fragment pFrag = [&, m, pc](OpBuilder &fb, Location fl,
                                              const Lane &lane, Value i,
                                              int64_t at) {
                    Value p = warp.load(fb, fl, sRegs, lane,
                                        (m * sTiles + 2 * pc) * 4, i, at);
                    return arith::TruncFOp::create(fb, fl, elem, p).getResult();
                  };
                  warp.mma(b, l, pFrag, vFrag, oRegs, (m * oTiles + nt) * 4,
                           vLoad);
                }
              }
          // Every warp is done with this slot before the next iteration
          // stages into it.
          gpu::BarrierOp::create(b, l);
          scf::YieldOp::create(b, l, valuesOf(carried));
        });
    setValues(carried, keyLoop.getResults());

    // l over the row's four lanes; out = O / l (0 for a row that saw no
    // key), rows below Lq only.
    warp.quadReduce(rewriter, loc, lRegs, /*isMax=*/false);
    warp.perLane(rewriter, loc, [&](OpBuilder &b, Location l, const Lane &me) {
      for (int64_t m = 0; m < mTiles; ++m)
        for (int64_t half = 0; half < 2; ++half) {
          Value row = rowOf(b, l, me, m, indexConst(b, l, half));
          Value active = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                               row, dims.lq);
          auto store = scf::IfOp::create(b, l, active,
                                         /*withElseRegion=*/false);
          OpBuilder sb = OpBuilder::atBlockBegin(store.thenBlock());
          GPURowNormalizer norm = buildGPURowNormalizer(
              sb, l, warp.load(sb, l, lRegs, me, 2 * m + half));
          for (int64_t nt = 0; nt < oTiles; ++nt)
            for (int64_t lo = 0; lo < 2; ++lo) {
              Value acc = warp.load(sb, l, oRegs, me,
                                    (m * oTiles + nt) * 4 + 2 * half + lo);
              Value col = add(sb, l, mul(sb, l, me.t, 2),
                              indexConst(sb, l, 8 * nt + lo));
              memref::StoreOp::create(
                  sb, l, normalizeGPUOutput(sb, l, norm, acc, elementType),
                  frame.out, ValueRange{b0, h, row, col});
            }
        }
    });
    finishGPUKernel(rewriter, op, body, frame);
    return success();
  }

  GPUAttentionOptions options;
};

} // namespace

void mlir::rpe::populateRPEGPUAttentionRegisterPatterns(
    RewritePatternSet &patterns, const GPUAttentionOptions &options) {
  if (options.tensorCores && options.mmaRegisters)
    patterns.add<GPUAttentionRegisters>(patterns.getContext(), options);
}
