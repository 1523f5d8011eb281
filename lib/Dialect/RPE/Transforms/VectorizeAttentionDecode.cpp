//===- VectorizeAttentionDecode.cpp - the decode kernel -------------------===//
//
// rpe-vectorize-attention's kernel for a few query rows per kv head
// (decode): vectors along keys, the query heads of a kv head packed, the
// partial dot products summed across lanes.
//
//===----------------------------------------------------------------------===//

#include "VectorizeAttentionKernel.h"

#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"

using namespace mlir;
using namespace mlir::rpe;
using namespace mlir::rpe::detail;

Value KernelBuilder::sumAcross(OpBuilder &b, ArrayRef<Value> vectors) {
  int64_t w = opts.vectorWidth;
  SmallVector<Value> v(vectors);
  // Round with half-width h pairs x = v[k] and y = v[k + n/2]: in every
  // block of 2h lanes, the lower h take x's two halves of the block summed,
  // the upper h y's. After the last round lane x holds all of vectors[x].
  for (int64_t h = w / 2; h >= 1; h /= 2) {
    SmallVector<int64_t> lo(w), hi(w);
    for (int64_t lane = 0; lane < w; ++lane) {
      int64_t block = lane / (2 * h) * (2 * h), off = lane % (2 * h);
      bool fromY = off >= h;
      int64_t at = block + (fromY ? off - h : off) + (fromY ? w : 0);
      lo[lane] = at;
      hi[lane] = at + h;
    }
    int64_t n = v.size() / 2;
    SmallVector<Value> next;
    for (int64_t k = 0; k < n; ++k) {
      Value a = vector::ShuffleOp::create(b, loc, v[k], v[k + n], lo);
      Value c = vector::ShuffleOp::create(b, loc, v[k], v[k + n], hi);
      next.push_back(arith::AddFOp::create(b, loc, a, c));
    }
    v = std::move(next);
  }
  return v.front();
}

scf::ForallOp KernelBuilder::buildDecodeForall(int64_t numRows) {
  int64_t w = opts.vectorWidth;
  // Keys per tile: whole vectors of keys.
  int64_t tileK = llvm::alignTo(opts.tileK, w);
  grouped = true;
  scf::ForallOp forall = createForall({batch, kvHeads});
  bIdx = forall.getInductionVars()[0];
  hkIdx = forall.getInductionVars()[1];
  hIdx = Value();

  // Scratch: the scaled query rows and the output rows (rounded up to W),
  // the per-key partial dot products, the scores / probabilities, and per
  // row its key end, running max, sum and rescale factor. Only the register
  // blocks (the dot products, Σ p·v) unroll the rows; the rest loops over
  // them.
  Value zero = cIdx(rw, 0), one = cIdx(rw, 1);
  Value numRowsIdx = cIdx(rw, numRows);
  Value dPad = roundedUp(rw, headDim), dvPad = roundedUp(rw, valueDim);
  IntegerAttr align = rw.getI64IntegerAttr(64);
  auto scratch = [&](ArrayRef<int64_t> shape, Type elem, ValueRange sizes) {
    return memref::AllocaOp::create(rw, loc, MemRefType::get(shape, elem),
                                    sizes, ValueRange{}, align)
        .getResult();
  };
  int64_t dyn = ShapedType::kDynamic;
  Value qS = scratch({numRows, dyn}, f32, dPad);
  Value oS = scratch({numRows, dyn}, f32, dvPad);
  Value partial = scratch({numRows, tileK, w}, f32, {});
  Value pS = scratch({numRows, tileK}, f32, {});
  Value endS = scratch({numRows}, rw.getIndexType(), {});
  // With a window, each row's first key too.
  Value startS = window ? scratch({numRows}, rw.getIndexType(), {}) : Value();
  Value mS = scratch({numRows}, f32, {}), lS = scratch({numRows}, f32, {});
  Value alphaS = scratch({numRows}, f32, {});
  auto f32Const = [&](OpBuilder &b, float v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };

  // Row r of the kv head: packed row min(r, Lq·group - 1) (the rows past the
  // last repeat it and are not written).
  Value rows = mul(rw, lq, group);
  auto rowOf = [&](OpBuilder &b, Value r) {
    return groupedRow(b, minI(b, r, sub(b, rows, cIdx(b, 1))));
  };
  Value length = keyLength(rw);
  Value scaleVec = bcast(rw, scale);
  auto setup = scf::ForOp::create(
      rw, loc, zero, numRowsIdx, one, ValueRange{zero, lk},
      [&](OpBuilder &b, Location, Value r, ValueRange range) {
        // (Plain variables: lambdas may not capture structured bindings
        // before C++20.)
        Value head, row;
        std::tie(head, row) = rowOf(b, r);
        Value qPos = buildQueryPosition(b, loc, row, op.getQOffset());
        Value rowEnd =
            buildKeyEnd(b, loc, lk, length,
                        buildAheadEnd(b, loc, op, add(b, qPos, cIdx(b, 1))));
        memref::StoreOp::create(b, loc, rowEnd, endS, r);
        Value start = range[1];
        if (window) {
          Value rowStart = buildWindowStart(b, loc, qPos, *window);
          memref::StoreOp::create(b, loc, rowStart, startS, r);
          start = minI(b, start, rowStart);
        }
        memref::StoreOp::create(b, loc, f32Const(b, kNegInf), mS, r);
        memref::StoreOp::create(b, loc, f32Const(b, 0.0f), lS, r);
        forRange(b, cIdx(b, 0), dPad, cIdx(b, w), [&](OpBuilder &db, Value d0) {
          Value x =
              loadLanes(db, qBuf, {bIdx, head, row, d0}, sub(db, headDim, d0));
          x = arith::MulFOp::create(db, loc, castFloat(db, loc, x, vecF32),
                                    scaleVec);
          vector::StoreOp::create(db, loc, x, qS, ValueRange{r, d0});
        });
        forRange(b, cIdx(b, 0), dvPad, cIdx(b, w),
                 [&](OpBuilder &eb, Value e0) {
                   vector::StoreOp::create(eb, loc, splat(eb, 0.0f), oS,
                                           ValueRange{r, e0});
                 });
        // The scores read W keys' partial sums at a time, past the tile's
        // last key too (those lanes are masked): never uninitialised memory.
        forRange(b, cIdx(b, 0), cIdx(b, tileK), cIdx(b, 1),
                 [&](OpBuilder &jb, Value j) {
                   vector::StoreOp::create(jb, loc, splat(jb, 0.0f), partial,
                                           ValueRange{r, j, cIdx(jb, 0)});
                 });
        scf::YieldOp::create(b, loc,
                             ValueRange{maxI(b, range[0], rowEnd), start});
      });
  kEnd = setup.getResult(0);
  // The keys before every row's window are skipped.
  kStart = window ? setup.getResult(1) : zero;

  Value tileKIdx = cIdx(rw, tileK);
  forRange(rw, kStart, kEnd, tileKIdx, [&](OpBuilder &kb, Value k0) {
    Value tk = minI(kb, tileKIdx, sub(kb, kEnd, k0));
    if (opts.prefetch)
      prefetchKeyTile(kb, add(kb, k0, tileKIdx));
    // partial[r, j] = Σ_d-vectors q[r, d] · k[k0 + j, d] (lane-wise).
    forRange(kb, cIdx(kb, 0), tk, cIdx(kb, 1), [&](OpBuilder &jb, Value j) {
      Value key = add(jb, k0, j);
      SmallVector<Value> acc(numRows, splat(jb, 0.0f));
      auto dLoop = scf::ForOp::create(
          jb, loc, cIdx(jb, 0), dPad, cIdx(jb, w), acc,
          [&](OpBuilder &db, Location, Value d0, ValueRange a) {
            Value kv = castFloat(db, loc,
                                 loadLanes(db, kBuf, {bIdx, hkIdx, key, d0},
                                           sub(db, headDim, d0)),
                                 vecF32);
            SmallVector<Value> next;
            for (int64_t r = 0; r < numRows; ++r) {
              Value q = vector::LoadOp::create(db, loc, vecF32, qS,
                                               ValueRange{cIdx(db, r), d0});
              next.push_back(fma(db, kv, q, a[r]));
            }
            scf::YieldOp::create(db, loc, next);
          });
      for (int64_t r = 0; r < numRows; ++r)
        vector::StoreOp::create(jb, loc, dLoop.getResult(r), partial,
                                ValueRange{cIdx(jb, r), j, cIdx(jb, 0)});
    });
    // Per row: scores W keys at a time (keys past the row's end: -inf),
    // the online softmax's max, rescale factor, probabilities and sum.
    forRange(
        kb, cIdx(kb, 0), numRowsIdx, cIdx(kb, 1), [&](OpBuilder &b, Value r) {
          Value rowEnd = memref::LoadOp::create(b, loc, endS, r);
          Value rowStart =
              window ? memref::LoadOp::create(b, loc, startS, r).getResult()
                     : Value();
          auto scores = scf::ForOp::create(
              b, loc, cIdx(b, 0), tk, cIdx(b, w), ValueRange{splat(b, kNegInf)},
              [&](OpBuilder &sb, Location, Value j0, ValueRange mx) {
                SmallVector<Value> parts;
                for (int64_t x = 0; x < w; ++x)
                  parts.push_back(vector::LoadOp::create(
                      sb, loc, vecF32, partial,
                      ValueRange{r, add(sb, j0, cIdx(sb, x)), cIdx(sb, 0)}));
                Value first = add(sb, k0, j0);
                Value visible = lanesBelow(sb, sub(sb, rowEnd, first));
                if (rowStart) {
                  // Lanes at or past the row's window start.
                  Value before = lanesBelow(sb, sub(sb, rowStart, first));
                  Value ones = arith::ConstantOp::create(
                      sb, loc,
                      DenseElementsAttr::get(cast<VectorType>(before.getType()),
                                             true));
                  visible = arith::AndIOp::create(
                      sb, loc, visible,
                      arith::XOrIOp::create(sb, loc, before, ones));
                }
                Value s = arith::SelectOp::create(
                    sb, loc, visible, sumAcross(sb, parts), splat(sb, kNegInf));
                vector::StoreOp::create(sb, loc, s, pS, ValueRange{r, j0});
                scf::YieldOp::create(
                    sb, loc,
                    ValueRange{arith::MaximumFOp::create(sb, loc, mx[0], s)});
              });
          Value tileMax = vector::ReductionOp::create(
              b, loc, vector::CombiningKind::MAXIMUMF, scores.getResult(0));
          Value mOld = memref::LoadOp::create(b, loc, mS, r);
          Value mNew = arith::MaximumFOp::create(b, loc, mOld, tileMax);
          // The row's max on all lanes (alpha: lane 0 of the vector).
          Value alphaVec, mSafe;
          std::tie(alphaVec, mSafe) =
              rescale(b, bcast(b, mOld), bcast(b, mNew));
          Value alpha = vector::ExtractOp::create(b, loc, alphaVec, 0);
          auto probs = scf::ForOp::create(
              b, loc, cIdx(b, 0), tk, cIdx(b, w), ValueRange{splat(b, 0.0f)},
              [&](OpBuilder &pb, Location, Value j0, ValueRange sum) {
                SmallVector<Value, 2> at = {r, j0};
                Value s = vector::LoadOp::create(pb, loc, vecF32, pS, at);
                Value p = exp(pb, arith::SubFOp::create(pb, loc, s, mSafe));
                vector::StoreOp::create(pb, loc, p, pS, at);
                scf::YieldOp::create(
                    pb, loc,
                    ValueRange{arith::AddFOp::create(pb, loc, sum[0], p)});
              });
          Value sum = vector::ReductionOp::create(
              b, loc, vector::CombiningKind::ADD, probs.getResult(0));
          Value l = memref::LoadOp::create(b, loc, lS, r);
          l = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, l, alpha), sum);
          memref::StoreOp::create(b, loc, mNew, mS, r);
          memref::StoreOp::create(b, loc, l, lS, r);
          memref::StoreOp::create(b, loc, alpha, alphaS, r);
        });
    // o[r, e] = alpha[r] · o[r, e] + Σ_j p[r, j] · v[k0 + j, e], in blocks
    // of `cols` vectors of e: numRows × cols accumulators, 16 of the 32
    // registers with AVX-512, 8 of 16 below.
    int64_t accumulators = w >= 16 ? 16 : 8;
    int64_t cols = std::max<int64_t>(1, accumulators / numRows);
    auto valueBlocks = [&](Value from, Value to, int64_t n) {
      forRange(kb, from, to, cIdx(kb, n * w), [&](OpBuilder &eb, Value e0) {
        SmallVector<Value> acc, at;
        for (int64_t c = 0; c < n; ++c)
          at.push_back(add(eb, e0, cIdx(eb, c * w)));
        for (int64_t r = 0; r < numRows; ++r) {
          Value alpha =
              bcast(eb, memref::LoadOp::create(eb, loc, alphaS, cIdx(eb, r)));
          for (int64_t c = 0; c < n; ++c)
            acc.push_back(arith::MulFOp::create(
                eb, loc,
                vector::LoadOp::create(eb, loc, vecF32, oS,
                                       ValueRange{cIdx(eb, r), at[c]}),
                alpha));
        }
        auto jLoop = scf::ForOp::create(
            eb, loc, cIdx(eb, 0), tk, cIdx(eb, 1), acc,
            [&](OpBuilder &jb, Location, Value j, ValueRange a) {
              Value key = add(jb, k0, j);
              SmallVector<Value> v;
              for (int64_t c = 0; c < n; ++c)
                v.push_back(
                    castFloat(jb, loc,
                              loadLanes(jb, vBuf, {bIdx, hkIdx, key, at[c]},
                                        sub(jb, valueDim, at[c])),
                              vecF32));
              SmallVector<Value> out;
              for (int64_t r = 0; r < numRows; ++r) {
                Value p =
                    bcast(jb, memref::LoadOp::create(
                                  jb, loc, pS, ValueRange{cIdx(jb, r), j}));
                for (int64_t c = 0; c < n; ++c)
                  out.push_back(fma(jb, p, v[c], a[r * n + c]));
              }
              scf::YieldOp::create(jb, loc, out);
            });
        for (int64_t r = 0; r < numRows; ++r)
          for (int64_t c = 0; c < n; ++c)
            vector::StoreOp::create(eb, loc, jLoop.getResult(r * n + c), oS,
                                    ValueRange{cIdx(eb, r), at[c]});
      });
    };
    Value block = cIdx(kb, cols * w);
    Value dvMain =
        mul(kb, arith::DivUIOp::create(kb, loc, dvPad, block), block);
    valueBlocks(cIdx(kb, 0), dvMain, cols);
    valueBlocks(dvMain, dvPad, 1);
  });

  // out[b, head, row, e] = o[r, e] / l[r] (0 for rows that saw no key), for
  // the real rows of the kv head.
  auto outVec =
      VectorType::get({w}, cast<MemRefType>(outBuf.getType()).getElementType());
  forRange(
      rw, zero, minI(rw, rows, numRowsIdx), one, [&](OpBuilder &b, Value r) {
        // (Plain variables: lambdas may not capture structured bindings
        // before C++20.)
        Value head, row;
        std::tie(head, row) = rowOf(b, r);
        Value invVec = reciprocalOrZero(
            b, bcast(b, memref::LoadOp::create(b, loc, lS, r)));
        forRange(b, cIdx(b, 0), valueDim, cIdx(b, w),
                 [&](OpBuilder &eb, Value e0) {
                   Value o = vector::LoadOp::create(eb, loc, vecF32, oS,
                                                    ValueRange{r, e0});
                   o = arith::MulFOp::create(eb, loc, o, invVec);
                   storeLanes(eb, castFloat(eb, loc, o, outVec), outBuf,
                              {bIdx, head, row, e0}, sub(eb, valueDim, e0));
                 });
      });
  rw.setInsertionPointAfter(forall);
  return forall;
}
