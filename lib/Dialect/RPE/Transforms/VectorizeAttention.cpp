//===- VectorizeAttention.cpp - vector-level attention microkernel --------===//
//
// rpe.attention -> a FlashAttention-2 kernel written with the vector dialect
// on buffers:
//
//   scf.forall (b, h, query tile) { memref.alloca_scope {
//     Qᵀ tile (D × TQ, scaled, f32) packed once;
//     scf.index_switch on the number of vectors the tile needs (1..TQ/W) {
//       scf.for key tile {
//         Sᵀ = K·Qᵀ in register blocks of RK keys × (TQ/W) vectors;
//         bias, score_mod (vectorized along queries), causal mask;
//         online softmax along keys: element-wise max / exp / sum;
//         Oᵀ = alpha·Oᵀ + Vᵀ·P in register blocks of RE values × (TQ/W)
//         vectors (+ rel_values through a Toeplitz diagonal) }
//       out = Oᵀ / l } } }
//
// Vectors run along query rows: every reduction of the online softmax runs
// along keys, i.e. across vectors, so none is horizontal; K and V are read
// in place (one broadcast per element), only the query tile is transposed.
// Nothing of size Lq×Lk exists. The vector width, tile sizes and register
// blocks are options; the CPU pipeline picks them from the target's vector
// width.
//
// This file builds the tiles, the online softmax and the parallel loop, and
// holds the pattern and the pass; VectorizeAttentionScores.cpp evaluates
// score_mod and VectorizeAttentionDecode.cpp builds the decode kernel
// (KernelBuilder, VectorizeAttentionKernel.h).
//
//===----------------------------------------------------------------------===//

#include "VectorizeAttentionKernel.h"

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"
#include "rpe/Dialect/RPE/Utils/SliceUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEVECTORIZEATTENTIONPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

using namespace mlir::rpe::detail;

namespace {

/// Whether the kernel can evaluate `score_mod` lane by lane: every op has no
/// region and only scalar (int, index, float) results.
bool isVectorizableScoreMod(Region &region) {
  if (region.empty())
    return true;
  for (Operation &op : region.front().without_terminator()) {
    if (op.getNumRegions() != 0)
      return false;
    for (Type t : op.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return false;
    for (Value v : op.getOperands())
      if (!v.getType().isIntOrIndexOrFloat() &&
          !(isa<RankedTensorType>(v.getType()) &&
            isa<tensor::ExtractOp, tensor::DimOp>(op)))
        return false;
  }
  return true;
}

} // namespace

Value KernelBuilder::bufferOf(Value tensor, bool anyOffset) {
  auto it = buffers.find(tensor);
  if (it != buffers.end())
    return it->second;
  assert(!kernelStarted && "buffers are made before the kernel");
  OpBuilder::InsertionGuard guard(rw);
  rw.setInsertionPoint(op);
  auto type = cast<RankedTensorType>(tensor.getType());
  MemRefLayoutAttrInterface layout;
  if (anyOffset && type.getRank() > 0) {
    // Row-major strides (static while the inner sizes are), any offset;
    // any stride for a dimension of size 1 (never stepped along) and for
    // the dimensions outside one of size 0 (an empty buffer: a static 0
    // there made bufferization copy it into an invalid allocation).
    SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
    int64_t stride = 1;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (type.getDimSize(d) != 1)
        strides[d] = stride;
      if (ShapedType::isDynamic(stride) || type.getDimSize(d) <= 0)
        stride = ShapedType::kDynamic;
      else
        stride *= type.getDimSize(d);
    }
    layout =
        StridedLayoutAttr::get(rw.getContext(), ShapedType::kDynamic, strides);
  }
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  Value buffer = bufferization::ToBufferOp::create(rw, loc, memrefType, tensor,
                                                   /*read_only=*/true);
  buffers[tensor] = buffer;
  return buffer;
}

/// S for keys jb .. jb+keys-1 of the tile at k0 against the query vectors:
/// `keys` × numChunks accumulators over the head dimension, then the score
/// terms and the causal mask; writes Sᵀ rows and returns the updated
/// running maxima.
SmallVector<Value> KernelBuilder::buildKeyBlock(OpBuilder &b, int64_t numChunks,
                                                int64_t keys, Value k0,
                                                Value jb, ValueRange tileMax,
                                                bool fromScratch) {
  int64_t w = opts.vectorWidth;
  SmallVector<Value> init(keys * numChunks, splat(b, 0.0f));
  auto dLoop = scf::ForOp::create(
      b, loc, cIdx(b, 0), headDim, cIdx(b, 1), init,
      [&](OpBuilder &nb, Location, Value d, ValueRange acc) {
        SmallVector<Value> qv;
        for (int64_t c = 0; c < numChunks; ++c)
          qv.push_back(vector::LoadOp::create(nb, loc, vecF32, qT,
                                              ValueRange{d, cIdx(nb, c * w)}));
        SmallVector<Value> next;
        for (int64_t r = 0; r < keys; ++r) {
          Value key = add(nb, add(nb, k0, jb), cIdx(nb, r));
          Value kv = bcast(nb, loadF32(nb, kBuf, {bIdx, hkIdx, key, d}));
          for (int64_t c = 0; c < numChunks; ++c)
            next.push_back(fma(nb, kv, qv[c], acc[r * numChunks + c]));
        }
        scf::YieldOp::create(nb, loc, next);
      });
  // The score terms, the causal mask (grouped tiles: always, per lane; else
  // if `masked`), the running maxima and the Sᵀ rows of the block's keys.
  auto finish = [&](OpBuilder &fb, bool masked) {
    SmallVector<Value> maxima(tileMax);
    for (int64_t r = 0; r < keys; ++r) {
      Value row = add(fb, jb, cIdx(fb, r));
      Value key = add(fb, k0, row);
      for (int64_t c = 0; c < numChunks; ++c) {
        if (fromScratch)
          scratchKey = row;
        Value s =
            vectorizeScore(fb, dLoop.getResult(r * numChunks + c), key, c);
        scratchKey = Value();
        Value hidden;
        auto orHidden = [&](Value h) {
          hidden =
              hidden ? arith::OrIOp::create(fb, loc, hidden, h).getResult() : h;
        };
        // Lanes as i32 from a clamped lane bound (grouped tiles: positions
        // per lane).
        auto lanesFrom = [&](Value bound, arith::CmpIPredicate pred) {
          bound = maxI(fb, minI(fb, bound, cIdx(fb, w)), cIdx(fb, 0));
          Value bound32 =
              arith::IndexCastOp::create(fb, loc, fb.getI32Type(), bound);
          return arith::CmpIOp::create(fb, loc, pred, iotaI32,
                                       bcast(fb, bound32))
              .getResult();
        };
        if (grouped) {
          if (reach)
            orHidden(buildAheadMasked(fb, loc, bcast(fb, key), groupedPos[c],
                                      *reach));
          if (window)
            orHidden(buildWindowMasked(fb, loc, bcast(fb, key), groupedPos[c],
                                       *window));
        } else if (masked) {
          // Lane l has query position qPos0 + c·W + l. Causal (lookahead
          // A): it sees the key when l >= key - A - qPos0 - c·W; window: it
          // does not see it when l >= key + window - qPos0 - c·W.
          Value rel = sub(fb, key, add(fb, qPos0, cIdx(fb, c * w)));
          if (reach)
            orHidden(lanesFrom(*reach ? sub(fb, rel, cIdx(fb, *reach)) : rel,
                               arith::CmpIPredicate::slt));
          if (window)
            orHidden(lanesFrom(add(fb, rel, cIdx(fb, *window)),
                               arith::CmpIPredicate::sge));
        }
        if (hidden)
          s = arith::SelectOp::create(fb, loc, hidden, splat(fb, kNegInf), s);
        // The running max as select(s > max, s, max): one `maxps` on x86
        // (arith.maximumf takes a compare, an unordered compare and a
        // blend). A NaN score leaves the max as it is, and still reaches
        // the row's output: its probability exp(NaN - max) is NaN.
        Value greater = arith::CmpFOp::create(
            fb, loc, arith::CmpFPredicate::OGT, s, maxima[c]);
        maxima[c] = arith::SelectOp::create(fb, loc, greater, s, maxima[c]);
        vector::StoreOp::create(fb, loc, s, sT,
                                ValueRange{row, cIdx(fb, c * w)});
      }
    }
    return maxima;
  };
  if ((!reach && !window) || grouped)
    return finish(b, /*masked=*/false);
  // Every row of the tile sees a block whose last key is at or before the
  // tile's first position plus the reach (most blocks of a long causal
  // attention) and, with
  // a window, whose first key is in the last row's window: its scores skip
  // the masks. (Each branch builds its own key values: the per-key cache of
  // vectorizeScore must not reach across them.)
  Value needsMask;
  Value firstKey = add(b, k0, jb);
  if (reach)
    needsMask = buildAheadMasked(b, loc, add(b, firstKey, cIdx(b, keys - 1)),
                                 qPos0, *reach);
  if (window) {
    Value lastPos = sub(b, add(b, qPos0, tq), cIdx(b, 1));
    Value outside = buildWindowMasked(b, loc, firstKey, lastPos, *window);
    needsMask =
        needsMask ? arith::OrIOp::create(b, loc, needsMask, outside).getResult()
                  : outside;
  }
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(tileMax).getTypes(),
                                needsMask, /*withElseRegion=*/true);
  for (bool masked : {true, false}) {
    OpBuilder fb =
        OpBuilder::atBlockEnd(masked ? ifOp.thenBlock() : ifOp.elseBlock());
    scf::YieldOp::create(fb, loc, finish(fb, masked));
  }
  return SmallVector<Value>(ifOp.getResults());
}

/// Oᵀ rows e0 .. e0+rows-1: alpha·Oᵀ + Vᵀ·P over the tk keys of the tile.
void KernelBuilder::buildValueBlock(OpBuilder &b, int64_t numChunks,
                                    int64_t rows, Value e0, Value k0, Value tk,
                                    ArrayRef<Value> alpha,
                                    ArrayRef<Value> probSums) {
  int64_t w = opts.vectorWidth;
  // In a uniform tile every (row, key) pair reads one rel_values row: its
  // share is relDiag[e, tileDiag]·Σ_j p, added once after the keys.
  bool relPerKey = relDiagBuf && !inUniformTile;
  SmallVector<Value> init;
  for (int64_t e = 0; e < rows; ++e)
    for (int64_t c = 0; c < numChunks; ++c) {
      Value o = vector::LoadOp::create(
          b, loc, vecF32, oT,
          ValueRange{add(b, e0, cIdx(b, e)), cIdx(b, c * w)});
      init.push_back(arith::MulFOp::create(b, loc, o, alpha[c]));
    }
  auto jLoop = scf::ForOp::create(
      b, loc, cIdx(b, 0), tk, cIdx(b, 1), init,
      [&](OpBuilder &nb, Location, Value j, ValueRange acc) {
        SmallVector<Value> p;
        for (int64_t c = 0; c < numChunks; ++c)
          p.push_back(vector::LoadOp::create(nb, loc, vecF32, sT,
                                             ValueRange{j, cIdx(nb, c * w)}));
        Value key = add(nb, k0, j);
        // rel_values through the diagonal: relDiag[e, i' - key + shift].
        Value relBase;
        if (relPerKey)
          relBase = add(nb, sub(nb, qPos0, key), relShift);
        // Non-Toeplitz rel_values: the buckets of (row lane, key), once per
        // key and row vector, then a gather of E[bucket, e] per value row.
        SmallVector<Value> buckets;
        if (relBuf) {
          auto bucketing = *op.getBucketing();
          for (int64_t c = 0; c < numChunks; ++c) {
            Value rowBase = add(nb, q0, cIdx(nb, c * w));
            SmallVector<Value> lanes;
            for (int64_t lane = 0; lane < w; ++lane) {
              Value row = add(
                  nb, vector::ExtractOp::create(nb, loc, clampedIota[c], lane),
                  rowBase);
              Value qPos = buildQueryPosition(nb, loc, row, op.getQOffset());
              lanes.push_back(bucketing.buildBucket(nb, loc, qPos, key));
            }
            buckets.push_back(vector::FromElementsOp::create(
                nb, loc, VectorType::get({w}, nb.getIndexType()), lanes));
          }
        }
        SmallVector<Value> next;
        for (int64_t e = 0; e < rows; ++e) {
          Value ei = add(nb, e0, cIdx(nb, e));
          Value val = bcast(nb, loadF32(nb, vBuf, {bIdx, hkIdx, key, ei}));
          for (int64_t c = 0; c < numChunks; ++c) {
            Value x = val;
            Value rel;
            if (relPerKey) {
              auto relType = cast<MemRefType>(relDiagBuf.getType());
              rel = vector::LoadOp::create(
                  nb, loc, VectorType::get({w}, relType.getElementType()),
                  relDiagBuf,
                  ValueRange{ei, add(nb, relBase, cIdx(nb, c * w))});
            } else if (relBuf) {
              rel = gather(nb, relBuf, {buckets[c], ei}, c);
            }
            if (rel)
              x = arith::AddFOp::create(nb, loc, val,
                                        castFloat(nb, loc, rel, f32));
            next.push_back(fma(nb, x, p[c], acc[e * numChunks + c]));
          }
        }
        scf::YieldOp::create(nb, loc, next);
      });
  for (int64_t e = 0; e < rows; ++e) {
    Value ei = add(b, e0, cIdx(b, e));
    Value rel;
    if (relDiagBuf && inUniformTile)
      rel = bcast(b, loadF32(b, relDiagBuf, {ei, tileDiag}));
    for (int64_t c = 0; c < numChunks; ++c) {
      Value o = jLoop.getResult(e * numChunks + c);
      if (rel)
        o = fma(b, rel, probSums[c], o);
      vector::StoreOp::create(b, loc, o, oT, ValueRange{ei, cIdx(b, c * w)});
    }
  }
}

/// The key tile at k0 (tk keys) against the query tile.
void KernelBuilder::buildKeyTile(OpBuilder &b, int64_t numChunks, Value k0,
                                 Value tk, bool uniform) {
  int64_t w = opts.vectorWidth;
  inUniformTile = uniform;
  if (uniform) {
    // The tile's bucket values, then what score_mod computes from them.
    for (auto [read, table] : uniformReads)
      tileScalars[read] = memref::LoadOp::create(
          b, loc, bufferOf(table), ValueRange{cIdx(b, 0), tileDiag});
    hoistKeyTileInvariants(b, numChunks);
  }
  // Sᵀ in register blocks of keyBlock keys, then one key at a time. A tile
  // with fewer row vectors than a full one (decode, the last rows) takes
  // proportionally more keys per block: the same number of accumulators, so
  // that as many FMA chains run at once.
  int64_t maxChunks = opts.tileQ / w;
  auto scaled = [&](int64_t block) {
    return std::max(block,
                    std::min<int64_t>(16, block * maxChunks / numChunks));
  };
  int64_t rk = scaled(opts.keyBlock);
  // Keys [lo, hi) of the tile: blocks of rk keys (with `blocks`), then one
  // at a time.
  auto keyLoops = [&](Value lo, Value hi, ValueRange maxima, bool fromScratch,
                      bool blocks) -> SmallVector<Value> {
    SmallVector<Value> mx(maxima);
    Value main = lo;
    if (blocks) {
      main = add(
          b, lo,
          mul(b, arith::DivUIOp::create(b, loc, sub(b, hi, lo), cIdx(b, rk)),
              cIdx(b, rk)));
      auto blockLoop = scf::ForOp::create(
          b, loc, lo, main, cIdx(b, rk), maxima,
          [&](OpBuilder &nb, Location, Value jb, ValueRange mx) {
            scf::YieldOp::create(
                nb, loc,
                buildKeyBlock(nb, numChunks, rk, k0, jb, mx, fromScratch));
          });
      mx = blockLoop.getResults();
    }
    auto rest = scf::ForOp::create(
        b, loc, main, hi, cIdx(b, 1), mx,
        [&](OpBuilder &nb, Location, Value jb, ValueRange mx) {
          scf::YieldOp::create(
              nb, loc,
              buildKeyBlock(nb, numChunks, 1, k0, jb, mx, fromScratch));
        });
    return rest.getResults();
  };
  SmallVector<Value> maxInit(numChunks, splat(b, kNegInf));
  SmallVector<Value> tileMaxima;
  if (!uniform && !rowReads.empty()) {
    // The row reads of the whole vectors of keys from the scratch buffers,
    // the last keys as they are.
    Value whole =
        mul(b, arith::DivUIOp::create(b, loc, tk, cIdx(b, w)), cIdx(b, w));
    buildRowReads(b, numChunks, k0, whole);
    tileMaxima = keyLoops(cIdx(b, 0), whole, maxInit, /*fromScratch=*/true,
                          /*blocks=*/true);
    // Fewer than W keys: one at a time.
    tileMaxima = keyLoops(whole, tk, tileMaxima, /*fromScratch=*/false,
                          /*blocks=*/false);
  } else {
    tileMaxima = keyLoops(cIdx(b, 0), tk, maxInit, /*fromScratch=*/false,
                          /*blocks=*/true);
  }
  // Online softmax, element-wise per query lane.
  SmallVector<Value> alpha, mSafe, sumInit;
  for (int64_t c = 0; c < numChunks; ++c) {
    Value at = cIdx(b, c * w);
    Value mOld = vector::LoadOp::create(b, loc, vecF32, mBuf, at);
    Value mNew = arith::MaximumFOp::create(b, loc, mOld, tileMaxima[c]);
    auto [a, m] = rescale(b, mOld, mNew);
    alpha.push_back(a);
    mSafe.push_back(m);
    vector::StoreOp::create(b, loc, mNew, mBuf, at);
    sumInit.push_back(splat(b, 0.0f));
  }
  auto probs = scf::ForOp::create(
      b, loc, cIdx(b, 0), tk, cIdx(b, 1), sumInit,
      [&](OpBuilder &nb, Location, Value j, ValueRange sums) {
        SmallVector<Value> next;
        for (int64_t c = 0; c < numChunks; ++c) {
          SmallVector<Value, 2> at = {j, cIdx(nb, c * w)};
          Value s = vector::LoadOp::create(nb, loc, vecF32, sT, at);
          Value p = exp(nb, arith::SubFOp::create(nb, loc, s, mSafe[c]));
          vector::StoreOp::create(nb, loc, p, sT, at);
          next.push_back(arith::AddFOp::create(nb, loc, sums[c], p));
        }
        scf::YieldOp::create(nb, loc, next);
      });
  for (int64_t c = 0; c < numChunks; ++c) {
    Value at = cIdx(b, c * w);
    Value l = vector::LoadOp::create(b, loc, vecF32, lBuf, at);
    Value lNew = fma(b, l, alpha[c], probs.getResult(c));
    vector::StoreOp::create(b, loc, lNew, lBuf, at);
  }
  SmallVector<Value> probSums(probs.getResults());
  // Oᵀ in register blocks of valueBlock rows, then one at a time.
  int64_t re = scaled(opts.valueBlock);
  Value dvMain = mul(b, arith::DivUIOp::create(b, loc, valueDim, cIdx(b, re)),
                     cIdx(b, re));
  forRange(b, cIdx(b, 0), dvMain, cIdx(b, re), [&](OpBuilder &nb, Value e0) {
    buildValueBlock(nb, numChunks, re, e0, k0, tk, alpha, probSums);
  });
  forRange(b, dvMain, valueDim, cIdx(b, 1), [&](OpBuilder &nb, Value e0) {
    buildValueBlock(nb, numChunks, 1, e0, k0, tk, alpha, probSums);
  });
  tileScalars.clear();
  keyTileLanes.clear();
  inUniformTile = false;
}

void KernelBuilder::prefetchKeyTile(OpBuilder &b, Value k1) {
  Value end = minI(b, add(b, k1, cIdx(b, opts.tileK)), kEnd);
  forRange(b, k1, end, cIdx(b, 1), [&](OpBuilder &jb, Value key) {
    for (auto [bufferOfRows, dim] :
         {std::pair(kBuf, headDim), {vBuf, valueDim}}) {
      // (A lambda may not capture a structured binding before C++20.)
      Value buffer = bufferOfRows;
      auto type = cast<MemRefType>(buffer.getType());
      int64_t bytes = type.getElementTypeBitWidth() / 8;
      forRange(jb, cIdx(jb, 0), dim, cIdx(jb, kCacheLineBytes / bytes),
               [&](OpBuilder &db, Value d) {
                 memref::PrefetchOp::create(db, loc, buffer,
                                            ValueRange{bIdx, hkIdx, key, d},
                                            /*isWrite=*/false,
                                            /*localityHint=*/3,
                                            /*isDataCache=*/true);
               });
    }
  });
}

/// The whole query tile with `numChunks` vectors of rows.
void KernelBuilder::buildTile(OpBuilder &b, int64_t numChunks) {
  int64_t w = opts.vectorWidth;
  // Per-chunk lane data.
  clampedIota.clear();
  laneValid.clear();
  auto idxVec = VectorType::get({w}, b.getIndexType());
  SmallVector<int64_t> iotaValues(w);
  for (int64_t l = 0; l < w; ++l)
    iotaValues[l] = l;
  Value iota = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(idxVec, ArrayRef<int64_t>(iotaValues)));
  SmallVector<int32_t> iota32(iotaValues.begin(), iotaValues.end());
  iotaI32 = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(VectorType::get({w}, b.getI32Type()),
                             ArrayRef<int32_t>(iota32)));
  groupedPos.clear();
  for (int64_t c = 0; c < numChunks && grouped; ++c) {
    // Position of packed row c·W + l: q_offset + (c·W + l) mod Lq.
    Value p = arith::AddIOp::create(b, loc, iota, bcast(b, cIdx(b, c * w)));
    Value row = arith::RemUIOp::create(b, loc, p, bcast(b, lq));
    groupedPos.push_back(
        arith::AddIOp::create(b, loc, row, bcast(b, qPos0)).getResult());
  }
  for (int64_t c = 0; c < numChunks; ++c) {
    // Rows of this vector in the tile: lane < tq - c·W.
    Value rowsLeft = sub(b, tq, cIdx(b, c * w));
    Value last = bcast(b, sub(b, rowsLeft, cIdx(b, 1)));
    clampedIota.push_back(arith::MinSIOp::create(b, loc, iota, last));
    laneValid.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                              iota, bcast(b, rowsLeft)));
  }

  // Running max, sum and Oᵀ.
  for (int64_t c = 0; c < numChunks; ++c) {
    vector::StoreOp::create(b, loc, splat(b, kNegInf), mBuf,
                            ValueRange{cIdx(b, c * w)});
    vector::StoreOp::create(b, loc, splat(b, 0.0f), lBuf,
                            ValueRange{cIdx(b, c * w)});
  }
  forRange(b, cIdx(b, 0), valueDim, cIdx(b, 1), [&](OpBuilder &nb, Value e) {
    for (int64_t c = 0; c < numChunks; ++c)
      vector::StoreOp::create(nb, loc, splat(nb, 0.0f), oT,
                              ValueRange{e, cIdx(nb, c * w)});
  });

  // A full tile of a head with several query tiles finds K and V in the
  // caches (the tile before it read them); a tile that reads them once
  // (decode) does too little per key to hide the memory latency, and the
  // value blocks read V by columns: it prefetches the next key tile.
  bool prefetch = opts.prefetch && (grouped || numChunks < opts.tileQ / w);
  Value tileK = cIdx(b, opts.tileK);
  forRange(b, kStart, kEnd, tileK, [&](OpBuilder &kb, Value k0) {
    Value tk = minI(kb, tileK, sub(kb, kEnd, k0));
    if (prefetch)
      prefetchKeyTile(kb, add(kb, k0, tileK));
    if (!runEndBuf) {
      buildKeyTile(kb, numChunks, k0, tk, /*uniform=*/false);
      return;
    }
    // The tile's diagonals r = i - j + shift run from rLow (last key,
    // first row) to rHigh (first key, last row).
    Value base = add(kb, sub(kb, qPos0, k0), diagShift);
    Value rLow = add(kb, sub(kb, base, tk), cIdx(kb, 1));
    Value rHigh = sub(kb, add(kb, base, tq), cIdx(kb, 1));
    Value runEnd = memref::LoadOp::create(kb, loc, runEndBuf, rLow);
    Value uniform = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::sge,
                                          runEnd, rHigh);
    auto ifOp = scf::IfOp::create(kb, loc, uniform, /*withElse=*/true);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    tileDiag = rLow;
    buildKeyTile(tb, numChunks, k0, tk, /*uniform=*/true);
    tileDiag = Value();
    OpBuilder eb = ifOp.getElseBodyBuilder();
    buildKeyTile(eb, numChunks, k0, tk, /*uniform=*/false);
  });

  // out[b, h, q0 + i, e] = Oᵀ[e, i] / l[i] (0 for rows that saw no key). In
  // W × W blocks: W vectors of Oᵀ scaled, one transpose in registers, a
  // write (masked past Dv) per row of the tile.
  auto memType = cast<MemRefType>(outBuf.getType());
  auto outVec = VectorType::get({w}, memType.getElementType());
  forRange(b, cIdx(b, 0), tq, cIdx(b, w), [&](OpBuilder &ib, Value i0) {
    Value inv =
        reciprocalOrZero(ib, vector::LoadOp::create(ib, loc, vecF32, lBuf, i0));
    forRange(
        ib, cIdx(ib, 0), valueDim, cIdx(ib, w), [&](OpBuilder &eb, Value e0) {
          SmallVector<Value> columns;
          for (int64_t m = 0; m < w; ++m) {
            Value o = vector::LoadOp::create(
                eb, loc, vecF32, oT, ValueRange{add(eb, e0, cIdx(eb, m)), i0});
            columns.push_back(arith::MulFOp::create(eb, loc, o, inv));
          }
          SmallVector<Value> blockRows =
              buildRegisterTranspose(eb, loc, columns);
          Value rest = sub(eb, valueDim, e0);
          // Each row's position is computed where it is stored (see
          // the packing of Qᵀ).
          for (int64_t r = 0; r < w; ++r) {
            Value i = add(eb, i0, cIdx(eb, r));
            Value inTile = arith::CmpIOp::create(
                eb, loc, arith::CmpIPredicate::slt, i, tq);
            auto ifOp = scf::IfOp::create(eb, loc, inTile);
            OpBuilder tb = ifOp.getThenBodyBuilder();
            Value head = hIdx, row = add(tb, q0, i);
            if (grouped)
              std::tie(head, row) = groupedRow(tb, i);
            storeLanes(tb, castFloat(tb, loc, blockRows[r], outVec), outBuf,
                       {bIdx, head, row, e0}, rest);
          }
        });
  });
}

void KernelBuilder::expandBuckets() {
  // The buckets left in score_mod (not Toeplitz: Swin's window2d) become
  // their index arithmetic, which the lanes evaluate as vector ops, and
  // whose row-only part (i / W, i mod W) LLVM hoists out of the key loop;
  // as one op they would be evaluated lane by lane, per key.
  if (op.getScoreMod().empty())
    return;
  SmallVector<BucketOp> buckets;
  op.getScoreMod().walk([&](BucketOp bucket) { buckets.push_back(bucket); });
  OpBuilder::InsertionGuard guard(rw);
  for (BucketOp bucket : buckets) {
    rw.setInsertionPoint(bucket);
    rw.replaceOp(bucket, bucket.getBucketing().buildBucket(rw, bucket.getLoc(),
                                                           bucket.getI(),
                                                           bucket.getJ()));
  }
}

void KernelBuilder::build() {
  rw.setInsertionPoint(op);

  // Toeplitz terms into padded diagonal tables: the lanes of a tile read up
  // to TQ entries past the last row.
  SmallVector<Value> diagonals, narrowed;
  hoistToeplitzTerms(rw, op, opts.tileQ, &diagonals, &narrowed,
                     /*shareBuckets=*/true);
  paddedTables.insert(diagonals.begin(), diagonals.end());
  for (Value table : diagonals)
    if (cast<RankedTensorType>(table.getType()).getElementType().isIndex())
      bucketDiagonals.insert(table);
  bucketDiagonals.insert(narrowed.begin(), narrowed.end());
  // Window terms into padded tables too (not diagonal: no uniform key
  // tiles).
  SmallVector<Value> windowTables;
  hoistWindowTerms(rw, op, opts.tileQ, &windowTables, /*shareBuckets=*/true);
  paddedTables.insert(windowTables.begin(), windowTables.end());
  rowsAligned = !op.getQOffset();
  expandBuckets();

  Value q = op.getQ(), k = op.getK(), v = op.getV();
  AttentionSizes dims = getAttentionSizes(rw, op);
  batch = dims.batch;
  heads = dims.heads;
  lq = dims.lq;
  headDim = dims.headDim;
  lk = dims.lk;
  kvHeads = dims.kvHeads;
  valueDim = dims.valueDim;
  group = dims.group;
  scale = dims.scale;
  // Read by scalar loads only (into the packed tiles and broadcasts).
  qBuf = bufferOf(q, /*anyOffset=*/true);
  kBuf = bufferOf(k, /*anyOffset=*/true);
  vBuf = bufferOf(v, /*anyOffset=*/true);
  if (Value bias = op.getBias())
    biasBuf = bufferOf(bias);
  if (Value lengths = op.getKeyLengths())
    lenBuf = bufferOf(lengths);

  // rel_values: with a Toeplitz bucketing, the table along the diagonal,
  // transposed (Dv × (Lq + Lk - 1 + TQ)), so that a key reads one contiguous
  // vector of rows per value row: relDiag[e, i' - key + shift].
  if (Value rel = op.getRelValues()) {
    auto bucketing = *op.getBucketing();
    if (bucketing.isToeplitz()) {
      relDiagBuf =
          bufferOf(buildToeplitzDiagonal(rw, op, rel, bucketing, opts.tileQ));
      relShift = buildDiagonalShift(rw, op);
    } else {
      relBuf = bufferOf(rel);
    }
  }

  // Buffers of the tensors score_mod reads, before the kernel.
  if (!op.getScoreMod().empty())
    for (Operation &inner : op.getScoreMod().front())
      for (Value v : inner.getOperands())
        if (isa<RankedTensorType>(v.getType()))
          bufferOf(v);

  findRowReads();
  buildBucketWindows();

  // Bucket tables that whole key tiles may read at one diagonal: the
  // index-valued diagonal tables of score_mod (the gather-trick buckets) and
  // the buckets of rel_values.
  if (!op.getScoreMod().empty()) {
    Block &block = op.getScoreMod().front();
    for (Operation &inner : block.without_terminator()) {
      auto extract = dyn_cast<tensor::ExtractOp>(inner);
      if (!extract || !bucketDiagonals.contains(extract.getTensor()) ||
          extract.getIndices().front() == block.getArgument(2))
        continue;
      uniformReads.push_back({extract.getResult(), extract.getTensor()});
      if (!llvm::is_contained(uniformTables, extract.getTensor()))
        uniformTables.push_back(extract.getTensor());
    }
  }
  if (relDiagBuf)
    uniformTables.push_back(
        buildBucketDiagonal(rw, op, *op.getBucketing(), opts.tileQ));
  if (!uniformTables.empty()) {
    diagShift = buildDiagonalShift(rw, op);
    buildUniformRuns();
    // What a uniform tile still evaluates per key: ops that read the score
    // or the key other than through the tile's bucket values.
    if (!op.getScoreMod().empty()) {
      Block &block = op.getScoreMod().front();
      DenseSet<Value> reads;
      for (auto [read, table] : uniformReads)
        reads.insert(read);
      for (Operation &inner : block.without_terminator()) {
        bool dependent = inner.getNumResults() == 0 || !isPure(&inner);
        if (!dependent && !reads.contains(inner.getResult(0)))
          dependent = llvm::any_of(inner.getOperands(), [&](Value v) {
            Operation *def = v.getDefiningOp();
            return v == block.getArgument(0) || v == block.getArgument(4) ||
                   (def && keyDependent.contains(def));
          });
        if (dependent)
          keyDependent.insert(&inner);
      }
    }
  }

  auto resultType = op.getResult().getType();
  auto outType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  outBuf = memref::AllocOp::create(rw, loc, outType, dims.resultDynamicSizes,
                                   rw.getI64IntegerAttr(64));

  kernelStarted = true;
  // Plain attention (no score terms) may pack the query heads of a kv head
  // into one tile when all their rows fit (decode); else one head per tile.
  Operation *kernel;
  bool groupable =
      op.getScoreMod().empty() && !biasBuf && !relDiagBuf && !relBuf;
  if (groupable) {
    // Lq > 0 too: the grouped rows divide by Lq (no query row: no tile).
    Value rows = mul(rw, lq, group);
    Value some = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ugt, lq,
                                       cIdx(rw, 0));
    auto fitsIn = [&](int64_t n) -> Value {
      Value fit = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::ule,
                                        rows, cIdx(rw, n));
      return arith::AndIOp::create(rw, loc, fit, some);
    };
    auto ifOp =
        scf::IfOp::create(rw, loc, fitsIn(opts.tileQ), /*withElseRegion=*/true);
    rw.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    // At most decodeRows rows: the decode kernel for the least power of two
    // of rows (or decodeRows) that holds them; else grouped tiles.
    SmallVector<int64_t> decodeSizes;
    for (int64_t n = 1; n < opts.decodeRows; n *= 2)
      decodeSizes.push_back(n);
    if (opts.decodeRows > 0)
      decodeSizes.push_back(opts.decodeRows);
    for (int64_t n : decodeSizes) {
      auto decode =
          scf::IfOp::create(rw, loc, fitsIn(n), /*withElseRegion=*/true);
      rw.setInsertionPoint(decode.thenBlock()->getTerminator());
      buildDecodeForall(n);
      rw.setInsertionPoint(decode.elseBlock()->getTerminator());
    }
    buildForall(true);
    rw.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    buildForall(false);
    kernel = ifOp;
  } else {
    kernel = buildForall(false);
  }

  rw.setInsertionPointAfter(kernel);
  Value result = bufferization::ToTensorOp::create(
      rw, loc, resultType, outBuf, /*restrict=*/true, /*writable=*/true);
  rw.replaceOp(op, result);

  // exp as a polynomial on vectors (the kernel's own exps only).
  RewritePatternSet patterns(rw.getContext());
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    return name == math::ExpOp::getOperationName();
  });
  SmallVector<Operation *> exps(expOps.begin(), expOps.end());
  (void)applyOpPatternsGreedily(exps, std::move(patterns));
  // Without FMA hardware, llvm.fma would be a library call per lane.
  if (!opts.useFMA) {
    SmallVector<math::FmaOp> fmas;
    kernel->walk([&](math::FmaOp f) { fmas.push_back(f); });
    splitFMAs(rw, fmas);
  }
  // The register blocks are unrolled here already: LLVM's runtime unrolling
  // of these loops would copy each body several times over (half of the
  // LLVM optimisation time of a module of attentions, a third more machine
  // code).
  if (!opts.llvmUnroll) {
    MLIRContext *ctx = rw.getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(
        ctx, /*disable=*/BoolAttr::get(ctx, true), IntegerAttr(), BoolAttr(),
        BoolAttr(), LLVM::LoopAnnotationAttr(), LLVM::LoopAnnotationAttr(),
        LLVM::LoopAnnotationAttr());
    auto annotation = LLVM::LoopAnnotationAttr::get(
        ctx, BoolAttr(), LLVM::LoopVectorizeAttr(), LLVM::LoopInterleaveAttr(),
        unroll, LLVM::LoopUnrollAndJamAttr(), LLVM::LoopLICMAttr(),
        LLVM::LoopDistributeAttr(), LLVM::LoopPipelineAttr(),
        LLVM::LoopPeeledAttr(), LLVM::LoopUnswitchAttr(), BoolAttr(),
        BoolAttr(), FusedLoc(), FusedLoc(), {});
    kernel->walk(
        [&](scf::ForOp loop) { loop->setAttr(kLoopAnnotation, annotation); });
  }
}

scf::ForallOp KernelBuilder::buildForall(bool groupedTiles) {
  int64_t w = opts.vectorWidth;
  int64_t maxChunks = opts.tileQ / w;
  grouped = groupedTiles;
  Value tileQ = cIdx(rw, opts.tileQ);
  Value numQTiles =
      grouped ? cIdx(rw, 1)
              : arith::CeilDivUIOp::create(rw, loc, lq, tileQ).getResult();
  scf::ForallOp forall =
      createForall({batch, grouped ? kvHeads : heads, numQTiles});
  SmallVector<Value> ivs = forall.getInductionVars();
  bIdx = ivs[0];
  hIdx = grouped ? Value() : ivs[1];
  Value t = ivs[2];
  if (reach && !grouped) {
    // Zig-zag order of the query tiles (0, n-1, 1, n-2, ...): a contiguous
    // share of the iterations has as many short (top) rows as long ones.
    Value half = arith::DivUIOp::create(rw, loc, t, cIdx(rw, 2));
    Value odd = arith::CmpIOp::create(
        rw, loc, arith::CmpIPredicate::ne,
        arith::RemUIOp::create(rw, loc, t, cIdx(rw, 2)), cIdx(rw, 0));
    Value mirrored = sub(rw, sub(rw, numQTiles, cIdx(rw, 1)), half);
    t = arith::SelectOp::create(rw, loc, odd, mirrored, half);
  }
  q0 = mul(rw, t, tileQ);
  tq = grouped ? mul(rw, lq, group) : minI(rw, tileQ, sub(rw, lq, q0));
  hkIdx = grouped ? ivs[1] : arith::DivUIOp::create(rw, loc, hIdx, group);
  qPos0 = buildQueryPosition(rw, loc, q0, op.getQOffset());
  // With grouped tiles every head's rows start at row 0: the last position
  // is that of row Lq - 1.
  Value rowsEnd = add(rw, qPos0, grouped ? lq : tq);
  Value zero = cIdx(rw, 0);
  kEnd = buildKeyEnd(rw, loc, lk, keyLength(rw),
                     buildAheadEnd(rw, loc, op, rowsEnd));
  // With a window, the keys before the first row's window are skipped too
  // (grouped tiles: row 0 of every head has the first position).
  kStart = window ? buildWindowStart(rw, loc, qPos0, *window) : zero;

  hoistTileInvariants(rw);

  // Scratch: Qᵀ (D × TQ), Oᵀ (Dv × TQ), Sᵀ (TK × TQ), m and l (TQ). Qᵀ and
  // Oᵀ have their rows rounded up to a multiple of W: they are filled and
  // read in W × W blocks.
  auto dyn2 = MemRefType::get({ShapedType::kDynamic, opts.tileQ}, f32);
  IntegerAttr align = rw.getI64IntegerAttr(64);
  Value wIdx = cIdx(rw, w);
  qT = memref::AllocaOp::create(
      rw, loc, dyn2, ValueRange{roundedUp(rw, headDim)}, ValueRange{}, align);
  oT = memref::AllocaOp::create(
      rw, loc, dyn2, ValueRange{roundedUp(rw, valueDim)}, ValueRange{}, align);
  sT = memref::AllocaOp::create(rw, loc,
                                MemRefType::get({opts.tileK, opts.tileQ}, f32),
                                ValueRange{}, ValueRange{}, align);
  for (RowRead &r : rowReads)
    r.scratch = memref::AllocaOp::create(
        rw, loc, MemRefType::get({opts.tileK, opts.tileQ}, f32), ValueRange{},
        ValueRange{}, align);
  auto vecBuf = MemRefType::get({opts.tileQ}, f32);
  mBuf = memref::AllocaOp::create(rw, loc, vecBuf, ValueRange{}, ValueRange{},
                                  align);
  lBuf = memref::AllocaOp::create(rw, loc, vecBuf, ValueRange{}, ValueRange{},
                                  align);

  // Qᵀ[d, i] = scale · q[b, h, q0 + i, d]; rows past the tile are zero. In
  // W × W blocks: W row reads along d (masked past D), one transpose in
  // registers, W stores (element-wise, LLVM made scatters of it).
  Value scaleVec = bcast(rw, scale);
  Value zeroVec = splat(rw, 0.0f);
  forRange(rw, zero, tileQ, wIdx, [&](OpBuilder &ib, Value i0) {
    forRange(
        ib, cIdx(ib, 0), headDim, cIdx(ib, w), [&](OpBuilder &db, Value d0) {
          // Each row's position is recomputed per d block: hoisted,
          // the W rows' (head, row) pairs stay live across the loop and
          // spill (decode at Lq = 16, D = 128: 1.05-1.07x the time).
          Value rest = sub(db, headDim, d0);
          SmallVector<Value> blockRows;
          for (int64_t l = 0; l < w; ++l) {
            Value i = add(db, i0, cIdx(db, l));
            Value inTile = arith::CmpIOp::create(
                db, loc, arith::CmpIPredicate::slt, i, tq);
            Value head = hIdx, row;
            if (grouped)
              std::tie(head, row) =
                  groupedRow(db, minI(db, i, sub(db, tq, cIdx(db, 1))));
            else
              row = minI(db, add(db, q0, i), sub(db, lq, cIdx(db, 1)));
            Value x = loadLanes(db, qBuf, {bIdx, head, row, d0}, rest);
            x = arith::MulFOp::create(db, loc, castFloat(db, loc, x, vecF32),
                                      scaleVec);
            blockRows.push_back(
                arith::SelectOp::create(db, loc, inTile, x, zeroVec));
          }
          SmallVector<Value> columns =
              buildRegisterTranspose(db, loc, blockRows);
          for (int64_t m = 0; m < w; ++m)
            vector::StoreOp::create(db, loc, columns[m], qT,
                                    ValueRange{add(db, d0, cIdx(db, m)), i0});
        });
  });

  // One specialisation per number of row vectors the tile needs, so that a
  // short tile (decode, the last rows) computes no padding vectors.
  Value chunks = arith::CeilDivUIOp::create(rw, loc, tq, cIdx(rw, w));
  Value which = sub(rw, chunks, cIdx(rw, 1));
  SmallVector<int64_t> cases;
  // Case c: c + 1 vectors; the default: all of them.
  for (int64_t c = 0; c + 1 < maxChunks; ++c)
    cases.push_back(c);
  auto sw = scf::IndexSwitchOp::create(rw, loc, TypeRange{}, which, cases,
                                       cases.size());
  for (int64_t c = 0; c < maxChunks; ++c) {
    Region &region =
        c + 1 < maxChunks ? sw.getCaseRegions()[c] : sw.getDefaultRegion();
    Block *block = rw.createBlock(&region);
    rw.setInsertionPointToStart(block);
    buildTile(rw, c + 1);
    scf::YieldOp::create(rw, loc);
  }
  rw.setInsertionPointAfter(forall);
  return forall;
}

scf::ForallOp KernelBuilder::createForall(ArrayRef<OpFoldResult> sizes) {
  auto forall =
      scf::ForallOp::create(rw, loc, sizes, ValueRange{}, std::nullopt);
  rw.setInsertionPointToStart(forall.getBody());
  auto scope = memref::AllocaScopeOp::create(rw, loc, TypeRange{});
  Block *scopeBody = rw.createBlock(&scope.getBodyRegion());
  rw.setInsertionPointToStart(scopeBody);
  memref::AllocaScopeReturnOp::create(rw, loc);
  rw.setInsertionPointToStart(scopeBody);
  return forall;
}

/// max-stack-kib in bytes, saturating (2^54 KiB and more wrapped to a tiny
/// limit).
static uint64_t stackLimitBytes(const VectorizeAttentionOptions &options) {
  return llvm::SaturatingMultiply<uint64_t>(options.maxStackKiB, 1024);
}

namespace {

struct VectorizeAttention : OpRewritePattern<AttentionOp> {
  VectorizeAttention(MLIRContext *ctx, const VectorizeAttentionOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!isVectorizableScoreMod(op.getScoreMod()))
      return rewriter.notifyMatchFailure(
          op, "score_mod has ops with regions or non-scalar results");
    if (kernelStackBytes(op, options) > stackLimitBytes(options))
      return rewriter.notifyMatchFailure(
          op, "the kernel's stack scratch exceeds max-stack-kib");
    KernelBuilder(rewriter, op, options).build();
    return success();
  }

  VectorizeAttentionOptions options;
};

} // namespace

uint64_t mlir::rpe::kernelStackBytes(AttentionOp op,
                                     const VectorizeAttentionOptions &options) {
  // Saturating: tile sizes come from the user.
  auto mul = [](uint64_t a, uint64_t b) {
    return llvm::SaturatingMultiply(a, b);
  };
  auto add = [](uint64_t a, uint64_t b) { return llvm::SaturatingAdd(a, b); };
  uint64_t w = options.vectorWidth, tq = options.tileQ, tk = options.tileK;
  auto paddedDim = [&](Value tensor) -> uint64_t {
    int64_t d = cast<RankedTensorType>(tensor.getType()).getShape().back();
    return ShapedType::isDynamic(d) ? 0 : llvm::alignTo(d, w);
  };
  uint64_t dims = paddedDim(op.getQ()) + paddedDim(op.getV());
  // Row reads (KernelBuilder::findRowReads) are among the score_mod's
  // reads of tables of rank 2 or more at row i or i - x.
  uint64_t rowReads = 0;
  if (options.permuteReads && !op.getScoreMod().empty()) {
    Value i = op.getScoreMod().front().getArgument(3);
    op.getScoreMod().walk([&](tensor::ExtractOp read) {
      int64_t rank = read.getTensor().getType().getRank();
      if (rank < 2)
        return;
      Value row = read.getIndices()[rank - 2];
      auto sub = row.getDefiningOp<arith::SubIOp>();
      rowReads += row == i || (sub && sub.getLhs() == i);
    });
  }
  // Main kernel: Qᵀ, Oᵀ (dims × tile-q), Sᵀ and one tile-k × tile-q
  // scratch per row read, m and l. Plain attention has two (one head per
  // tile, and the query heads of a kv head packed into a tile).
  bool groupable =
      op.getScoreMod().empty() && !op.getBias() && !op.getRelValues();
  uint64_t floats =
      add(mul(tq, dims), add(mul(mul(tk, tq), 1 + rowReads), 2 * tq));
  uint64_t bytes = mul(mul(floats, 4), groupable ? 2 : 1);
  // Decode kernels (plain attention): rows of 1, 2, 4, ... decode-rows;
  // per row its q and o rows, tile-k × w partial dot products, tile-k
  // probabilities, m, l, alpha and the key end and window start (8 bytes
  // each).
  if (groupable && options.decodeRows > 0) {
    uint64_t rows = 0;
    for (int64_t n = 1; n < options.decodeRows; n *= 2)
      rows += n;
    rows += options.decodeRows;
    uint64_t keys = llvm::alignTo(tk, w);
    uint64_t perRow = add(add(dims, mul(keys, w + 1)), 3);
    bytes = add(bytes, mul(rows, add(mul(perRow, 4), 16)));
  }
  return bytes;
}

LogicalResult mlir::rpe::checkVectorizeAttentionOptions(
    const VectorizeAttentionOptions &o,
    function_ref<LogicalResult(const Twine &)> error) {
  if (o.vectorWidth < 1 || o.vectorWidth > 64 ||
      !llvm::isPowerOf2_64(o.vectorWidth))
    return error("vector-width must be a power of two in [1, 64], got " +
                 Twine(o.vectorWidth));
  if (o.tileQ <= 0 || o.tileQ % o.vectorWidth != 0 ||
      o.tileQ / o.vectorWidth > 16)
    return error("tile-q must be a positive multiple of vector-width (" +
                 Twine(o.vectorWidth) + ") and at most 16 vectors, got " +
                 Twine(o.tileQ));
  if (o.tileK <= 0 || o.keyBlock <= 0 || o.valueBlock <= 0 || o.keyBlock > 16 ||
      o.valueBlock > 16)
    return error("tile-k must be positive and key-block, value-block in "
                 "[1, 16], got " +
                 Twine(o.tileK) + ", " + Twine(o.keyBlock) + ", " +
                 Twine(o.valueBlock));
  if (o.decodeRows < 0 || o.decodeRows > 16)
    return error("decode-rows must be in [0, 16], got " + Twine(o.decodeRows));
  if (o.rowReadPrefetch < 0 || o.windowReadPrefetch < 0)
    return error("row-read-prefetch and window-read-prefetch must not be "
                 "negative, got " +
                 Twine(o.rowReadPrefetch) + ", " + Twine(o.windowReadPrefetch));
  if (o.maxStackKiB <= 0)
    return error("max-stack-kib must be positive, got " + Twine(o.maxStackKiB));
  // The scores of a tile alone (tile-k × tile-q f32) must fit; the op's
  // other scratch is checked where the op is known.
  // In 128 bits: both sizes are below 2^63, and a saturated product would
  // print a wrong size.
  llvm::APInt bytes = llvm::APInt(128, o.tileK) * llvm::APInt(128, o.tileQ) * 4;
  if (bytes.ugt(llvm::APInt(128, o.maxStackKiB) * 1024))
    return error("tile-k x tile-q (" + Twine(o.tileK) + " x " + Twine(o.tileQ) +
                 ") scores take " +
                 llvm::toString((bytes + 1023).udiv(1024), 10,
                                /*Signed=*/false) +
                 " KiB of stack per thread, more than max-stack-kib = " +
                 Twine(o.maxStackKiB));
  return success();
}

void mlir::rpe::populateRPEVectorizeAttentionPatterns(
    RewritePatternSet &patterns, const VectorizeAttentionOptions &options) {
  patterns.add<VectorizeAttention>(patterns.getContext(), options);
}

namespace {
struct RPEVectorizeAttentionPass
    : rpe::CheckedOptionsPass<
          rpe::impl::RPEVectorizeAttentionPassBase<RPEVectorizeAttentionPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  VectorizeAttentionOptions getOptions() const {
    VectorizeAttentionOptions o;
    o.vectorWidth = vectorWidth;
    o.tileQ =
        tileQ ? static_cast<int64_t>(tileQ) : defaultVectorTileQ(vectorWidth);
    o.tileK = tileK;
    o.keyBlock = keyBlock;
    o.valueBlock = valueBlock;
    o.useFMA = fma;
    o.prefetch = prefetch;
    o.decodeRows = decodeRows;
    o.permuteReads = permuteReads;
    o.rowReadPrefetch = rowReadPrefetch;
    o.windowReadPrefetch = windowReadPrefetch;
    o.llvmUnroll = llvmUnroll;
    o.upstreamExp = upstreamExp;
    o.maxStackKiB = maxStackKiB;
    return o;
  }

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    return checkVectorizeAttentionOptions(getOptions(), [&](const Twine &msg) {
      return error("rpe-vectorize-attention: " + msg);
    });
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    VectorizeAttentionOptions options = getOptions();
    // A kernel whose scratch would not fit the stack is an error here (the
    // pattern leaves such an op to rpe-tile-attention).
    uint64_t limit = stackLimitBytes(options);
    WalkResult tooLarge = getOperation()->walk([&](AttentionOp op) {
      if (!isVectorizableScoreMod(op.getScoreMod()))
        return WalkResult::advance();
      uint64_t bytes = kernelStackBytes(op, options);
      if (bytes <= limit)
        return WalkResult::advance();
      op.emitOpError() << "the vector kernel needs up to "
                       << llvm::divideCeil(bytes, 1024)
                       << " KiB of stack per thread with tile-k = "
                       << options.tileK << ", tile-q = " << options.tileQ
                       << ", more than max-stack-kib = " << options.maxStackKiB
                       << ": use a smaller tile-k";
      return WalkResult::interrupt();
    });
    if (tooLarge.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateRPEVectorizeAttentionPatterns(patterns, options);
    FailureOr<int64_t> rewritten =
        rewriteAttentionOps(getOperation(), std::move(patterns));
    if (failed(rewritten))
      return signalPassFailure();
    numVectorized += *rewritten;
  }
};
} // namespace
