//===- VectorBuilders.h - register-level vector pieces ----------*- C++ -*-===//
//
// Vector IR builders shared by rpe's vector kernels (attention, transposes).
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_UTILS_VECTORBUILDERS_H
#define RPE_DIALECT_RPE_UTILS_VECTORBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir {
namespace rpe {

/// The transpose of a W × W register block: `rows` are W 1-D vectors of W
/// lanes (W a power of two); lane l of result m is lane m of `rows[l]`.
/// log2 W rounds of W two-input `vector.shuffle`s, each swapping the upper
/// right and lower left s × s blocks of every 2s × 2s block.
SmallVector<Value> buildRegisterTranspose(OpBuilder &b, Location loc,
                                          ArrayRef<Value> rows);

/// Whether vector loads and stores of `type` elements match a memref of
/// them: LLVM packs a vector's elements without padding, so only widths of
/// 8, 16, 32, ... bits (not i1, i3, i24, i48, f80) lay out alike.
bool isVectorMemoryElement(Type type);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_UTILS_VECTORBUILDERS_H
