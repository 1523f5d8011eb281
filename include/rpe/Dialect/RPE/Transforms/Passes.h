//===- Passes.h - rpe dialect passes ----------------------------*- C++ -*-===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_PASSES_H
#define RPE_DIALECT_RPE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace rpe {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"

/// The unit attribute on the `scf.forall` over (batch, head) that
/// rpe-split-attention-heads builds; rpe-outline-kernels moves such a loop
/// into one function as a whole.
constexpr llvm::StringLiteral kSplitHeadsLoopAttrName = "rpe.split_heads";

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_TRANSFORMS_PASSES_H
