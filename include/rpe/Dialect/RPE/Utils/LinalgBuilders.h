//===- LinalgBuilders.h - small builders of linalg on tensors ---*- C++ -*-===//
//
// Helpers shared by the reference lowering and the tiled attention kernel.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_UTILS_LINALGBUILDERS_H
#define RPE_DIALECT_RPE_UTILS_LINALGBUILDERS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir {
namespace rpe {

constexpr utils::IteratorType kPar = utils::IteratorType::parallel;
constexpr utils::IteratorType kRed = utils::IteratorType::reduction;

/// Size `dim` of `tensor` as an OpFoldResult / as an index Value.
OpFoldResult dimOf(OpBuilder &b, Location loc, Value tensor, int64_t dim);
Value dimValue(OpBuilder &b, Location loc, Value tensor, int64_t dim);

/// Sizes of a result type whose `?` dims come, in order, from `dynamicSizes`.
SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, RankedTensorType type,
                                     ValueRange dynamicSizes);

Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType);

/// An f32 tensor of `sizes` filled with `value`.
Value filledF32(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                double value);

Value indexConst(OpBuilder &b, Location loc, int64_t v);
Value f32Const(OpBuilder &b, Location loc, double v);
Value f64Const(OpBuilder &b, Location loc, double v);

/// Loads `tensor[indices]` and converts it to f32.
Value extractF32(OpBuilder &b, Location loc, Value tensor, ValueRange indices);

/// Affine map of `numDims` loops selecting `results`.
AffineMap dimsMap(MLIRContext *ctx, unsigned numDims,
                  ArrayRef<AffineExpr> results);

/// linalg.index 0 .. n-1 inside a linalg body.
SmallVector<Value> loopIndices(OpBuilder &b, Location loc, unsigned n);

void yieldValue(OpBuilder &b, Location loc, Value v);

using BodyFn = function_ref<void(OpBuilder &, Location, ValueRange)>;

/// A single-output linalg.generic; returns its result.
Value generic(OpBuilder &b, Location loc, ValueRange inputs,
              ArrayRef<AffineMap> inputMaps, Value init, AffineMap outputMap,
              ArrayRef<utils::IteratorType> iterators, BodyFn body);

/// Converts an f32 tensor to `elementType` element-wise (no-op for f32).
Value convertTensor(OpBuilder &b, Location loc, Value f32Tensor,
                    Type elementType);

class AlibiOp;
class BucketingAttrInterface;

/// The diagonals of a Toeplitz bucketing: a `rows` × `length` tensor whose
/// entry (c, r) is `entry(c, bucket(r - shift, 0))`, so that query position
/// i and key j read entry (c, i - j + shift).
Value buildDiagonalTable(
    OpBuilder &b, Location loc, Value rows, Value length, Value shift,
    Type elementType, BucketingAttrInterface bucketing,
    function_ref<Value(OpBuilder &, Location, Value, Value)> entry);

/// buildDiagonalTable of the lookup `table[bucket, c]` for every column c
/// of the 2-D `table` (heads of a bias table, value rows of a rel_values
/// table).
Value buildTableDiagonals(OpBuilder &b, Location loc, Value table, Value length,
                          Value shift, BucketingAttrInterface bucketing);

/// The slopes m_h of `op` as an f64 H-vector, built once: its `slopes`
/// attribute as a constant, or the default slopes computed from the head
/// index (also for a dynamic H).
Value buildAlibiSlopes(OpBuilder &b, Location loc, AlibiOp op);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_UTILS_LINALGBUILDERS_H
