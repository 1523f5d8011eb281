//===- ShapeConstraints.h - run-time shape constraints of rpe ops -*- C++
//-*-===//
//
// What the sizes of an op's operands must satisfy for the op to be in bounds.
// The verifiers check the static part; rpe-insert-shape-checks turns the rest
// into checks that compiled entry points run before touching memory.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_IR_SHAPECONSTRAINTS_H
#define RPE_DIALECT_RPE_IR_SHAPECONSTRAINTS_H

#include "mlir/IR/Value.h"

#include <string>

namespace mlir {
namespace rpe {

/// Dimension `dim` of the shaped `value`, or the `index` value itself when
/// `dim` is -1. `name` is what the op calls it ("q", "table", ...).
struct SizeRef {
  Value value;
  int64_t dim = -1;
  std::string name;
};

struct ShapeConstraint {
  enum class Kind {
    /// size == other.
    Equal,
    /// size == constant.
    EqualConstant,
    /// size >= constant.
    AtLeast,
    /// size % other == 0 and other > 0.
    MultipleOf,
    /// size % constant == 0.
    MultipleOfConstant,
    /// Every element of the 1-D integer tensor size.value lies in
    /// [0, other]; `size.dim` is -1.
    ValuesInRange,
  };
  Kind kind;
  SizeRef size;
  SizeRef other;
  int64_t constant = 0;
  /// What the sizes are ("head dimension", "buckets of clip<...>").
  std::string what;
};

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_IR_SHAPECONSTRAINTS_H
