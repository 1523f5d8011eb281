//===- LinalgBuilders.cpp - small builders of linalg on tensors -*- C++ -*-===//

#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rpe;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Size `dim` of `tensor` as an OpFoldResult.
OpFoldResult mlir::rpe::dimOf(OpBuilder &b, Location loc, Value tensor,
                              int64_t dim) {
  return tensor::getMixedSize(b, loc, tensor, dim);
}

/// Size `dim` of `tensor` as an index Value.
Value mlir::rpe::dimValue(OpBuilder &b, Location loc, Value tensor,
                          int64_t dim) {
  return getValueOrCreateConstantIndexOp(b, loc, dimOf(b, loc, tensor, dim));
}

/// Sizes of a result type whose `?` dims come, in order, from `dynamicSizes`.
SmallVector<OpFoldResult> mlir::rpe::mixedSizes(OpBuilder &b,
                                                RankedTensorType type,
                                                ValueRange dynamicSizes) {
  SmallVector<OpFoldResult> sizes;
  unsigned next = 0;
  for (int64_t size : type.getShape())
    sizes.push_back(ShapedType::isDynamic(size)
                        ? OpFoldResult(dynamicSizes[next++])
                        : OpFoldResult(b.getIndexAttr(size)));
  return sizes;
}

Value mlir::rpe::emptyTensor(OpBuilder &b, Location loc,
                             ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

/// An f32 tensor of `sizes` filled with `value`.
Value mlir::rpe::filledF32(OpBuilder &b, Location loc,
                           ArrayRef<OpFoldResult> sizes, double value) {
  Value init = emptyTensor(b, loc, sizes, b.getF32Type());
  Value cst = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(static_cast<float>(value)));
  return linalg::FillOp::create(b, loc, cst, init).getResult(0);
}

Value mlir::rpe::indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value mlir::rpe::f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc,
                                   b.getF32FloatAttr(static_cast<float>(v)));
}

Value mlir::rpe::f64Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
}

/// Loads `tensor[indices]` and converts it to f32.
Value mlir::rpe::extractF32(OpBuilder &b, Location loc, Value tensor,
                            ValueRange indices) {
  Value v = tensor::ExtractOp::create(b, loc, tensor, indices);
  return castFloat(b, loc, v, b.getF32Type());
}

/// Affine map of `numDims` loops selecting `results`.
AffineMap mlir::rpe::dimsMap(MLIRContext *ctx, unsigned numDims,
                             ArrayRef<AffineExpr> results) {
  return AffineMap::get(numDims, 0, results, ctx);
}

SmallVector<Value> mlir::rpe::loopIndices(OpBuilder &b, Location loc,
                                          unsigned n) {
  SmallVector<Value> idx;
  for (unsigned d = 0; d < n; ++d)
    idx.push_back(linalg::IndexOp::create(b, loc, d));
  return idx;
}

void mlir::rpe::yieldValue(OpBuilder &b, Location loc, Value v) {
  linalg::YieldOp::create(b, loc, v);
}

/// A linalg.generic with an identity output map.
Value mlir::rpe::generic(OpBuilder &b, Location loc, ValueRange inputs,
                         ArrayRef<AffineMap> inputMaps, Value init,
                         AffineMap outputMap,
                         ArrayRef<utils::IteratorType> iterators, BodyFn body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(outputMap);
  return linalg::GenericOp::create(b, loc, init.getType(), inputs, init, maps,
                                   iterators, body)
      .getResult(0);
}

/// Converts an f32 tensor to `elementType` element-wise (no-op for f32).
Value mlir::rpe::convertTensor(OpBuilder &b, Location loc, Value f32Tensor,
                               Type elementType) {
  auto type = cast<RankedTensorType>(f32Tensor.getType());
  if (type.getElementType() == elementType)
    return f32Tensor;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, f32Tensor);
  Value init = emptyTensor(b, loc, sizes, elementType);
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> its(rank, kPar);
  return generic(b, loc, f32Tensor, {id}, init, id, its,
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   yieldValue(nb, nl, castFloat(nb, nl, args[0], elementType));
                 });
}

Value mlir::rpe::buildAlibiSlopes(OpBuilder &b, Location loc, AlibiOp op) {
  if (std::optional<ArrayRef<double>> slopes = op.getSlopes()) {
    SmallVector<double> values(slopes->begin(), slopes->end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      b.getF64Type());
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, ArrayRef<double>(values)));
  }
  RankedTensorType type = op.getResult().getType();
  Value numHeads = type.isDynamicDim(0)
                       ? op.getDynamicSizes().front()
                       : indexConst(b, loc, type.getDimSize(0));
  AffineMap id = b.getMultiDimIdentityMap(1);
  return generic(
      b, loc, {}, {}, emptyTensor(b, loc, {numHeads}, b.getF64Type()), id,
      {kPar}, [&](OpBuilder &nb, Location nl, ValueRange) {
        Value h = linalg::IndexOp::create(nb, nl, 0);
        yieldValue(nb, nl, buildDefaultAlibiSlope(nb, nl, h, numHeads));
      });
}

Value mlir::rpe::buildDiagonalTable(
    OpBuilder &b, Location loc, Value rows, Value length, Value shift,
    Type elementType, BucketingAttrInterface bucketing,
    function_ref<Value(OpBuilder &, Location, Value, Value)> entry) {
  Value zero = indexConst(b, loc, 0);
  Value init = emptyTensor(b, loc, {rows, length}, elementType);
  return generic(b, loc, {}, {}, init, b.getMultiDimIdentityMap(2),
                 {kPar, kPar}, [&](OpBuilder &nb, Location l, ValueRange) {
                   SmallVector<Value> idx = loopIndices(nb, l, 2);
                   // The query position at distance r - shift from key 0.
                   Value d = arith::SubIOp::create(nb, l, idx[1], shift);
                   Value bucket = bucketing.buildBucket(nb, l, d, zero);
                   yieldValue(nb, l, entry(nb, l, idx[0], bucket));
                 });
}

Value mlir::rpe::buildTableDiagonals(OpBuilder &b, Location loc, Value table,
                                     Value length, Value shift,
                                     BucketingAttrInterface bucketing) {
  auto tableType = cast<RankedTensorType>(table.getType());
  return buildDiagonalTable(
      b, loc, dimValue(b, loc, table, 1), length, shift,
      tableType.getElementType(), bucketing,
      [&](OpBuilder &nb, Location l, Value column, Value bucket) -> Value {
        return tensor::ExtractOp::create(nb, l, table,
                                         ValueRange{bucket, column});
      });
}
