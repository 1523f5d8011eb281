//===- Transforms.h - rpe rewrite patterns ----------------------*- C++ -*-===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_TRANSFORMS_H
#define RPE_DIALECT_RPE_TRANSFORMS_TRANSFORMS_H

#include <cstdint>

namespace mlir {
class RewritePatternSet;

namespace rpe {

struct TileAttentionOptions {
  int64_t tileQ = 64;
  int64_t tileK = 64;
};

/// Patterns rewriting rpe.attention into the tiled online-softmax kernel.
void populateRPETileAttentionPatterns(RewritePatternSet &patterns,
                                      const TileAttentionOptions &options);

/// Patterns raising unfused attention in linalg on tensors (q·kᵀ, scale,
/// bias, softmax, ·v, and + shaw_values of the same probabilities) to
/// rpe.attention.
void populateRPERaiseAttentionPatterns(RewritePatternSet &patterns);

/// Patterns folding bias producers (relative_bias, alibi, shaw_logits,
/// disentangled_bias and sums of them) into rpe.attention so that no Lq×Lk
/// bias is built, and raising unfused linalg attention to rpe.attention.
void populateRPEFuseAttentionPatterns(RewritePatternSet &patterns);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_TRANSFORMS_TRANSFORMS_H
