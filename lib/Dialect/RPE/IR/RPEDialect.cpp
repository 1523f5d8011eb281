//===- RPEDialect.cpp - rpe dialect -----------------------------*- C++ -*-===//

#include "rpe/Dialect/RPE/IR/RPEDialect.h"
#include "rpe/Dialect/RPE/IR/RPEOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::rpe;

#include "rpe/Dialect/RPE/IR/RPEDialect.cpp.inc"

void RPEDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "rpe/Dialect/RPE/IR/RPEOps.cpp.inc"
      >();
}

Operation *RPEDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}
