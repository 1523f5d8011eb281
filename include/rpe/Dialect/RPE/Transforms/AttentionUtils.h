//===- AttentionUtils.h - helpers shared by the attention kernels -*- C++ -*-=//
//
// Rewrites of `rpe.attention`'s `score_mod` region shared by the tiled
// (rpe-tile-attention) and the vector (rpe-vectorize-attention) kernels.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_ATTENTIONUTILS_H
#define RPE_DIALECT_RPE_TRANSFORMS_ATTENTIONUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rpe {
class AttentionOp;
class BucketingAttrInterface;

/// Applies `patterns` (which rewrite rpe.attention away) greedily to `root`
/// without region simplification; returns how many attention ops are gone,
/// or failure.
FailureOr<int64_t> rewriteAttentionOps(Operation *root,
                                       RewritePatternSet &&patterns);

/// The sizes of an attention op (index values) and its f32 scale (the static
/// one, or 1/sqrt(D) computed at run time), built at the insertion point.
struct AttentionSizes {
  Value batch, heads, lq, headDim, kvHeads, lk, valueDim;
  /// heads / kvHeads (grouped-query attention).
  Value group;
  Value scale;
  /// The result's dynamic sizes, in order.
  SmallVector<Value> resultDynamicSizes;
};
AttentionSizes getAttentionSizes(OpBuilder &b, AttentionOp op);

/// The end of the keys a query tile can see: `Lk`, bounded by `length`
/// (key_lengths[b] as an index, when given, clamped at 0) and, when
/// `causalEnd` is given (the position after the tile's last row), by it.
Value buildKeyEnd(OpBuilder &b, Location loc, Value lk, Value length,
                  Value causalEnd);

/// The key end that `op`'s causal mask or lookahead sets for query positions
/// below `posEnd` (the position after a tile's last row): `posEnd` plus the
/// reach (AttentionOp::getKeyReach), or a null value when keys ahead are
/// not masked. For buildKeyEnd's `causalEnd`.
Value buildAheadEnd(OpBuilder &b, Location loc, AttentionOp op, Value posEnd);

/// The first key a query tile whose first query position is `firstPos` can
/// see under `window = W`: max(firstPos + 1 - W, 0). Keys before it are
/// masked for every row of the tile.
Value buildWindowStart(OpBuilder &b, Location loc, Value firstPos,
                       int64_t window);

/// `table` along the attention's diagonal: `diag[c, r] = table[bucket(r -
/// shift, 0), c]` for every column c of the 2-D `table` (heads of a bias
/// table, value rows of a rel_values table), `r < Lq + Lk - 1 + padding`,
/// with `shift = Lk - 1 - q_offset`, so that query position i and key j
/// read `diag[c, i - j + shift]`. Built once, with the exact bucket
/// arithmetic; `padding` extra entries let a vector kernel read past the
/// last query row without a mask.
Value buildToeplitzDiagonal(OpBuilder &b, AttentionOp op, Value table,
                            BucketingAttrInterface bucketing,
                            int64_t padding = 0);

/// The buckets along the attention's diagonal: a 1 × (Lq + Lk - 1 +
/// padding) index tensor `diag[0, r] = bucket(r - shift, 0)`, indexed like
/// buildToeplitzDiagonal's tables.
Value buildBucketDiagonal(OpBuilder &b, AttentionOp op,
                          BucketingAttrInterface bucketing,
                          int64_t padding = 0);

/// `Lk - 1 - q_offset`: the shift of buildToeplitzDiagonal's index.
Value buildDiagonalShift(OpBuilder &b, AttentionOp op);

/// The keys a GPU attention block whose first row is `row0` can see:
/// `buildKeyEnd` with key_lengths[b0] and, for causal attention, the position
/// after the block's last row (`rows` rows, clamped to Lq).
Value buildGPUBlockKeyEnd(OpBuilder &b, Location loc, AttentionOp op,
                          const AttentionSizes &dims, Value b0, Value row0,
                          Value rows);

/// The first key tile a GPU attention block whose first row is `row0` can
/// see: 0, or with a window the tile of `tileK` keys (aligned: the kernels'
/// tiles keep their alignment) holding the first row's window start.
Value buildGPUBlockKeyStart(OpBuilder &b, Location loc, AttentionOp op,
                            Value row0, int64_t tileK);

/// The frame both GPU attention kernels share: the result buffer and the
/// `scf.if` that skips an empty grid (not a valid launch), with the rewriter
/// left at the start of its body.
struct GPUKernelFrame {
  Value out;
  scf::IfOp nonEmpty;
};
GPUKernelFrame beginGPUKernel(RewriterBase &rewriter, AttentionOp op,
                              const AttentionSizes &dims, Value numBlocks);
/// Terminates the launch body `body` and replaces `op` by the result buffer
/// as a tensor.
void finishGPUKernel(RewriterBase &rewriter, AttentionOp op, Block &body,
                     const GPUKernelFrame &frame);

/// An output row's normalization: 1 / l, and whether the row saw no key
/// (l = 0), whose outputs are 0.
struct GPURowNormalizer {
  Value inverse, empty;
};
GPURowNormalizer buildGPURowNormalizer(OpBuilder &b, Location loc, Value lsum);
/// acc / l in `elementType`, 0 for a row without keys.
Value normalizeGPUOutput(OpBuilder &b, Location loc,
                         const GPURowNormalizer &row, Value acc,
                         Type elementType);

/// A GPU kernel's score of (row, key): `s` (the scaled q·k, f32) plus the
/// bias and `score_mod`, or -inf where the key is masked (`keyRaw >= kEnd`,
/// causal). `key` is `keyRaw` clamped to a valid key, `qPos` the row's query
/// position. A null `kEnd` says that the key is below the end (no test).
/// With `scale`, `s` is the unscaled q·k: s·scale (one FMA with the bias).
/// Without `causalMask` the caller knows that no key is past the row's
/// query position.
Value buildGPUScore(OpBuilder &b, Location loc, AttentionOp op, Value s,
                    Value b0, Value h, Value row, Value qPos, Value keyRaw,
                    Value key, Value kEnd, Value scale = {},
                    bool causalMask = true);

/// Whether `op` is free of memory effects, or a `linalg.generic` on tensors
/// whose body is but for `cf.assert`s (a front end's bounds checks of a
/// gather): unused, it may go, as its checks guard nothing.
bool isPureUpToChecks(Operation *op);

/// The score_mod argument of `block` (3: query position, 4: key position)
/// that `v` is, directly or through one `arith.index_cast` to a signless
/// integer of at least 32 bits (positions stay below 2^31), or -1.
int64_t positionArgument(Value v, Block &block);

/// The predicate that holds for (y, x) when `pred` holds for (x, y).
arith::CmpIPredicate swapCmpIOperands(arith::CmpIPredicate pred);

/// Tabulates the Toeplitz terms of `score_mod` along the diagonal: every
/// value that depends on the query and key positions only through `i - j`
/// (`arith.subi` of them, a Toeplitz `rpe.bucket(%i, %j)`), and otherwise on
/// `%h` and values from outside, and that feeds a per-element op — a T5 /
/// clip / log bias lookup, an ALiBi term, their sums, the bucket index of the
/// Shaw and DeBERTa gathers — is computed once per (head, diagonal) before
/// `op` by a `linalg.generic` (exact bucket arithmetic and element types),
/// and read in `score_mod` as `tensor.extract %table[%h, %i - %j + shift]`
/// (`[0, ...]` when it does not depend on the head), with `shift = Lk - 1 -
/// q_offset`. Tables hold `Lq + Lk - 1 + padding` entries per row: `padding`
/// lets a vector kernel read past the last query row without a mask. New
/// tables are appended to `tables` when given. With `narrowedTables`, a term
/// that is an `rpe.bucket` (of at most 2^31 - 1 buckets) is stored as i32
/// and read as `arith.index_cast` of its entry — half the bytes of `index`
/// for a vector kernel's loads — and its table is appended there too. With
/// `shareBuckets`, a per-head table reads the `rpe.bucket`s it depends on
/// from a 1 × (Lq + Lk - 1 + padding) table of their own (i32 when that
/// fits), so a bucket (a T5 bucket's logarithm) is computed once per
/// diagonal instead of once per (head, diagonal): for the CPU, where the
/// tables are built by one loop nest; a GPU builds them in parallel and
/// would pay a launch for it. Returns how many terms were tabulated.
int64_t hoistToeplitzTerms(RewriterBase &rewriter, AttentionOp op,
                           int64_t padding = 0,
                           SmallVectorImpl<Value> *tables = nullptr,
                           SmallVectorImpl<Value> *narrowedTables = nullptr,
                           bool shareBuckets = false);

/// hoistToeplitzTerms for Swin's window: every value that depends on the
/// positions only through a `window2d` `rpe.bucket(%i, %j)` (a window bias
/// lookup) is tabulated per (head, plane difference) and read as
/// `tensor.extract %table[%h, P(%i) - P(%j) + shift]`, with `P(t) = t + (t
/// floordiv Ww)·(Ww - 1)` (Window2DBucketingAttr::buildPlaneOffset) and
/// `shift = P(Lk - 1) - P(q_offset)`. The rows hold about `2(Lq + Lk)`
/// entries, plus `padding`. Query rows in one window row read consecutive
/// entries, as along a diagonal: a vector kernel loads them instead of
/// gathering them from the bucket-major table. `shareBuckets` as for
/// hoistToeplitzTerms.
int64_t hoistWindowTerms(RewriterBase &rewriter, AttentionOp op,
                         int64_t padding = 0,
                         SmallVectorImpl<Value> *tables = nullptr,
                         bool shareBuckets = false);

/// The static workgroup memory a GPU block gets without the opt-in (the
/// attention kernels size their tiles to fit it).
constexpr int64_t kGPUStaticSharedBytes = 48 * 1024;

/// The static head dimensions (D, Dv) of an attention that the tensor-core
/// GPU kernels take: q, k and v all f16 or all bf16, D a positive multiple
/// of 16, Dv of 8, no rel_values; none otherwise.
std::optional<std::pair<int64_t, int64_t>>
getTensorCoreHeadDims(AttentionOp op);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_TRANSFORMS_ATTENTIONUTILS_H
