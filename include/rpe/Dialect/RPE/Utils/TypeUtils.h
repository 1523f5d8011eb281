//===- TypeUtils.h - finding types nested in types --------------*- C++ -*-===//
//
// Type queries shared by the checks on element types (rpe-check-llvm-types,
// rpe-compile's check of the lowered module).
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_UTILS_TYPEUTILS_H
#define RPE_DIALECT_RPE_UTILS_TYPEUTILS_H

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace rpe {

/// The first `T` nested in `type` (`type` itself, an element type, a field
/// of a struct, an input or result of a function type; in post-order) for
/// which `predicate` holds, or null.
template <typename T>
T findNestedType(Type type, function_ref<bool(T)> predicate) {
  T found;
  type.walk([&](T nested) {
    if (!predicate(nested))
      return WalkResult::advance();
    found = nested;
    return WalkResult::interrupt();
  });
  return found;
}

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_UTILS_TYPEUTILS_H
