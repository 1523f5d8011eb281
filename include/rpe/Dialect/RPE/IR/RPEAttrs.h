//===- RPEAttrs.h - rpe attributes ------------------------------*- C++ -*-===//

#ifndef RPE_DIALECT_RPE_IR_RPEATTRS_H
#define RPE_DIALECT_RPE_IR_RPEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "rpe/Dialect/RPE/IR/RPEAttrInterfaces.h.inc"

namespace mlir {
namespace rpe {
/// A float parameter of an rpe attribute (RoPE scaling factors).
FailureOr<llvm::APFloat> parseDoubleParameter(AsmParser &parser);
} // namespace rpe
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "rpe/Dialect/RPE/IR/RPEAttrs.h.inc"

namespace mlir {
namespace rpe {

/// Largest parameter accepted by the bucketing attributes (keeps every
/// bucket count and table size in int32 range).
constexpr int64_t kMaxBucketParam = int64_t(1) << 30;

/// Largest static sequence length the ops accept.
constexpr int64_t kMaxSequenceLength = (int64_t(1) << 31) - 1;

/// Parses a bucketing scheme without the `#rpe.` prefix, as op assembly
/// formats print it (`clip<max_distance = 4>`); `#rpe.clip<...>` would swallow
/// a following `: type` list as the attribute's type.
ParseResult parseBucketingAttr(AsmParser &parser,
                               BucketingAttrInterface &bucketing);
void printBucketingAttr(AsmPrinter &printer, BucketingAttrInterface bucketing);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_IR_RPEATTRS_H
