// rpe.bucket folds to the exact bucket when both positions are constants.
// Expected values are worked out by hand from the formulas (DESIGN §4.1).
// RUN: rpe-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @t5
// CHECK-DAG: %[[C31:.*]] = arith.constant 31 : index
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : index
// CHECK-DAG: %[[C17:.*]] = arith.constant 17 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NOT: rpe.bucket
// CHECK: return %[[C31]], %[[C15]], %[[C17]], %[[C0]]
func.func @t5() -> (index, index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c200 = arith.constant 200 : index
  // n = j - i = +200: offset 16, a = 200 >= 8: 8 + trunc(ln 25 / ln 16 · 8) = 17 -> 15.
  %0 = rpe.bucket %c0, %c200 by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  // n = -200: no offset.
  %1 = rpe.bucket %c200, %c0 by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  // n = +1: 16 + 1.
  %2 = rpe.bucket %c0, %c1 by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  // Unidirectional: keys after the query share bucket 0.
  %3 = rpe.bucket %c0, %c200 by t5<num_buckets = 32, max_distance = 128, bidirectional = false>
  return %0, %1, %2, %3 : index, index, index, index
}

// -----

// CHECK-LABEL: func.func @log
// CHECK-DAG: %[[C384:.*]] = arith.constant 384 : index
// CHECK-DAG: %[[C385:.*]] = arith.constant 385 : index
// CHECK-DAG: %[[C127:.*]] = arith.constant 127 : index
// CHECK-DAG: %[[C511:.*]] = arith.constant 511 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NOT: rpe.bucket
// CHECK: return %[[C384]], %[[C385]], %[[C127]], %[[C511]], %[[C0]]
func.func @log() -> (index, index, index, index, index) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c129 = arith.constant 129 : index
  %c5120 = arith.constant 5120 : index
  // r = c = 128: r itself, + S = 256.
  %0 = rpe.bucket %c128, %c0 by log<position_buckets = 256, max_relative_positions = 512>
  // r = c + 1: 128 + ceil(ln(129/128) / ln(511/128) · 127) = 129.
  %1 = rpe.bucket %c129, %c0 by log<position_buckets = 256, max_relative_positions = 512>
  // r = -129.
  %2 = rpe.bucket %c0, %c129 by log<position_buckets = 256, max_relative_positions = 512>
  // r = ±10·M clamps to the ends.
  %3 = rpe.bucket %c5120, %c0 by log<position_buckets = 256, max_relative_positions = 512>
  %4 = rpe.bucket %c0, %c5120 by log<position_buckets = 256, max_relative_positions = 512>
  return %0, %1, %2, %3, %4 : index, index, index, index, index
}

// -----

// CHECK-LABEL: func.func @window_and_clip
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C168:.*]] = arith.constant 168 : index
// CHECK-DAG: %[[C84:.*]] = arith.constant 84 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NOT: rpe.bucket
// CHECK: return %[[C0]], %[[C168]], %[[C84]], %[[C6]], %[[C8]]
func.func @window_and_clip() -> (index, index, index, index, index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c48 = arith.constant 48 : index
  %c100 = arith.constant 100 : index
  // Swin 7×7: (0,0) vs (6,6) -> dh = dw = -6 -> 0; reversed -> 12·13 + 12.
  %0 = rpe.bucket %c0, %c48 by window2d<height = 7, width = 7>
  %1 = rpe.bucket %c48, %c0 by window2d<height = 7, width = 7>
  %2 = rpe.bucket %c48, %c48 by window2d<height = 7, width = 7>
  // clip: clamp(i - j, -4, 4) + 4.
  %3 = rpe.bucket %c2, %c0 by clip<max_distance = 4>
  %4 = rpe.bucket %c100, %c0 by clip<max_distance = 4>
  return %0, %1, %2, %3, %4 : index, index, index, index, index
}

// -----

// One position unknown: no fold.
// CHECK-LABEL: func.func @no_fold
// CHECK: rpe.bucket %{{.*}}, %{{.*}} by clip<max_distance = 4>
func.func @no_fold(%i: index) -> index {
  %c0 = arith.constant 0 : index
  %0 = rpe.bucket %i, %c0 by clip<max_distance = 4>
  return %0 : index
}

// -----

// Inside a score_mod region the bucket of constant positions folds too.
// CHECK-LABEL: func.func @in_region
// CHECK: ^bb0
// CHECK-NOT: rpe.bucket
// CHECK: rpe.yield
func.func @in_region(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %bk = rpe.bucket %c3, %c3 by clip<max_distance = 2>
    %c = arith.index_cast %bk : index to i32
    %f = arith.sitofp %c : i32 to f32
    %r = arith.addf %s, %f : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x1x4x8xf32>
}
