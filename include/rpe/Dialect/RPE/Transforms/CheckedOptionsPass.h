//===- CheckedOptionsPass.h - passes that check their options -*- C++ -*-===//
//
// A base for passes whose options have constraints the option parser does
// not know (positive tile sizes, powers of two, ranges).
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_CHECKEDOPTIONSPASS_H
#define RPE_DIALECT_RPE_TRANSFORMS_CHECKEDOPTIONSPASS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace rpe {

/// Puts a pass's `checkOptions` where bad options are reported best: when a
/// pipeline string sets them (an error before any pass runs, exit 1,
/// nothing dumped), and again when the pass runs, for options set from C++
/// (the error is then at the location of the pass's operation). `PassBase`
/// is the pass's ODS-generated base.
template <typename PassBase> class CheckedOptionsPass : public PassBase {
public:
  using PassBase::PassBase;

  LogicalResult initializeOptions(
      StringRef text,
      function_ref<LogicalResult(const Twine &)> errorHandler) final {
    if (failed(Pass::initializeOptions(text, errorHandler)))
      return failure();
    return checkOptions(errorHandler);
  }

protected:
  /// Reports the first bad option through `error` (which returns failure).
  virtual LogicalResult
  checkOptions(function_ref<LogicalResult(const Twine &)> error) const = 0;

  /// For runOnOperation: checks the options, reporting at the operation's
  /// location (without the operation: it is not at fault).
  LogicalResult checkOptionsOnRun() {
    return checkOptions([&](const Twine &message) -> LogicalResult {
      return emitError(this->getOperation()->getLoc(), message);
    });
  }
};

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_TRANSFORMS_CHECKEDOPTIONSPASS_H
