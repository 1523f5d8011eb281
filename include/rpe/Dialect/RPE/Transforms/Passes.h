//===- Passes.h - rpe dialect passes ----------------------------*- C++ -*-===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_PASSES_H
#define RPE_DIALECT_RPE_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace rpe {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_TRANSFORMS_PASSES_H
