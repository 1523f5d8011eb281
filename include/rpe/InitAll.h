//===- InitAll.h - register everything rpe provides -------------*- C++ -*-===//

#ifndef RPE_INITALL_H
#define RPE_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace rpe {

/// Registers the rpe dialect and every upstream dialect and extension.
void registerAllDialects(DialectRegistry &registry);

/// Registers rpe's passes and pipelines and every upstream pass.
void registerAllPasses();

} // namespace rpe
} // namespace mlir

#endif // RPE_INITALL_H
