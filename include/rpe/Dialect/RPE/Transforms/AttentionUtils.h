//===- AttentionUtils.h - helpers shared by the attention kernels -*- C++ -*-=//
//
// Rewrites of `rpe.attention`'s `score_mod` region shared by the tiled
// (rpe-tile-attention) and the vector (rpe-vectorize-attention) kernels.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_ATTENTIONUTILS_H
#define RPE_DIALECT_RPE_TRANSFORMS_ATTENTIONUTILS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rpe {
class AttentionOp;

/// Replaces Toeplitz table lookups in `score_mod` by a per-head diagonal
/// vector built once before `op`: `tensor.extract %T[rpe.bucket(%i, %j), %h]`
/// becomes `tensor.extract %diag[%h, %i - %j + shift]` with
/// `shift = Lk - 1 - q_offset` and `diag[h, r] = T[bucket(r - shift, 0), h]`
/// (the bucket depends on i - j only). The diagonal has `Lq + Lk - 1 +
/// padding` entries per head: `padding` extra entries let a vector kernel
/// read past the last query row without a mask. The new diagonals are
/// appended to `diagonals` when given. Returns the number of lookups
/// replaced.
int64_t hoistToeplitzLookups(RewriterBase &rewriter, AttentionOp op,
                             int64_t padding = 0,
                             SmallVectorImpl<Value> *diagonals = nullptr);

/// Replaces every remaining `rpe.bucket(%i, %j)` with a Toeplitz bucketing in
/// `score_mod` (for instance the gather index of the Shaw and DeBERTa terms)
/// by a lookup in an i32 vector of buckets along the diagonal, built once:
/// `index_cast(tensor.extract %bdiag[%i - %j + shift])`, with the same shift
/// and padding as hoistToeplitzLookups. Returns the number replaced.
int64_t hoistToeplitzBuckets(RewriterBase &rewriter, AttentionOp op,
                             int64_t padding = 0,
                             SmallVectorImpl<Value> *diagonals = nullptr);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_TRANSFORMS_ATTENTIONUTILS_H
