//===- ElementBuilders.cpp - scalar pieces of rpe lowerings -----*- C++ -*-===//

#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace mlir::rpe;

Value mlir::rpe::castIndexToFloat(OpBuilder &b, Location loc, Value index,
                                  Type type) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, type, i64);
}

Value mlir::rpe::buildQueryPosition(OpBuilder &b, Location loc, Value row,
                                    Value qOffset) {
  return qOffset ? arith::AddIOp::create(b, loc, row, qOffset).getResult()
                 : row;
}

Value mlir::rpe::buildWindowMasked(OpBuilder &b, Location loc, Value key,
                                   Value qPos, int64_t window) {
  auto vecType = dyn_cast<VectorType>(key.getType());
  TypedAttr attr = b.getIndexAttr(window);
  if (vecType)
    attr = DenseElementsAttr::get(vecType, attr);
  Value w = arith::ConstantOp::create(b, loc, attr);
  Value end = arith::AddIOp::create(b, loc, key, w);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end, qPos);
}

Value mlir::rpe::buildAheadMasked(OpBuilder &b, Location loc, Value key,
                                  Value qPos, int64_t reach) {
  if (reach != 0) {
    TypedAttr attr = b.getIndexAttr(reach);
    if (auto vecType = dyn_cast<VectorType>(key.getType()))
      attr = DenseElementsAttr::get(vecType, attr);
    qPos = arith::AddIOp::create(b, loc, qPos,
                                 arith::ConstantOp::create(b, loc, attr));
  }
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, key, qPos);
}

Value mlir::rpe::applyAttentionMasks(OpBuilder &b, Location loc, AttentionOp op,
                                     Value score, Value key, Value qPos,
                                     Value length) {
  Value masked;
  auto orMask = [&](Value m) {
    masked = masked ? arith::OrIOp::create(b, loc, masked, m).getResult() : m;
  };
  if (std::optional<int64_t> reach = op.getKeyReach())
    orMask(buildAheadMasked(b, loc, key, qPos, *reach));
  if (std::optional<uint64_t> window = op.getWindow())
    orMask(buildWindowMasked(b, loc, key, qPos, static_cast<int64_t>(*window)));
  if (length)
    orMask(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key, length));
  if (!masked)
    return score;
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, loc, masked, negInf, score);
}

Value mlir::rpe::buildAttentionScale(OpBuilder &b, Location loc,
                                     AttentionOp op, Value headDim) {
  Type f32 = b.getF32Type();
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  if (std::optional<double> scale = op.getStaticScale())
    return constant(*scale);
  Value d = castIndexToFloat(
      b, loc,
      arith::MaxUIOp::create(b, loc, headDim,
                             arith::ConstantIndexOp::create(b, loc, 1)),
      f32);
  return arith::DivFOp::create(b, loc, constant(1.0),
                               math::SqrtOp::create(b, loc, d));
}

/// Bound of clampQueryOffsets: that of the position differences.
static constexpr int64_t kMaxQueryOffset = int64_t(1) << 62;

/// Whether `offset` is `minsi(maxsi(x, -2^62), 2^62)`.
static bool isClampedQueryOffset(Value offset) {
  auto min = offset.getDefiningOp<arith::MinSIOp>();
  if (!min)
    return false;
  auto max = min.getLhs().getDefiningOp<arith::MaxSIOp>();
  APInt hi, lo;
  return max && matchPattern(min.getRhs(), m_ConstantInt(&hi)) &&
         matchPattern(max.getRhs(), m_ConstantInt(&lo)) &&
         hi.getSExtValue() == kMaxQueryOffset &&
         lo.getSExtValue() == -kMaxQueryOffset;
}

void mlir::rpe::clampQueryOffsets(Operation *root) {
  DenseMap<Value, Value> clamped;
  auto clamp = [&](OpOperand &operand) {
    Value offset = operand.get();
    if (isClampedQueryOffset(offset))
      return;
    Value &to = clamped[offset];
    if (!to) {
      OpBuilder b(offset.getContext());
      b.setInsertionPointAfterValue(offset);
      Location loc = offset.getLoc();
      Value lo = arith::ConstantIndexOp::create(b, loc, -kMaxQueryOffset);
      Value hi = arith::ConstantIndexOp::create(b, loc, kMaxQueryOffset);
      to = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, offset, lo), hi);
    }
    operand.set(to);
  };
  root->walk([&](Operation *op) {
    if (auto rb = dyn_cast<RelativeBiasOp>(op)) {
      if (rb.getQOffset())
        clamp(rb.getQOffsetMutable()[0]);
    } else if (auto alibi = dyn_cast<AlibiOp>(op)) {
      if (alibi.getQOffset())
        clamp(alibi.getQOffsetMutable()[0]);
    } else if (auto attention = dyn_cast<AttentionOp>(op)) {
      if (attention.getQOffset())
        clamp(attention.getQOffsetMutable()[0]);
    }
  });
}

Value mlir::rpe::castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  // Vectors convert element-wise: `type` is the element or the vector type.
  auto vectorType = dyn_cast<VectorType>(value.getType());
  Type toElement = getElementTypeOrSelf(type);
  auto like = [&](Type element) -> Type {
    return vectorType ? vectorType.clone(element) : element;
  };
  unsigned from = getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth();
  unsigned to = toElement.getIntOrFloatBitWidth();
  if (from < to)
    return arith::ExtFOp::create(b, loc, like(toElement), value);
  if (from > to) {
    // f64 -> 16-bit floats goes through f32: there is no runtime routine for
    // the direct conversion to bf16 (arith-expand only expands f32 -> bf16).
    if (from == 64 && to == 16)
      value = arith::TruncFOp::create(b, loc, like(b.getF32Type()), value);
    return arith::TruncFOp::create(b, loc, like(toElement), value);
  }
  // Same width, different format (f16 <-> bf16): through f32.
  Value f32 = arith::ExtFOp::create(b, loc, like(b.getF32Type()), value);
  return arith::TruncFOp::create(b, loc, like(toElement), f32);
}

Value mlir::rpe::buildDefaultAlibiSlope(OpBuilder &b, Location loc, Value head,
                                        Value numHeads) {
  Type i64 = b.getI64Type(), f64 = b.getF64Type();
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto f = [&](double v) { return f64Const(b, loc, v); };
  // n = 2^(63 - ctlz(H)): the largest power of two <= H.
  Value h64 = arith::IndexCastOp::create(b, loc, i64, numHeads);
  Value lz = math::CountLeadingZerosOp::create(b, loc, h64);
  Value shift = arith::SubIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, i64, 63), lz);
  Value n64 = arith::ShLIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, i64, 1), shift);
  Value n = arith::IndexCastOp::create(b, loc, b.getIndexType(), n64);
  Value nf = arith::SIToFPOp::create(b, loc, f64, n64);
  // h < n: -8(h+1)/n.  h >= n: -8(2(h-n)+1)/(2n).
  Value inFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, head, n);
  Value hPlus1 = castIndexToFloat(
      b, loc, arith::AddIOp::create(b, loc, head, cst(1)), f64);
  Value first = arith::DivFOp::create(
      b, loc, arith::MulFOp::create(b, loc, f(-8.0), hPlus1), nf);
  Value k = arith::SubIOp::create(b, loc, head, n);
  Value odd = castIndexToFloat(
      b, loc,
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, k, cst(2)),
                            cst(1)),
      f64);
  Value second =
      arith::DivFOp::create(b, loc, arith::MulFOp::create(b, loc, f(-8.0), odd),
                            arith::MulFOp::create(b, loc, f(2.0), nf));
  Value exponent = arith::SelectOp::create(b, loc, inFirst, first, second);
  return math::Exp2Op::create(b, loc, exponent);
}

Value mlir::rpe::buildAlibiBias(OpBuilder &b, Location loc, Value slope,
                                Value qPos, Value kPos, bool symmetric) {
  Type f64 = b.getF64Type();
  Value dist = arith::SubIOp::create(b, loc, kPos, qPos);
  if (symmetric) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value neg = arith::SubIOp::create(b, loc, zero, dist);
    // -|d| = min(d, -d).
    dist = arith::MinSIOp::create(b, loc, dist, neg);
  }
  Value value = arith::MulFOp::create(b, loc, castFloat(b, loc, slope, f64),
                                      castIndexToFloat(b, loc, dist, f64));
  return arith::TruncFOp::create(b, loc, b.getF32Type(), value);
}

Value mlir::rpe::inlineScoreMod(OpBuilder &b, Region &region, ValueRange args) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  auto yield = cast<YieldOp>(block.getTerminator());
  return mapping.lookupOrDefault(yield.getValues().front());
}
