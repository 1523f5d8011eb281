// RUN: rpe-opt %s -rpe-fuse-attention -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-fuse-attention=fold-ops=4 -split-input-file | FileCheck %s --check-prefix=FEW
// RUN: not rpe-opt %s -rpe-fuse-attention=fold-ops=-1 -split-input-file 2>&1 | FileCheck %s --check-prefix=NEG --implicit-check-not="current operation"

// rpe-fuse-attention (d): element-wise code that produces an Lq×Lk bias
// (written the way torch-mlir exports transformers' models) moves into
// score_mod; the bias operand and every 8×8 tensor go.

// NEG: error: rpe-fuse-attention: fold-ops must not be negative, got -1

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (0, d1)>
#ijh = affine_map<(d0, d1, d2) -> (d0, d1)>
#ijh3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#perm = affine_map<(d0, d1, d2, d3) -> (d2, d3, d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A clipped relative-position bucket (arange(L)[None, :] - arange(L)[:, None],
// clamped) gathers a 9×2 table into 8×8×2, expanded and permuted to 1×2×8×8.
// CHECK-LABEL: func.func @gathered_bias
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x4xf32>, %[[T:.*]]: tensor<9x2xf32>)
// CHECK-NOT: 8x8
// CHECK: rpe.attention %[[Q]], %[[Q]], %[[Q]] scale = 5.000000e-01 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-DAG: %[[CJ:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-DAG: %[[CI:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[D:.*]] = arith.subi %[[CJ]], %[[CI]] : i64
// CHECK: arith.maxsi %[[D]]
// CHECK: arith.minsi
// CHECK: %[[B:.*]] = arith.index_cast %{{.*}} : i64 to index
// The gather's bounds checks hold at every (i, j) of the 8×8 domain: they go.
// clamp(j - i, -4, 4) + 4 is not rpe's clip (clamp(i - j, ...)): it stays.
// CHECK-NOT: cf.assert
// CHECK-NOT: rpe.bucket
// CHECK: %[[V:.*]] = tensor.extract %[[T]][%[[B]], %[[H]]] : tensor<9x2xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[S]], %[[V]] : f32
// CHECK-NEXT: rpe.yield %[[SUM]] : f32
// CHECK-NOT: 8x8
// CHECK: return
// With at most 4 ops per read, the bucket code does not fit: nothing moves.
// FEW-LABEL: func.func @gathered_bias
// FEW: rpe.attention %{{.*}} bias(%{{.*}} : tensor<1x2x8x8xf32>)
func.func @gathered_bias(%q: tensor<1x2x8x4xf32>, %t: tensor<9x2xf32>) -> tensor<1x2x8x4xf32> {
  %c4 = arith.constant 4 : i64
  %cm4 = arith.constant -4 : i64
  %c9 = arith.constant 9 : index
  %e8 = tensor.empty() : tensor<8xi64>
  %ar = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e8 : tensor<8xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<8xi64>
  %r = tensor.expand_shape %ar [[0, 1]] output_shape [8, 1] : tensor<8xi64> into tensor<8x1xi64>
  %c = tensor.expand_shape %ar [[0, 1]] output_shape [1, 8] : tensor<8xi64> into tensor<1x8xi64>
  %e88 = tensor.empty() : tensor<8x8xi64>
  %rel = linalg.generic {indexing_maps = [#col, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%c, %r : tensor<1x8xi64>, tensor<8x1xi64>) outs(%e88 : tensor<8x8xi64>) {
  ^bb0(%a: i64, %b: i64, %out: i64):
    %d = arith.subi %a, %b : i64
    %lo = arith.maxsi %d, %cm4 : i64
    %hi = arith.minsi %lo, %c4 : i64
    %s = arith.addi %hi, %c4 : i64
    linalg.yield %s : i64
  } -> tensor<8x8xi64>
  %e882 = tensor.empty() : tensor<8x8x2xf32>
  %g = linalg.generic {indexing_maps = [#ijh, #ijh3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rel : tensor<8x8xi64>) outs(%e882 : tensor<8x8x2xf32>) {
  ^bb0(%in: i64, %out: f32):
    %idx = arith.index_cast %in : i64 to index
    %h = linalg.index 2 : index
    %ok = arith.cmpi slt, %idx, %c9 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %t[%idx, %h] : tensor<9x2xf32>
    linalg.yield %v : f32
  } -> tensor<8x8x2xf32>
  %x = tensor.expand_shape %g [[0], [1], [2, 3]] output_shape [8, 8, 1, 2] : tensor<8x8x2xf32> into tensor<8x8x1x2xf32>
  %e1288 = tensor.empty() : tensor<1x2x8x8xf32>
  %bias = linalg.generic {indexing_maps = [#perm, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<8x8x1x2xf32>) outs(%e1288 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x8xf32>
  %0 = rpe.attention %q, %q, %q bias(%bias : tensor<1x2x8x8xf32>) scale = 0.5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#q4 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, 0)>
#k4 = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>

// A causal mask select(j <= i, 0, finfo.min) read in score_mod: the
// attention becomes `causal` and the score_mod goes (canonicalization).
// CHECK-LABEL: func.func @causal_mask
// CHECK-NOT: 8x8
// CHECK: %[[A:.*]] = rpe.attention %{{.*}} causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// A strict mask (j < i: the diagonal masked too) is not causal: it stays,
// as a comparison of the positions.
// CHECK: rpe.attention %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
// CHECK-NEXT: ^bb0(%[[S2:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %[[I2:.*]]: index, %[[J2:.*]]: index):
// CHECK-DAG: arith.index_cast %[[J2]] : index to i64
// CHECK-DAG: arith.index_cast %[[I2]] : index to i64
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: arith.addf %[[S2]]
// With q_offset, j <= row is not the causal rule: the mask stays.
// CHECK: rpe.attention %{{.*}} q_offset(%{{.*}}) : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
// CHECK: arith.select
// CHECK-NOT: 8x8
// CHECK: return
func.func @causal_mask(%q: tensor<1x2x8x4xf32>, %off: index) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %min = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8xi64>
  %ar = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e8 : tensor<8xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<8xi64>
  %r = tensor.expand_shape %ar [[0, 1, 2, 3]] output_shape [1, 1, 8, 1] : tensor<8xi64> into tensor<1x1x8x1xi64>
  %c = tensor.expand_shape %ar [[0, 1, 2, 3]] output_shape [1, 1, 1, 8] : tensor<8xi64> into tensor<1x1x1x8xi64>
  %e = tensor.empty() : tensor<1x1x8x8xf32>
  %mask = linalg.generic {indexing_maps = [#k4, #q4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %r : tensor<1x1x1x8xi64>, tensor<1x1x8x1xi64>) outs(%e : tensor<1x1x8x8xf32>) {
  ^bb0(%j: i64, %i: i64, %out: f32):
    %keep = arith.cmpi sle, %j, %i : i64
    %v = arith.select %keep, %zero, %min : f32
    linalg.yield %v : f32
  } -> tensor<1x1x8x8xf32>
  %strict = linalg.generic {indexing_maps = [#k4, #q4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %r : tensor<1x1x1x8xi64>, tensor<1x1x8x1xi64>) outs(%e : tensor<1x1x8x8xf32>) {
  ^bb0(%j: i64, %i: i64, %out: f32):
    %keep = arith.cmpi slt, %j, %i : i64
    %v = arith.select %keep, %zero, %min : f32
    linalg.yield %v : f32
  } -> tensor<1x1x8x8xf32>
  %c0 = arith.constant 0 : index
  %0 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %m = tensor.extract %mask[%c0, %c0, %i, %j] : tensor<1x1x8x8xf32>
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %1 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %m = tensor.extract %strict[%c0, %c0, %i, %j] : tensor<1x1x8x8xf32>
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %2 = rpe.attention %q, %q, %q bias(%mask : tensor<1x1x8x8xf32>) q_offset(%off) : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0, %1, %2 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#q4 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, 0)>

// An Lq×Lk bias read element by element from a function argument cannot be
// recomputed from anything smaller: it stays the bias operand. A mask from a
// position test that always holds (position >= 0) folds to nothing.
// CHECK-LABEL: func.func @dense_and_trivial
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x4xf32>, %[[D:.*]]: tensor<1x2x8x8xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<1x2x8x8xf32>)
// CHECK: rpe.attention %[[Q]], %[[Q]], %[[Q]] bias(%[[B]] : tensor<1x2x8x8xf32>) : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// CHECK-NEXT: return
func.func @dense_and_trivial(%q: tensor<1x2x8x4xf32>, %d: tensor<1x2x8x8xf32>) -> tensor<1x2x8x4xf32> {
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %min = arith.constant -3.40282347E+38 : f32
  %c0_i64 = arith.constant 0 : i64
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<1x2x8x8xf32>
  %b = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d : tensor<1x2x8x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %two : f32
    linalg.yield %v : f32
  } -> tensor<1x2x8x8xf32>
  %e8 = tensor.empty() : tensor<1x1x8x8xf32>
  %m = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e8 : tensor<1x1x8x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 2 : index
    %p = arith.index_cast %i : index to i64
    %ok = arith.cmpi sge, %p, %c0_i64 : i64
    %v = arith.select %ok, %zero, %min : f32
    linalg.yield %v : f32
  } -> tensor<1x1x8x8xf32>
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<1x2x8x8xf32>) : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %bb: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %m[%c0, %c0, %i, %j] : tensor<1x1x8x8xf32>
    %t = arith.addf %s, %x : f32
    rpe.yield %t : f32
  }
  return %0 : tensor<1x2x8x4xf32>
}

// -----

// A per-head vector read in score_mod (here ALiBi-like slopes computed by a
// generic) is cheaper read than recomputed per element: it stays.
// CHECK-LABEL: func.func @per_head_read
// CHECK: %[[SL:.*]] = linalg.generic
// CHECK: rpe.attention
// CHECK: tensor.extract %[[SL]][%{{.*}}] : tensor<2xf32>
func.func @per_head_read(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %e = tensor.empty() : tensor<2xf32>
  %sl = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<2xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 0 : index
    %c = arith.index_cast %h : index to i64
    %f = arith.sitofp %c : i64 to f32
    %x = math.exp2 %f : f32
    linalg.yield %x : f32
  } -> tensor<2xf32>
  %0 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %sl[%h] : tensor<2xf32>
    %t = arith.addf %s, %x : f32
    rpe.yield %t : f32
  }
  return %0 : tensor<1x2x8x4xf32>
}

// -----

// Band masks of the distance j - i in score_mod (transformers' sliding
// window: causal and j > i - W; or the masked side as a disjunction; or a
// negated test) become `causal` and `window = W`, the score_mod gone.
// CHECK-LABEL: func.func @window_mask
// CHECK: rpe.attention %{{.*}} causal window = 3 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// CHECK: rpe.attention %{{.*}} causal window = 3 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// CHECK: rpe.attention %{{.*}} window = 4 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// CHECK: rpe.attention %{{.*}} causal window = 5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// A band that ends past the diagonal (j <= i + 1) is a lookahead.
// CHECK: rpe.attention %{{.*}} lookahead = 1 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// Rows 3 to 7 of 8 see none of 2 keys through a window of 2: finfo.min
// and -inf differ there (uniform weights against 0), the mask stays.
// CHECK: rpe.attention %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x8x4xf32> {
// CHECK: arith.select
// So it does with dynamic lengths (no bound on Lq - Lk).
// CHECK: rpe.attention %{{.*}} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32> {
// CHECK: arith.select
// CHECK: return
func.func @window_mask(%q: tensor<1x2x8x4xf32>, %k2: tensor<1x2x2x4xf32>, %qd: tensor<1x2x?x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x?x4xf32>) {
  %min = arith.constant -3.40282347E+38 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %0 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %j64 = arith.index_cast %j : index to i64
    %i64 = arith.index_cast %i : index to i64
    %c3 = arith.constant 3 : i64
    %past = arith.cmpi sle, %j64, %i64 : i64
    %lo = arith.subi %i64, %c3 : i64
    %near = arith.cmpi sgt, %j64, %lo : i64
    %keep = arith.andi %past, %near : i1
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %1 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %future = arith.cmpi ugt, %j, %i : index
    %d = arith.subi %i, %j : index
    %far = arith.cmpi sge, %d, %c3 : index
    %masked = arith.ori %future, %far : i1
    %m = arith.select %masked, %ninf, %zero : f32
    %t = arith.addf %m, %s : f32
    rpe.yield %t : f32
  }
  %2 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c4 = arith.constant 4 : index
    %d = arith.subi %i, %j : index
    %keep = arith.cmpi slt, %d, %c4 : index
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %3 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %true = arith.constant true
    %c4 = arith.constant 4 : index
    %future = arith.cmpi sgt, %j, %i : index
    %past = arith.xori %future, %true : i1
    %j4 = arith.addi %j, %c4 : index
    %near = arith.cmpi sge, %j4, %i : index
    %keep = arith.andi %near, %past : i1
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %4 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c1 = arith.constant 1 : index
    %i1 = arith.addi %i, %c1 : index
    %keep = arith.cmpi sle, %j, %i1 : index
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %5 = rpe.attention %q, %k2, %k2 : tensor<1x2x8x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %d = arith.subi %i, %j : index
    %keep = arith.cmpi slt, %d, %c2 : index
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %6 = rpe.attention %qd, %qd, %qd : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %d = arith.subi %i, %j : index
    %keep = arith.cmpi slt, %d, %c2 : index
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  return %0, %1, %2, %3, %4, %5, %6 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x?x4xf32>
}

// -----

// ModernBERT's bidirectional window, |i - j| <= W (math.absi of the
// distance, in either order, kept or masked), is `window = W + 1
// lookahead = W`; with a causal mask beside it, `causal` wins. A band that
// ends before the diagonal (j < i) and |i - j| >= 2 kept are not bands the
// attributes express: they stay.
// CHECK-LABEL: func.func @bidirectional_window_mask
// CHECK: rpe.attention %{{.*}} window = 3 lookahead = 2 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// CHECK: rpe.attention %{{.*}} window = 3 lookahead = 2 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// CHECK: rpe.attention %{{.*}} causal window = 4 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>{{$}}
// CHECK: rpe.attention %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
// CHECK: arith.select
// CHECK: rpe.attention %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
// CHECK: math.absi
// CHECK: return
func.func @bidirectional_window_mask(%q: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %min = arith.constant -3.40282347E+38 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %0 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %c2 = arith.constant 2 : i64
    %d = arith.subi %i64, %j64 : i64
    %a = math.absi %d : i64
    %keep = arith.cmpi sle, %a, %c2 : i64
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %1 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %d = arith.subi %j, %i : index
    %a = math.absi %d : index
    %masked = arith.cmpi sge, %a, %c3 : index
    %m = arith.select %masked, %ninf, %zero : f32
    %t = arith.addf %m, %s : f32
    rpe.yield %t : f32
  }
  %2 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c4 = arith.constant 4 : index
    %d = arith.subi %i, %j : index
    %a = math.absi %d : index
    %near = arith.cmpi sgt, %c4, %a : index
    %past = arith.cmpi sle, %j, %i : index
    %keep = arith.andi %near, %past : i1
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %3 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %keep = arith.cmpi slt, %j, %i : index
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  %4 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c2 = arith.constant 2 : index
    %d = arith.subi %i, %j : index
    %a = math.absi %d : index
    %keep = arith.cmpi sge, %a, %c2 : index
    %m = arith.select %keep, %zero, %min : f32
    %t = arith.addf %s, %m : f32
    rpe.yield %t : f32
  }
  return %0, %1, %2, %3, %4 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
