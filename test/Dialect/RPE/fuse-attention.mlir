// RUN: rpe-opt %s -rpe-fuse-attention -split-input-file | FileCheck %s

// A relative_bias feeding the attention becomes a table lookup by bucket in
// score_mod; the H×Lq×Lk bias disappears.
// CHECK-LABEL: func.func @relative_bias
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x4xf32>, %[[T:.*]]: tensor<32x2xf32>)
// CHECK-NOT: rpe.relative_bias
// CHECK: %[[R:.*]] = rpe.attention %[[Q]], %[[Q]], %[[Q]] scale = 1.000000e+00 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[B:.*]] = rpe.bucket %[[I]], %[[J]] by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[T]][%[[B]], %[[H]]] : tensor<32x2xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[S]], %[[V]] : f32
// CHECK-NEXT: rpe.yield %[[SUM]] : f32
// CHECK: return %[[R]]
func.func @relative_bias(%q: tensor<1x2x8x4xf32>, %t: tensor<32x2xf32>) -> tensor<1x2x8x4xf32> {
  %b = rpe.relative_bias %t by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x2xf32> -> tensor<2x8x8xf32>
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<2x8x8xf32>) scale = 1.0 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

// A sum of relative_bias and ALiBi sharing the attention's q_offset: both
// terms use the query position %i directly; default slopes are computed once
// per head, outside the kernel.
// CHECK-LABEL: func.func @sum_with_offset
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x8x4xf32>, %[[T:.*]]: tensor<9x4xf32>, %[[OFF:.*]]: index)
// The offset is clamped to [-2^62, 2^62] once for the three ops.
// CHECK-DAG: %[[LO:.*]] = arith.constant -4611686018427387904 : index
// CHECK-DAG: %[[HI:.*]] = arith.constant 4611686018427387904 : index
// CHECK: %[[MAX:.*]] = arith.maxsi %[[OFF]], %[[LO]] : index
// CHECK: %[[CL:.*]] = arith.minsi %[[MAX]], %[[HI]] : index
// CHECK: %[[SLOPES:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?xf64>)
// CHECK: math.exp2
// CHECK: rpe.attention %[[Q]], %[[Q]], %[[Q]] q_offset(%[[CL]]) causal :
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: rpe.bucket %[[I]], %[[J]] by clip<max_distance = 4>
// CHECK: tensor.extract %[[T]]
// CHECK: tensor.extract %[[SLOPES]][%[[H]]] : tensor<?xf64>
// CHECK: arith.subi %[[J]], %[[I]] : index
// CHECK-NOT: math.exp2
// CHECK: rpe.yield
// CHECK-NOT: rpe.alibi
// CHECK-NOT: arith.addf %{{.*}} : tensor
func.func @sum_with_offset(%q: tensor<1x4x8x4xf32>, %t: tensor<9x4xf32>, %off: index) -> tensor<1x4x8x4xf32> {
  %b = rpe.relative_bias %t offset %off by clip<max_distance = 4> : tensor<9x4xf32> -> tensor<4x8x8xf32>
  %a = rpe.alibi offset %off : tensor<4x8x8xf32>
  %s = arith.addf %b, %a : tensor<4x8x8xf32>
  %0 = rpe.attention %q, %q, %q bias(%s : tensor<4x8x8xf32>) q_offset(%off) causal : tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32> -> tensor<1x4x8x4xf32>
  return %0 : tensor<1x4x8x4xf32>
}

// -----

// Shaw keys: the gather trick. q·embᵀ is B×H×Lq×NB (here 1x2x6x9), never
// Lq×Lk; the kernel gathers it by bucket. The table is transposed first and
// the bucket loop is innermost (an axpy along buckets, vectorizable).
// CHECK-LABEL: func.func @shaw_logits
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x6x4xf32>, %[[K:.*]]: tensor<1x2x10x4xf32>, %[[E:.*]]: tensor<9x4xf32>)
// CHECK: %[[ET:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<9x4xf32>) outs(%{{.*}} : tensor<4x9xf32>)
// CHECK: %[[QE:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[Q]], %[[ET]] : tensor<1x2x6x4xf32>, tensor<4x9xf32>) outs(%{{.*}} : tensor<1x2x6x9xf32>)
// CHECK: rpe.attention %[[Q]], %[[K]], %[[K]] :
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[BK:.*]] = rpe.bucket %[[I]], %[[J]] by clip<max_distance = 4>
// CHECK-NEXT: tensor.extract %[[QE]][%{{.*}}, %[[H]], %[[I]], %[[BK]]] : tensor<1x2x6x9xf32>
// CHECK-NOT: rpe.shaw_logits
func.func @shaw_logits(%q: tensor<1x2x6x4xf32>, %k: tensor<1x2x10x4xf32>, %e: tensor<9x4xf32>) -> tensor<1x2x6x4xf32> {
  %l = rpe.shaw_logits %q, %e by clip<max_distance = 4> : tensor<1x2x6x4xf32>, tensor<9x4xf32> -> tensor<1x2x6x10xf32>
  %0 = rpe.attention %q, %k, %k bias(%l : tensor<1x2x6x10xf32>) : tensor<1x2x6x4xf32>, tensor<1x2x10x4xf32>, tensor<1x2x10x4xf32> -> tensor<1x2x6x4xf32>
  return %0 : tensor<1x2x6x4xf32>
}

// -----

// DeBERTa: q·pos_kᵀ (B×H×Lq×NB) for c2p and k·pos_qᵀ (B×H×Lk×NB) for p2c,
// both gathered by the same bucket.
// CHECK-LABEL: func.func @deberta
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x5x4xf32>, %[[K:.*]]: tensor<1x2x7x4xf32>, %[[PQ:.*]]: tensor<2x16x4xf32>, %[[PK:.*]]: tensor<2x16x4xf32>)
// CHECK-DAG: %[[PKT:.*]] = linalg.generic {{.*}} ins(%[[PK]] : tensor<2x16x4xf32>) outs(%{{.*}} : tensor<2x4x16xf32>)
// CHECK-DAG: %[[PQT:.*]] = linalg.generic {{.*}} ins(%[[PQ]] : tensor<2x16x4xf32>) outs(%{{.*}} : tensor<2x4x16xf32>)
// CHECK-DAG: %[[C2P:.*]] = linalg.generic {{.*}} ins(%[[Q]], %[[PKT]] : {{.*}}) outs(%{{.*}} : tensor<1x2x5x16xf32>)
// CHECK-DAG: %[[P2C:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[PQT]] : {{.*}}) outs(%{{.*}} : tensor<1x2x7x16xf32>)
// CHECK: rpe.attention
// CHECK: %[[BK:.*]] = rpe.bucket %[[I:.*]], %[[J:.*]] by log<position_buckets = 0, max_relative_positions = 8>
// CHECK: tensor.extract %[[C2P]][%{{.*}}, %{{.*}}, %[[I]], %[[BK]]]
// CHECK: tensor.extract %[[P2C]][%{{.*}}, %{{.*}}, %[[J]], %[[BK]]]
func.func @deberta(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x7x4xf32>, %pq: tensor<2x16x4xf32>, %pk: tensor<2x16x4xf32>) -> tensor<1x2x5x4xf32> {
  %d = rpe.disentangled_bias %q, %k, %pq, %pk by log<position_buckets = 0, max_relative_positions = 8> c2p p2c : tensor<1x2x5x4xf32>, tensor<1x2x7x4xf32>, tensor<2x16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x5x7xf32>
  %0 = rpe.attention %q, %k, %k bias(%d : tensor<1x2x5x7xf32>) : tensor<1x2x5x4xf32>, tensor<1x2x7x4xf32>, tensor<1x2x7x4xf32> -> tensor<1x2x5x4xf32>
  return %0 : tensor<1x2x5x4xf32>
}

// -----

// A table made by an element-wise op (DeBERTa's scaling, here in bf16 as
// HF does it) is scaled inside the transpose: the transpose reads the
// unscaled table and runs the scaling's body (rounding to bf16 included),
// so the scaled table is never a tensor of its own. The scaling of a
// table that is not the bias's (%other) is left alone.
// CHECK-LABEL: func.func @deberta_scaled_table
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x5x4xbf16>, %[[K:.*]]: tensor<1x2x7x4xbf16>, %[[PQ:.*]]: tensor<2x16x4xbf16>, %[[PK:.*]]: tensor<2x16x4xbf16>, %[[S:.*]]: f32)
// CHECK: %[[OTHER:.*]] = linalg.generic {{.*}} ins(%[[PQ]] : tensor<2x16x4xbf16>) outs(%{{.*}} : tensor<2x16x4xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.negf
// CHECK-NOT: outs(%{{.*}} : tensor<2x16x4xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[PK]] : tensor<2x16x4xbf16>) outs(%{{.*}} : tensor<2x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[W]], %[[S]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[PQ]] : tensor<2x16x4xbf16>) outs(%{{.*}} : tensor<2x4x16xf32>)
// CHECK: arith.mulf
// CHECK-NOT: outs(%{{.*}} : tensor<2x16x4xbf16>)
// CHECK: rpe.attention
// CHECK: return %{{.*}}, %[[OTHER]]
func.func @deberta_scaled_table(%q: tensor<1x2x5x4xbf16>, %k: tensor<1x2x7x4xbf16>, %pq: tensor<2x16x4xbf16>, %pk: tensor<2x16x4xbf16>, %s: f32) -> (tensor<1x2x5x4xbf16>, tensor<2x16x4xbf16>) {
  %e = tensor.empty() : tensor<2x16x4xbf16>
  %pks = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pk : tensor<2x16x4xbf16>) outs(%e : tensor<2x16x4xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %w = arith.extf %x : bf16 to f32
    %m = arith.mulf %w, %s : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x16x4xbf16>
  %pqs = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pq : tensor<2x16x4xbf16>) outs(%e : tensor<2x16x4xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %w = arith.extf %x : bf16 to f32
    %m = arith.mulf %w, %s : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x16x4xbf16>
  %other = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pq : tensor<2x16x4xbf16>) outs(%e : tensor<2x16x4xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %n = arith.negf %x : bf16
    linalg.yield %n : bf16
  } -> tensor<2x16x4xbf16>
  %d = rpe.disentangled_bias %q, %k, %pqs, %pks by log<position_buckets = 0, max_relative_positions = 8> c2p p2c : tensor<1x2x5x4xbf16>, tensor<1x2x7x4xbf16>, tensor<2x16x4xbf16>, tensor<2x16x4xbf16> -> tensor<1x2x5x7xbf16>
  %0 = rpe.attention %q, %k, %k bias(%d : tensor<1x2x5x7xbf16>) : tensor<1x2x5x4xbf16>, tensor<1x2x7x4xbf16>, tensor<1x2x7x4xbf16> -> tensor<1x2x5x4xbf16>
  return %0, %other : tensor<1x2x5x4xbf16>, tensor<2x16x4xbf16>
}

// -----

// An existing score_mod runs after the fused terms; a dense summand stays as
// the bias; a one-head table broadcasts (head index 0).
// CHECK-LABEL: func.func @keep_region_and_dense
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x4xf32>, %[[T:.*]]: tensor<5x1xf32>, %[[D:.*]]: tensor<1x4x4xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: rpe.attention %[[Q]], %[[Q]], %[[Q]] bias(%[[D]] : tensor<1x4x4xf32>) :
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[BK:.*]] = rpe.bucket %[[I]], %[[J]] by clip<max_distance = 2>
// CHECK: %[[V:.*]] = tensor.extract %[[T]][%[[BK]], %[[C0]]] : tensor<5x1xf32>
// CHECK: %[[S1:.*]] = arith.addf %[[S]], %[[V]] : f32
// CHECK: %[[S2:.*]] = arith.mulf %[[S1]], %[[S1]] : f32
// CHECK: rpe.yield %[[S2]] : f32
func.func @keep_region_and_dense(%q: tensor<1x2x4x4xf32>, %t: tensor<5x1xf32>, %d: tensor<1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %b = rpe.relative_bias %t by clip<max_distance = 2> : tensor<5x1xf32> -> tensor<1x4x4xf32>
  %s = arith.addf %b, %d : tensor<1x4x4xf32>
  %0 = rpe.attention %q, %q, %q bias(%s : tensor<1x4x4xf32>) : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32> {
  ^bb0(%x: f32, %bb: index, %h: index, %i: index, %j: index):
    %sq = arith.mulf %x, %x : f32
    rpe.yield %sq : f32
  }
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Where fusion must not fire: a producer with another use, a bias that is
// not a sum of producers (scaled), and a function argument.
// CHECK-LABEL: func.func @no_fusion
// CHECK: %[[B:.*]] = rpe.relative_bias
// CHECK: rpe.attention {{.*}} bias(%[[B]] : tensor<2x4x4xf32>)
// CHECK-NOT: ^bb0
// CHECK: %[[A:.*]] = rpe.alibi
// CHECK: %[[M:.*]] = arith.mulf %[[A]], %{{.*}} : tensor<2x4x4xf32>
// CHECK: rpe.attention {{.*}} bias(%[[M]] : tensor<2x4x4xf32>)
// CHECK-NOT: ^bb0
// CHECK: rpe.attention {{.*}} bias(%arg2 : tensor<2x4x4xf32>)
// CHECK-NOT: ^bb0
func.func @no_fusion(%q: tensor<1x2x4x4xf32>, %t: tensor<5x2xf32>, %d: tensor<2x4x4xf32>)
    -> (tensor<1x2x4x4xf32>, tensor<2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %b = rpe.relative_bias %t by clip<max_distance = 2> : tensor<5x2xf32> -> tensor<2x4x4xf32>
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<2x4x4xf32>) : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %a = rpe.alibi : tensor<2x4x4xf32>
  %two = arith.constant dense<2.0> : tensor<2x4x4xf32>
  %m = arith.mulf %a, %two : tensor<2x4x4xf32>
  %1 = rpe.attention %q, %q, %q bias(%m : tensor<2x4x4xf32>) : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = rpe.attention %q, %q, %q bias(%d : tensor<2x4x4xf32>) : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %0, %b, %1, %2 : tensor<1x2x4x4xf32>, tensor<2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// (a) Raising: q·kᵀ contraction, scaling by a constant, a rank-3 bias, the
// decomposed softmax (max / sub+exp / sum / div) and the product with v.
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pmap = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#omap = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#bias3 = affine_map<(b, h, i, j) -> (h, i, j)>
// CHECK-LABEL: func.func @raise_decomposed
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x6x8xf32>, %[[V:.*]]: tensor<1x2x6x3xf32>, %[[B:.*]]: tensor<2x4x6xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = rpe.attention %[[Q]], %[[K]], %[[V]] bias(%[[B]] : tensor<2x4x6xf32>) scale = 2.500000e-01 : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x3xf32> -> tensor<1x2x4x3xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @raise_decomposed(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>, %bias: tensor<2x4x6xf32>) -> tensor<1x2x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %quarter = arith.constant 0.25 : f32
  %e0 = tensor.empty() : tensor<1x2x4x6xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%z0 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %e1 = tensor.empty() : tensor<1x2x4x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x6xf32>) outs(%e1 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %quarter : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x6xf32>
  %e2 = tensor.empty() : tensor<1x2x4x6xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #bias3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %bias : tensor<1x2x4x6xf32>, tensor<2x4x6xf32>) outs(%e2 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x6xf32>
  %e3 = tensor.empty() : tensor<1x2x4xf32>
  %f3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%biased : tensor<1x2x4x6xf32>) outs(%f3 : tensor<1x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x6xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%biased, %max : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%e4 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x6xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x6xf32>) outs(%f5 : tensor<1x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4xf32>
  %e6 = tensor.empty() : tensor<1x2x4x6xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%e6 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %sm: f32, %o: f32):
    %m = arith.divf %a, %sm : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x6xf32>
  %e7 = tensor.empty() : tensor<1x2x4x3xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x4x6xf32>, tensor<1x2x6x3xf32>) outs(%z7 : tensor<1x2x4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x3xf32>
  return %o : tensor<1x2x4x3xf32>
}

// -----

// (a) with linalg.softmax and a division by a constant; (c) the Shaw value
// term of the same probabilities becomes rel_values.
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pmap = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#omap = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
// CHECK-LABEL: func.func @raise_softmax_shaw
// CHECK-SAME: (%[[Q:.*]]: tensor<1x1x5x4xf32>, %[[V:.*]]: tensor<1x1x5x4xf32>, %[[E:.*]]: tensor<5x4xf32>)
// CHECK-NOT: linalg.softmax
// CHECK: %[[R:.*]] = rpe.attention %[[Q]], %[[Q]], %[[V]] rel_values(%[[E]] : tensor<5x4xf32>) by clip<max_distance = 2> scale = 5.000000e-01 :
// CHECK-NOT: rpe.shaw_values
// CHECK: return %[[R]]
func.func @raise_softmax_shaw(%q: tensor<1x1x5x4xf32>, %v: tensor<1x1x5x4xf32>, %emb: tensor<5x4xf32>) -> tensor<1x1x5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : tensor<1x1x5x5xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %q : tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32>) outs(%z0 : tensor<1x1x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x5x5xf32>
  %e1 = tensor.empty() : tensor<1x1x5x5xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x1x5x5xf32>) outs(%e1 : tensor<1x1x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.divf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<1x1x5x5xf32>
  %e2 = tensor.empty() : tensor<1x1x5x5xf32>
  %p = linalg.softmax dimension(3) ins(%scaled : tensor<1x1x5x5xf32>) outs(%e2 : tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
  %e3 = tensor.empty() : tensor<1x1x5x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x1x5x4xf32>) -> tensor<1x1x5x4xf32>
  %pv = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x1x5x5xf32>, tensor<1x1x5x4xf32>) outs(%z3 : tensor<1x1x5x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x5x4xf32>
  %sv = rpe.shaw_values %p, %emb by clip<max_distance = 2> : tensor<1x1x5x5xf32>, tensor<5x4xf32> -> tensor<1x1x5x4xf32>
  %o = arith.addf %pv, %sv : tensor<1x1x5x4xf32>
  return %o : tensor<1x1x5x4xf32>
}

// -----

// Not raised: a normalisation that is not a softmax (no exp) and scores
// that are used elsewhere. A scale applied after the bias ((s + b)·c, which
// scales the bias too) is no `scale`: it goes into score_mod.
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pmap = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#omap = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#bias3 = affine_map<(b, h, i, j) -> (h, i, j)>
// CHECK-LABEL: func.func @no_raise
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<1x1x3x2xf32>, %[[B3:.*]]: tensor<1x3x3xf32>)
// CHECK-NOT: rpe.attention
// CHECK: linalg.softmax
// CHECK-NOT: rpe.attention
// CHECK: rpe.attention %[[Q]], %[[Q]], %[[Q]] bias(%[[B3]] : tensor<1x3x3xf32>) scale = 1.000000e+00
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[S]], %{{.*}}
// CHECK-NEXT: rpe.yield %[[M]]
// CHECK-NOT: rpe.attention
// CHECK: return
func.func @no_raise(%q: tensor<1x1x3x2xf32>, %b3: tensor<1x3x3xf32>) -> (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<1x1x3x3xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %q : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) outs(%z0 : tensor<1x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x3x3xf32>
  // p = s / sum_j s: not a softmax.
  %e3 = tensor.empty() : tensor<1x1x3xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : tensor<1x1x3x3xf32>) outs(%f3 : tensor<1x1x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x1x3xf32>
  %e6 = tensor.empty() : tensor<1x1x3x3xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %sum : tensor<1x1x3x3xf32>, tensor<1x1x3xf32>) outs(%e6 : tensor<1x1x3x3xf32>) {
  ^bb0(%a: f32, %sm: f32, %o: f32):
    %m = arith.divf %a, %sm : f32
    linalg.yield %m : f32
  } -> tensor<1x1x3x3xf32>
  %e7 = tensor.empty() : tensor<1x1x3x2xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
  %o1 = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %q : tensor<1x1x3x3xf32>, tensor<1x1x3x2xf32>) outs(%z7 : tensor<1x1x3x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x3x2xf32>
  // A real softmax, but its scores are also returned.
  %e8 = tensor.empty() : tensor<1x1x3x3xf32>
  %s2 = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %q : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) outs(%z0 : tensor<1x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x3x3xf32>
  %p2 = linalg.softmax dimension(3) ins(%s2 : tensor<1x1x3x3xf32>) outs(%e8 : tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %o2 = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p2, %q : tensor<1x1x3x3xf32>, tensor<1x1x3x2xf32>) outs(%z7 : tensor<1x1x3x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x3x2xf32>
  // (s + b)·c.
  %s3 = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %q : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) outs(%z0 : tensor<1x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x3x3xf32>
  %e9 = tensor.empty() : tensor<1x1x3x3xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #bias3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s3, %b3 : tensor<1x1x3x3xf32>, tensor<1x3x3xf32>) outs(%e9 : tensor<1x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x1x3x3xf32>
  %e10 = tensor.empty() : tensor<1x1x3x3xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%biased : tensor<1x1x3x3xf32>) outs(%e10 : tensor<1x1x3x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x1x3x3xf32>
  %e11 = tensor.empty() : tensor<1x1x3x3xf32>
  %p3 = linalg.softmax dimension(3) ins(%scaled : tensor<1x1x3x3xf32>) outs(%e11 : tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %o3 = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p3, %q : tensor<1x1x3x3xf32>, tensor<1x1x3x2xf32>) outs(%z7 : tensor<1x1x3x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x1x3x2xf32>
  return %o1, %o2, %s2, %o3 : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x2xf32>
}

// -----

// Grouped-query K/V as transformers' repeat_kv exports them (B×Hkv×L×D
// broadcast to B×Hkv×G×L×D, heads collapsed): the attention reads the 2 kv
// heads. The scale arrives as a double truncated to f32 in the body: the
// f32 value is the scale.
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pmap = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#omap = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#rep_in = affine_map<(b, hk, g, l, d) -> (b, hk, l, d)>
#rep_out = affine_map<(b, hk, g, l, d) -> (b, hk, g, l, d)>
// CHECK-LABEL: func.func @raise_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x5x8xf32>, %[[K:.*]]: tensor<1x2x5x8xf32>, %[[V:.*]]: tensor<1x2x5x8xf32>)
// CHECK: %[[O:.*]] = rpe.attention %[[Q]], %[[K]], %[[V]] scale = 0.35355338454246521 : tensor<1x4x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x4x5x8xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[O]]
func.func @raise_gqa(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x4x5x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.35355339059327379 : f64
  %re = tensor.empty() : tensor<1x2x2x5x8xf32>
  %kr5 = linalg.generic {indexing_maps = [#rep_in, #rep_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x5x8xf32>) outs(%re : tensor<1x2x2x5x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x2x2x5x8xf32>
  %kr = tensor.collapse_shape %kr5 [[0], [1, 2], [3], [4]] : tensor<1x2x2x5x8xf32> into tensor<1x4x5x8xf32>
  %vr5 = linalg.generic {indexing_maps = [#rep_in, #rep_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x5x8xf32>) outs(%re : tensor<1x2x2x5x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x2x2x5x8xf32>
  %vr = tensor.collapse_shape %vr5 [[0], [1, 2], [3], [4]] : tensor<1x2x2x5x8xf32> into tensor<1x4x5x8xf32>
  %e0 = tensor.empty() : tensor<1x4x5x5xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kr : tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>) outs(%z0 : tensor<1x4x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x5xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x4x5x5xf32>) outs(%e0 : tensor<1x4x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c32 = arith.truncf %c : f64 to f32
    %m = arith.mulf %a, %c32 : f32
    linalg.yield %m : f32
  } -> tensor<1x4x5x5xf32>
  %p = linalg.softmax dimension(3) ins(%scaled : tensor<1x4x5x5xf32>) outs(%e0 : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %e3 = tensor.empty() : tensor<1x4x5x8xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x4x5x8xf32>) -> tensor<1x4x5x8xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vr : tensor<1x4x5x5xf32>, tensor<1x4x5x8xf32>) outs(%z3 : tensor<1x4x5x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x5x8xf32>
  return %o : tensor<1x4x5x8xf32>
}

// -----

// (a) A zero "position bias" added to the scores as a constant (what
// torch-mlir leaves of transformers' zero bias in T5's cross-attention) is
// dropped. Another constant is not: it is no bias operand but a function of
// the score, applied in score_mod.
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pmap = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#omap = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
// CHECK-LABEL: func.func @zero_bias
// CHECK-SAME: (%[[Q:.*]]: tensor<1x1x4x8xf32>, %[[K:.*]]: tensor<1x1x3x8xf32>, %[[V:.*]]: tensor<1x1x3x2xf32>)
// CHECK: scf.execute_region
// CHECK-NEXT: %[[R:.*]] = rpe.attention %[[Q]], %[[K]], %[[V]] scale = 1.000000e+00 : tensor<1x1x4x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x2xf32> -> tensor<1x1x4x2xf32>{{$}}
// CHECK-NEXT: scf.yield %[[R]]
// CHECK: scf.execute_region
// CHECK-NEXT: %[[R1:.*]] = rpe.attention %[[Q]], %[[K]], %[[V]] scale = 1.000000e+00
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[S]], %{{.*}} : f32
// CHECK-NEXT: rpe.yield %[[A]]
// CHECK-NOT: linalg.softmax
// CHECK: return
func.func @zero_bias(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x3x8xf32>, %v: tensor<1x1x3x2xf32>) -> (tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<1x1x4x3xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x1x4x3xf32>) -> tensor<1x1x4x3xf32>
  %e7 = tensor.empty() : tensor<1x1x4x2xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x1x4x2xf32>) -> tensor<1x1x4x2xf32>
  %r0 = scf.execute_region -> tensor<1x1x4x2xf32> {
    %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x1x4x8xf32>, tensor<1x1x3x8xf32>) outs(%z0 : tensor<1x1x4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x1x4x3xf32>
    %b0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x1x4x3xf32>) outs(%e0 : tensor<1x1x4x3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.addf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<1x1x4x3xf32>
    %sm = linalg.softmax dimension(3) ins(%b0 : tensor<1x1x4x3xf32>) outs(%e0 : tensor<1x1x4x3xf32>) -> tensor<1x1x4x3xf32>
    %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sm, %v : tensor<1x1x4x3xf32>, tensor<1x1x3x2xf32>) outs(%z7 : tensor<1x1x4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x1x4x2xf32>
    scf.yield %o : tensor<1x1x4x2xf32>
  }
  %r1 = scf.execute_region -> tensor<1x1x4x2xf32> {
    %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x1x4x8xf32>, tensor<1x1x3x8xf32>) outs(%z0 : tensor<1x1x4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x1x4x3xf32>
    %b0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x1x4x3xf32>) outs(%e0 : tensor<1x1x4x3xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.addf %a, %one : f32
      linalg.yield %m : f32
    } -> tensor<1x1x4x3xf32>
    %sm = linalg.softmax dimension(3) ins(%b0 : tensor<1x1x4x3xf32>) outs(%e0 : tensor<1x1x4x3xf32>) -> tensor<1x1x4x3xf32>
    %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sm, %v : tensor<1x1x4x3xf32>, tensor<1x1x3x2xf32>) outs(%z7 : tensor<1x1x4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x1x4x2xf32>
    scf.yield %o : tensor<1x1x4x2xf32>
  }
  return %r0, %r1 : tensor<1x1x4x2xf32>, tensor<1x1x4x2xf32>
}

// -----

// (a) A masked fill (select(mask, c, s), as masked_fill exports it) on top
// of an added bias is applied in score_mod after the bias, in the front
// end's order; k divided by a 0-D constant tensor before q·kᵀ (DeBERTa's
// scaling) joins the scale. The second function fills where the mask is
// false; the third fills with a value read from a tensor (no constant), so
// it stays unfused.
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pmap = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#omap = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#scalar4 = affine_map<(b, h, i, j) -> ()>
#mask4 = affine_map<(b, h, i, j) -> (b, 0, i, j)>
// CHECK-LABEL: func.func @masked_fill
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x6x8xf32>, %[[V:.*]]: tensor<1x2x6x3xf32>, %[[B:.*]]: tensor<1x2x4x6xf32>, %[[M:.*]]: tensor<1x1x4x6xi1>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[FILL:.*]] = arith.constant -3.40282347E+38 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: rpe.attention %[[Q]], %[[K]], %[[V]] bias(%[[B]] : tensor<1x2x4x6xf32>) scale = 2.500000e-01
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %[[BI:.*]]: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[M]][%[[BI]], %[[C0]], %[[I]], %[[J]]] : tensor<1x1x4x6xi1>
// CHECK-NEXT: %[[R:.*]] = arith.select %[[X]], %[[FILL]], %[[S]] : f32
// CHECK-NEXT: rpe.yield %[[R]] : f32
// CHECK-LABEL: func.func @masked_fill_when_false
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: rpe.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.000000e+00
// CHECK-NEXT: ^bb0(%[[S2:.*]]: f32,
// CHECK-NEXT: %[[X2:.*]] = tensor.extract
// CHECK-NEXT: arith.select %[[X2]], %[[S2]], %[[NINF]] : f32
// CHECK-LABEL: func.func @masked_fill_not_constant
// CHECK-NOT: rpe.attention
// CHECK: linalg.softmax
func.func @masked_fill(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>, %bias: tensor<1x2x4x6xf32>, %mask: tensor<1x1x4x6xi1>) -> tensor<1x2x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<f32>
  %c = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%e : tensor<f32>) {
  ^bb0(%o: f32):
    linalg.yield %four : f32
  } -> tensor<f32>
  %ek = tensor.empty() : tensor<1x2x6x8xf32>
  %ks = linalg.generic {indexing_maps = [#id4, #scalar4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k, %c : tensor<1x2x6x8xf32>, tensor<f32>) outs(%ek : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<1x2x6x8xf32>
  %e0 = tensor.empty() : tensor<1x2x4x6xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %ks : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%z0 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x6xf32>
  %masked = linalg.generic {indexing_maps = [#mask4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask, %biased : tensor<1x1x4x6xi1>, tensor<1x2x4x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %r = arith.select %m, %min, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %sm = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %e7 = tensor.empty() : tensor<1x2x4x3xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sm, %v : tensor<1x2x4x6xf32>, tensor<1x2x6x3xf32>) outs(%z7 : tensor<1x2x4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x3xf32>
  return %o : tensor<1x2x4x3xf32>
}

func.func @masked_fill_when_false(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>, %mask: tensor<1x1x4x6xi1>) -> tensor<1x2x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x2x4x6xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%z0 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %masked = linalg.generic {indexing_maps = [#mask4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask, %s : tensor<1x1x4x6xi1>, tensor<1x2x4x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %r = arith.select %m, %a, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %sm = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %e7 = tensor.empty() : tensor<1x2x4x3xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sm, %v : tensor<1x2x4x6xf32>, tensor<1x2x6x3xf32>) outs(%z7 : tensor<1x2x4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x3xf32>
  return %o : tensor<1x2x4x3xf32>
}

func.func @masked_fill_not_constant(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>, %mask: tensor<1x1x4x6xi1>, %fill: tensor<1x2x4x6xf32>) -> tensor<1x2x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x2x4x6xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%z0 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %masked = linalg.generic {indexing_maps = [#mask4, #id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask, %s, %fill : tensor<1x1x4x6xi1>, tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) {
  ^bb0(%m: i1, %a: f32, %f: f32, %o: f32):
    %r = arith.select %m, %f, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %sm = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x6xf32>) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %e7 = tensor.empty() : tensor<1x2x4x3xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sm, %v : tensor<1x2x4x6xf32>, tensor<1x2x6x3xf32>) outs(%z7 : tensor<1x2x4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x3xf32>
  return %o : tensor<1x2x4x3xf32>
}

// -----

// (a) Gemma 2's attention: the scaled scores soft-capped (c·tanh(s/c), c =
// 50, three generics as torch-mlir exports them), then the additive mask:
// the scalings next to q·kᵀ join the scale (0.25 / 50), the tanh, the
// product by c and the mask (not next to the scores, so no bias operand)
// go into score_mod in order.
// CHECK-LABEL: func.func @raise_softcap
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x6x8xf32>, %[[V:.*]]: tensor<1x2x6x3xf32>, %[[M:.*]]: tensor<1x1x4x6xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.*]] = rpe.attention %[[Q]], %[[K]], %[[V]] scale = 5.000000e-03
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %[[B:.*]]: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[S]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.mulf %[[T]], %{{.*}} : f32
// CHECK-NEXT: %[[E:.*]] = tensor.extract %[[M]][%[[B]], %{{.*}}, %[[I]], %[[J]]]
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[C]], %[[E]] : f32
// CHECK-NEXT: rpe.yield %[[A]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#qmap = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#kmap = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#smap = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#vmap = affine_map<(b, h, i, e, j) -> (b, h, j, e)>
#pmap = affine_map<(b, h, i, e, j) -> (b, h, i, j)>
#omap = affine_map<(b, h, i, e, j) -> (b, h, i, e)>
#id4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#mask4 = affine_map<(b, h, i, j) -> (b, 0, i, j)>
func.func @raise_softcap(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>, %mask: tensor<1x1x4x6xf32>) -> tensor<1x2x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %quarter = arith.constant 0.25 : f32
  %e0 = tensor.empty() : tensor<1x2x4x6xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %s = linalg.generic {indexing_maps = [#qmap, #kmap, #smap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%z0 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x6xf32>
  %e1 = tensor.empty() : tensor<1x2x4x6xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x6xf32>) outs(%e1 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %quarter : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x6xf32>
  %c50 = arith.constant 50.0 : f32
  %e2 = tensor.empty() : tensor<1x2x4x6xf32>
  %dv = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled : tensor<1x2x4x6xf32>) outs(%e2 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = arith.divf %a, %c50 : f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x6xf32>
  %t = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%dv : tensor<1x2x4x6xf32>) outs(%e2 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = math.tanh %a : f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x6xf32>
  %capped = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x2x4x6xf32>) outs(%e2 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = arith.mulf %a, %c50 : f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x6xf32>
  %biased = linalg.generic {indexing_maps = [#id4, #mask4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%capped, %mask : tensor<1x2x4x6xf32>, tensor<1x1x4x6xf32>) outs(%e2 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %x = arith.addf %a, %b : f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x6xf32>
  %e3 = tensor.empty() : tensor<1x2x4xf32>
  %f3 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%biased : tensor<1x2x4x6xf32>) outs(%f3 : tensor<1x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4xf32>
  %e4 = tensor.empty() : tensor<1x2x4x6xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%biased, %max : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%e4 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<1x2x4x6xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x6xf32>) outs(%f5 : tensor<1x2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4xf32>
  %e6 = tensor.empty() : tensor<1x2x4x6xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x6xf32>, tensor<1x2x4xf32>) outs(%e6 : tensor<1x2x4x6xf32>) {
  ^bb0(%a: f32, %sm: f32, %o: f32):
    %m = arith.divf %a, %sm : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x6xf32>
  %e7 = tensor.empty() : tensor<1x2x4x3xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  %o = linalg.generic {indexing_maps = [#pmap, #vmap, #omap], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x4x6xf32>, tensor<1x2x6x3xf32>) outs(%z7 : tensor<1x2x4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x3xf32>
  return %o : tensor<1x2x4x3xf32>
}

