//===- Passes.h - rpe conversion passes -------------------------*- C++ -*-===//

#ifndef RPE_CONVERSION_PASSES_H
#define RPE_CONVERSION_PASSES_H

#include "rpe/Conversion/RPEToLinalg/RPEToLinalg.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace rpe {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "rpe/Conversion/Passes.h.inc"

} // namespace rpe
} // namespace mlir

#endif // RPE_CONVERSION_PASSES_H
