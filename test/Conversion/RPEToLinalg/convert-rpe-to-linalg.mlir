// RUN: rpe-opt %s -convert-rpe-to-linalg -split-input-file | FileCheck %s
// RUN: rpe-opt %s -convert-rpe-to-linalg -split-input-file | FileCheck %s --check-prefix=NORPE

// Nothing of the rpe dialect survives.
// NORPE-NOT: rpe.

// CHECK-LABEL: func.func @bucket
// CHECK-SAME: (%[[I:.*]]: index, %[[J:.*]]: index)
// i - j, saturated at ±2^62 (int64 overflow detected from the signs):
// CHECK: %[[D:.*]] = arith.subi %[[I]], %[[J]] : index
// CHECK: %[[OV:.*]] = arith.andi
// CHECK: %[[SAT:.*]] = arith.select %[[OV]], %{{.*}}, %{{.*}} : index
// then clamped to [-K, K] and shifted by K:
// CHECK: %[[LO:.*]] = arith.maxsi %[[SAT]], %{{.*}} : index
// CHECK: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.addi %[[HI]], %{{.*}} : index
// CHECK: return %[[B]]
func.func @bucket(%i: index, %j: index) -> index {
  %0 = rpe.bucket %i, %j by clip<max_distance = 4>
  return %0 : index
}

// -----

// The T5 bucket of a distance a = |j - i| (offset 16 for j > i): a below 8;
// past that Hugging Face's f32 formula steps up at 12, 16, 23, 32, 46, 64
// and 91 (15 from there on), compares and selects with no logarithm.
// CHECK-LABEL: func.func @bucket_t5
// CHECK-NOT: math.log
// CHECK: %[[OFF:.*]] = arith.select %{{.*}}, %c16, %{{.*}} : index
// CHECK: %[[A:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: %[[S12:.*]] = arith.cmpi sge, %[[A]], %c12 : index
// CHECK: %[[L9:.*]] = arith.select %[[S12]], %c9, %{{.*}} : index
// CHECK: %[[S16:.*]] = arith.cmpi sge, %[[A]], %{{.*}} : index
// CHECK: %[[L10:.*]] = arith.select %[[S16]], %c10, %[[L9]] : index
// CHECK: arith.cmpi sge, %[[A]], %c23 : index
// CHECK: arith.cmpi sge, %[[A]], %c32 : index
// CHECK: arith.cmpi sge, %[[A]], %c46 : index
// CHECK: arith.cmpi sge, %[[A]], %c64 : index
// CHECK: %[[S91:.*]] = arith.cmpi sge, %[[A]], %c91 : index
// CHECK: %[[L15:.*]] = arith.select %[[S91]], %c15, %{{.*}} : index
// CHECK-NEXT: %[[EXACT:.*]] = arith.cmpi slt, %[[A]], %c8 : index
// CHECK-NEXT: %[[BK:.*]] = arith.select %[[EXACT]], %[[A]], %[[L15]] : index
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[OFF]], %[[BK]] : index
// CHECK-NEXT: return %[[R]]
func.func @bucket_t5(%i: index, %j: index) -> index {
  %0 = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  return %0 : index
}

// -----

// With N = 4 (N' = 2, e = 1) every distance from e on has the last bucket:
// a constant, no step and no logarithm.
// CHECK-LABEL: func.func @bucket_t5_constant
// CHECK-NOT: math.log
// CHECK-NOT: arith.cmpi sge
// CHECK: %[[EXACT:.*]] = arith.cmpi slt, %[[A:.*]], %c1{{.*}} : index
// CHECK-NEXT: arith.select %[[EXACT]], %[[A]], %c1{{.*}} : index
func.func @bucket_t5_constant(%i: index, %j: index) -> index {
  %0 = rpe.bucket %i, %j by t5<num_buckets = 4, max_distance = 3, bidirectional = true>
  return %0 : index
}

// -----

// A max_distance too far for the steps (more than 8192 distances to scan)
// computes the formula in f32, as Hugging Face does; its logarithm is the
// correctly rounded f32 one (the f64 log rounded: a target's f32 log may be
// an ulp off, CUDA's is).
// CHECK-LABEL: func.func @bucket_t5_far
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: %[[L:.*]] = math.log %[[W]] : f64
// CHECK: arith.truncf %[[L]] : f64 to f32
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK-NOT: arith.cmpi sge
// CHECK: return
func.func @bucket_t5_far(%i: index, %j: index) -> index {
  %0 = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 100000, bidirectional = true>
  return %0 : index
}

// -----

// relative_bias with a Toeplitz bucketing: the H x (Lq + Lk - 1)
// diagonals first (buildTableDiagonals, as the fused kernels' tables),
// diag[h, r] = table[bucket(r - shift, 0), h] with shift = Lk - 1 - offset
// (the offset clamped to +-2^62 as the op defines), then one parallel
// generic over (h, i, j) that reads diag[h, i - j + Lk - 1]: a bucket per
// diagonal, not per element and head.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @relative_bias
// CHECK-SAME: (%[[T:.*]]: tensor<9x4xf32>, %[[OFF:.*]]: index, %[[L:.*]]: index)
// CHECK: %[[MAX:.*]] = arith.maxsi %[[OFF]], %{{.*}} : index
// CHECK: %[[O:.*]] = arith.minsi %[[MAX]], %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.empty(%[[L]], %[[L]]) : tensor<4x?x?xf32>
// CHECK: %[[LAST:.*]] = arith.subi %[[L]], %c1 : index
// CHECK: %[[SHIFT:.*]] = arith.subi %[[LAST]], %[[O]] : index
// CHECK: %[[N:.*]] = arith.addi %[[L]], %[[LAST]] : index
// CHECK: %[[NN:.*]] = arith.maxsi %[[N]], %c0 : index
// CHECK: %[[DE:.*]] = tensor.empty(%{{.*}}, %[[NN]]) : tensor<?x?xf32>
// CHECK: %[[DIAG:.*]] = linalg.generic {indexing_maps = [#[[ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[DE]] : tensor<?x?xf32>)
// CHECK: %[[DH:.*]] = linalg.index 0 : index
// CHECK: %[[DR:.*]] = linalg.index 1 : index
// CHECK: %[[D:.*]] = arith.subi %[[DR]], %[[SHIFT]] : index
// CHECK: %[[DV:.*]] = tensor.extract %[[T]][%{{.*}}, %[[DH]]] : tensor<9x4xf32>
// CHECK: linalg.yield %[[DV]] : f32
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<4x?x?xf32>)
// CHECK: %[[H:.*]] = linalg.index 0 : index
// CHECK: %[[IQ:.*]] = linalg.index 1 : index
// CHECK: %[[JK:.*]] = linalg.index 2 : index
// CHECK: %[[IJ:.*]] = arith.subi %[[IQ]], %[[JK]] : index
// CHECK: %[[DI:.*]] = arith.addi %[[IJ]], %[[LAST]] : index
// CHECK: %[[V:.*]] = tensor.extract %[[DIAG]][%[[H]], %[[DI]]] : tensor<?x?xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK: return %[[R]]
func.func @relative_bias(%t: tensor<9x4xf32>, %off: index, %l: index) -> tensor<4x?x?xf32> {
  %0 = rpe.relative_bias %t offset %off sizes(%l, %l) by clip<max_distance = 4> : tensor<9x4xf32> -> tensor<4x?x?xf32>
  return %0 : tensor<4x?x?xf32>
}

// -----

// relative_bias with a bucketing that is not Toeplitz (Swin's window): one
// parallel generic over (h, i, j) that buckets each element and gathers the
// table.
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @relative_bias_window
// CHECK-SAME: (%[[T:.*]]: tensor<9x2xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x4x4xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<2x4x4xf32>)
// CHECK: %[[H:.*]] = linalg.index 0 : index
// CHECK: %[[IQ:.*]] = linalg.index 1 : index
// CHECK: %[[JK:.*]] = linalg.index 2 : index
// CHECK: arith.floordivsi %[[IQ]], %c2{{.*}} : index
// CHECK: %[[V:.*]] = tensor.extract %[[T]][%{{.*}}, %[[H]]] : tensor<9x2xf32>
// CHECK: linalg.yield %[[V]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @relative_bias_window(%t: tensor<9x2xf32>) -> tensor<2x4x4xf32> {
  %0 = rpe.relative_bias %t by window2d<height = 2, width = 2> : tensor<9x2xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// ALiBi with explicit slopes reads them from a constant; default slopes are
// computed from the head index (here for a dynamic head count).
// CHECK-LABEL: func.func @alibi
// CHECK: %[[S:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf64>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<2xf64>) outs(%{{.*}} : tensor<2x4x4xf16>)
// CHECK: arith.minsi
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.generic
// CHECK: math.ctlz
// CHECK: math.exp2 %{{.*}} : f64
func.func @alibi(%h: index) -> (tensor<2x4x4xf16>, tensor<?x4x4xf32>) {
  %0 = rpe.alibi slopes [0.5, 0.25] symmetric : tensor<2x4x4xf16>
  %1 = rpe.alibi sizes(%h) : tensor<?x4x4xf32>
  return %0, %1 : tensor<2x4x4xf16>, tensor<?x4x4xf32>
}

// -----

// rotary: cos/sin tables over (positions, t < R/2) computed once in f64 and
// stored in f32, then an element-wise generic over x that gathers the
// partner element and the table entries.
// CHECK-DAG: #[[POS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[TAB:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x?x8xbf16>, %[[P:.*]]: tensor<2x?xi32>)
// CHECK: %[[COS:.*]] = linalg.generic {indexing_maps = [#[[POS]], #[[TAB]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<2x?xi32>) outs(%{{.*}} : tensor<2x?x?xf32>)
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.cos %{{.*}} : f64
// CHECK: %[[SIN:.*]] = linalg.generic {indexing_maps = [#[[POS]], #[[TAB]]]
// CHECK: math.sin %{{.*}} : f64
// CHECK: linalg.generic {indexing_maps = [#[[ID4]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x4x?x8xbf16>)
// CHECK-NOT: math.cos
// CHECK: tensor.extract %[[X]]
// CHECK: tensor.extract %[[COS]]
// CHECK: tensor.extract %[[SIN]]
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @rotary(%x: tensor<2x4x?x8xbf16>, %p: tensor<2x?xi32>) -> tensor<2x4x?x8xbf16> {
  %0 = rpe.rotary %x, %p {rotary_dim = 4 : i64, interleaved} : tensor<2x4x?x8xbf16>, tensor<2x?xi32>
  return %0 : tensor<2x4x?x8xbf16>
}

// -----

// shaw_logits: a contraction over d with the embedding gathered by bucket.
// CHECK-DAG: #[[QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @shaw_logits
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x5x4xf32>, %[[E:.*]]: tensor<5x4xf32>, %[[LK:.*]]: index)
// CHECK: %[[INIT:.*]] = tensor.empty(%[[LK]]) : tensor<1x2x5x?xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[INIT]] : tensor<1x2x5x?xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]] : tensor<1x2x5x4xf32>) outs(%[[Z]] : tensor<1x2x5x?xf32>)
// CHECK: tensor.extract %[[E]][%{{.*}}, %{{.*}}] : tensor<5x4xf32>
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @shaw_logits(%q: tensor<1x2x5x4xf32>, %e: tensor<5x4xf32>, %lk: index) -> tensor<1x2x5x?xf32> {
  %0 = rpe.shaw_logits %q, %e key_length %lk by clip<max_distance = 2> : tensor<1x2x5x4xf32>, tensor<5x4xf32> -> tensor<1x2x5x?xf32>
  return %0 : tensor<1x2x5x?xf32>
}

// -----

// shaw_values: a contraction over j; f16 results are rounded at the end.
// CHECK-DAG: #[[PMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @shaw_values
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[PMAP]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<1x2x5x5xf16>) outs(%{{.*}} : tensor<1x2x5x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : tensor<1x2x5x4xf32>) outs(%{{.*}} : tensor<1x2x5x4xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @shaw_values(%p: tensor<1x2x5x5xf16>, %e: tensor<5x4xf16>) -> tensor<1x2x5x4xf16> {
  %0 = rpe.shaw_values %p, %e by clip<max_distance = 2> : tensor<1x2x5x5xf16>, tensor<5x4xf16> -> tensor<1x2x5x4xf16>
  return %0 : tensor<1x2x5x4xf16>
}

// -----

// disentangled_bias: one contraction over d with both gathered terms.
// CHECK-LABEL: func.func @disentangled
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x6x4xf32>, %[[K:.*]]: tensor<1x2x6x4xf32>, %[[PQ:.*]]: tensor<2x16x4xf32>, %[[PK:.*]]: tensor<2x16x4xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] :
// CHECK: tensor.extract %[[PK]]
// CHECK: tensor.extract %[[PQ]]
func.func @disentangled(%q: tensor<1x2x6x4xf32>, %k: tensor<1x2x6x4xf32>, %pq: tensor<2x16x4xf32>, %pk: tensor<2x16x4xf32>) -> tensor<1x2x6x6xf32> {
  %0 = rpe.disentangled_bias %q, %k, %pq, %pk by log<position_buckets = 0, max_relative_positions = 8> c2p p2c : tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<2x16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x6x6xf32>
  return %0 : tensor<1x2x6x6xf32>
}

// -----

// attention: q·kᵀ with grouped heads (h floordiv 2), scale/bias/masks, a
// softmax that gives 0 for fully masked rows, and the product with v.
// CHECK-DAG: #[[KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG: #[[LENMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-DAG: #[[VMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x5x8xf32>, %[[K:.*]]: tensor<2x2x7x8xf32>, %[[V:.*]]: tensor<2x2x7x3xf32>, %[[B:.*]]: tensor<4x5x7xf32>, %[[LEN:.*]]: tensor<2xi32>, %[[OFF:.*]]: index)
// q_offset clamped to [-2^62, 2^62] first (Semantics.md).
// CHECK: %[[MAX:.*]] = arith.maxsi %[[OFF]], %{{.*}} : index
// CHECK: %[[CL:.*]] = arith.minsi %[[MAX]], %{{.*}} : index
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[KMAP]], #{{.*}}], {{.*}} ins(%[[Q]], %[[K]] :
// CHECK: %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[BIAS]], #[[LENMAP]], #{{.*}}], {{.*}} ins(%[[S]], %[[B]], %[[LEN]] :
// CHECK: %[[QP:.*]] = arith.addi %{{.*}}, %[[CL]] : index
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: arith.cmpi sgt, %{{.*}}, %[[QP]] : index
// CHECK: arith.cmpi sge
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.maximumf
// CHECK: arith.cmpf oeq
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[VMAP]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[V]] :
// CHECK: arith.divf
func.func @attention(%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x3xf32>,
                     %b: tensor<4x5x7xf32>, %len: tensor<2xi32>, %off: index) -> tensor<2x4x5x3xf32> {
  %0 = rpe.attention %q, %k, %v bias(%b : tensor<4x5x7xf32>) key_lengths(%len : tensor<2xi32>) q_offset(%off) causal scale = 0.5 : tensor<2x4x5x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x3xf32> -> tensor<2x4x5x3xf32>
  return %0 : tensor<2x4x5x3xf32>
}

// -----

// A window masks the scores of keys with j + W <= i, beside the causal mask.
// CHECK-LABEL: func.func @attention_window
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[FUT:.*]] = arith.cmpi sgt, %[[J]], %[[I]] : index
// CHECK: %[[W:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[J]], %[[W]] : index
// CHECK: %[[OLD:.*]] = arith.cmpi sle, %[[END]], %[[I]] : index
// CHECK: %[[HIDE:.*]] = arith.ori %[[FUT]], %[[OLD]] : i1
// CHECK: arith.select %[[HIDE]], %{{.*}}, %{{.*}} : f32
func.func @attention_window(%q: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %0 = rpe.attention %q, %q, %q causal window = 32 : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %0 : tensor<1x2x100x16xf32>
}

// -----

// A lookahead masks the scores of keys with j > i + A.
// CHECK-LABEL: func.func @attention_lookahead
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[A:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[REACH:.*]] = arith.addi %[[I]], %[[A]] : index
// CHECK-NEXT: %[[FUT:.*]] = arith.cmpi sgt, %[[J]], %[[REACH]] : index
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.select %[[FUT]], %{{.*}}, %{{.*}} : f32
func.func @attention_lookahead(%q: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %0 = rpe.attention %q, %q, %q lookahead = 16 : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %0 : tensor<1x2x100x16xf32>
}

// -----

// The score_mod region is inlined into the element-wise generic, with the
// query position (row + q_offset) as %i; rel_values gathers by bucket.
// CHECK-LABEL: func.func @score_mod_rel_values
// CHECK: linalg.generic
// CHECK: %[[IQ:.*]] = linalg.index 2 : index
// CHECK: %[[JK:.*]] = linalg.index 3 : index
// CHECK: %[[QP:.*]] = arith.addi %[[IQ]], %{{.*}} : index
// CHECK: %[[DIFF:.*]] = arith.subi %[[QP]], %[[JK]] : index
// CHECK: arith.sitofp
// CHECK: arith.subf
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<5x4xf32>
func.func @score_mod_rel_values(%q: tensor<1x1x4x4xf32>, %rv: tensor<5x4xf32>, %off: index) -> tensor<1x1x4x4xf32> {
  %0 = rpe.attention %q, %q, %q q_offset(%off) rel_values(%rv : tensor<5x4xf32>) by clip<max_distance = 2> : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = arith.subf %s, %df : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Dynamic heads: the key/value head is computed in the body.
// CHECK-LABEL: func.func @attention_dynamic_heads
// CHECK: %[[G:.*]] = arith.divui
// CHECK: linalg.generic
// CHECK: arith.divui %{{.*}}, %[[G]] : index
// CHECK: tensor.extract
// CHECK: math.sqrt
func.func @attention_dynamic_heads(%q: tensor<1x?x4x?xf32>, %k: tensor<1x?x4x?xf32>) -> tensor<1x?x4x?xf32> {
  %0 = rpe.attention %q, %k, %k : tensor<1x?x4x?xf32>, tensor<1x?x4x?xf32>, tensor<1x?x4x?xf32> -> tensor<1x?x4x?xf32>
  return %0 : tensor<1x?x4x?xf32>
}

// -----

// rotary scalings. linear: ω / factor. YaRN: the tables carry the attention
// factor 0.1·ln 4 + 1. dynamic NTK: the largest position, reduced once over
// the positions, gives ln g = ln(factor·S/O - (factor - 1)), S = max(max + 1,
// O), which every frequency uses.
// CHECK-LABEL: func.func @rotary_linear
// CHECK: linalg.generic
// CHECK: %[[W:.*]] = math.exp %{{.*}} : f64
// CHECK: arith.divf %[[W]], %{{.*}} : f64
func.func @rotary_linear(%x: tensor<1x2x?x8xf32>, %p: tensor<?xi32>) -> tensor<1x2x?x8xf32> {
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_linear<factor = 4.0>} : tensor<1x2x?x8xf32>, tensor<?xi32>
  return %0 : tensor<1x2x?x8xf32>
}

// CHECK-LABEL: func.func @rotary_yarn
// CHECK: math.floor
// CHECK: math.ceil
// CHECK: %[[C:.*]] = math.cos %{{.*}} : f64
// CHECK: arith.mulf %[[C]], %{{.*}} : f64
// CHECK: %[[S:.*]] = math.sin %{{.*}} : f64
// CHECK: arith.mulf %[[S]], %{{.*}} : f64
func.func @rotary_yarn(%x: tensor<1x2x?x8xf32>, %p: tensor<?xi32>) -> tensor<1x2x?x8xf32> {
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_yarn<factor = 4.0, original_max_position = 64, beta_fast = 32.0, beta_slow = 1.0>} : tensor<1x2x?x8xf32>, tensor<?xi32>
  return %0 : tensor<1x2x?x8xf32>
}

// CHECK-LABEL: func.func @rotary_dynamic
// CHECK-SAME: (%{{.*}}: tensor<1x2x?x8xf32>, %[[P:.*]]: tensor<?xi32>)
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<i64>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P]] : tensor<?xi32>) outs(%[[INIT]] : tensor<i64>)
// CHECK: arith.maxsi
// CHECK: %[[TOP:.*]] = tensor.extract %[[MAX]][] : tensor<i64>
// CHECK: %[[LEN:.*]] = arith.addi %[[TOP]], %{{.*}} : i64
// CHECK: %[[LENF:.*]] = arith.sitofp %[[LEN]] : i64 to f64
// CHECK: %[[S:.*]] = arith.maximumf %[[LENF]], %{{.*}} : f64
// CHECK: %[[LOGG:.*]] = math.log %{{.*}} : f64
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %[[LOGG]] : f64
func.func @rotary_dynamic(%x: tensor<1x2x?x8xf32>, %p: tensor<?xi32>) -> tensor<1x2x?x8xf32> {
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_dynamic<factor = 2.0, original_max_position = 16>} : tensor<1x2x?x8xf32>, tensor<?xi32>
  return %0 : tensor<1x2x?x8xf32>
}
