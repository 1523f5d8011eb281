//===- SliceUtils.h - what a value is computed from -------------*- C++ -*-===//
//
// Dependence questions shared by the transforms (score_mod terms in the
// vector kernel, the loads of a register-tiled reduction).
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_UTILS_SLICEUTILS_H
#define RPE_DIALECT_RPE_UTILS_SLICEUTILS_H

#include "mlir/IR/Value.h"

namespace mlir {
namespace rpe {

/// Whether `v` is the block argument `arg` or is computed from it by ops
/// inside the region of `arg`'s block (nested regions included).
bool dependsOn(Value v, BlockArgument arg);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_UTILS_SLICEUTILS_H
