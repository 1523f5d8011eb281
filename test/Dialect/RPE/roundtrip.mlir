// Every op and attribute in custom and generic form: print -> parse -> print
// is stable, and the generic form parses back to the same custom form.
// RUN: rpe-opt %s | FileCheck %s
// RUN: rpe-opt %s | rpe-opt | FileCheck %s
// RUN: rpe-opt %s -mlir-print-op-generic | rpe-opt | FileCheck %s
// RUN: rpe-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: rpe-opt %s > %t.1.mlir && rpe-opt %t.1.mlir > %t.2.mlir && diff %t.1.mlir %t.2.mlir

// CHECK-LABEL: func.func @bucket
// CHECK-SAME: (%[[I:.*]]: index, %[[J:.*]]: index)
func.func @bucket(%i: index, %j: index) -> (index, index, index, index, index) {
  // CHECK: rpe.bucket %[[I]], %[[J]] by clip<max_distance = 4>
  %0 = rpe.bucket %i, %j by clip<max_distance = 4>
  // CHECK: rpe.bucket %[[I]], %[[J]] by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  %1 = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  // CHECK: rpe.bucket %[[I]], %[[J]] by t5<num_buckets = 32, max_distance = 128, bidirectional = false>
  %2 = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = false>
  // CHECK: rpe.bucket %[[I]], %[[J]] by log<position_buckets = 256, max_relative_positions = 512>
  %3 = rpe.bucket %i, %j by log<position_buckets = 256, max_relative_positions = 512>
  // CHECK: rpe.bucket %[[I]], %[[J]] by window2d<height = 7, width = 7>
  %4 = "rpe.bucket"(%i, %j) <{bucketing = #rpe.window2d<height = 7, width = 7>}> : (index, index) -> index
  return %0, %1, %2, %3, %4 : index, index, index, index, index
}
// GENERIC-LABEL: sym_name = "bucket"
// GENERIC: "rpe.bucket"(%{{.*}}, %{{.*}}) <{bucketing = #rpe.clip<max_distance = 4>}> : (index, index) -> index
// GENERIC: #rpe.t5<num_buckets = 32, max_distance = 128, bidirectional = true>
// GENERIC: #rpe.log<position_buckets = 256, max_relative_positions = 512>
// GENERIC: #rpe.window2d<height = 7, width = 7>

// Bucketing attributes also live on their own, e.g. as discardable attributes.
// CHECK-LABEL: func.func @attrs
// CHECK-SAME: rpe.a = #rpe.clip<max_distance = 0>
// CHECK-SAME: rpe.b = #rpe.t5<num_buckets = 8, max_distance = 20, bidirectional = false>
// CHECK-SAME: rpe.c = #rpe.log<position_buckets = 0, max_relative_positions = 16>
// CHECK-SAME: rpe.d = #rpe.window2d<height = 2, width = 3>
func.func @attrs() attributes {
    rpe.a = #rpe.clip<max_distance = 0>,
    rpe.b = #rpe.t5<num_buckets = 8, max_distance = 20, bidirectional = false>,
    rpe.c = #rpe.log<position_buckets = 0, max_relative_positions = 16>,
    rpe.d = #rpe.window2d<height = 2, width = 3>} {
  return
}

// CHECK-LABEL: func.func @relative_bias
// CHECK-SAME: (%[[T:.*]]: tensor<9x8xf32>, %[[O:.*]]: index, %[[L:.*]]: index, %[[W:.*]]: tensor<169x3xbf16>, %[[T5:.*]]: tensor<32x4xf16>)
func.func @relative_bias(%table: tensor<9x8xf32>, %off: index, %l: index,
                         %win: tensor<169x3xbf16>, %t5: tensor<32x4xf16>)
    -> (tensor<8x?x?xf32>, tensor<8x16x16xf32>, tensor<3x49x49xbf16>, tensor<4x?x7xf16>) {
  // CHECK: rpe.relative_bias %[[T]] offset %[[O]] sizes(%[[L]], %[[L]]) by clip<max_distance = 4> : tensor<9x8xf32> -> tensor<8x?x?xf32>
  %0 = rpe.relative_bias %table offset %off sizes(%l, %l) by clip<max_distance = 4> : tensor<9x8xf32> -> tensor<8x?x?xf32>
  // CHECK: rpe.relative_bias %[[T]] by clip<max_distance = 4> : tensor<9x8xf32> -> tensor<8x16x16xf32>
  %1 = rpe.relative_bias %table by clip<max_distance = 4> : tensor<9x8xf32> -> tensor<8x16x16xf32>
  // CHECK: rpe.relative_bias %[[W]] by window2d<height = 7, width = 7> : tensor<169x3xbf16> -> tensor<3x49x49xbf16>
  %2 = "rpe.relative_bias"(%win) <{bucketing = #rpe.window2d<height = 7, width = 7>, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<169x3xbf16>) -> tensor<3x49x49xbf16>
  // CHECK: rpe.relative_bias %[[T5]] sizes(%[[L]]) by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x4xf16> -> tensor<4x?x7xf16>
  %3 = rpe.relative_bias %t5 sizes(%l) by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x4xf16> -> tensor<4x?x7xf16>
  return %0, %1, %2, %3 : tensor<8x?x?xf32>, tensor<8x16x16xf32>, tensor<3x49x49xbf16>, tensor<4x?x7xf16>
}
// GENERIC-LABEL: sym_name = "relative_bias"
// GENERIC: "rpe.relative_bias"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{bucketing = #rpe.clip<max_distance = 4>, operandSegmentSizes = array<i32: 1, 1, 2>}> : (tensor<9x8xf32>, index, index, index) -> tensor<8x?x?xf32>

// CHECK-LABEL: func.func @alibi
// CHECK-SAME: (%[[O:.*]]: index, %[[L:.*]]: index, %[[H:.*]]: index)
func.func @alibi(%off: index, %l: index, %h: index)
    -> (tensor<8x?x?xf32>, tensor<2x16x16xf32>, tensor<6x1x32xf16>, tensor<?x4x4xf32>) {
  // CHECK: rpe.alibi sizes(%[[L]], %[[L]]) symmetric : tensor<8x?x?xf32>
  %0 = rpe.alibi sizes(%l, %l) symmetric : tensor<8x?x?xf32>
  // CHECK: rpe.alibi slopes [5.000000e-01, 2.500000e-01] : tensor<2x16x16xf32>
  %1 = rpe.alibi slopes [0.5, 0.25] : tensor<2x16x16xf32>
  // CHECK: rpe.alibi offset %[[O]] : tensor<6x1x32xf16>
  %2 = rpe.alibi offset %off : tensor<6x1x32xf16>
  // CHECK: rpe.alibi sizes(%[[H]]) : tensor<?x4x4xf32>
  %3 = "rpe.alibi"(%h) <{operandSegmentSizes = array<i32: 0, 1>}> : (index) -> tensor<?x4x4xf32>
  return %0, %1, %2, %3 : tensor<8x?x?xf32>, tensor<2x16x16xf32>, tensor<6x1x32xf16>, tensor<?x4x4xf32>
}
// GENERIC-LABEL: sym_name = "alibi"
// GENERIC: "rpe.alibi"(%{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 0, 2>, symmetric}> : (index, index) -> tensor<8x?x?xf32>
// GENERIC: "rpe.alibi"() <{operandSegmentSizes = array<i32: 0, 0>, slopes = array<f64: 5.000000e-01, 2.500000e-01>}> : () -> tensor<2x16x16xf32>

// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x?x64xf32>, %[[P:.*]]: tensor<?xi64>, %[[Y:.*]]: tensor<2x16x32xbf16>, %[[BP:.*]]: tensor<2x16xi32>)
func.func @rotary(%x: tensor<1x8x?x64xf32>, %pos: tensor<?xi64>,
                  %y: tensor<2x16x32xbf16>, %bpos: tensor<2x16xi32>)
    -> (tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<2x16x32xbf16>) {
  // CHECK: rpe.rotary %[[X]], %[[P]] : tensor<1x8x?x64xf32>, tensor<?xi64>
  %0 = rpe.rotary %x, %pos : tensor<1x8x?x64xf32>, tensor<?xi64>
  // CHECK: rpe.rotary %[[X]], %[[P]] {interleaved, rotary_dim = 32 : i64, theta = 5.000000e+05 : f64} : tensor<1x8x?x64xf32>, tensor<?xi64>
  %1 = rpe.rotary %x, %pos {theta = 5.0e5 : f64, rotary_dim = 32 : i64, interleaved} : tensor<1x8x?x64xf32>, tensor<?xi64>
  // CHECK: rpe.rotary %[[Y]], %[[BP]] : tensor<2x16x32xbf16>, tensor<2x16xi32>
  %2 = "rpe.rotary"(%y, %bpos) <{theta = 1.0e4 : f64}> : (tensor<2x16x32xbf16>, tensor<2x16xi32>) -> tensor<2x16x32xbf16>
  return %0, %1, %2 : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<2x16x32xbf16>
}
// GENERIC-LABEL: sym_name = "rotary"
// GENERIC: "rpe.rotary"(%{{.*}}, %{{.*}}) <{theta = 1.000000e+04 : f64}> : (tensor<1x8x?x64xf32>, tensor<?xi64>) -> tensor<1x8x?x64xf32>

// RoPE scalings, with transformers' rope_parameters names; floats print
// exactly.
// CHECK-LABEL: func.func @rotary_scaling
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_linear<factor = 4.000000e+00>}
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_llama3<factor = 8.000000e+00, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00, original_max_position = 8192>, theta = 5.000000e+05 : f64}
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_yarn<factor = 4.000000e+00, original_max_position = 4096, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00>}
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_dynamic<factor = 2.000000e+00, original_max_position = 2048>}
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_linear<factor = 1.2345678901234567>}
func.func @rotary_scaling(%x: tensor<1x8x?x64xf32>, %pos: tensor<?xi64>)
    -> (tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>) {
  %0 = rpe.rotary %x, %pos {scaling = #rpe.rope_linear<factor = 4.0>} : tensor<1x8x?x64xf32>, tensor<?xi64>
  %1 = rpe.rotary %x, %pos {theta = 5.0e5 : f64, scaling = #rpe.rope_llama3<factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position = 8192>} : tensor<1x8x?x64xf32>, tensor<?xi64>
  %2 = "rpe.rotary"(%x, %pos) <{theta = 1.0e4 : f64, scaling = #rpe.rope_yarn<factor = 4.0, original_max_position = 4096, beta_fast = 32.0, beta_slow = 1.0>}> : (tensor<1x8x?x64xf32>, tensor<?xi64>) -> tensor<1x8x?x64xf32>
  %3 = rpe.rotary %x, %pos {scaling = #rpe.rope_dynamic<factor = 2.0, original_max_position = 2048>} : tensor<1x8x?x64xf32>, tensor<?xi64>
  %4 = rpe.rotary %x, %pos {scaling = #rpe.rope_linear<factor = 1.2345678901234567>} : tensor<1x8x?x64xf32>, tensor<?xi64>
  return %0, %1, %2, %3, %4 : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
}
// GENERIC-LABEL: sym_name = "rotary_scaling"
// GENERIC: "rpe.rotary"(%{{.*}}, %{{.*}}) <{scaling = #rpe.rope_linear<factor = 4.000000e+00>, theta = 1.000000e+04 : f64}>

// CHECK-LABEL: func.func @shaw
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x?x16xf32>, %[[E:.*]]: tensor<9x16xf32>, %[[LK:.*]]: index, %[[P:.*]]: tensor<?x2x8x8xf16>, %[[EV:.*]]: tensor<9x4xf16>)
func.func @shaw(%q: tensor<1x2x?x16xf32>, %emb: tensor<9x16xf32>, %lk: index,
                %p: tensor<?x2x8x8xf16>, %embv: tensor<9x4xf16>)
    -> (tensor<1x2x?x?xf32>, tensor<1x2x?x5xf32>, tensor<?x2x8x4xf16>) {
  // CHECK: rpe.shaw_logits %[[Q]], %[[E]] key_length %[[LK]] by clip<max_distance = 4> : tensor<1x2x?x16xf32>, tensor<9x16xf32> -> tensor<1x2x?x?xf32>
  %0 = rpe.shaw_logits %q, %emb key_length %lk by clip<max_distance = 4> : tensor<1x2x?x16xf32>, tensor<9x16xf32> -> tensor<1x2x?x?xf32>
  // CHECK: rpe.shaw_logits %[[Q]], %[[E]] by clip<max_distance = 4> : tensor<1x2x?x16xf32>, tensor<9x16xf32> -> tensor<1x2x?x5xf32>
  %1 = "rpe.shaw_logits"(%q, %emb) <{bucketing = #rpe.clip<max_distance = 4>}> : (tensor<1x2x?x16xf32>, tensor<9x16xf32>) -> tensor<1x2x?x5xf32>
  // CHECK: rpe.shaw_values %[[P]], %[[EV]] by clip<max_distance = 4> : tensor<?x2x8x8xf16>, tensor<9x4xf16> -> tensor<?x2x8x4xf16>
  %2 = rpe.shaw_values %p, %embv by clip<max_distance = 4> : tensor<?x2x8x8xf16>, tensor<9x4xf16> -> tensor<?x2x8x4xf16>
  return %0, %1, %2 : tensor<1x2x?x?xf32>, tensor<1x2x?x5xf32>, tensor<?x2x8x4xf16>
}
// GENERIC-LABEL: sym_name = "shaw"
// GENERIC: "rpe.shaw_logits"(%{{.*}}, %{{.*}}, %{{.*}}) <{bucketing = #rpe.clip<max_distance = 4>}> : (tensor<1x2x?x16xf32>, tensor<9x16xf32>, index) -> tensor<1x2x?x?xf32>
// GENERIC: "rpe.shaw_values"(%{{.*}}, %{{.*}}) <{bucketing = #rpe.clip<max_distance = 4>}> : (tensor<?x2x8x8xf16>, tensor<9x4xf16>) -> tensor<?x2x8x4xf16>

// CHECK-LABEL: func.func @disentangled
// CHECK-SAME: (%[[Q:.*]]: tensor<1x12x?x64xf32>, %[[K:.*]]: tensor<1x12x?x64xf32>, %[[PQ:.*]]: tensor<12x512x64xf32>, %[[PK:.*]]: tensor<12x512x64xf32>)
func.func @disentangled(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>,
                        %pq: tensor<12x512x64xf32>, %pk: tensor<12x512x64xf32>)
    -> (tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>) {
  // CHECK: rpe.disentangled_bias %[[Q]], %[[K]], %[[PQ]], %[[PK]] by log<position_buckets = 256, max_relative_positions = 512> c2p p2c : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<12x512x64xf32>, tensor<12x512x64xf32> -> tensor<1x12x?x?xf32>
  %0 = rpe.disentangled_bias %q, %k, %pq, %pk by log<position_buckets = 256, max_relative_positions = 512> c2p p2c : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<12x512x64xf32>, tensor<12x512x64xf32> -> tensor<1x12x?x?xf32>
  // CHECK: rpe.disentangled_bias %[[Q]], %[[K]], %[[PQ]], %[[PK]] by log<position_buckets = 256, max_relative_positions = 512> c2p :
  %1 = rpe.disentangled_bias %q, %k, %pq, %pk by log<position_buckets = 256, max_relative_positions = 512> c2p : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<12x512x64xf32>, tensor<12x512x64xf32> -> tensor<1x12x?x?xf32>
  // CHECK: rpe.disentangled_bias %[[Q]], %[[K]], %[[PQ]], %[[PK]] by log<position_buckets = 256, max_relative_positions = 512> p2c :
  %2 = "rpe.disentangled_bias"(%q, %k, %pq, %pk) <{bucketing = #rpe.log<position_buckets = 256, max_relative_positions = 512>, p2c}> : (tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<12x512x64xf32>, tensor<12x512x64xf32>) -> tensor<1x12x?x?xf32>
  return %0, %1, %2 : tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>
}
// GENERIC-LABEL: sym_name = "disentangled"
// GENERIC: "rpe.disentangled_bias"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{bucketing = #rpe.log<position_buckets = 256, max_relative_positions = 512>, c2p, p2c}>

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x?x16xf32>, %[[K:.*]]: tensor<2x2x?x16xf32>, %[[V:.*]]: tensor<2x2x?x32xf32>, %[[B:.*]]: tensor<8x?x?xf32>, %[[LEN:.*]]: tensor<2xi32>, %[[O:.*]]: index, %[[RV:.*]]: tensor<9x32xf32>)
func.func @attention(%q: tensor<2x8x?x16xf32>, %k: tensor<2x2x?x16xf32>,
                     %v: tensor<2x2x?x32xf32>, %bias: tensor<8x?x?xf32>,
                     %lens: tensor<2xi32>, %off: index, %rv: tensor<9x32xf32>)
    -> (tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32>) {
  // CHECK: rpe.attention %[[Q]], %[[K]], %[[V]] : tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32> -> tensor<2x8x?x32xf32>
  %0 = rpe.attention %q, %k, %v : tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32> -> tensor<2x8x?x32xf32>
  // CHECK: rpe.attention %[[Q]], %[[K]], %[[V]] bias(%[[B]] : tensor<8x?x?xf32>) key_lengths(%[[LEN]] : tensor<2xi32>) q_offset(%[[O]]) rel_values(%[[RV]] : tensor<9x32xf32>) by clip<max_distance = 4> causal window = 4096 scale = 1.000000e+00 : tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32> -> tensor<2x8x?x32xf32>
  %1 = rpe.attention %q, %k, %v bias(%bias : tensor<8x?x?xf32>) key_lengths(%lens : tensor<2xi32>) q_offset(%off) rel_values(%rv : tensor<9x32xf32>) by clip<max_distance = 4> causal window = 4096 scale = 1.0 : tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32> -> tensor<2x8x?x32xf32>
  // A FlexAttention-style score_mod: a T5 bucket looked up in the region.
  // CHECK: rpe.attention %[[Q]], %[[K]], %[[V]] causal : tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32> -> tensor<2x8x?x32xf32> {
  // CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
  // CHECK-NEXT: %[[BK:.*]] = rpe.bucket %[[I]], %[[J]] by t5<num_buckets = 32, max_distance = 128, bidirectional = false>
  // CHECK: rpe.yield %{{.*}} : f32
  // CHECK-NEXT: }
  %2 = rpe.attention %q, %k, %v causal : tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32> -> tensor<2x8x?x32xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = false>
    %c = arith.index_cast %bk : index to i32
    %f = arith.sitofp %c : i32 to f32
    %r = arith.subf %s, %f : f32
    rpe.yield %r : f32
  }
  // CHECK: rpe.attention %[[Q]], %[[K]], %[[V]] key_lengths(%[[LEN]] : tensor<2xi32>) window = 65 lookahead = 64 scale = 2.500000e-01 : tensor<2x8x?x16xf32>
  %3 = "rpe.attention"(%q, %k, %v, %lens) <{lookahead = 64 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0>, scale = 0.25 : f64, window = 65 : i64}> ({
  }) : (tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32>, tensor<2xi32>) -> tensor<2x8x?x32xf32>
  return %0, %1, %2, %3 : tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32>
}
// GENERIC-LABEL: sym_name = "attention"
// GENERIC: "rpe.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>}> ({
// GENERIC-NEXT: }) : (tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x32xf32>) -> tensor<2x8x?x32xf32>
// GENERIC: <{bucketing = #rpe.clip<max_distance = 4>, causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>, scale = 1.000000e+00 : f64, window = 4096 : i64}>
// GENERIC: "rpe.yield"(%{{.*}}) : (f32) -> ()
// GENERIC: <{lookahead = 64 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0>, scale = 2.500000e-01 : f64, window = 65 : i64}>
