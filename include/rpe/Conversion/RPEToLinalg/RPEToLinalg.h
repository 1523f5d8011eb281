//===- RPEToLinalg.h - rpe to linalg lowering -------------------*- C++ -*-===//

#ifndef RPE_CONVERSION_RPETOLINALG_RPETOLINALG_H
#define RPE_CONVERSION_RPETOLINALG_RPETOLINALG_H

namespace mlir {
class RewritePatternSet;

namespace rpe {

/// Patterns lowering every rpe op to linalg on tensors (the reference path).
void populateRPEToLinalgConversionPatterns(RewritePatternSet &patterns);

} // namespace rpe
} // namespace mlir

#endif // RPE_CONVERSION_RPETOLINALG_RPETOLINALG_H
