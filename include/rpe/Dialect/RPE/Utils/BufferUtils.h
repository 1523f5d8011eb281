//===- BufferUtils.h - questions about memref buffers -----------*- C++ -*-===//
//
// Small helpers shared by the passes that reason about which buffer a
// memref value is (fill elision, offload to the GPU, accumulator
// promotion).
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_UTILS_BUFFERUTILS_H
#define RPE_DIALECT_RPE_UTILS_BUFFERUTILS_H

#include "mlir/IR/Value.h"

namespace mlir {
namespace rpe {

/// The buffer the memref `v` is a view of (through view-like ops), or `v`
/// itself (also where `v` is no memref).
Value bufferRoot(Value v);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_UTILS_BUFFERUTILS_H
