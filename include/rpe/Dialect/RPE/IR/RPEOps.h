//===- RPEOps.h - rpe operations --------------------------------*- C++ -*-===//

#ifndef RPE_DIALECT_RPE_IR_RPEOPS_H
#define RPE_DIALECT_RPE_IR_RPEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "rpe/Dialect/RPE/IR/RPEAttrs.h"
#include "rpe/Dialect/RPE/IR/RPEDialect.h"
#include "rpe/Dialect/RPE/IR/ShapeConstraints.h"

#include "rpe/Dialect/RPE/IR/RPEOpInterfaces.h.inc"

#define GET_OP_CLASSES
#include "rpe/Dialect/RPE/IR/RPEOps.h.inc"

#endif // RPE_DIALECT_RPE_IR_RPEOPS_H
