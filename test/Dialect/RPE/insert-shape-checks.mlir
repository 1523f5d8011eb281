// RUN: rpe-opt %s -rpe-insert-shape-checks -split-input-file -verify-diagnostics | FileCheck %s
// A second run adds nothing (functions with checks, and the checks, are skipped).
// RUN: rpe-opt %s -rpe-insert-shape-checks -rpe-insert-shape-checks -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=TWICE

// Dynamic head dimensions and key lengths, and key_lengths values: the check
// reads sizes and key_lengths only. The first failing check wins.
// CHECK-LABEL: func.func @attn(
// CHECK-SAME: attributes {rpe.shape_check = @attn_check}
// CHECK: rpe.attention
// CHECK-LABEL: func.func @attn_check(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x?x?xf32>, %[[K:[^:]*]]: tensor<1x2x?x?xf32>, %[[V:[^:]*]]: tensor<1x2x?x?xf32>, %[[L:[^:]*]]: tensor<1xi32>) -> (i64, i64, i64, i64)
// CHECK-SAME: rpe.shape_check_messages = [
// CHECK-SAME: "rpe.attention at {{.*}}insert-shape-checks.mlir:{{[0-9]+}}:8: v (argument 2): dim 2 is %lld, expected %lld (= k (argument 1) dim 2, the key length)",
// CHECK-SAME: "rpe.attention at {{.*}}: k (argument 1): dim 3 is %lld, expected %lld (= q (argument 0) dim 3, the head dimension)",
// CHECK-SAME: "rpe.attention at {{.*}}: key_lengths (argument 3)[%lld] is %lld, expected in [0, %lld] (= k (argument 1) dim 2, the key lengths)"]
// CHECK-DAG: %[[VL:.*]] = tensor.dim %[[V]], %{{.*}}
// CHECK-DAG: %[[KL:.*]] = tensor.dim %[[K]], %{{.*}}
// CHECK: %[[BAD1:.*]] = arith.cmpi ne, %[[VL]], %[[KL]] : index
// CHECK: scf.for
// CHECK: tensor.extract %[[L]]
// CHECK-NOT: rpe.attention
// CHECK: %[[CODE:.*]] = arith.select %[[BAD1]], %c1_i64, %{{.*}} : i64
// CHECK: return %[[CODE]], %{{.*}}, %{{.*}}, %{{.*}} : i64, i64, i64, i64
// TWICE-LABEL: func.func @attn_check(
// TWICE-NOT: func.func @attn_check_check
func.func @attn(%q: tensor<1x2x?x?xf32>, %k: tensor<1x2x?x?xf32>, %v: tensor<1x2x?x?xf32>, %len: tensor<1xi32>) -> tensor<1x2x?x?xf32> {
  %o = rpe.attention %q, %k, %v key_lengths(%len : tensor<1xi32>) : tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  return %o : tensor<1x2x?x?xf32>
}

// -----

// The bias's sizes are its `sizes` operands (ReifyRankedShapedTypeOpInterface):
// Lq of q is checked against the index argument %l.
// CHECK-LABEL: func.func @bias_sizes_check(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x?x8xf32>, %{{[^:]*}}: tensor<1x2x?x8xf32>, %[[LEN:[^:]*]]: index)
// CHECK-SAME: "rpe.attention at {{.*}}: bias: dim 1 is %lld, expected %lld (= q (argument 0) dim 2, the query length)"
// CHECK-DAG: %[[QL:.*]] = tensor.dim %[[Q]], %{{.*}}
// CHECK: arith.cmpi ne, %[[LEN]], %[[QL]] : index
func.func @bias_sizes(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %l: index) -> tensor<1x2x?x8xf32> {
  %c2 = arith.constant 2 : index
  %lk = tensor.dim %k, %c2 : tensor<1x2x?x8xf32>
  %table = arith.constant dense<0.5> : tensor<9x2xf32>
  %b = rpe.relative_bias %table sizes(%l, %lk) by clip<max_distance = 4> : tensor<9x2xf32> -> tensor<2x?x?xf32>
  %o = rpe.attention %q, %k, %k bias(%b : tensor<2x?x?xf32>) : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// -----

// Linalg ops: every loop has one size (here the reduction loop of a matmul).
// CHECK-LABEL: func.func @mm_check(
// CHECK-SAME: "linalg.matmul at {{.*}}: operand 1 (argument 1): dim 0 is %lld, expected %lld (= operand 0 (argument 0) dim 1, the size of loop 2)"
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// Static shapes (checked by the verifiers) and private functions: no checks.
// CHECK-LABEL: func.func @static_check(
// CHECK-SAME: rpe.shape_check_messages = []
// CHECK-NOT: arith.cmpi
// CHECK: return {{.*}} : i64, i64, i64, i64
// CHECK-NOT: @helper_check
func.func @static(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  %r = rpe.rotary %x, %p : tensor<2x8x4xf32>, tensor<8xi64>
  return %r : tensor<2x8x4xf32>
}
func.func private @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

func.func @taken_check() {
  return
}
// expected-error @+1 {{cannot add the shape check of @taken: @taken_check already exists}}
func.func @taken() {
  return
}
