// RUN: rpe-opt %s -rpe-tile-attention="tile-q=16 tile-k=32" -split-input-file | FileCheck %s
// RUN: not rpe-opt %s -rpe-tile-attention="tile-q=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADTILE --implicit-check-not="current operation"

// BADTILE: error: rpe-tile-attention: tile-q and tile-k must be positive, got 0 and 64

// FlashAttention-2 structure: parallel over (b, h, query tile), sequential
// over key tiles with an online softmax carried in (m, l, acc); the result
// tile is written into the shared output.
// CHECK-LABEL: func.func @structure
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x100x64xf32>, %[[K:.*]]: tensor<2x2x130x64xf32>, %[[V:.*]]: tensor<2x2x130x32xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4x100x32xf32>
// 100 rows in tiles of 16: 7 query tiles.
// CHECK: %[[R:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[QT:.*]]) in (%[[C2]], %[[C4]], %[[C7]]) shared_outs(%[[OUT:.*]] = %[[INIT]]) -> (tensor<2x4x100x32xf32>) {
// CHECK: %[[Q0:.*]] = arith.muli %[[QT]], %[[C16]] : index
// CHECK: %[[HK:.*]] = arith.divui %[[H]], %{{.*}} : index
// CHECK: tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<2x4x100x64xf32> to tensor<?x?xf32>
// CHECK: %[[LOOP:.*]]:3 = scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %[[C32]] iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
// CHECK: tensor.extract_slice %[[K]][%[[B]], %[[HK]], %[[K0]], 0]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: tensor.extract_slice %[[V]][%[[B]], %[[HK]], %[[K0]], 0]
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], %[[Q0]], 0]
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#2, %[[LOOP]]#1 : tensor<?x?xf32>, tensor<?xf32>) outs(%[[TILE]] : tensor<?x?xf32>)
// CHECK: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[O]] into %[[OUT]][%[[B]], %[[H]], %[[Q0]], 0]
// CHECK-NOT: rpe.attention
// CHECK: return %[[R]]
func.func @structure(%q: tensor<2x4x100x64xf32>, %k: tensor<2x2x130x64xf32>, %v: tensor<2x2x130x32xf32>) -> tensor<2x4x100x32xf32> {
  %0 = rpe.attention %q, %k, %v : tensor<2x4x100x64xf32>, tensor<2x2x130x64xf32>, tensor<2x2x130x32xf32> -> tensor<2x4x100x32xf32>
  return %0 : tensor<2x4x100x32xf32>
}

// -----

// Causal and key_lengths bound the key loop: tiles above the diagonal and
// beyond key_lengths[b] are never visited.
// CHECK-LABEL: func.func @bounds
// CHECK-SAME: (%[[Q:.*]]: tensor<1x1x64x8xf32>, %[[LEN:.*]]: tensor<1xi32>, %[[OFF:.*]]: index)
// CHECK: scf.forall (%[[B:.*]], %{{.*}}, %{{.*}}) in
// CHECK: %[[QP:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[L32:.*]] = tensor.extract %[[LEN]][%[[B]]] : tensor<1xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L32]] : i32 to index
// CHECK-DAG: %[[LAST:.*]] = arith.addi %[[QP]], %{{.*}} : index
// CHECK-DAG: %[[LPOS:.*]] = arith.maxsi %[[LI]], %{{.*}} : index
// CHECK: %[[E1:.*]] = arith.minsi %[[LPOS]], %{{.*}} : index
// CHECK: %[[CPOS:.*]] = arith.maxsi %[[LAST]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.minsi %[[E1]], %[[CPOS]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]] step
func.func @bounds(%q: tensor<1x1x64x8xf32>, %len: tensor<1xi32>, %off: index) -> tensor<1x1x64x8xf32> {
  %0 = rpe.attention %q, %q, %q key_lengths(%len : tensor<1xi32>) q_offset(%off) causal : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %0 : tensor<1x1x64x8xf32>
}

// -----

// A window (Mistral's sliding window) starts the key loop at the first row's
// window, max(qPos0 - (W - 1), 0): the tiles before it are never visited;
// the keys of the visited tiles outside a row's window are masked.
// CHECK-LABEL: func.func @window
// CHECK-SAME: (%[[Q:.*]]: tensor<1x1x64x8xf32>, %[[OFF:.*]]: index)
// CHECK-DAG: %[[W1:.*]] = arith.constant 19 : index
// CHECK-DAG: %[[W:.*]] = arith.constant 20 : index
// CHECK: scf.forall
// CHECK: %[[QP:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[FIRST:.*]] = arith.subi %[[QP]], %[[W1]] : index
// CHECK: %[[START:.*]] = arith.maxsi %[[FIRST]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[START]] to %{{.*}} step
// CHECK: linalg.generic
// CHECK: %[[POS:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[FUT:.*]] = arith.cmpi sgt, %[[KEY:.*]], %[[POS]] : index
// CHECK: %[[END:.*]] = arith.addi %[[KEY]], %[[W]] : index
// CHECK: %[[OLD:.*]] = arith.cmpi sle, %[[END]], %[[POS]] : index
// CHECK: %[[HIDE:.*]] = arith.ori %[[FUT]], %[[OLD]] : i1
// CHECK: arith.select %[[HIDE]]
func.func @window(%q: tensor<1x1x64x8xf32>, %off: index) -> tensor<1x1x64x8xf32> {
  %0 = rpe.attention %q, %q, %q q_offset(%off) causal window = 20 : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %0 : tensor<1x1x64x8xf32>
}

// -----

// A lookahead A ends the key loop at min(qPos0 + tq + A, Lk): the tiles past
// it are never visited; the keys of the visited tiles more than A past a
// row's position are masked (and, with the window, those before it).
// CHECK-LABEL: func.func @lookahead
// CHECK-SAME: (%[[Q:.*]]: tensor<1x1x64x8xf32>, %[[OFF:.*]]: index)
// CHECK-DAG: %[[W:.*]] = arith.constant 21 : index
// CHECK-DAG: %[[A:.*]] = arith.constant 20 : index
// CHECK: scf.forall
// CHECK: %[[QP:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: %[[ROWS:.*]] = arith.addi %[[QP]], %{{.*}} : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[ROWS]], %[[A]] : index
// CHECK-NEXT: %[[CL:.*]] = arith.maxsi %[[AHEAD]], %{{.*}} : index
// CHECK-NEXT: %[[KEND:.*]] = arith.minsi %[[CL]], %c64 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[KEND]] step
// CHECK: linalg.generic
// CHECK: %[[POS:.*]] = arith.addi %{{.*}}, %[[OFF]] : index
// CHECK-NEXT: %[[REACH:.*]] = arith.addi %[[POS]], %[[A]] : index
// CHECK-NEXT: %[[FUT:.*]] = arith.cmpi sgt, %[[KEY:.*]], %[[REACH]] : index
// CHECK: %[[END:.*]] = arith.addi %[[KEY]], %[[W]] : index
// CHECK: %[[OLD:.*]] = arith.cmpi sle, %[[END]], %[[POS]] : index
// CHECK: %[[HIDE:.*]] = arith.ori %[[FUT]], %[[OLD]] : i1
// CHECK: arith.select %[[HIDE]]
func.func @lookahead(%q: tensor<1x1x64x8xf32>, %off: index) -> tensor<1x1x64x8xf32> {
  %0 = rpe.attention %q, %q, %q q_offset(%off) window = 21 lookahead = 20 : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  return %0 : tensor<1x1x64x8xf32>
}

// -----

// A Toeplitz table lookup in score_mod (what rpe-fuse-attention makes of a
// relative_bias) becomes a per-head diagonal of length Lq + Lk - 1 = 60 + 70
// - 1, computed once before the loops with the buckets (T5's by compares
// with the distances where they step up, no logarithm); the inner loop only
// indexes it with i - j + shift.
// CHECK-LABEL: func.func @toeplitz
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x60x8xf32>, %[[K:.*]]: tensor<1x2x70x8xf32>, %[[T:.*]]: tensor<32x2xf32>)
// CHECK: %[[DIAG:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK: arith.cmpi sge, %{{.*}}, %c91 : index
// CHECK: tensor.extract %[[T]]
// CHECK: scf.forall
// CHECK-NOT: math.log
// CHECK-NOT: rpe.bucket
// CHECK: tensor.extract %[[DIAG]][%{{.*}}, %{{.*}}] : tensor<?x?xf32>
// CHECK-NOT: math.log
// CHECK: scf.forall.in_parallel
func.func @toeplitz(%q: tensor<1x2x60x8xf32>, %k: tensor<1x2x70x8xf32>, %t: tensor<32x2xf32>) -> tensor<1x2x60x8xf32> {
  %0 = rpe.attention %q, %k, %k scale = 1.0 : tensor<1x2x60x8xf32>, tensor<1x2x70x8xf32>, tensor<1x2x70x8xf32> -> tensor<1x2x60x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
    %v = tensor.extract %t[%bk, %h] : tensor<32x2xf32>
    %r = arith.addf %s, %v : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x60x8xf32>
}

// -----

// Not Toeplitz (window2d depends on i and j, not only i - j), and a lookup
// with swapped positions: both stay per element.
// CHECK-LABEL: func.func @not_toeplitz
// CHECK: scf.forall
// CHECK: rpe.bucket %{{.*}}, %{{.*}} by window2d<height = 2, width = 3>
// CHECK: rpe.bucket %{{.*}}, %{{.*}} by clip<max_distance = 2>
func.func @not_toeplitz(%q: tensor<1x2x6x8xf32>, %t: tensor<15x2xf32>, %c: tensor<5x2xf32>) -> tensor<1x2x6x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by window2d<height = 2, width = 3>
    %v = tensor.extract %t[%bk, %h] : tensor<15x2xf32>
    %bk2 = rpe.bucket %j, %i by clip<max_distance = 2>
    %v2 = tensor.extract %c[%bk2, %h] : tensor<5x2xf32>
    %r = arith.addf %s, %v : f32
    %r2 = arith.addf %r, %v2 : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Any term that depends on the positions only through i - j is tabulated
// the same way, ALiBi's f64 arithmetic included; a per-head value used
// per element (the temperature) stays in the loop.
// CHECK-LABEL: func.func @diagonal_term
// CHECK-SAME: (%{{.*}}: tensor<1x2x6x8xf32>, %[[S:.*]]: tensor<2xf64>, %[[T:.*]]: tensor<2xf32>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK: tensor.extract %[[S]]
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: scf.forall
// CHECK-NOT: f64
// CHECK: tensor.extract %[[T]]
// CHECK: tensor.extract %[[D]][%{{.*}}, %{{.*}}] : tensor<?x?xf32>
// CHECK-NOT: f64
// CHECK: scf.forall.in_parallel
func.func @diagonal_term(%q: tensor<1x2x6x8xf32>, %slopes: tensor<2xf64>, %temp: tensor<2xf32>) -> tensor<1x2x6x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = tensor.extract %temp[%h] : tensor<2xf32>
    %st = arith.mulf %s, %t : f32
    %m = tensor.extract %slopes[%h] : tensor<2xf64>
    %d = arith.subi %j, %i : index
    %d64 = arith.index_cast %d : index to i64
    %df = arith.sitofp %d64 : i64 to f64
    %a = arith.mulf %m, %df : f64
    %a32 = arith.truncf %a : f64 to f32
    %r = arith.addf %st, %a32 : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Front-end forms of the diagonal (what rpe-fuse-attention folds from
// torch-mlir's code): the positions cast to i64 and subtracted, a comparison
// of the cast positions, and bounds checks of the gathered bucket. All of it
// is tabulated: the table computes the i64 difference from d = i - j, the
// comparison as d > 0 (j < i), and the checks run in the table's body, not in
// the kernel.
// CHECK-LABEL: func.func @cast_positions
// CHECK-SAME: (%{{.*}}: tensor<1x2x6x8xf32>, %[[T:.*]]: tensor<9x2xf32>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK: %[[R:.*]] = linalg.index 1 : index
// CHECK: %[[DI:.*]] = arith.subi %[[R]], %{{.*}} : index
// CHECK: %[[NEG:.*]] = arith.subi %{{.*}}, %[[DI]] : index
// CHECK: arith.index_cast %[[NEG]] : index to i64
// CHECK: cf.assert %{{.*}}, "index must be smaller than dim size"
// CHECK: tensor.extract %[[T]]
// CHECK: %[[M:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : index
// CHECK: arith.select
// CHECK: scf.forall
// CHECK-NOT: cf.assert
// CHECK-NOT: arith.index_cast %{{.*}} : index to i64
// CHECK: tensor.extract %[[D]][%{{.*}}, %{{.*}}] : tensor<?x?xf32>
// CHECK: tensor.extract %[[M]][%{{.*}}, %{{.*}}] : tensor<?x?xf32>
// CHECK-NOT: cf.assert
// CHECK: scf.forall.in_parallel
func.func @cast_positions(%q: tensor<1x2x6x8xf32>, %t: tensor<9x2xf32>) -> tensor<1x2x6x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c4 = arith.constant 4 : i64
    %cm4 = arith.constant -4 : i64
    %c9 = arith.constant 9 : index
    %min = arith.constant -3.40282347E+38 : f32
    %zero = arith.constant 0.0 : f32
    %cj = arith.index_cast %j : index to i64
    %ci = arith.index_cast %i : index to i64
    %d = arith.subi %cj, %ci : i64
    %lo = arith.maxsi %d, %cm4 : i64
    %hi = arith.minsi %lo, %c4 : i64
    %bk64 = arith.addi %hi, %c4 : i64
    %bk = arith.index_cast %bk64 : i64 to index
    %ok = arith.cmpi slt, %bk, %c9 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %t[%bk, %h] : tensor<9x2xf32>
    %before = arith.cmpi ult, %cj, %ci : i64
    %m = arith.select %before, %min, %zero : f32
    %r = arith.addf %s, %v : f32
    %r2 = arith.addf %r, %m : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<1x2x6x8xf32>
}
