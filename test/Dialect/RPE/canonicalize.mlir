// RUN: rpe-opt %s -canonicalize -split-input-file | FileCheck %s

// A single-bucket table: every (i, j) reads row 0, so the bias is a broadcast.
// CHECK-LABEL: func.func @single_bucket_static
// CHECK-SAME: (%[[T:.*]]: tensor<1x4xf32>)
// CHECK: %[[ROW:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8x16xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[ROW]] : tensor<4xf32>) outs(%[[E]] : tensor<4x8x16xf32>) dimensions = [1, 2]
// CHECK-NOT: rpe.relative_bias
// CHECK: return %[[B]]
func.func @single_bucket_static(%t: tensor<1x4xf32>) -> tensor<4x8x16xf32> {
  %0 = rpe.relative_bias %t by clip<max_distance = 0> : tensor<1x4xf32> -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @single_bucket_dynamic
// CHECK-SAME: (%[[T:.*]]: tensor<1x?xf16>, %[[O:.*]]: index, %[[L:.*]]: index)
// CHECK: %[[ROW:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1]] : tensor<1x?xf16> into tensor<?xf16>
// CHECK: %[[C:.*]] = tensor.cast %[[ROW]] : tensor<?xf16> to tensor<3xf16>
// CHECK: %[[E:.*]] = tensor.empty(%[[L]], %[[L]]) : tensor<3x?x?xf16>
// CHECK: linalg.broadcast ins(%[[C]] : tensor<3xf16>) outs(%[[E]] : tensor<3x?x?xf16>) dimensions = [1, 2]
// CHECK-NOT: rpe.relative_bias
func.func @single_bucket_dynamic(%t: tensor<1x?xf16>, %off: index, %l: index) -> tensor<3x?x?xf16> {
  %0 = rpe.relative_bias %t offset %off sizes(%l, %l) by window2d<height = 1, width = 1> : tensor<1x?xf16> -> tensor<3x?x?xf16>
  return %0 : tensor<3x?x?xf16>
}

// -----

// Two buckets or more: the lookup stays.
// CHECK-LABEL: func.func @two_buckets
// CHECK: rpe.relative_bias %{{.*}} by clip<max_distance = 1>
// CHECK-NOT: linalg.broadcast
func.func @two_buckets(%t: tensor<3x4xf32>) -> tensor<4x8x8xf32> {
  %0 = rpe.relative_bias %t by clip<max_distance = 1> : tensor<3x4xf32> -> tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}

// -----

// rotary_dim = 0 rotates nothing.
// CHECK-LABEL: func.func @rotary_dim_zero
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %{{.*}}: tensor<8xi64>)
// CHECK-NEXT: return %[[X]]
func.func @rotary_dim_zero(%x: tensor<2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x16xf32> {
  %0 = rpe.rotary %x, %p {rotary_dim = 0 : i64} : tensor<2x8x16xf32>, tensor<8xi64>
  return %0 : tensor<2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @rotary_dim_nonzero
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {rotary_dim = 2 : i64}
func.func @rotary_dim_nonzero(%x: tensor<2x8x16xf32>, %p: tensor<8xi64>) -> tensor<2x8x16xf32> {
  %0 = rpe.rotary %x, %p {rotary_dim = 2 : i64} : tensor<2x8x16xf32>, tensor<8xi64>
  return %0 : tensor<2x8x16xf32>
}

// -----

// R(p2)R(p1)x = R(p1 + p2)x.
// CHECK-LABEL: func.func @rotary_compose
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x8x16xf32>, %[[P1:.*]]: tensor<8xi64>, %[[P2:.*]]: tensor<8xi64>)
// CHECK: %[[S:.*]] = arith.addi %[[P1]], %[[P2]] : tensor<8xi64>
// CHECK: %[[R:.*]] = rpe.rotary %[[X]], %[[S]] {interleaved, rotary_dim = 8 : i64, theta = 5.000000e+05 : f64}
// CHECK-NOT: rpe.rotary
// CHECK: return %[[R]]
func.func @rotary_compose(%x: tensor<1x2x8x16xf32>, %p1: tensor<8xi64>, %p2: tensor<8xi64>) -> tensor<1x2x8x16xf32> {
  %0 = rpe.rotary %x, %p1 {theta = 5.0e5 : f64, rotary_dim = 8 : i64, interleaved} : tensor<1x2x8x16xf32>, tensor<8xi64>
  %1 = rpe.rotary %0, %p2 {theta = 5.0e5 : f64, rotary_dim = 8 : i64, interleaved} : tensor<1x2x8x16xf32>, tensor<8xi64>
  return %1 : tensor<1x2x8x16xf32>
}

// -----

// The same linear (or llama3) scaling composes: positions add.
// CHECK-LABEL: func.func @rotary_compose_linear
// CHECK: arith.addi
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_linear<factor = 4.000000e+00>}
// CHECK-NOT: rpe.rotary
func.func @rotary_compose_linear(%x: tensor<2x8x16xf32>, %p1: tensor<8xi64>, %p2: tensor<8xi64>) -> tensor<2x8x16xf32> {
  %0 = rpe.rotary %x, %p1 {scaling = #rpe.rope_linear<factor = 4.0>} : tensor<2x8x16xf32>, tensor<8xi64>
  %1 = rpe.rotary %0, %p2 {scaling = #rpe.rope_linear<factor = 4.0>} : tensor<2x8x16xf32>, tensor<8xi64>
  return %1 : tensor<2x8x16xf32>
}

// -----

// Different scalings, or one scaled and one not, do not compose; YaRN (its
// attention factor would apply once instead of twice) and dynamic NTK (its
// frequencies depend on the largest position) never do.
// CHECK-LABEL: func.func @rotary_no_compose
// CHECK-NOT: arith.addi
// CHECK-COUNT-8: rpe.rotary
// CHECK-NOT: arith.addi
func.func @rotary_no_compose(%x: tensor<2x8x16xf32>, %p1: tensor<8xi64>, %p2: tensor<8xi64>)
    -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %0 = rpe.rotary %x, %p1 {scaling = #rpe.rope_linear<factor = 4.0>} : tensor<2x8x16xf32>, tensor<8xi64>
  %1 = rpe.rotary %0, %p2 {scaling = #rpe.rope_linear<factor = 2.0>} : tensor<2x8x16xf32>, tensor<8xi64>
  %2 = rpe.rotary %x, %p1 : tensor<2x8x16xf32>, tensor<8xi64>
  %3 = rpe.rotary %2, %p2 {scaling = #rpe.rope_linear<factor = 2.0>} : tensor<2x8x16xf32>, tensor<8xi64>
  %4 = rpe.rotary %x, %p1 {scaling = #rpe.rope_yarn<factor = 4.0, original_max_position = 64, beta_fast = 32.0, beta_slow = 1.0>} : tensor<2x8x16xf32>, tensor<8xi64>
  %5 = rpe.rotary %4, %p2 {scaling = #rpe.rope_yarn<factor = 4.0, original_max_position = 64, beta_fast = 32.0, beta_slow = 1.0>} : tensor<2x8x16xf32>, tensor<8xi64>
  %6 = rpe.rotary %x, %p1 {scaling = #rpe.rope_dynamic<factor = 2.0, original_max_position = 4>} : tensor<2x8x16xf32>, tensor<8xi64>
  %7 = rpe.rotary %6, %p2 {scaling = #rpe.rope_dynamic<factor = 2.0, original_max_position = 4>} : tensor<2x8x16xf32>, tensor<8xi64>
  return %1, %3, %5, %7 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// Default rotary_dim (= D) on both sides composes too.
// CHECK-LABEL: func.func @rotary_compose_default
// CHECK: arith.addi
// CHECK-COUNT-1: rpe.rotary
// CHECK-NOT: rpe.rotary
func.func @rotary_compose_default(%x: tensor<2x8x16xbf16>, %p1: tensor<2x8xi32>, %p2: tensor<2x8xi32>) -> tensor<2x8x16xbf16> {
  %0 = rpe.rotary %x, %p1 : tensor<2x8x16xbf16>, tensor<2x8xi32>
  %1 = rpe.rotary %0, %p2 : tensor<2x8x16xbf16>, tensor<2x8xi32>
  return %1 : tensor<2x8x16xbf16>
}

// -----

// Different theta, layout, rotary_dim or position shapes: no composition.
// CHECK-LABEL: func.func @rotary_no_compose
// CHECK-NOT: arith.addi
// CHECK-COUNT-8: rpe.rotary
func.func @rotary_no_compose(%x: tensor<2x8x16xf32>, %p: tensor<8xi64>, %bp: tensor<2x8xi64>)
    -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %0 = rpe.rotary %x, %p : tensor<2x8x16xf32>, tensor<8xi64>
  %1 = rpe.rotary %0, %p {theta = 5.0e5 : f64} : tensor<2x8x16xf32>, tensor<8xi64>
  %2 = rpe.rotary %x, %p : tensor<2x8x16xf32>, tensor<8xi64>
  %3 = rpe.rotary %2, %p {interleaved} : tensor<2x8x16xf32>, tensor<8xi64>
  %4 = rpe.rotary %x, %p : tensor<2x8x16xf32>, tensor<8xi64>
  %5 = rpe.rotary %4, %p {rotary_dim = 8 : i64} : tensor<2x8x16xf32>, tensor<8xi64>
  %6 = rpe.rotary %x, %p : tensor<2x8x16xf32>, tensor<8xi64>
  %7 = rpe.rotary %6, %bp : tensor<2x8x16xf32>, tensor<2x8xi64>
  return %1, %3, %5, %7 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// A splat-zero bias (+0 or -0) adds nothing and is dropped.
// CHECK-LABEL: func.func @zero_bias
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x16xf32>)
// CHECK-NOT: arith.constant
// CHECK: %[[A:.*]] = rpe.attention %[[Q]], %[[Q]], %[[Q]] causal :
// CHECK: %[[B:.*]] = rpe.attention %[[Q]], %[[Q]], %[[Q]] :
// CHECK-NOT: bias(
// CHECK: return %[[A]], %[[B]]
func.func @zero_bias(%q: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %zero = arith.constant dense<0.0> : tensor<2x8x8xf32>
  %nzero = arith.constant dense<-0.0> : tensor<1x2x8x8xf32>
  %0 = rpe.attention %q, %q, %q bias(%zero : tensor<2x8x8xf32>) causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %1 = rpe.attention %q, %q, %q bias(%nzero : tensor<1x2x8x8xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0, %1 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// A window that no query position reaches past (Lq = 8 rows, positions up to
// 7 + q_offset, all below W) masks nothing and is dropped; with position 8
// (W = 8 and q_offset 1, or W = 4) or a q_offset unknown it stays.
// CHECK-LABEL: func.func @idle_window
// CHECK: rpe.attention %{{.*}} causal : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} q_offset(%{{.*}}) causal : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} q_offset(%{{.*}}) causal window = 8 : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} causal window = 4 : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} q_offset(%{{.*}}) window = 100 : tensor<1x2x8x16xf32>
func.func @idle_window(%q: tensor<1x2x8x16xf32>, %off: index) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = rpe.attention %q, %q, %q causal window = 8 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %1 = rpe.attention %q, %q, %q q_offset(%c0) causal window = 8 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %2 = rpe.attention %q, %q, %q q_offset(%c1) causal window = 8 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %3 = rpe.attention %q, %q, %q causal window = 4 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %4 = rpe.attention %q, %q, %q q_offset(%off) window = 100 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0, %1, %2, %3, %4 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// A lookahead that reaches the last key from the first position (Lk - 1 <=
// q_offset + A) masks nothing and goes; one that falls short, or with a
// dynamic Lk or q_offset, stays.
// CHECK-LABEL: func.func @idle_lookahead
// CHECK: rpe.attention %{{.*}} window = 3 : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} q_offset(%{{.*}}) : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} lookahead = 6 : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} q_offset(%{{.*}}) lookahead = 4 : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} q_offset(%{{.*}}) lookahead = 100 : tensor<1x2x8x16xf32>
// CHECK-NEXT: rpe.attention %{{.*}} lookahead = 100 : tensor<1x2x8x16xf32>, tensor<1x2x?x16xf32>
func.func @idle_lookahead(%q: tensor<1x2x8x16xf32>, %kd: tensor<1x2x?x16xf32>, %off: index) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %c3 = arith.constant 3 : index
  %cm4 = arith.constant -4 : index
  %0 = rpe.attention %q, %q, %q window = 3 lookahead = 7 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %1 = rpe.attention %q, %q, %q q_offset(%c3) lookahead = 4 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %2 = rpe.attention %q, %q, %q lookahead = 6 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %3 = rpe.attention %q, %q, %q q_offset(%cm4) lookahead = 4 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %4 = rpe.attention %q, %q, %q q_offset(%off) lookahead = 100 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %5 = rpe.attention %q, %kd, %kd lookahead = 100 : tensor<1x2x8x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x8x16xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// Non-zero splats, non-splat constants and computed biases stay.
// CHECK-LABEL: func.func @nonzero_bias
// CHECK-COUNT-3: bias(
func.func @nonzero_bias(%q: tensor<1x2x2x16xf32>, %b: tensor<2x2x2xf32>)
    -> (tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>) {
  %one = arith.constant dense<1.0> : tensor<2x2x2xf32>
  %mixed = arith.constant dense<[[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 3.0]]]> : tensor<2x2x2xf32>
  %0 = rpe.attention %q, %q, %q bias(%one : tensor<2x2x2xf32>) : tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32> -> tensor<1x2x2x16xf32>
  %1 = rpe.attention %q, %q, %q bias(%mixed : tensor<2x2x2xf32>) : tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32> -> tensor<1x2x2x16xf32>
  %2 = rpe.attention %q, %q, %q bias(%b : tensor<2x2x2xf32>) : tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32> -> tensor<1x2x2x16xf32>
  return %0, %1, %2 : tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x16xf32>
}

// -----

// Unused rpe ops are pure and disappear; an attention whose score_mod has no
// side effects too.
// CHECK-LABEL: func.func @dead
// CHECK-NEXT: return
func.func @dead(%q: tensor<1x2x8x16xf32>, %t: tensor<9x2xf32>) {
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9x2xf32> -> tensor<2x8x8xf32>
  %1 = rpe.alibi : tensor<2x8x8xf32>
  %2 = rpe.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    rpe.yield %s : f32
  }
  return
}

// -----

// A score_mod that yields its score unchanged goes; one that changes it stays.
// CHECK-LABEL: func.func @identity_score_mod
// CHECK: %[[A:.*]] = rpe.attention %{{.*}} causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>{{$}}
// CHECK-NEXT: %[[B:.*]] = rpe.attention
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: rpe.yield
func.func @identity_score_mod(%q: tensor<1x2x8x16xf32>, %c: f32) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %0 = rpe.attention %q, %q, %q causal : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    rpe.yield %s : f32
  }
  %1 = rpe.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.addf %s, %c : f32
    rpe.yield %t : f32
  }
  return %0, %1 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}
