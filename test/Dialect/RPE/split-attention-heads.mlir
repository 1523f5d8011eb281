// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads | FileCheck %s
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="min-table-columns=8" | FileCheck %s --check-prefix=NARROW

// A DeBERTa-style c2p table (q·pos_kᵀ, B×H×L×NB): the attention runs in a
// parallel loop over (batch, head) on slices of q, k, v and key_lengths, with the
// table's producer tiled into the loop (one head's L×NB, its init a fill of
// an empty slice); nothing of the whole table is left. score_mod's other
// use of %h (the per-head temperature) gets the global head.
// CHECK-LABEL: func.func @c2p
// CHECK-NOT: linalg.{{.*}} -> tensor<2x4x?x128xf32>
// CHECK: %[[LOOP:.*]] = scf.forall (%[[BH:.*]]) in (%{{.*}}) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x4x?x16xf32>)
// CHECK: %[[B:.*]] = arith.divui %[[BH]], %{{.*}}
// CHECK: %[[H:.*]] = arith.remui %[[BH]], %{{.*}}
// CHECK: %[[HK:.*]] = arith.divui %[[H]], %{{.*}}
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 16]
// CHECK: tensor.extract_slice %arg1[%[[B]], %[[HK]], 0, 0] [1, 1, %{{.*}}, 16]
// CHECK: tensor.extract_slice %arg3[%[[B]]] [1] [1]
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<1x1x?x128xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E]] : tensor<1x1x?x128xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<1x1x?x128xf32>)
// CHECK: %[[O:.*]] = rpe.attention {{.*}} key_lengths(%{{.*}} : tensor<1xi32>) {{.*}} -> tensor<1x1x?x16xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[BA:.*]]: index, %[[HA:.*]]: index, %[[I:.*]]: index, %{{.*}}: index):
// CHECK: %[[HG:.*]] = arith.addi %[[HA]], %[[H]] : index
// CHECK: tensor.extract %[[T]][%[[BA]], %[[HA]], %[[I]], %{{.*}}] : tensor<1x1x?x128xf32>
// CHECK: tensor.extract %arg4[%[[HG]]] : tensor<4xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[O]] into %[[ACC]][%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 16]
// The marker rpe-outline-kernels moves the loop out by (as a whole).
// CHECK: } {rpe.split_heads}
// CHECK: return %[[LOOP]]
// CHECK-NOT: linalg.{{.*}} -> tensor<2x4x?x128xf32>

#q = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#p = affine_map<(b, h, i, d, n) -> (h, d, n)>
#o = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @c2p(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %pk: tensor<4x16x128xf32>, %len: tensor<2xi32>, %temp: tensor<4xf32>) -> tensor<2x4x?x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %l = tensor.dim %q, %c2 : tensor<2x4x?x16xf32>
  %e = tensor.empty(%l) : tensor<2x4x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x?x128xf32>) -> tensor<2x4x?x128xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<2x4x?x16xf32>, tensor<4x16x128xf32>) outs(%f : tensor<2x4x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x?x128xf32>
  %0 = rpe.attention %q, %k, %k key_lengths(%len : tensor<2xi32>) : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<2x4x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<2x4x?x128xf32>
    %tau = tensor.extract %temp[%h] : tensor<4xf32>
    %r = arith.addf %s, %g : f32
    %r2 = arith.mulf %r, %tau : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<2x4x?x16xf32>
}

// -----

// Shaw's clipped buckets: a table of 9 columns stays whole by default (the
// per-head loop costs more than the table); with min-table-columns=8 it
// splits. A table read in another way (here as an operand of a tensor.dim),
// a table the function also returns, and a dense bias keep the attention
// as it is.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: scf.forall
// CHECK: rpe.attention
// NARROW-LABEL: func.func @narrow
// NARROW: scf.forall
// NARROW: rpe.attention {{.*}} -> tensor<1x1x?x16xf32>
// CHECK-LABEL: func.func @other_read
// CHECK-NOT: scf.forall
// NARROW-LABEL: func.func @other_read
// NARROW-NOT: scf.forall
// CHECK-LABEL: func.func @returned_table
// CHECK-NOT: scf.forall
// NARROW-LABEL: func.func @returned_table
// NARROW-NOT: scf.forall
// CHECK-LABEL: func.func @dense_bias
// CHECK-NOT: scf.forall
// NARROW-LABEL: func.func @dense_bias
// NARROW-NOT: scf.forall

#q = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#p = affine_map<(b, h, i, d, n) -> (d, n)>
#o = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @narrow(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

func.func @other_read(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %n = tensor.dim %t, %c2 : tensor<1x2x?x9xf32>
    %nf = arith.index_cast %n : index to i32
    %nff = arith.sitofp %nf : i32 to f32
    %r = arith.addf %s, %g : f32
    %r2 = arith.addf %r, %nff : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

func.func @returned_table(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>) -> (tensor<1x2x?x16xf32>, tensor<1x2x?x9xf32>) {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0, %t : tensor<1x2x?x16xf32>, tensor<1x2x?x9xf32>
}

func.func @dense_bias(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>, %bias: tensor<1x2x?x?xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q bias(%bias : tensor<1x2x?x?xf32>) : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}
