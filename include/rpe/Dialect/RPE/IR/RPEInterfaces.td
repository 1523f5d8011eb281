//===- RPEInterfaces.td - rpe interfaces -------------------*- tablegen -*-===//

#ifndef RPE_DIALECT_RPE_IR_RPEINTERFACES_TD
#define RPE_DIALECT_RPE_IR_RPEINTERFACES_TD

include "mlir/IR/OpBase.td"

def RPE_BucketingAttrInterface : AttrInterface<"BucketingAttrInterface"> {
  let cppNamespace = "::mlir::rpe";
  let description = [{
    A bucketing scheme maps a (query position `i`, key position `j`) pair to
    a bucket index `b ∈ [0, getNumBuckets())`. The same mapping is available
    twice: evaluated on integers (`bucket`, used by folders and tests) and
    emitted as index arithmetic (`buildBucket`, used by every lowering), so
    that all of rpe shares one definition of each scheme.
  }];
  let methods = [
    InterfaceMethod<"Number of buckets (rows of the table indexed by it).",
      "int64_t", "getNumBuckets">,
    InterfaceMethod<[{
        Bucket of query position `i` and key position `j`. Total: any pair of
        int64 positions gives a bucket in [0, getNumBuckets()).
      }], "int64_t", "bucket", (ins "int64_t":$i, "int64_t":$j)>,
    InterfaceMethod<[{
        Emits IR (arith/math on `index`) computing `bucket(i, j)`; `i` and `j`
        are `index` values. Returns an `index` value.
      }], "::mlir::Value", "buildBucket",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$i, "::mlir::Value":$j)>,
    InterfaceMethod<[{
        True when the bucket depends only on the difference `i - j`, so that
        a bias indexed by it is a Toeplitz matrix.
      }], "bool", "isToeplitz">,
  ];
}

def RPE_ShapeConstrainedOpInterface
    : OpInterface<"ShapeConstrainedOpInterface"> {
  let cppNamespace = "::mlir::rpe";
  let description = [{
    An op whose operand sizes must agree for it to stay in bounds (a head
    dimension shared by q and k, a table with one row per bucket, ...). The
    verifier checks the static sizes; `getShapeConstraints` lists every
    constraint that involves a dynamic size, so that rpe-insert-shape-checks
    can check them when a compiled entry point is called.
  }];
  let methods = [
    InterfaceMethod<[{
        Appends the constraints on dynamic sizes (the op must verify).
      }], "void", "getShapeConstraints",
      (ins "::llvm::SmallVectorImpl<::mlir::rpe::ShapeConstraint> &":$constraints)>,
  ];
}

#endif // RPE_DIALECT_RPE_IR_RPEINTERFACES_TD
