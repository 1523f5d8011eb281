//===- LinalgMatchers.h - matching front-end linalg code -------*- C++ -*-===//
//
// Small matchers shared by the passes that raise front-end code (torch-mlir's
// linalg on tensors) to rpe ops: single-op generic bodies and the elements
// of constant tensors (dense or dense_resource, as torch-mlir writes
// buffers).
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_UTILS_LINALGMATCHERS_H
#define RPE_DIALECT_RPE_UTILS_LINALGMATCHERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir {
namespace rpe {

/// The single op of type OpTy in a linalg body before its yield, if it is
/// the only one.
template <typename OpTy> OpTy singleBodyOp(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 2)
    return OpTy();
  return dyn_cast<OpTy>(body.front());
}

/// The op of `generic` = the producer of `v` when it is an element-wise
/// generic (all loops parallel, identity output map, one init) whose body
/// is one OpTy on its input arguments, yielded.
template <typename OpTy>
OpTy elementwiseBody(Value v, linalg::GenericOp &generic) {
  generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getIndexingMapsArray().back().isIdentity())
    return OpTy();
  auto op = singleBodyOp<OpTy>(generic);
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!op || yield.getValues().front() != op->getResult(0))
    return OpTy();
  for (Value operand : op->getOperands()) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != &body ||
        arg.getArgNumber() >= generic.getNumDpsInputs())
      return OpTy();
  }
  return op;
}

/// Element `flat` (row-major) of a constant tensor attribute, dense or
/// dense_resource (i32, i64, f32, f64); null when out of range or unknown.
Attribute constantElement(Attribute tensor, int64_t flat);

/// The values of a constant 1-D f32 tensor `v` (dense or dense_resource).
std::optional<SmallVector<float>> constantF32Vector(Value v);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_UTILS_LINALGMATCHERS_H
