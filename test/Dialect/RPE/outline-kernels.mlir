// RUN: rpe-opt %s -rpe-outline-kernels -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-outline-kernels=min-repeats=0 -split-input-file | FileCheck %s --check-prefix=ATTN
// RUN: rpe-opt %s -rpe-outline-kernels=min-repeats=1 -split-input-file | FileCheck %s --check-prefix=ALL
// RUN: not rpe-opt %s -rpe-outline-kernels=min-repeats=-1 2>&1 | FileCheck %s --check-prefix=NEG --implicit-check-not=error:

// NEG: error: rpe-outline-kernels: min-repeats must not be negative, got -1

// Two layers with the same attention (different inputs, the same bias
// table) call one function; a third with another score_mod gets its own. The
// scalar constant score_mod reads is copied in, the table is an argument.
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x4xf32>, %[[K:.*]]: tensor<1x2x8x4xf32>, %[[T:.*]]: tensor<9x2xf32>)
// CHECK: %[[A:.*]] = call @__rpe_attention(%[[Q]], %[[T]]) : (tensor<1x2x8x4xf32>, tensor<9x2xf32>) -> tensor<1x2x8x4xf32>
// CHECK: %[[B:.*]] = call @__rpe_attention(%[[K]], %[[T]])
// CHECK: %[[C:.*]] = call @__rpe_attention_0(%[[K]])
// CHECK: return %[[A]], %[[B]], %[[C]]
// CHECK: func.func private @__rpe_attention(%[[AQ:.*]]: tensor<1x2x8x4xf32>, %[[AT:.*]]: tensor<9x2xf32>) -> tensor<1x2x8x4xf32> attributes {passthrough = ["noinline"]}
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: %[[R:.*]] = rpe.attention %[[AQ]], %[[AQ]], %[[AQ]]
// CHECK: tensor.extract %[[AT]]
// CHECK: return %[[R]]
// CHECK: func.func private @__rpe_attention_0(
// CHECK: rpe.attention {{.*}} causal
// CHECK-NOT: func.func
// ATTN-LABEL: func.func @layers
// ATTN-COUNT-2: call @__rpe_attention(
// ATTN: call @__rpe_attention_0(
func.func @layers(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %t: tensor<9x2xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %two = arith.constant 2.0 : f32
  %0 = rpe.attention %q, %q, %q : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %v = tensor.extract %t[%bk, %h] : tensor<9x2xf32>
    %w = arith.mulf %v, %two : f32
    %r = arith.addf %s, %w : f32
    rpe.yield %r : f32
  }
  %1 = rpe.attention %k, %k, %k : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %v = tensor.extract %t[%bk, %h] : tensor<9x2xf32>
    %w = arith.mulf %v, %two : f32
    %r = arith.addf %s, %w : f32
    rpe.yield %r : f32
  }
  %2 = rpe.attention %k, %k, %k causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0, %1, %2 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// A projection repeated in two layers (matmul into a zero fill, then a
// bias add) becomes one function per op, the fill built inside; the
// transpose that occurs once stays where it is, and so do the fills.
// CHECK-LABEL: func.func @projections
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xf32>, %[[W1:.*]]: tensor<32x32xf32>, %[[W2:.*]]: tensor<32x32xf32>, %[[BIAS:.*]]: tensor<32xf32>)
// CHECK: %[[M1:.*]] = call @__rpe_kernel(%[[X]], %[[W1]])
// CHECK: %[[A1:.*]] = call @__rpe_kernel_0(%[[M1]], %[[BIAS]])
// CHECK: %[[M2:.*]] = call @__rpe_kernel(%[[A1]], %[[W2]])
// CHECK: %[[A2:.*]] = call @__rpe_kernel_0(%[[M2]], %[[BIAS]])
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[A2]]
// CHECK: return %[[T]]
// CHECK: func.func private @__rpe_kernel(%[[A:.*]]: tensor<16x32xf32>, %[[B:.*]]: tensor<32x32xf32>) -> tensor<16x32xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16x32xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<16x32xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<16x32xf32>, tensor<32x32xf32>) outs(%[[F]] : tensor<16x32xf32>)
// CHECK: return %[[MM]]
// CHECK: func.func private @__rpe_kernel_0(
// CHECK: linalg.generic
// ATTN-LABEL: func.func @projections
// ATTN-NOT: call
// ATTN-COUNT-2: linalg.matmul
// With min-repeats=1 (rpe-cpu-pipeline's default) the transpose that occurs
// once moves out too: the function keeps only calls.
// ALL-LABEL: func.func @projections
// ALL-NOT: linalg.
// ALL: %[[T:.*]] = call @__rpe_kernel_1(
// ALL-NEXT: return %[[T]]
func.func @projections(%x: tensor<16x32xf32>, %w1: tensor<32x32xf32>, %w2: tensor<32x32xf32>, %bias: tensor<32xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x32xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m0 = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f0 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %a0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m0, %bias : tensor<16x32xf32>, tensor<32xf32>) outs(%e0 : tensor<16x32xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %e1 = tensor.empty() : tensor<16x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m1 = linalg.matmul ins(%a0, %w2 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %a1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m1, %bias : tensor<16x32xf32>, tensor<32xf32>) outs(%e2 : tensor<16x32xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  %et = tensor.empty() : tensor<32x16xf32>
  %t = linalg.transpose ins(%a1 : tensor<16x32xf32>) outs(%et : tensor<32x16xf32>) permutation = [1, 0]
  return %t : tensor<32x16xf32>
}

// -----

// One zero fill (merged by CSE) as the init of two matmuls: each function
// builds its own fill, and the shared one goes.
// CHECK-LABEL: func.func @shared_fill
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xf32>, %[[W1:.*]]: tensor<32x32xf32>, %[[W2:.*]]: tensor<32x32xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[M0:.*]] = call @__rpe_kernel(%[[X]], %[[W1]])
// CHECK: %[[M1:.*]] = call @__rpe_kernel(%[[X]], %[[W2]])
// CHECK-NEXT: return %[[M0]], %[[M1]]
// CHECK: func.func private @__rpe_kernel(
// CHECK: linalg.fill
// CHECK: linalg.matmul
func.func @shared_fill(%x: tensor<16x32xf32>, %w1: tensor<32x32xf32>, %w2: tensor<32x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m0 = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m1 = linalg.matmul ins(%x, %w2 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %m0, %m1 : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// rpe.rotary is outlined like attention, whatever min-repeats says: two
// layers' RoPE of q call one function (its tables and rotation are loops);
// RoPE of another shape gets its own.
// CHECK-LABEL: func.func @rope
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x8x4xf32>, %[[Y:.*]]: tensor<1x1x8x4xf32>, %[[P:.*]]: tensor<8xi64>)
// CHECK: %[[A:.*]] = call @__rpe_rotary(%[[X]], %[[P]])
// CHECK: %[[B:.*]] = call @__rpe_rotary(%[[A]], %[[P]])
// CHECK: %[[C:.*]] = call @__rpe_rotary_0(%[[Y]], %[[P]])
// CHECK: func.func private @__rpe_rotary(%{{.*}}: tensor<1x2x8x4xf32>, %{{.*}}: tensor<8xi64>) -> tensor<1x2x8x4xf32> attributes {passthrough = ["noinline"]}
// CHECK-NEXT: rpe.rotary %{{.*}}, %{{.*}} {theta = 5.000000e+05 : f64}
// ATTN-LABEL: func.func @rope
// ATTN-COUNT-2: call @__rpe_rotary(
// ATTN: call @__rpe_rotary_0(
func.func @rope(%x: tensor<1x2x8x4xf32>, %y: tensor<1x1x8x4xf32>, %p: tensor<8xi64>) -> (tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>) {
  %0 = rpe.rotary %x, %p {theta = 5.0e5 : f64} : tensor<1x2x8x4xf32>, tensor<8xi64>
  %1 = rpe.rotary %0, %p {theta = 5.0e5 : f64} : tensor<1x2x8x4xf32>, tensor<8xi64>
  %2 = rpe.rotary %y, %p {theta = 5.0e5 : f64} : tensor<1x1x8x4xf32>, tensor<8xi64>
  return %1, %2 : tensor<1x2x8x4xf32>, tensor<1x1x8x4xf32>
}

// -----

// rpe-split-attention-heads' loop (rpe.split_heads) moves out as a whole:
// the table's producer and the attention stay in it (the head's slices are
// read in place, not copied at a function boundary), and its tensor.empty
// init comes along; a loop without the marker stays, its ops moving out
// one by one.
// CHECK-LABEL: func.func @split_heads
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x8x4xf32>, %[[W:.*]]: tensor<2x4x16xf32>)
// CHECK-NOT: scf.forall
// CHECK: %[[O:.*]] = call @__rpe_attention_heads(%[[Q]], %[[W]]) : (tensor<1x2x8x4xf32>, tensor<2x4x16xf32>) -> tensor<1x2x8x4xf32>
// CHECK: %[[P:.*]] = scf.forall
// CHECK: linalg.negf
// CHECK: return %[[O]], %[[P]]
// CHECK: func.func private @__rpe_attention_heads(%{{.*}}: tensor<1x2x8x4xf32>, %{{.*}}: tensor<2x4x16xf32>) -> tensor<1x2x8x4xf32> attributes {passthrough = ["noinline"]}
// CHECK: tensor.empty() : tensor<1x2x8x4xf32>
// CHECK: scf.forall {{.*}} {
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: rpe.attention
// CHECK: } {rpe.split_heads}
// ALL-LABEL: func.func @split_heads
// ALL: call @__rpe_attention_heads(
// ALL: scf.forall
// ALL: call @__rpe_kernel
// ALL-NOT: call @__rpe_kernel
// ALL: func.func private @__rpe_attention_heads(
// ALL-NOT: call
// ALL: rpe.attention
func.func @split_heads(%q: tensor<1x2x8x4xf32>, %w: tensor<2x4x16xf32>) -> (tensor<1x2x8x4xf32>, tensor<2x4x16xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x2x8x4xf32>
  %out = scf.forall (%h) in (2) shared_outs(%o = %init) -> (tensor<1x2x8x4xf32>) {
    %qh = tensor.extract_slice %q[0, %h, 0, 0] [1, 1, 8, 4] [1, 1, 1, 1] : tensor<1x2x8x4xf32> to tensor<1x1x8x4xf32>
    %wh = tensor.extract_slice %w[%h, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<2x4x16xf32> to tensor<1x4x16xf32>
    %e = tensor.empty() : tensor<1x1x8x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%qh, %wh : tensor<1x1x8x4xf32>, tensor<1x4x16xf32>) outs(%f : tensor<1x1x8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %c, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x1x8x16xf32>
    %r = rpe.attention %qh, %qh, %qh : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32> {
    ^bb0(%s: f32, %b: index, %hh: index, %i: index, %j: index):
      %x = tensor.extract %t[%c0, %hh, %i, %j] : tensor<1x1x8x16xf32>
      %y = arith.addf %s, %x : f32
      rpe.yield %y : f32
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %r into %o[0, %h, 0, 0] [1, 1, 8, 4] [1, 1, 1, 1] : tensor<1x1x8x4xf32> into tensor<1x2x8x4xf32>
    }
  } {rpe.split_heads}
  %init2 = tensor.empty() : tensor<2x4x16xf32>
  %neg = scf.forall (%h) in (2) shared_outs(%o = %init2) -> (tensor<2x4x16xf32>) {
    %wh = tensor.extract_slice %w[%h, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<2x4x16xf32> to tensor<1x4x16xf32>
    %e = tensor.empty() : tensor<1x4x16xf32>
    %n = linalg.negf ins(%wh : tensor<1x4x16xf32>) outs(%e : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %n into %o[%h, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<1x4x16xf32> into tensor<2x4x16xf32>
    }
  }
  return %out, %neg : tensor<1x2x8x4xf32>, tensor<2x4x16xf32>
}

// -----

// One tensor.empty as both outputs of a generic: absorbed (and erased) once
// (it was twice: a use after free).
// ALL-LABEL: func.func @shared_init
// ALL-NOT: tensor.empty
// ALL: call @__rpe_kernel
// ALL-LABEL: func.func private @__rpe_kernel
// ALL-COUNT-1: tensor.empty
// ALL-NOT: tensor.empty
// ALL: linalg.generic
func.func @shared_init(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %x, %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%e, %e : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32, %p: f32):
    %n = arith.negf %v : f32
    linalg.yield %v, %n : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %x, %y : tensor<8xf32>, tensor<8xf32>
}
