// RUN: rpe-opt %s -rpe-gpu-attention -canonicalize -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-gpu-attention -split-input-file | FileCheck %s --check-prefix=NOLXL
// RUN: rpe-opt %s -rpe-gpu-attention="block-rows=64 tile-k=4" -canonicalize -split-input-file | FileCheck %s --check-prefix=OPTS
// RUN: not rpe-opt %s -rpe-gpu-attention="block-rows=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADOPT --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-gpu-attention="tile-k=4611686018427387904" -split-input-file 2>&1 | FileCheck %s --check-prefix=HUGETILE --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-gpu-attention="tensor-cores=1 mma-block-rows=1048576" -split-input-file 2>&1 | FileCheck %s --check-prefix=HUGEMMA --implicit-check-not="current operation"

// BADOPT: error: rpe-gpu-attention: block-rows, tile-k and max-head-dim must be positive, got 0, 8 and 256
// Sizes computed from larger tiles overflowed (an abort at 2^62).
// HUGETILE: error: rpe-gpu-attention: tile-k, max-head-dim, mma-tile-k and mma-block-rows must be at most 49152 (no larger tile fits in a block's workgroup memory), got 4611686018427387904, 256, 32 and 64
// HUGEMMA: error: rpe-gpu-attention: tile-k, max-head-dim, mma-tile-k and mma-block-rows must be at most 49152 (no larger tile fits in a block's workgroup memory), got 8, 256, 32 and 1048576

// T5-biased causal GQA attention at L = 4096: one block of 128 threads per
// 128 query rows and head; key, value, probability and query tiles in
// workgroup memory; the T5 terms tabulated per (head, diagonal) first; the
// result written into a memref.alloc that becomes the tensor.
// NOLXL-NOT: 4096x4096
// CHECK-LABEL: func.func @t5_causal_gqa
// CHECK: } -> tensor<8x8191xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x8x4096x32xf32>
// CHECK: gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) in (%{{.*}} = %c32, %{{.*}} = %c8, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK-SAME: workgroup(%[[KT:.*]] : memref<8x64xf32, #gpu.address_space<workgroup>>, %[[VT:.*]] : memref<8x32xf32, #gpu.address_space<workgroup>>, %[[PT:.*]] : memref<8x128xf32, #gpu.address_space<workgroup>>, %[[QT:.*]] : memref<64x128xf32, #gpu.address_space<workgroup>>)
// Grouped-query attention: kv head = h / 4.
// CHECK: arith.divui %[[BY]], %c4
// The scaled query row, in the thread's column.
// CHECK: memref.store %{{.*}}, %[[QT]][%{{.*}}, %[[TX]]]
// Key tiles up to the causal end of the block's last row.
// CHECK: scf.for %[[K0:.*]] = %c0 to %{{.*}} step %c8 iter_args(
// CHECK: memref.store %{{.*}}, %[[KT]]
// CHECK: memref.store %{{.*}}, %[[VT]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(
// CHECK: math.fma
// The diagonal table, read at h, i - j + 4095.
// CHECK: tensor.extract %{{.*}}[%[[BY]], %{{.*}}] : tensor<8x8191xf32>
// CHECK: arith.cmpi sgt
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[PT]][%{{.*}}, %[[TX]]]
// CHECK: memref.load %[[PT]]
// CHECK: memref.load %[[VT]]
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: gpu.terminator
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: rpe.attention
// OPTS-LABEL: func.func @t5_causal_gqa
// OPTS: gpu.launch {{.*}} in (%{{.*}} = %c64, %{{.*}} = %c8, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c64,
// OPTS-SAME: memref<4x64xf32, #gpu.address_space<workgroup>>
func.func @t5_causal_gqa(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x2x4096x64xf32>, %v: tensor<1x2x4096x32xf32>, %table: tensor<32x8xf32>) -> tensor<1x8x4096x32xf32> {
  %0 = rpe.attention %q, %k, %v causal scale = 1.0 : tensor<1x8x4096x64xf32>, tensor<1x2x4096x64xf32>, tensor<1x2x4096x32xf32> -> tensor<1x8x4096x32xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
    %t = tensor.extract %table[%bk, %h] : tensor<32x8xf32>
    %r = arith.addf %s, %t : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x8x4096x32xf32>
}

// -----

// Dynamic sizes, head dimensions included: the query and output rows live
// in private memory of max-head-dim floats, after a run-time check; key
// lengths bound the key loop; rel_values are added to the values.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[FITS:.*]] = arith.andi
// CHECK: cf.assert %[[FITS]], "rpe.attention: head dimension above the GPU kernel's max-head-dim (256)"
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?x?xf32>
// An empty grid is not launched.
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK-SAME: workgroup({{.*}} : memref<8x256xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<8x256xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<8x128xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: private(%[[QM:.*]] : memref<256xf32, #gpu.address_space<private>>, %[[AM:.*]] : memref<256xf32, #gpu.address_space<private>>)
// CHECK: tensor.extract %{{.*}}[%[[BZ:.*]]] : tensor<?xi32>
// CHECK: memref.store %{{.*}}, %[[AM]]
// CHECK: memref.store %{{.*}}, %[[QM]]
// CHECK: memref.load %[[QM]]
// CHECK: tensor.extract %{{.*}} : tensor<9x?xf32>
// CHECK: memref.store %{{.*}}, %[[AM]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>, %len: tensor<?xi32>, %rel: tensor<9x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = rpe.attention %q, %k, %v key_lengths(%len : tensor<?xi32>) rel_values(%rel : tensor<9x?xf32>) by clip<max_distance = 4> : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

// f16 operands are read as f32; the result is stored as f16 (D = 12 is no
// multiple of 16: the SIMT kernel, not the tensor-core one).
// CHECK-LABEL: func.func @half
// CHECK: memref.alloc() : memref<2x4x33x12xf16>
// CHECK: gpu.launch
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @half(%q: tensor<2x4x33x12xf16>) -> tensor<2x4x33x12xf16> {
  %0 = rpe.attention %q, %q, %q : tensor<2x4x33x12xf16>, tensor<2x4x33x12xf16>, tensor<2x4x33x12xf16> -> tensor<2x4x33x12xf16>
  return %0 : tensor<2x4x33x12xf16>
}

// -----

// A window: the block's key loop starts at the tile (8 keys) holding its
// first row's window start, max(row0 - 31, 0) rounded down; inside, the
// scores of keys with j + W <= i are -inf beside the causal mask.
// CHECK-LABEL: func.func @window
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9]+]]
// CHECK: %[[ROW0:.*]] = arith.muli %[[BX]], %c128 : index
// CHECK: %[[FIRST:.*]] = arith.subi %[[ROW0]], %c31 : index
// CHECK-NEXT: %[[START:.*]] = arith.maxsi %[[FIRST]], %c0 : index
// CHECK-NEXT: %[[TILES:.*]] = arith.divui %[[START]], %c8 : index
// CHECK-NEXT: %[[ALIGNED:.*]] = arith.muli %[[TILES]], %c8 : index
// CHECK-NEXT: scf.for %{{.*}} = %[[ALIGNED]] to %{{.*}} step %c8
// CHECK: %[[FUT:.*]] = arith.ori
// CHECK-NEXT: %[[END:.*]] = arith.addi %{{.*}}, %c32 : index
// CHECK-NEXT: %[[OLD:.*]] = arith.cmpi sle, %[[END]], %{{.*}} : index
// CHECK-NEXT: %[[HIDE:.*]] = arith.ori %[[FUT]], %[[OLD]] : i1
// CHECK-NEXT: arith.select %[[HIDE]], %cst{{.*}}, %{{.*}} : f32
// CHECK: gpu.terminator
func.func @window(%q: tensor<1x2x1000x16xf32>) -> tensor<1x2x1000x16xf32> {
  %0 = rpe.attention %q, %q, %q causal window = 32 : tensor<1x2x1000x16xf32>, tensor<1x2x1000x16xf32>, tensor<1x2x1000x16xf32> -> tensor<1x2x1000x16xf32>
  return %0 : tensor<1x2x1000x16xf32>
}

// -----

// A lookahead A: the block's key loop ends A keys past its last row,
// min(min(row0 + 128, Lq) + A, Lk); inside, the scores of keys with
// j > i + A are -inf.
// CHECK-LABEL: func.func @lookahead
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9]+]]
// CHECK: %[[ROW0:.*]] = arith.muli %[[BX]], %c128 : index
// CHECK: %[[ROWS:.*]] = arith.addi %[[ROW0]], %c128 : index
// CHECK-NEXT: %[[LAST:.*]] = arith.minui %[[ROWS]], %c1000 : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[LAST]], %c32 : index
// CHECK-NEXT: %[[CL:.*]] = arith.maxsi %[[AHEAD]], %c0 : index
// CHECK-NEXT: %[[KEND:.*]] = arith.minsi %[[CL]], %c1000 : index
// CHECK: scf.for %{{.*}} = %c0 to %[[KEND]] step %c8
// CHECK: %[[PAST:.*]] = arith.cmpi uge, %{{.*}}, %[[KEND]] : index
// CHECK-NEXT: %[[REACH:.*]] = arith.addi %{{.*}}, %c32 : index
// CHECK-NEXT: %[[FUT:.*]] = arith.cmpi sgt, %{{.*}}, %[[REACH]] : index
// CHECK-NEXT: %[[HIDE:.*]] = arith.ori %[[PAST]], %[[FUT]] : i1
// CHECK-NEXT: arith.select %[[HIDE]], %cst{{.*}}, %{{.*}} : f32
// CHECK: gpu.terminator
func.func @lookahead(%q: tensor<1x2x1000x16xf32>) -> tensor<1x2x1000x16xf32> {
  %0 = rpe.attention %q, %q, %q lookahead = 32 : tensor<1x2x1000x16xf32>, tensor<1x2x1000x16xf32>, tensor<1x2x1000x16xf32> -> tensor<1x2x1000x16xf32>
  return %0 : tensor<1x2x1000x16xf32>
}
