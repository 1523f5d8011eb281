//===- Passes.td - rpe conversion passes -------------------*- tablegen -*-===//

#ifndef RPE_CONVERSION_PASSES_TD
#define RPE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertRPEToLinalgPass : Pass<"convert-rpe-to-linalg"> {
  let summary = "Lower every rpe op to linalg on tensors (the reference path)";
  let description = [{
    Unfused reference lowering: each rpe op becomes `linalg.generic` ops on
    tensors (plus `tensor`, `arith` and `math`), for static and dynamic
    shapes and f32/f16/bf16 element types with f32 accumulation. Attention is
    decomposed into scores, masking (causal, key_lengths, q_offset), the
    inlined `score_mod` region, a numerically safe softmax (a fully masked
    row gives 0) and the product with `v` (plus `rel_values`). Bucket
    arithmetic comes from the bucketing attribute interface's `buildBucket`;
    a `relative_bias` with a Toeplitz bucketing buckets each diagonal once
    (an H x (Lq + Lk - 1) table) and reads its rows from that table.
    This path materializes Lq×Lk intermediates; it is always correct, never
    fast.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numOpsLowered", "num-ops-lowered", "Number of rpe ops lowered">,
  ];
}

#endif // RPE_CONVERSION_PASSES_TD
