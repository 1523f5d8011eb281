//===- RPEDialect.h - rpe dialect -------------------------------*- C++ -*-===//

#ifndef RPE_DIALECT_RPE_IR_RPEDIALECT_H
#define RPE_DIALECT_RPE_IR_RPEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "rpe/Dialect/RPE/IR/RPEDialect.h.inc"

#endif // RPE_DIALECT_RPE_IR_RPEDIALECT_H
