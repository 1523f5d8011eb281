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
//===----------------------------------------------------------------------===//

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

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
/// exp(-64) = 1.6e-28.
constexpr float kExpFlush = -64.0f;
/// The discardable attribute of a scf.for that rpe-apply-loop-annotations
/// carries into LLVM IR.
constexpr llvm::StringLiteral kLoopAnnotation = "llvm.loop_annotation";

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

/// Builds the kernel for one rpe.attention.
class KernelBuilder {
public:
  KernelBuilder(RewriterBase &rewriter, AttentionOp op,
                const VectorizeAttentionOptions &options)
      : rw(rewriter), op(op), opts(options), loc(op.getLoc()),
        f32(rewriter.getF32Type()),
        vecF32(VectorType::get({options.vectorWidth}, f32)) {}

  void build();

private:
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
  /// `buffer[at..., columns[l]]` per lane l (`at`: uniform leading indices,
  /// `columns`: a vector<W x index>): when the columns lie within W
  /// consecutive elements (the buckets of W consecutive diagonals along a
  /// key's row of a gather-trick table), one vector load of the row and a
  /// variable permute; else, checked at run time, the gather.
  Value rowWindowRead(OpBuilder &b, Value buffer, ArrayRef<Value> at,
                      Value columns, int64_t chunk, Value mask = Value());
  /// Prefetches `buffer[at..., c]` at c = columns[0] ± `distance` (clamped
  /// into the row): where a later rowWindowRead of the row `at` reads when
  /// its window moves by at most `distance` columns either way.
  void prefetchAround(OpBuilder &b, Value buffer, ArrayRef<Value> at,
                      Value columns, int64_t distance);
  /// Whether rowWindowRead may read `buffer`.
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
  /// row instead, W keys at a time (rowWindowRead: the buckets of W
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
  /// The transpose of W vectors of W lanes (log2 W rounds of two-input
  /// shuffles).
  SmallVector<Value> transpose(OpBuilder &b, ArrayRef<Value> rows);

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
  /// Whether the query rows of every vector start at a multiple of the
  /// vector width (no q_offset).
  bool rowsAligned = false;

  // Sizes and per-tile values (valid while building the body).
  Value batch, heads, kvHeads, lq, headDim, lk, valueDim, group, scale;
  Value qBuf, kBuf, vBuf, biasBuf, lenBuf, relDiagBuf, relBuf, outBuf;
  Value bIdx, hIdx, hkIdx, q0, tq, qPos0, kEnd, relShift;
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

Value KernelBuilder::gather(OpBuilder &b, Value buffer, ArrayRef<Value> indices,
                            int64_t chunk, Value mask) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t w = opts.vectorWidth;
  // Linear offsets (identity layout), then a gather from a 1-D view: the
  // gather's index vector runs along the innermost dimension only.
  Value offsets;
  Value stride = cIdx(b, 1);
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    Value idx = indices[d];
    Value term =
        isa<VectorType>(idx.getType())
            ? arith::MulIOp::create(b, loc, idx, bcast(b, stride)).getResult()
            : bcast(b, mul(b, idx, stride));
    offsets = offsets ? arith::AddIOp::create(b, loc, offsets, term).getResult()
                      : term;
    if (d > 0)
      stride = mul(b, stride, memref::DimOp::create(b, loc, buffer, d));
  }
  Value flat = buffer;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    flat = memref::CollapseShapeOp::create(b, loc, buffer, all);
  }
  auto elemVec = VectorType::get({w}, type.getElementType());
  Value pass = arith::ConstantOp::create(b, loc, b.getZeroAttr(elemVec));
  return vector::GatherOp::create(b, loc, elemVec, flat, ValueRange{cIdx(b, 0)},
                                  offsets, mask ? mask : laneValid[chunk], pass,
                                  IntegerAttr());
}

Value KernelBuilder::loadBuckets(OpBuilder &b, Value diagonal, ValueRange at) {
  auto idxVec = VectorType::get({opts.vectorWidth}, b.getIndexType());
  Type element = cast<MemRefType>(diagonal.getType()).getElementType();
  if (element.isIndex())
    return vector::LoadOp::create(b, loc, idxVec, diagonal, at);
  Value narrow = vector::LoadOp::create(
      b, loc, VectorType::get({opts.vectorWidth}, element), diagonal, at);
  return arith::IndexCastOp::create(b, loc, idxVec, narrow);
}

void KernelBuilder::prefetchAround(OpBuilder &b, Value buffer,
                                   ArrayRef<Value> at, Value columns,
                                   int64_t distance) {
  auto type = cast<MemRefType>(buffer.getType());
  Value first = vector::ExtractOp::create(b, loc, columns, int64_t(0));
  Value below = maxI(b, sub(b, first, cIdx(b, distance)), cIdx(b, 0));
  Value above = minI(b, add(b, first, cIdx(b, distance)),
                     cIdx(b, type.getShape().back() - 1));
  for (Value column : {below, above}) {
    SmallVector<Value> idx(at);
    idx.push_back(column);
    memref::PrefetchOp::create(b, loc, buffer, idx, /*isWrite=*/false,
                               /*localityHint=*/3, /*isDataCache=*/true);
  }
}

Value KernelBuilder::rowWindowRead(OpBuilder &b, Value buffer,
                                   ArrayRef<Value> at, Value columns,
                                   int64_t chunk, Value mask) {
  int64_t w = opts.vectorWidth;
  auto type = cast<MemRefType>(buffer.getType());
  // The window starts at the lower of the end lanes (buckets run one way
  // along the lanes), moved left so that it ends inside the row.
  Value first = vector::ExtractOp::create(b, loc, columns, int64_t(0));
  Value last = vector::ExtractOp::create(b, loc, columns, w - 1);
  // (One op per statement: the order of the IR does not depend on the
  // order in which the C++ compiler evaluates arguments.)
  Value lowest = minI(b, first, last);
  Value lastStart = cIdx(b, type.getShape().back() - w);
  Value inRow = minI(b, lowest, lastStart);
  Value zero = cIdx(b, 0);
  Value lo = maxI(b, inRow, zero);
  // Lane offsets in the window, as 32-bit lanes (the form LLVM's x86
  // backend turns into vpermps).
  Type i32 = b.getI32Type();
  auto vecI32 = VectorType::get({w}, i32);
  Value lo32 = arith::IndexCastOp::create(b, loc, i32, lo);
  Value start = bcast(b, lo32);
  Value columns32 = arith::IndexCastOp::create(b, loc, vecI32, columns);
  Value rel = arith::SubIOp::create(b, loc, columns32, start);
  Value outside = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::uge, rel,
      bcast(b, arith::ConstantIntOp::create(b, loc, i32, w)));
  Value anyOutside =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, outside);
  SmallVector<Value> indices(at);
  indices.push_back(columns);
  auto ifOp = scf::IfOp::create(
      b, loc, anyOutside,
      [&](OpBuilder &tb, Location) {
        scf::YieldOp::create(tb, loc, gather(tb, buffer, indices, chunk, mask));
      },
      [&](OpBuilder &eb, Location) {
        SmallVector<Value> start(at);
        start.push_back(lo);
        Value row = vector::LoadOp::create(eb, loc, vecF32, buffer, start);
        SmallVector<Value> elements;
        for (int64_t l = 0; l < w; ++l) {
          Value pos = arith::IndexCastOp::create(
              eb, loc, eb.getIndexType(),
              vector::ExtractOp::create(eb, loc, rel, l));
          elements.push_back(vector::ExtractOp::create(
              eb, loc, row, ArrayRef<OpFoldResult>{pos}));
        }
        Value permuted =
            vector::FromElementsOp::create(eb, loc, vecF32, elements);
        scf::YieldOp::create(eb, loc, permuted);
      });
  return ifOp.getResult(0);
}

void KernelBuilder::findRowReads() {
  if (!opts.permuteReads || op.getScoreMod().empty())
    return;
  Region &region = op.getScoreMod();
  Block &block = region.front();
  Value bArg = block.getArgument(1), hArg = block.getArgument(2),
        iArg = block.getArgument(3), jArg = block.getArgument(4);
  auto uniform = [&](Value v) {
    return v == bArg || v == hArg || !region.isAncestor(v.getParentRegion()) ||
           v.getDefiningOp<arith::ConstantOp>();
  };
  for (Operation &inner : block) {
    auto read = dyn_cast<tensor::ExtractOp>(inner);
    if (!read)
      continue;
    int64_t rank = read.getTensor().getType().getRank();
    if (rank < 2 ||
        !windowReadable(cast<MemRefType>(bufferOf(read.getTensor()).getType())))
      continue;
    ValueRange idx = read.getIndices();
    if (!llvm::all_of(idx.drop_back(2), uniform))
      continue;
    Value row = idx[rank - 2], rowOffset;
    if (row != iArg) {
      auto s = row.getDefiningOp<arith::SubIOp>();
      if (!s || s.getLhs() != iArg || !uniform(s.getRhs()))
        continue;
      rowOffset = s.getRhs();
    }
    tensor::ExtractOp bucket = bucketRead(idx.back());
    if (!bucket || !uniform(bucket.getIndices()[0]))
      continue;
    auto addOp = bucket.getIndices()[1].getDefiningOp<arith::AddIOp>();
    if (!addOp || !uniform(addOp.getRhs()))
      continue;
    auto diff = addOp.getLhs().getDefiningOp<arith::SubIOp>();
    if (!diff || diff.getLhs() != iArg || diff.getRhs() != jArg)
      continue;
    bufferOf(bucket.getTensor());
    rowReads.push_back({read, SmallVector<Value>(idx.drop_back(2)), rowOffset,
                        bucket.getTensor(), bucket.getIndices()[0],
                        addOp.getRhs(), Value()});
  }
}

Value KernelBuilder::uniformScalar(OpBuilder &b, Value v) {
  Block &block = op.getScoreMod().front();
  if (v == block.getArgument(1))
    return bIdx;
  if (v == block.getArgument(2))
    return hIdx;
  if (!op.getScoreMod().isAncestor(v.getParentRegion()))
    return v;
  if (Value t = tileInvariants.lookup(v))
    return t;
  return b.clone(*v.getDefiningOp())->getResult(0);
}

SmallVector<Value> KernelBuilder::transpose(OpBuilder &b,
                                            ArrayRef<Value> rowsIn) {
  int64_t w = static_cast<int64_t>(rowsIn.size());
  SmallVector<Value> rows(rowsIn);
  // Round s swaps, in every 2s × 2s block, the upper right and lower left
  // s × s blocks.
  for (int64_t s = w / 2; s >= 1; s /= 2) {
    SmallVector<int64_t> upper, lower;
    for (int64_t c = 0; c < w; ++c) {
      upper.push_back((c & s) == 0 ? c : w + c - s);
      lower.push_back((c & s) == 0 ? c + s : w + c);
    }
    for (int64_t r = 0; r < w; ++r) {
      if (r & s)
        continue;
      Value x = rows[r], y = rows[r + s];
      rows[r] = vector::ShuffleOp::create(b, loc, x, y, upper);
      rows[r + s] = vector::ShuffleOp::create(b, loc, x, y, lower);
    }
  }
  return rows;
}

void KernelBuilder::buildRowReads(OpBuilder &b, int64_t numChunks, Value k0,
                                  Value keys) {
  int64_t w = opts.vectorWidth;
  auto maskType = VectorType::get({w}, b.getI1Type());
  Value allLanes =
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(maskType, true));
  // Loops over key vectors and row vectors (not unrolled: the code is W
  // row reads and one transpose).
  forRange(b, cIdx(b, 0), keys, cIdx(b, w), [&](OpBuilder &gb, Value g) {
    Value jLast = add(gb, add(gb, k0, g), cIdx(gb, w - 1));
    Value lastRow = sub(gb, tq, cIdx(gb, 1));
    for (RowRead &r : rowReads) {
      Value table = bufferOf(r.read.getTensor());
      Value diagonal = bufferOf(r.diagonal);
      SmallVector<Value> lead;
      for (Value v : r.lead)
        lead.push_back(uniformScalar(gb, v));
      Value diagLead = uniformScalar(gb, r.diagLead);
      Value shift = uniformScalar(gb, r.shift);
      Value rowOffset = r.rowOffset ? uniformScalar(gb, r.rowOffset) : Value();
      forRange(gb, cIdx(gb, 0), cIdx(gb, numChunks * w), cIdx(gb, w),
               [&](OpBuilder &cb, Value c0) {
                 // Row l's values at keys jLast - m, m = 0 .. W-1: its
                 // buckets are the diagonals from (row, jLast) up.
                 SmallVector<Value> rows;
                 for (int64_t l = 0; l < w; ++l) {
                   Value pos = add(cb, qPos0,
                                   minI(cb, add(cb, c0, cIdx(cb, l)), lastRow));
                   Value start = add(cb, sub(cb, pos, jLast), shift);
                   Value buckets =
                       loadBuckets(cb, diagonal, ValueRange{diagLead, start});
                   SmallVector<Value> at(lead);
                   at.push_back(rowOffset ? sub(cb, pos, rowOffset) : pos);
                   rows.push_back(
                       rowWindowRead(cb, table, at, buckets, 0, allLanes));
                   // The row's window `rowReadPrefetch` key vectors on
                   // (it moves by at most one column per key).
                   if (opts.rowReadPrefetch > 0)
                     prefetchAround(cb, table, at, buckets,
                                    opts.rowReadPrefetch * w);
                 }
                 SmallVector<Value> columns = transpose(cb, rows);
                 for (int64_t m = 0; m < w; ++m)
                   vector::StoreOp::create(
                       cb, loc, columns[m], r.scratch,
                       ValueRange{add(cb, g, cIdx(cb, w - 1 - m)), c0});
               });
    }
  });
}

Value KernelBuilder::lanesVector(OpBuilder &b, Lanes &lanes, Value v) {
  if (!lanes.isVarying(v))
    return bcast(b, lanes.scalarOf(v));
  auto it = lanes.vector.find(v);
  if (it != lanes.vector.end())
    return it->second;
  // base + clamped lane offset.
  Value vec = arith::AddIOp::create(b, loc, bcast(b, lanes.base[v]),
                                    clampedIota[lanes.chunk]);
  lanes.vector[v] = vec;
  return vec;
}

Operation *KernelBuilder::cloneScalar(OpBuilder &b, Operation &inner,
                                      function_ref<Value(Value)> scalarOf) {
  if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
    SmallVector<Value> idx;
    for (Value v : extract.getIndices())
      idx.push_back(scalarOf(v));
    return memref::LoadOp::create(b, loc, bufferOf(extract.getTensor()), idx);
  }
  if (auto dim = dyn_cast<tensor::DimOp>(inner))
    return memref::DimOp::create(b, loc, bufferOf(dim.getSource()),
                                 scalarOf(dim.getIndex()));
  IRMapping map;
  for (Value v : inner.getOperands())
    map.map(v, scalarOf(v));
  return b.clone(inner, map);
}

void KernelBuilder::hoistTileInvariants(OpBuilder &b) {
  tileInvariants.clear();
  Region &region = op.getScoreMod();
  if (region.empty())
    return;
  Block &block = region.front();
  DenseMap<Value, Value> known = {{block.getArgument(1), bIdx},
                                  {block.getArgument(2), hIdx}};
  auto scalarOf = [&](Value v) -> Value {
    if (!region.isAncestor(v.getParentRegion()))
      return v;
    return known.lookup(v);
  };
  for (Operation &inner : block.without_terminator()) {
    if (!isPure(&inner) || !llvm::all_of(inner.getOperands(), [&](Value v) {
          return static_cast<bool>(scalarOf(v));
        }))
      continue;
    Operation *clone = cloneScalar(b, inner, scalarOf);
    for (auto [from, to] : llvm::zip(inner.getResults(), clone->getResults())) {
      known[from] = to;
      tileInvariants[from] = to;
    }
  }
}

KernelBuilder::Lanes KernelBuilder::initialLanes(OpBuilder &b, int64_t chunk) {
  Block &block = op.getScoreMod().front();
  Lanes lanes;
  lanes.chunk = chunk;
  lanes.region = &op.getScoreMod();
  lanes.scalar[block.getArgument(1)] = bIdx;
  lanes.scalar[block.getArgument(2)] = hIdx;
  lanes.base[block.getArgument(3)] =
      add(b, qPos0, cIdx(b, chunk * opts.vectorWidth));
  for (auto [from, to] : tileInvariants)
    lanes.scalar[from] = to;
  for (auto [from, to] : tileScalars)
    lanes.scalar[from] = to;
  return lanes;
}

void KernelBuilder::evaluate(OpBuilder &b, Lanes &lanes, Operation &inner) {
  int64_t w = opts.vectorWidth;
  auto scalarOf = [&](Value v) { return lanes.scalarOf(v); };
  auto uniform = [&](Value v) { return static_cast<bool>(scalarOf(v)); };
  bool varying =
      llvm::any_of(inner.getOperands(), [&](Value v) { return !uniform(v); });
  if (!varying) {
    // Uniform across lanes: scalars (per key, once for all row vectors;
    // what depends on the key neither is computed once per tile, see
    // hoistTileInvariants).
    // Shared only when it depends on the key and on values of the whole
    // tile, not on the row vector (a uniform `i floordiv c` does).
    Block &block = op.getScoreMod().front();
    bool perKey =
        sharePerKey && llvm::all_of(inner.getOperands(), [&](Value v) {
          return !lanes.region->isAncestor(v.getParentRegion()) ||
                 v == block.getArgument(1) || v == block.getArgument(2) ||
                 v == block.getArgument(4) || tileInvariants.count(v) ||
                 tileScalars.count(v) || perKeyScalars.count(v);
        });
    if (perKey && inner.getNumResults() == 1)
      if (Value known = perKeyScalars.lookup(inner.getResult(0))) {
        lanes.scalar[inner.getResult(0)] = known;
        return;
      }
    Operation *clone = cloneScalar(b, inner, scalarOf);
    for (auto [from, to] : llvm::zip(inner.getResults(), clone->getResults())) {
      lanes.scalar[from] = to;
      if (perKey)
        perKeyScalars[from] = to;
    }
    return;
  }

  // The window row of the query rows, `i floordiv c`: uniform when c is a
  // multiple of the vector width and the tiles' rows start at multiples of
  // it (no q_offset), i.e. every vector's rows lie in one block of c. Then a
  // window table's index (hoistWindowTerms) is lane-affine and read as one
  // vector.
  if (auto div = dyn_cast<arith::FloorDivSIOp>(inner);
      div && rowsAligned &&
      div.getLhs() == op.getScoreMod().front().getArgument(3)) {
    APInt c;
    if (matchPattern(div.getRhs(), m_ConstantInt(&c)) &&
        c.isStrictlyPositive() && c.getZExtValue() % w == 0) {
      lanes.scalar[div.getResult()] = arith::FloorDivSIOp::create(
          b, loc, lanes.base[div.getLhs()], scalarOf(div.getRhs()));
      return;
    }
  }

  // Lane-affine index arithmetic: base ± uniform.
  if (isa<arith::AddIOp, arith::SubIOp>(inner) &&
      inner.getResult(0).getType().isIndex()) {
    Value x = inner.getOperand(0), y = inner.getOperand(1);
    bool isAdd = isa<arith::AddIOp>(inner);
    if (lanes.base.count(x) && uniform(y)) {
      Value base = isAdd ? add(b, lanes.base[x], scalarOf(y))
                         : sub(b, lanes.base[x], scalarOf(y));
      lanes.base[inner.getResult(0)] = base;
      return;
    }
    if (isAdd && lanes.base.count(y) && uniform(x)) {
      lanes.base[inner.getResult(0)] = add(b, lanes.base[y], scalarOf(x));
      return;
    }
  }

  if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
    if (scratchKey)
      for (RowRead &r : rowReads)
        if (r.read == extract) {
          lanes.vector[inner.getResult(0)] = vector::LoadOp::create(
              b, loc, vecF32, r.scratch,
              ValueRange{scratchKey, cIdx(b, lanes.chunk * w)});
          return;
        }
    Value buffer = bufferOf(extract.getTensor());
    auto bufferType = cast<MemRefType>(buffer.getType());
    auto elemVec = VectorType::get({w}, bufferType.getElementType());
    ValueRange indices = extract.getIndices();
    bool innerOnly = true;
    for (Value v : indices.drop_back())
      innerOnly &= uniform(v);
    Value last = indices.back();
    SmallVector<Value> at;
    for (Value v : indices.drop_back())
      at.push_back(innerOnly ? scalarOf(v) : cIdx(b, 0));
    if (innerOnly && lanes.base.count(last)) {
      at.push_back(lanes.base[last]);
      Value read;
      if (paddedTables.count(extract.getTensor())) {
        read = vector::LoadOp::create(b, loc, elemVec, buffer, at);
      } else {
        Value pad = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(bufferType.getElementType()));
        read = vector::TransferReadOp::create(b, loc, elemVec, buffer, at, pad,
                                              ArrayRef<bool>{false});
      }
      lanes.vector[inner.getResult(0)] = read;
      return;
    }
    // A row at bucket columns read from a diagonal table (W consecutive
    // diagonals).
    if (innerOnly && windowReadable(bufferType)) {
      if (bucketRead(last)) {
        Value columns = lanesVector(b, lanes, last);
        lanes.vector[inner.getResult(0)] =
            rowWindowRead(b, buffer, at, columns, lanes.chunk);
        // The read `windowReadPrefetch` keys on, if its row depends on the
        // key (a key's row of p2c): the row as many rows on, its window at
        // most as many columns away.
        int64_t d = opts.windowReadPrefetch;
        Value row = indices[bufferType.getRank() - 2];
        if (d > 0 && !inUniformTile &&
            dependsOn(row, op.getScoreMod().front().getArgument(4))) {
          int64_t rank = bufferType.getRank();
          Value lastRow = sub(
              b, memref::DimOp::create(b, loc, buffer, rank - 2), cIdx(b, 1));
          SmallVector<Value> next(at);
          next.back() = minI(b, add(b, at.back(), cIdx(b, d)), lastRow);
          prefetchAround(b, buffer, next, columns, d);
        }
        return;
      }
    }
    SmallVector<Value> idx;
    for (Value v : indices)
      idx.push_back(uniform(v) ? scalarOf(v) : lanesVector(b, lanes, v));
    lanes.vector[inner.getResult(0)] = gather(b, buffer, idx, lanes.chunk);
    return;
  }

  bool elementwise =
      inner.hasTrait<OpTrait::Elementwise>() && inner.getNumResults() == 1 &&
      isa<arith::ArithDialect, math::MathDialect>(inner.getDialect());
  if (elementwise) {
    SmallVector<Value> operands;
    for (Value v : inner.getOperands())
      operands.push_back(lanesVector(b, lanes, v));
    OperationState state(loc, inner.getName());
    state.addOperands(operands);
    state.addTypes(VectorType::get({w}, inner.getResult(0).getType()));
    state.addAttributes(inner.getAttrs());
    Operation *vop = b.create(state);
    lanes.vector[inner.getResult(0)] = vop->getResult(0);
    return;
  }

  // Anything else: one scalar copy per lane (the lanes of padding rows
  // repeat the last row of the tile, so every copy sees real positions).
  SmallVector<SmallVector<Value>> perLane(inner.getNumResults());
  for (int64_t lane = 0; lane < w; ++lane) {
    IRMapping map;
    for (Value v : inner.getOperands()) {
      if (uniform(v))
        map.map(v, scalarOf(v));
      else
        map.map(v, vector::ExtractOp::create(b, loc, lanesVector(b, lanes, v),
                                             lane));
    }
    Operation *clone = b.clone(inner, map);
    for (unsigned r = 0; r < inner.getNumResults(); ++r)
      perLane[r].push_back(clone->getResult(r));
  }
  for (unsigned r = 0; r < inner.getNumResults(); ++r)
    lanes.vector[inner.getResult(r)] = vector::FromElementsOp::create(
        b, loc, VectorType::get({w}, inner.getResult(r).getType()), perLane[r]);
}

void KernelBuilder::hoistKeyTileInvariants(OpBuilder &b, int64_t numChunks) {
  keyTileLanes.clear();
  if (op.getScoreMod().empty())
    return;
  Block &block = op.getScoreMod().front();
  for (int64_t c = 0; c < numChunks; ++c) {
    Lanes lanes = initialLanes(b, c);
    for (Operation &inner : block.without_terminator()) {
      if (keyDependent.contains(&inner))
        continue;
      Value first = inner.getResult(0);
      if (lanes.scalar.count(first) || lanes.vector.count(first) ||
          lanes.base.count(first))
        continue;
      evaluate(b, lanes, inner);
    }
    keyTileLanes.push_back(std::move(lanes));
  }
}

void KernelBuilder::buildUniformRuns() {
  SmallVector<Value> tables;
  for (Value table : uniformTables)
    tables.push_back(bufferOf(table));
  Value length = memref::DimOp::create(rw, loc, tables.front(), 1);
  // Freed by the pipeline's ownership-based deallocation, like outBuf.
  runEndBuf = memref::AllocOp::create(
      rw, loc, MemRefType::get({ShapedType::kDynamic}, rw.getIndexType()),
      ValueRange{length}, ValueRange{}, rw.getI64IntegerAttr(64));
  // runEnd[r] = runEnd[r + 1] when every table holds the same value at r and
  // r + 1, else r; filled from the end.
  Value last = sub(rw, length, cIdx(rw, 1));
  memref::StoreOp::create(rw, loc, last, runEndBuf, last);
  scf::ForOp::create(
      rw, loc, cIdx(rw, 1), length, cIdx(rw, 1), ValueRange{last},
      [&](OpBuilder &b, Location, Value t, ValueRange end) {
        Value r = sub(b, last, t);
        Value next = add(b, r, cIdx(b, 1));
        Value same;
        for (Value table : tables) {
          Value x =
              memref::LoadOp::create(b, loc, table, ValueRange{cIdx(b, 0), r});
          Value y = memref::LoadOp::create(b, loc, table,
                                           ValueRange{cIdx(b, 0), next});
          Value eq =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
          same =
              same ? arith::AndIOp::create(b, loc, same, eq).getResult() : eq;
        }
        Value runEnd = arith::SelectOp::create(b, loc, same, end.front(), r);
        memref::StoreOp::create(b, loc, runEnd, runEndBuf, r);
        scf::YieldOp::create(b, loc, runEnd);
      });
}

/// Bias, score_mod and nothing else for the query rows of vector `chunk`
/// against key `key`.
Value KernelBuilder::vectorizeScore(OpBuilder &b, Value s, Value key,
                                    int64_t chunk) {
  int64_t w = opts.vectorWidth;
  // Dense bias: bias[b?, h?, row, key] gathered along rows.
  if (biasBuf) {
    Value rowBase = add(b, q0, cIdx(b, chunk * w));
    auto biasType = cast<MemRefType>(biasBuf.getType());
    int64_t rank = biasType.getRank();
    Value full[] = {bIdx, hIdx, rowBase, key};
    SmallVector<Value> at;
    for (int64_t d = 0; d < rank; ++d)
      at.push_back(biasType.getDimSize(d) == 1 ? cIdx(b, 0)
                                               : full[4 - rank + d]);
    Value term;
    if (biasType.getDimSize(rank - 2) == 1) {
      term = bcast(b, loadF32(b, biasBuf, at));
    } else {
      // Rows are Lk elements apart: gathered (clamped rows, masked lanes).
      at[rank - 2] =
          arith::AddIOp::create(b, loc, clampedIota[chunk], bcast(b, rowBase));
      term = castFloat(b, loc, gather(b, biasBuf, at, chunk), f32);
    }
    s = arith::AddFOp::create(b, loc, s, term);
  }
  Region &region = op.getScoreMod();
  if (region.empty())
    return s;

  Block &block = region.front();
  Lanes lanes =
      keyTileLanes.empty() ? initialLanes(b, chunk) : keyTileLanes[chunk];
  lanes.vector[block.getArgument(0)] = s;
  lanes.scalar[block.getArgument(4)] = key;
  // The row vectors of one key share its uniform values (computed for the
  // first).
  if (key != perKeyKey) {
    perKeyScalars.clear();
    perKeyKey = key;
  }
  sharePerKey = true;
  for (Operation &inner : block.without_terminator()) {
    if (inner.getNumResults() != 0) {
      Value first = inner.getResult(0);
      if (lanes.scalar.count(first) || lanes.vector.count(first) ||
          lanes.base.count(first))
        continue; // computed per tile or per key tile
    }
    evaluate(b, lanes, inner);
  }
  sharePerKey = false;
  auto yield = cast<YieldOp>(block.getTerminator());
  return lanesVector(b, lanes, yield.getValues().front());
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
        if (op.getCausal() && grouped) {
          Value hidden =
              arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::sgt,
                                    bcast(fb, key), groupedPos[c]);
          s = arith::SelectOp::create(fb, loc, hidden, splat(fb, kNegInf), s);
        } else if (op.getCausal() && masked) {
          // Lane l (query position qPos0 + c·W + l) sees the key when
          // key <= qPos0 + c·W + l, i.e. l >= key - qPos0 - c·W.
          Value first = sub(fb, key, add(fb, qPos0, cIdx(fb, c * w)));
          first = maxI(fb, minI(fb, first, cIdx(fb, w)), cIdx(fb, 0));
          Value first32 =
              arith::IndexCastOp::create(fb, loc, fb.getI32Type(), first);
          Value hidden = arith::CmpIOp::create(
              fb, loc, arith::CmpIPredicate::slt, iotaI32, bcast(fb, first32));
          s = arith::SelectOp::create(fb, loc, hidden, splat(fb, kNegInf), s);
        }
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
  if (!op.getCausal() || grouped)
    return finish(b, /*masked=*/false);
  // Every row of the tile sees a block whose last key is at or before the
  // tile's first position (most blocks of a long causal attention): its
  // scores skip the mask. (Each branch builds its own key values: the
  // per-key cache of vectorizeScore must not reach across them.)
  Value lastKey = add(b, add(b, k0, jb), cIdx(b, keys - 1));
  Value needsMask =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, lastKey, qPos0);
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
  constexpr int64_t kLineBytes = 64;
  forRange(b, k1, end, cIdx(b, 1), [&](OpBuilder &jb, Value key) {
    for (auto [bufferOfRows, dim] :
         {std::pair(kBuf, headDim), {vBuf, valueDim}}) {
      // (A lambda may not capture a structured binding before C++20.)
      Value buffer = bufferOfRows;
      auto type = cast<MemRefType>(buffer.getType());
      int64_t bytes = type.getElementTypeBitWidth() / 8;
      forRange(jb, cIdx(jb, 0), dim, cIdx(jb, kLineBytes / bytes),
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
  forRange(b, cIdx(b, 0), kEnd, tileK, [&](OpBuilder &kb, Value k0) {
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
          SmallVector<Value> blockRows = transpose(eb, columns);
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
  hoistToeplitzTerms(rw, op, opts.tileQ, &diagonals, &narrowed);
  paddedTables.insert(diagonals.begin(), diagonals.end());
  for (Value table : diagonals)
    if (cast<RankedTensorType>(table.getType()).getElementType().isIndex())
      bucketDiagonals.insert(table);
  bucketDiagonals.insert(narrowed.begin(), narrowed.end());
  // Window terms into padded tables too (not diagonal: no uniform key
  // tiles).
  SmallVector<Value> windowTables;
  hoistWindowTerms(rw, op, opts.tileQ, &windowTables);
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
    for (math::FmaOp f : fmas) {
      rw.setInsertionPoint(f);
      Value m = arith::MulFOp::create(rw, f.getLoc(), f.getA(), f.getB());
      rw.replaceOpWithNewOp<arith::AddFOp>(f, m, f.getC());
    }
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
  if (op.getCausal() && !grouped) {
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
                     op.getCausal() ? rowsEnd : Value());

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
          SmallVector<Value> columns = transpose(db, blockRows);
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
      rw, loc, zero, numRowsIdx, one, ValueRange{zero},
      [&](OpBuilder &b, Location, Value r, ValueRange end) {
        // (Plain variables: lambdas may not capture structured bindings
        // before C++20.)
        Value head, row;
        std::tie(head, row) = rowOf(b, r);
        Value causalEnd;
        if (op.getCausal())
          causalEnd = add(b, buildQueryPosition(b, loc, row, op.getQOffset()),
                          cIdx(b, 1));
        Value rowEnd = buildKeyEnd(b, loc, lk, length, causalEnd);
        memref::StoreOp::create(b, loc, rowEnd, endS, r);
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
        scf::YieldOp::create(b, loc, ValueRange{maxI(b, end[0], rowEnd)});
      });
  kEnd = setup.getResult(0);

  Value tileKIdx = cIdx(rw, tileK);
  forRange(rw, zero, kEnd, tileKIdx, [&](OpBuilder &kb, Value k0) {
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
          auto scores = scf::ForOp::create(
              b, loc, cIdx(b, 0), tk, cIdx(b, w), ValueRange{splat(b, kNegInf)},
              [&](OpBuilder &sb, Location, Value j0, ValueRange mx) {
                SmallVector<Value> parts;
                for (int64_t x = 0; x < w; ++x)
                  parts.push_back(vector::LoadOp::create(
                      sb, loc, vecF32, partial,
                      ValueRange{r, add(sb, j0, cIdx(sb, x)), cIdx(sb, 0)}));
                Value visible =
                    lanesBelow(sb, sub(sb, rowEnd, add(sb, k0, j0)));
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

struct VectorizeAttention : OpRewritePattern<AttentionOp> {
  VectorizeAttention(MLIRContext *ctx, const VectorizeAttentionOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!isVectorizableScoreMod(op.getScoreMod()))
      return rewriter.notifyMatchFailure(
          op, "score_mod has ops with regions or non-scalar results");
    if (kernelStackBytes(op, options) >
        static_cast<uint64_t>(options.maxStackKiB) * 1024)
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
  // probabilities, m, l, alpha and the key end (8 bytes).
  if (groupable && options.decodeRows > 0) {
    uint64_t rows = 0;
    for (int64_t n = 1; n < options.decodeRows; n *= 2)
      rows += n;
    rows += options.decodeRows;
    uint64_t keys = llvm::alignTo(tk, w);
    uint64_t perRow = add(add(dims, mul(keys, w + 1)), 3);
    bytes = add(bytes, mul(rows, add(mul(perRow, 4), 8)));
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
  uint64_t scores = llvm::SaturatingMultiply<uint64_t>(
      llvm::SaturatingMultiply<uint64_t>(o.tileK, o.tileQ), 4);
  if (scores > static_cast<uint64_t>(o.maxStackKiB) * 1024)
    return error("tile-k x tile-q (" + Twine(o.tileK) + " x " + Twine(o.tileQ) +
                 ") scores take " + Twine(llvm::divideCeil(scores, 1024)) +
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
    uint64_t limit = static_cast<uint64_t>(options.maxStackKiB) * 1024;
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
