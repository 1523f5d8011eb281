//===- ElementBuilders.h - scalar pieces of rpe lowerings -------*- C++ -*-===//
//
// Scalar IR builders shared by the reference lowering (inside linalg.generic
// bodies) and the fused attention kernels: each RPE term is defined once.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_UTILS_ELEMENTBUILDERS_H
#define RPE_DIALECT_RPE_UTILS_ELEMENTBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir {
class Region;

namespace rpe {
class AttentionOp;

/// Converts an `index` value to the float type `type` (through i64).
Value castIndexToFloat(OpBuilder &b, Location loc, Value index, Type type);

/// The query position `row + qOffset` (`row` when there is no offset).
Value buildQueryPosition(OpBuilder &b, Location loc, Value row, Value qOffset);

/// Whether `window = W` masks key position `key` for query position `qPos`
/// (index values, or vectors of them): `key + W <= qPos`.
Value buildWindowMasked(OpBuilder &b, Location loc, Value key, Value qPos,
                        int64_t window);

/// Whether key `key` is more than `reach` positions ahead of query position
/// `qPos` (`key > qPos + reach`; `reach` 0 is causal's mask, else
/// `lookahead`'s). Scalars or index vectors.
Value buildAheadMasked(OpBuilder &b, Location loc, Value key, Value qPos,
                       int64_t reach);

/// `score`, or -inf where `op`'s position masks hide key `key` from query
/// position `qPos`: causal or lookahead (buildAheadMasked), window, and
/// `key >= length` when `length` (key_lengths[b] as an index) is given.
Value applyAttentionMasks(OpBuilder &b, Location loc, AttentionOp op,
                          Value score, Value key, Value qPos, Value length);

/// The softmax scale of `op` as an f32 value: its `scale`, else
/// 1/sqrt(max(D, 1)) of the head dimension `headDim` (an index; with D = 0
/// the scores are empty sums and stay 0 instead of inf · 0). Every lowering
/// of attention takes its scale from here.
Value buildAttentionScale(OpBuilder &b, Location loc, AttentionOp op,
                          Value headDim);

/// Replaces the `q_offset` of every rpe op under `root` (relative_bias,
/// alibi, attention) by `clamp(q_offset, -2^62, 2^62)`, one clamp per
/// offset value (ops that shared an offset still do). Position differences
/// saturate at ±2^62 (Semantics.md), so for lengths below 2^61 the results
/// are those of the exact offset, and `row + q_offset`, `Lk - 1 - q_offset`
/// and the like cannot overflow in the lowerings. Clamped offsets are left
/// as they are.
void clampQueryOffsets(Operation *root);

/// Converts a float value (or vector) to the float type `type`, or to a
/// vector of it (extf/truncf or nothing); `type` may be the element type.
Value castFloat(OpBuilder &b, Location loc, Value value, Type type);

/// The default ALiBi slope (f64) of head `head` out of `numHeads` (both
/// `index`): 2^(-8(h+1)/n) for h < n, n the largest power of two <= H, then
/// 2^(-8(2k+1)/(2n)) for h = n + k.
Value buildDefaultAlibiSlope(OpBuilder &b, Location loc, Value head,
                             Value numHeads);

/// ALiBi bias (f32) for query position `qPos` and key position `kPos`
/// (`index`) with slope `slope` (f64): -m|q - k| when symmetric, else m(k - q).
Value buildAlibiBias(OpBuilder &b, Location loc, Value slope, Value qPos,
                     Value kPos, bool symmetric);

/// Clones the single block of a `score_mod` region at the insertion point of
/// `b`, with its arguments replaced by `args` (score, b, h, i, j); returns
/// the value it yields.
Value inlineScoreMod(OpBuilder &b, Region &region, ValueRange args);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_UTILS_ELEMENTBUILDERS_H
