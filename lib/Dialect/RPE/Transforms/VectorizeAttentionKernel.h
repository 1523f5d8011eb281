//===- VectorizeAttentionKernel.h - the vector attention kernel -*- C++ -*-===//
//
// The builder of rpe-vectorize-attention's kernel, shared by the files that
// implement it: VectorizeAttention.cpp (the tiles, the online softmax, the
// parallel loop and the pass), VectorizeAttentionScores.cpp (score_mod lane
// by lane, table reads through row windows) and VectorizeAttentionDecode.cpp
// (the decode kernel). Private to RPETransforms.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_LIB_DIALECT_RPE_TRANSFORMS_VECTORIZEATTENTIONKERNEL_H
#define RPE_LIB_DIALECT_RPE_TRANSFORMS_VECTORIZEATTENTIONKERNEL_H

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"
#include "rpe/Dialect/RPE/Utils/VectorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace mlir {
namespace rpe {
namespace detail {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
/// exp(-64) = 1.6e-28.
constexpr float kExpFlush = -64.0f;
/// The discardable attribute of a scf.for that rpe-apply-loop-annotations
/// carries into LLVM IR.
constexpr llvm::StringLiteral kLoopAnnotation = "llvm.loop_annotation";

/// Builds the kernel for one rpe.attention.
class KernelBuilder {
public:
  KernelBuilder(RewriterBase &rewriter, AttentionOp op,
                const VectorizeAttentionOptions &options)
      : rw(rewriter), op(op), opts(options), loc(op.getLoc()),
        f32(rewriter.getF32Type()),
        vecF32(VectorType::get({options.vectorWidth}, f32)) {
    if (std::optional<uint64_t> w = op.getWindow())
      window = static_cast<int64_t>(*w);
    reach = op.getKeyReach();
  }

  void build();

private:
  /// The cache line the prefetches and per-key row reads reckon with.
  static constexpr int64_t kCacheLineBytes = 64;
  // ---- small builders (at the insertion point of `b`) ----------------------
  Value cIdx(OpBuilder &b, int64_t v) { return indexConst(b, loc, v); }
  Value splat(OpBuilder &b, float v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vecF32, b.getF32FloatAttr(v)));
  }
  Value bcast(OpBuilder &b, Value scalar) {
    auto type = VectorType::get({opts.vectorWidth}, scalar.getType());
    return vector::BroadcastOp::create(b, loc, type, scalar);
  }
  Value fma(OpBuilder &b, Value x, Value y, Value acc) {
    if (opts.useFMA)
      return vector::FMAOp::create(b, loc, x, y, acc);
    return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, x, y),
                                 acc);
  }
  Value add(OpBuilder &b, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(OpBuilder &b, Value x, Value y) {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value mul(OpBuilder &b, Value x, Value y) {
    return arith::MulIOp::create(b, loc, x, y);
  }
  /// An scf.for from `from` to `to` by `step` without loop-carried values:
  /// `body` builds the body from the induction variable (the yield is added).
  void forRange(OpBuilder &b, Value from, Value to, Value step,
                function_ref<void(OpBuilder &, Value)> body) {
    scf::ForOp::create(b, loc, from, to, step, ValueRange{},
                       [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                         body(nb, iv);
                         scf::YieldOp::create(nb, loc);
                       });
  }
  Value minI(OpBuilder &b, Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y);
  }
  Value maxI(OpBuilder &b, Value x, Value y) {
    return arith::MaxSIOp::create(b, loc, x, y);
  }
  /// A scalar element of `buffer` converted to f32.
  Value loadF32(OpBuilder &b, Value buffer, ValueRange indices) {
    Value v = memref::LoadOp::create(b, loc, buffer, indices);
    return castFloat(b, loc, v, f32);
  }
  /// exp(x) for x <= 0 (a probability or a rescale factor), 0 below
  /// kExpFlush: such terms are below 2^-24 of the row sum (>= 1) even over
  /// 2^31 keys, and keeping them would send the P·V FMAs through denormal
  /// arithmetic (microcode assists: ALiBi at L = 2048 ran 1.5× slower).
  Value exp(OpBuilder &b, Value x) {
    Value e;
    if (opts.upstreamExp) {
      auto op = math::ExpOp::create(b, loc, x);
      expOps.push_back(op);
      e = op;
    } else {
      e = expOfFlushRange(b, x);
    }
    Value tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                       splat(b, kExpFlush));
    return arith::SelectOp::create(b, loc, tiny, splat(b, 0.0f), e);
  }
  /// The online softmax's step from running max mOld to mNew (vectors):
  /// {alpha = exp(mOld - mNew), 0 while mOld is -inf (no key seen yet);
  /// the max to subtract from scores, 0 while mNew is -inf}.
  std::pair<Value, Value> rescale(OpBuilder &b, Value mOld, Value mNew) {
    Value negInf = splat(b, kNegInf), zero = splat(b, 0.0f);
    Value oldEmpty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mOld, negInf);
    Value a = exp(b, arith::SubFOp::create(b, loc, mOld, mNew));
    Value newEmpty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf);
    return {arith::SelectOp::create(b, loc, oldEmpty, zero, a),
            arith::SelectOp::create(b, loc, newEmpty, zero, mNew)};
  }
  /// 1 / l per lane, 0 where l = 0 (a row that saw no key).
  Value reciprocalOrZero(OpBuilder &b, Value l) {
    Value zero = splat(b, 0.0f);
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value inv = arith::DivFOp::create(b, loc, splat(b, 1.0f), l);
    return arith::SelectOp::create(b, loc, empty, zero, inv);
  }
  /// exp(x) for kExpFlush <= x <= 0 (NaN for NaN): x = n ln2 + f with
  /// n = round(x / ln2) (an FMA adding 1.5·2^23: the sum's low mantissa
  /// bits hold n), f by Cody-Waite in two FMAs (ln2Hi has 9 significant bits: n
  /// · ln2Hi is exact for |n| < 2^15), e^f by a degree-6 polynomial on
  /// [-ln2/2, ln2/2], times 2^n built from n's bits. Within 1.05 ulp of exp
  /// on [kExpFlush, 0]; 13 vector ops where upstream's math.exp polynomial
  /// (made for the whole f32 range: clamps, rounding) takes 21.
  Value expOfFlushRange(OpBuilder &b, Value x) {
    // A minimax fit of e^f relative error on [-ln2/2, ln2/2], c0 = c1 = 1.
    static constexpr float kCoefficients[] = {
        1.0f,         1.0f,          0.49999991f,  0.16666420f,
        0.041668225f, 0.0083748158f, 0.0013836846f};
    constexpr float kShift = 12582912.0f; // 1.5 · 2^23
    constexpr float kLn2Hi = 0.693359375f;
    constexpr float kLn2Lo = -2.12194440e-4f;
    // One rounding: r = 1.5 · 2^23 + round(x · log2 e) (ulp(r) = 1).
    Value r = fma(b, x, splat(b, 1.44269504088896341f), splat(b, kShift));
    Value n = arith::SubFOp::create(b, loc, r, splat(b, kShift));
    Value f = fma(b, n, splat(b, -kLn2Hi), x);
    f = fma(b, n, splat(b, -kLn2Lo), f);
    Value p = splat(b, kCoefficients[6]);
    for (int k = 5; k >= 0; --k)
      p = fma(b, p, f, splat(b, kCoefficients[k]));
    // 2^n: r's bits are those of 1.5 · 2^23 + n, whose low 9 bits shifted
    // into the exponent field are n (mod 2^9), plus the bias.
    auto vecI32 = VectorType::get({opts.vectorWidth}, b.getI32Type());
    Value bits = arith::BitcastOp::create(b, loc, vecI32, r);
    bits = arith::ShLIOp::create(b, loc, bits, splatI32(b, 23));
    bits = arith::AddIOp::create(b, loc, bits, splatI32(b, 127 << 23));
    Value scale = arith::BitcastOp::create(b, loc, vecF32, bits);
    return arith::MulFOp::create(b, loc, p, scale);
  }
  /// The W elements of `buffer` from `indices` along its last dimension, of
  /// which `count` (or more) are in bounds; lanes past `count` read as 0. A
  /// plain load when that dimension is a static multiple of W (no
  /// vector.transfer_read: its mask would need the memref's size after
  /// memref-to-llvm, for dynamic shapes).
  Value loadLanes(OpBuilder &b, Value buffer, ValueRange indices, Value count) {
    Type elem = cast<MemRefType>(buffer.getType()).getElementType();
    auto type = VectorType::get({opts.vectorWidth}, elem);
    if (lastDimFillsVectors(buffer))
      return vector::LoadOp::create(b, loc, type, buffer, indices);
    Value pad = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getZeroAttr(elem)));
    return vector::MaskedLoadOp::create(b, loc, type, buffer, indices,
                                        lanesBelow(b, count), pad);
  }
  /// Stores the lanes of `value` below `count` at `indices` of `buffer`.
  void storeLanes(OpBuilder &b, Value value, Value buffer, ValueRange indices,
                  Value count) {
    if (lastDimFillsVectors(buffer)) {
      vector::StoreOp::create(b, loc, value, buffer, indices);
      return;
    }
    vector::MaskedStoreOp::create(b, loc, buffer, indices, lanesBelow(b, count),
                                  value);
  }
  bool lastDimFillsVectors(Value buffer) {
    int64_t n = cast<MemRefType>(buffer.getType()).getShape().back();
    return !ShapedType::isDynamic(n) && n % opts.vectorWidth == 0;
  }
  Value lanesBelow(OpBuilder &b, Value count) {
    auto type = VectorType::get({opts.vectorWidth}, b.getI1Type());
    return vector::CreateMaskOp::create(b, loc, type, ValueRange{count});
  }
  Value splatI32(OpBuilder &b, int32_t v) {
    auto type = VectorType::get({opts.vectorWidth}, b.getI32Type());
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getI32IntegerAttr(v)));
  }
  /// The buffer of `tensor`, made once, before the kernel. Identity layout
  /// (gathers flatten it), or with `anyOffset` row-major at any offset: a
  /// slice of a larger tensor in its leading dimensions (the q, k, v of one
  /// head, rpe-split-attention-heads) is then read in place, not copied.
  Value bufferOf(Value tensor, bool anyOffset = false);
  /// `buffer[indices]` for the lanes of vector `chunk` that are rows of the
  /// tile, or those of `mask` (0 elsewhere); each index is a scalar or a
  /// vector<W x index>.
  Value gather(OpBuilder &b, Value buffer, ArrayRef<Value> indices,
               int64_t chunk, Value mask = Value());
  /// The W lanes of `row` at the lane offsets `offsets` (vector<W x i32>,
  /// each in [0, W)): the form LLVM's x86 backend turns into one vpermps.
  Value permuteLanes(OpBuilder &b, Value row, Value offsets);
  /// Window reads: a table row read at the buckets of W consecutive
  /// diagonals (a key's row of a gather-trick table, or a query row's at W
  /// keys), which lie within W consecutive columns, is one vector load of
  /// the row and a variable permute. Per-diagonal windows of a bucket
  /// diagonal table D for rows of `rowLength` columns, built once before
  /// the kernel: `start[a, d]` is the first of the W columns holding the
  /// buckets D[a, d .. d + W - 1] (the lower end lane's, moved left to end
  /// inside the row), -1 where they do not lie within W columns (read by a
  /// gather) and for the last W - 1 diagonals. A read then costs a scalar
  /// load, a branch, the buckets minus the start and the permute.
  struct BucketWindows {
    Value diagonal;
    int64_t rowLength;
    Value start;
  };
  SmallVector<BucketWindows> bucketWindows;
  /// The windows of every (bucket diagonal, row length) that a window read
  /// uses (findRowReads first).
  void buildBucketWindows();
  const BucketWindows *windowsFor(Value diagonal, int64_t rowLength) const {
    for (const BucketWindows &w : bucketWindows)
      if (w.diagonal == diagonal && w.rowLength == rowLength)
        return &w;
    return nullptr;
  }
  /// `buffer[at..., D[lead, diag + l]]` per lane l, through the windows
  /// (the gather where they do not fit; `mask` as for gather);
  /// `startColumn` is set to the window's first column (-1: gathered).
  Value windowRead(OpBuilder &b, Value buffer, ArrayRef<Value> at,
                   const BucketWindows &windows, Value lead, Value diag,
                   int64_t chunk, Value mask, Value &startColumn);
  /// `indices` of `buffer` with the row index (dimension rank - 2) moved
  /// `distance` rows on, clamped to the last row: where a read per key of
  /// a key's row reads `distance` keys later.
  SmallVector<Value> rowsAhead(OpBuilder &b, Value buffer,
                               ArrayRef<Value> indices, int64_t distance);
  /// Prefetches `buffer[at..., c]` at c = `column` ± `distance` (clamped
  /// into the row): where a later window read of the row `at` reads when
  /// its window moves by at most `distance` columns either way.
  void prefetchAround(OpBuilder &b, Value buffer, ArrayRef<Value> at,
                      Value column, int64_t distance);
  /// Whether a window read may read `buffer`.
  bool windowReadable(MemRefType type) const {
    return opts.permuteReads && type.getElementType().isF32() &&
           type.getRank() >= 1 && !type.isDynamicDim(type.getRank() - 1) &&
           type.getShape().back() >= opts.vectorWidth;
  }

  // ---- the score of a (key, query-vector) pair -----------------------------
  /// The values of score_mod evaluated for one vector of query rows: uniform
  /// values are scalars; varying ones are vectors, and index values of the form
  /// `base + lane` also keep their scalar base (for contiguous loads).
  struct Lanes {
    DenseMap<Value, Value> scalar, vector, base;
    Region *region;
    int64_t chunk;
    /// The scalar of a uniform value (values from outside the region are
    /// uniform), or null.
    Value scalarOf(Value v) const {
      auto it = scalar.find(v);
      if (it != scalar.end())
        return it->second;
      if (!region->isAncestor(v.getParentRegion()))
        return v;
      return Value();
    }
    bool isVarying(Value v) const { return !scalarOf(v); }
  };
  /// The lane state of vector `chunk` before any score_mod op: (b, h), the
  /// rows' positions, the per-tile invariants and, in a uniform key tile,
  /// the tile's diagonal values.
  Lanes initialLanes(OpBuilder &b, int64_t chunk);
  /// Evaluates the score_mod op `inner` on the lanes of `lanes`.
  void evaluate(OpBuilder &b, Lanes &lanes, Operation &inner);
  Value vectorizeScore(OpBuilder &b, Value s, Value key, int64_t chunk);
  /// Uniform key tiles: the score_mod ops that depend neither on the score
  /// nor on the key once the tile's diagonal values are scalars, evaluated
  /// once per key tile and row vector into `keyTileLanes`.
  void hoistKeyTileInvariants(OpBuilder &b, int64_t numChunks);
  /// Diagonal tables whose values are the same over a whole key tile: the
  /// scan `runEnd[r]` = the last r' such that every such table holds one
  /// value over [r, r'].
  void buildUniformRuns();
  /// A scalar copy of `inner` with operands from `scalarOf` (tensor reads
  /// become reads of their buffers).
  Operation *cloneScalar(OpBuilder &b, Operation &inner,
                         function_ref<Value(Value)> scalarOf);
  /// Evaluates the score_mod ops that depend only on (b, h) and values from
  /// outside once per query tile, into `tileInvariants`.
  void hoistTileInvariants(OpBuilder &b);
  void expandBuckets();
  Value lanesVector(OpBuilder &b, Lanes &lanes, Value v);

  // ---- query-row reads through transposed windows ---------------------------
  /// A score_mod read `T[lead..., i - rowOffset, D[dLead, i - j + shift]]`
  /// (`rowOffset` optional) of a per-query-row table at the buckets of a
  /// diagonal table (DeBERTa's c2p): a gather across W rows per key. In the
  /// key tiles that are not uniform, with permute-reads, it is read row by
  /// row instead, W keys at a time (windowRead: the buckets of W
  /// consecutive keys lie within W columns of the row), the W×W blocks
  /// transposed into `scratch` (Sᵀ's layout, TK × TQ), and each key reads
  /// one vector of it.
  struct RowRead {
    tensor::ExtractOp read;
    SmallVector<Value> lead;
    Value rowOffset, diagonal, diagLead, shift;
    Value scratch;
  };
  SmallVector<RowRead> rowReads;
  /// While building a key whose row reads are in the scratch buffers: its
  /// row there.
  Value scratchKey;
  /// vectorizeScore: the uniform score_mod values of key `perKeyKey`,
  /// computed for its first row vector and reused by the others.
  DenseMap<Value, Value> perKeyScalars;
  Value perKeyKey;
  bool sharePerKey = false;

  void findRowReads();
  /// The kernel's scalar for a score_mod value that is the same for the
  /// whole tile (b, h, values from outside, constants).
  Value uniformScalar(OpBuilder &b, Value v);
  /// Fills the scratch buffers for keys [k0, k0 + keys), keys a multiple
  /// of W.
  void buildRowReads(OpBuilder &b, int64_t numChunks, Value k0, Value keys);

  // ---- the kernel ----------------------------------------------------------
  void buildTile(OpBuilder &b, int64_t numChunks);
  /// The parallel loop over (batch, head, query tile), or over (batch, kv
  /// head) with grouped tiles, and everything in it.
  scf::ForallOp buildForall(bool groupedTiles);
  /// A parallel loop over `sizes` whose body is one memref.alloca_scope (the
  /// tile's scratch is freed per iteration); the insertion point of `rw`
  /// goes into the scope.
  scf::ForallOp createForall(ArrayRef<OpFoldResult> sizes);
  /// key_lengths[b] as an index (null without key_lengths).
  Value keyLength(OpBuilder &b) {
    if (!lenBuf)
      return Value();
    return arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, lenBuf, bIdx).getResult());
  }
  /// `n` rounded up to a multiple of the vector width.
  Value roundedUp(OpBuilder &b, Value n) {
    Value w = cIdx(b, opts.vectorWidth);
    return mul(b, arith::CeilDivUIOp::create(b, loc, n, w), w);
  }
  /// The decode kernel: the parallel loop over (batch, kv head), each
  /// iteration the packed query rows of its kv head (at most `numRows`).
  scf::ForallOp buildDecodeForall(int64_t numRows);
  /// Lane x of the result is the sum of the lanes of `vectors[x]` (W
  /// vectors): log2 W rounds of two shuffles and an add per pair.
  Value sumAcross(OpBuilder &b, ArrayRef<Value> vectors);
  /// (query head, row) of packed row `p` of a grouped tile.
  std::pair<Value, Value> groupedRow(OpBuilder &b, Value p) {
    Value h = add(b, mul(b, hkIdx, group),
                  arith::DivUIOp::create(b, loc, p, lq).getResult());
    return {h, arith::RemUIOp::create(b, loc, p, lq)};
  }
  SmallVector<Value> buildKeyBlock(OpBuilder &b, int64_t numChunks,
                                   int64_t keys, Value k0, Value jb,
                                   ValueRange tileMax, bool fromScratch);
  void buildValueBlock(OpBuilder &b, int64_t numChunks, int64_t rows, Value e0,
                       Value k0, Value tk, ArrayRef<Value> alpha,
                       ArrayRef<Value> probSums);
  /// The key tile at k0: Sᵀ, the online softmax and Oᵀ. `uniform`: every
  /// diagonal table in `uniformTables` holds one value over the tile, read
  /// at diagonal `tileDiag`.
  void buildKeyTile(OpBuilder &b, int64_t numChunks, Value k0, Value tk,
                    bool uniform);
  /// Prefetches the K and V rows of keys [k1, min(k1 + TK, kEnd)), one
  /// prefetch per cache line.
  void prefetchKeyTile(OpBuilder &b, Value k1);

  RewriterBase &rw;
  AttentionOp op;
  const VectorizeAttentionOptions &opts;
  Location loc;
  Type f32;
  VectorType vecF32;
  SmallVector<math::ExpOp> expOps;
  /// Buffers of the tensors the kernel reads.
  DenseMap<Value, Value> buffers;
  /// Diagonal and window tables built with padding: contiguous reads stay
  /// in bounds.
  DenseSet<Value> paddedTables;
  /// Diagonal tables of buckets: index values, or i32 ones that score_mod
  /// reads through `arith.index_cast` (`narrowedTables` of
  /// hoistToeplitzTerms).
  DenseSet<Value> bucketDiagonals;
  /// The read of a bucket diagonal that index `v` is (through the cast of
  /// an i32 table), or null.
  tensor::ExtractOp bucketRead(Value v) const {
    if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
      v = cast.getIn();
    auto read = v.getDefiningOp<tensor::ExtractOp>();
    return read && bucketDiagonals.contains(read.getTensor()) ? read : nullptr;
  }
  /// A vector<W x index> of W buckets loaded from `diagonal` (a bucket
  /// diagonal's buffer) at `at`.
  Value loadBuckets(OpBuilder &b, Value diagonal, ValueRange at);
  /// The same buckets as a vector<W x i32>.
  Value loadBuckets32(OpBuilder &b, Value diagonal, ValueRange at);
  /// Whether the query rows of every vector start at a multiple of the
  /// vector width (no q_offset).
  bool rowsAligned = false;

  // Sizes and per-tile values (valid while building the body).
  Value batch, heads, kvHeads, lq, headDim, lk, valueDim, group, scale;
  Value qBuf, kBuf, vBuf, biasBuf, lenBuf, relDiagBuf, relBuf, outBuf;
  Value bIdx, hIdx, hkIdx, q0, tq, qPos0, kEnd, relShift;
  /// The first key of the key loop: 0, or the first row's window start.
  Value kStart;
  /// `window` of the op (an int64_t for the index arithmetic).
  std::optional<int64_t> window;
  /// AttentionOp::getKeyReach: 0 with `causal`, the `lookahead`, or none.
  std::optional<int64_t> reach;
  Value qT, oT, sT, mBuf, lBuf;
  /// Per chunk: lane offsets clamped to the tile's rows (vector<W x index>)
  /// and the mask of the lanes that are rows of the tile.
  SmallVector<Value> clampedIota, laneValid;
  /// Grouped tiles: one tile holds the Lq rows of each of the `group` query
  /// heads that share a kv head (packed row p: head hk·group + p / Lq, row
  /// p mod Lq), so K and V are read once per kv head and a short query
  /// (decode) fills the vectors. Per chunk: the lanes' query positions.
  bool grouped = false;
  SmallVector<Value> groupedPos;
  /// score_mod values computed once per query tile.
  DenseMap<Value, Value> tileInvariants;
  bool kernelStarted = false;
  Value iotaI32;

  /// Bucket tables along the diagonal (one row, index elements) that a key
  /// tile may find constant: the buckets of the gather-trick terms and of
  /// rel_values. A tile whose diagonals all fall in one run of every table
  /// (far from the diagonal with clipped or log buckets: most tiles at
  /// L >= 1024) reads each once and gathers nothing per key.
  SmallVector<Value> uniformTables;
  /// score_mod values read from `uniformTables` (tensor.extract results),
  /// with their table.
  SmallVector<std::pair<Value, Value>> uniformReads;
  /// score_mod ops that need the key or the score even in a uniform tile.
  DenseSet<Operation *> keyDependent;
  Value runEndBuf, diagShift;
  /// While building a uniform key tile: its lowest diagonal, the scalars of
  /// `uniformReads` and the per-chunk lane states of hoistKeyTileInvariants.
  Value tileDiag;
  bool inUniformTile = false;
  DenseMap<Value, Value> tileScalars;
  SmallVector<Lanes> keyTileLanes;
};

} // namespace detail
} // namespace rpe
} // namespace mlir

#endif // RPE_LIB_DIALECT_RPE_TRANSFORMS_VECTORIZEATTENTIONKERNEL_H
