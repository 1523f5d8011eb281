// RUN: rpe-opt %s -split-input-file -rpe-vectorize-attention="vector-width=8 tile-q=16" | FileCheck %s
// RUN: rpe-opt %s -split-input-file -rpe-vectorize-attention | FileCheck %s --check-prefix=W16
// RUN: rpe-opt %s -split-input-file -rpe-vectorize-attention="vector-width=8" | FileCheck %s --check-prefix=W8
// RUN: rpe-opt %s -rpe-vectorize-attention="prefetch=false" | FileCheck %s --check-prefix=NOPF
// RUN: rpe-opt %s -rpe-vectorize-attention="llvm-unroll=1" | FileCheck %s --check-prefix=UNROLL
// RUN: rpe-opt %s -split-input-file -rpe-vectorize-attention="vector-width=8 tile-q=16 permute-reads=1" | FileCheck %s --check-prefix=PERM
// RUN: rpe-opt %s -split-input-file -rpe-vectorize-attention="vector-width=8 tile-q=16 permute-reads=1 row-read-prefetch=0 window-read-prefetch=0" | FileCheck %s --check-prefix=PERM0
// RUN: rpe-opt %s -rpe-vectorize-attention="upstream-exp=1" | FileCheck %s --check-prefix=UPEXP
// RUN: not rpe-opt %s -rpe-vectorize-attention="vector-width=6" 2>&1 | FileCheck %s --check-prefix=BADW --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-attention="vector-width=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=HUGEW --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-attention="vector-width=8 tile-q=20" 2>&1 | FileCheck %s --check-prefix=BADQ --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-attention="key-block=0" 2>&1 | FileCheck %s --check-prefix=BADBLOCK --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-attention="window-read-prefetch=-1" 2>&1 | FileCheck %s --check-prefix=BADPF --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-attention="decode-rows=17" 2>&1 | FileCheck %s --check-prefix=BADDEC --implicit-check-not="current operation"
// RUN: rpe-opt %s -split-input-file -rpe-vectorize-attention="vector-width=8 tile-q=16 decode-rows=0" | FileCheck %s --check-prefix=NODEC
// RUN: not rpe-opt %s -rpe-vectorize-attention="tile-k=100000" 2>&1 | FileCheck %s --check-prefix=BIGTILE --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-attention="max-stack-kib=0" 2>&1 | FileCheck %s --check-prefix=BADSTACK --implicit-check-not="current operation"

// BADW: error: rpe-vectorize-attention: vector-width must be a power of two in [1, 64], got 6
// The default tile-q (a multiple of the width) overflowed before this check.
// HUGEW: error: rpe-vectorize-attention: vector-width must be a power of two in [1, 64], got 4611686018427387904
// BADQ: error: rpe-vectorize-attention: tile-q must be a positive multiple of vector-width (8) and at most 16 vectors, got 20
// BADBLOCK: error: rpe-vectorize-attention: tile-k must be positive and key-block, value-block in [1, 16], got 64, 0, 4
// BADPF: error: rpe-vectorize-attention: row-read-prefetch and window-read-prefetch must not be negative, got 2, -1
// BADDEC: error: rpe-vectorize-attention: decode-rows must be in [0, 16], got 17
// 100000 × 64 f32 scores: 25600000 B = 25000 KiB.
// BIGTILE: error: rpe-vectorize-attention: tile-k x tile-q (100000 x 64) scores take 25000 KiB of stack per thread, more than max-stack-kib = 2048
// BADSTACK: error: rpe-vectorize-attention: max-stack-kib must be positive, got 0
// A limit of 2^54 KiB or more wrapped to 0 bytes when multiplied by 1024:
// the op fit no longer ("needs up to 151 KiB ..., more than max-stack-kib =
// 18014398509481984").
// RUN: rpe-opt %s -rpe-vectorize-attention="max-stack-kib=18014398509481984" | FileCheck %s --check-prefix=HUGESTACK
// HUGESTACK-LABEL: func.func @structure
// HUGESTACK-NOT: rpe.attention
// HUGESTACK-LABEL: func.func @odd_head_dims

// The kernel on buffers: read-only buffers of q, k, v (row-major at any
// offset: a head's slice is read in place), the result allocated once; parallel over (b, h, query tile) = (2, 4, ceil(100 / 16)); Qᵀ packed
// once per tile; one specialisation per number of row vectors (case 0: one
// vector of 8 rows, default: two); register blocks of 4 keys × row vectors
// over the head dimension (vector.fma of a broadcast key element); the
// softmax max is element-wise; exp is a polynomial (no math.exp is left);
// nothing Lq×Lk (100×130) exists.
// The kernel's loops carry an annotation that keeps LLVM from unrolling
// them (the register blocks are unrolled already); with llvm-unroll=1 they
// carry none.
// CHECK: #[[NOUNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[ANN:.*]] = #llvm.loop_annotation<unroll = #[[NOUNROLL]]>
// UNROLL-NOT: llvm.loop_annotation
// CHECK-LABEL: func.func @structure
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x100x64xf32>, %[[K:.*]]: tensor<2x2x130x64xf32>, %[[V:.*]]: tensor<2x2x130x32xf32>)
// CHECK-NOT: 100x130
// CHECK-DAG: %[[FLUSH:.*]] = arith.constant dense<-6.400000e+01> : vector<8xf32>
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant dense<1.44269502> : vector<8xf32>
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant dense<0x4B400000> : vector<8xf32>
// CHECK-DAG: %[[LN2HI:.*]] = arith.constant dense<-0.693359375> : vector<8xf32>
// CHECK-DAG: %[[LN2LO:.*]] = arith.constant dense<2.12194442E-4> : vector<8xf32>
// CHECK-DAG: %[[C23:.*]] = arith.constant dense<23> : vector<8xi32>
// CHECK-DAG: %[[ONEBITS:.*]] = arith.constant dense<1065353216> : vector<8xi32>
// CHECK-DAG: %[[QB:.*]] = bufferization.to_buffer %[[Q]] read_only : tensor<2x4x100x64xf32> to memref<2x4x100x64xf32, strided<[25600, 6400, 64, 1], offset: ?>>
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x100x32xf32>
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %{{.*}}) in (%{{.*}}, %{{.*}}, %[[C7:.*]]) {
// CHECK-NEXT: memref.alloca_scope {
// CHECK: %[[QT:.*]] = memref.alloca(%{{.*}}) {alignment = 64 : i64} : memref<?x16xf32>
// Qᵀ is packed in 8 × 8 blocks: 8 row reads along d (D = 64: whole
// vectors), a transpose in registers (3 rounds of 8 shuffles), 8 stores.
// CHECK-COUNT-8: vector.load %[[QB]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] : memref<2x4x100x64xf32, strided<[25600, 6400, 64, 1], offset: ?>>, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.store %{{.*}}, %[[QT]][%{{.*}}, %{{.*}}] : memref<?x16xf32>, vector<8xf32>
// CHECK: scf.index_switch
// CHECK-NEXT: case 0 {
// A tile of one row vector reads each K and V row once: it prefetches the
// next key tile (one prefetch per 64-byte line: 16 f32), and its register
// blocks take 8 keys (the accumulators of a full tile).
// CHECK: scf.for %[[PD:.*]] = %c0 to %c64 step %c16 {
// CHECK-NEXT: memref.prefetch %[[KB]][%[[B]], %{{.*}}, %[[PJ:.*]], %[[PD]]], read, locality<3>, data : memref<2x2x130x64xf32, strided<[16640, 8320, 64, 1], offset: ?>>
// CHECK-NEXT: } {llvm.loop_annotation = #[[ANN]]}
// CHECK: scf.for %[[PE:.*]] = %c0 to %c32 step %c16 {
// CHECK-NEXT: memref.prefetch %[[VB]][%[[B]], %{{.*}}, %[[PJ]], %[[PE]]], read, locality<3>, data : memref<2x2x130x32xf32, strided<[8320, 4160, 32, 1], offset: ?>>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %[[QT]][%{{.*}}, %{{.*}}] : memref<?x16xf32>, vector<8xf32>
// CHECK: memref.load %[[KB]]
// CHECK: vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// The key tile's max per lane as select(s > max, s, max), one maxps on x86
// (a NaN score leaves it and reaches the output through exp(NaN - max));
// the running max across tiles stays arith.maximumf.
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[S:.*]], %[[MX:.*]] : vector<8xf32>
// CHECK-NEXT: arith.select %[[GT]], %[[S]], %[[MX]] : vector<8xi1>, vector<8xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
// exp(x), x <= 0: x = n ln2 + f, n = round(x log2 e) by an FMA adding
// 1.5·2^23, f by Cody-Waite (ln2 in two parts), e^f a degree-6 polynomial in
// f, 2^n from the shifted sum's low bits; scores more than 64 below the
// running max are flushed to 0 (no denormals in the P·V FMAs).
// CHECK: %[[X:.*]] = arith.subf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NEXT: %[[R:.*]] = vector.fma %[[X]], %[[LOG2E]], %[[SHIFT]] : vector<8xf32>
// CHECK-NEXT: %[[N:.*]] = arith.subf %[[R]], %[[SHIFT]] : vector<8xf32>
// CHECK-NEXT: %[[F0:.*]] = vector.fma %[[N]], %[[LN2HI]], %[[X]] : vector<8xf32>
// CHECK-NEXT: %[[F:.*]] = vector.fma %[[N]], %[[LN2LO]], %[[F0]] : vector<8xf32>
// CHECK-COUNT-6: vector.fma %{{.*}}, %[[F]], %{{.*}} : vector<8xf32>
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[R]] : vector<8xf32> to vector<8xi32>
// CHECK-NEXT: %[[EXPONENT:.*]] = arith.shli %[[BITS]], %[[C23]] : vector<8xi32>
// CHECK-NEXT: %[[BIASED:.*]] = arith.addi %[[EXPONENT]], %[[ONEBITS]] : vector<8xi32>
// CHECK-NEXT: %[[POW2N:.*]] = arith.bitcast %[[BIASED]] : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: %[[E:.*]] = arith.mulf %{{.*}}, %[[POW2N]] : vector<8xf32>
// CHECK-NEXT: %[[TINY:.*]] = arith.cmpf olt, %[[X]], %[[FLUSH]] : vector<8xf32>
// CHECK-NEXT: arith.select %[[TINY]], %{{.*}}, %[[E]] : vector<8xi1>, vector<8xf32>
// CHECK: memref.load %[[VB]]
// CHECK: vector.fma
// CHECK: default {
// A full tile finds K and V in the caches (other query tiles of the head
// read them): no prefetch. 2 row vectors × 4 keys = 8 accumulators.
// CHECK-NOT: memref.prefetch
// CHECK: -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-NOT: memref.prefetch
// The output in 8 × 8 blocks of Oᵀ: scaled by 1/l, transposed, one row
// store per row of the tile.
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK: scf.if
// CHECK-NEXT: arith.addi
// CHECK-NEXT: vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %{{.*}}, %{{.*}}] : memref<2x4x100x32xf32>, vector<8xf32>
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<2x4x100x32xf32> to tensor<2x4x100x32xf32>
// CHECK-NOT: math.exp

// With upstream-exp=1 the softmax's exp is upstream's polynomial
// (math-polynomial-approximation: math.fma, clamps), not rpe's shift.
// UPEXP-LABEL: func.func @structure
// UPEXP-NOT: 0x4B400000
// UPEXP: math.fma
// UPEXP-NOT: 0x4B400000
// UPEXP-NOT: math.exp
// CHECK-NOT: rpe.attention
// W16-LABEL: func.func @structure
// NOPF-LABEL: func.func @structure
// NOPF-NOT: memref.prefetch
// NOPF: scf.index_switch
// NOPF-NOT: memref.prefetch
// NOPF: return
// W16: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// With 16 lanes the default tile is 4 row vectors (64 rows); with fewer
// lanes (16 registers) 3: ceil(100 / 24) = 5 query tiles, Qᵀ and Sᵀ 24
// wide, register blocks of 4 keys × 3 row vectors (12 accumulators).
// W16-NOT: scf.forall {{.*}} in (%c2, %c4, %c5)
// W16: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%c2, %c4, %c2)
// W16: memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
// W8-LABEL: func.func @structure
// W8: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%c2, %c4, %c5)
// W8: memref.alloca(%{{.*}}) {alignment = 64 : i64} : memref<?x24xf32>
// W8: memref.alloca() {alignment = 64 : i64} : memref<64x24xf32>
// W8: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)

func.func @structure(%q: tensor<2x4x100x64xf32>, %k: tensor<2x2x130x64xf32>, %v: tensor<2x2x130x32xf32>) -> tensor<2x4x100x32xf32> {
  %0 = rpe.attention %q, %k, %v : tensor<2x4x100x64xf32>, tensor<2x2x130x64xf32>, tensor<2x2x130x32xf32> -> tensor<2x4x100x32xf32>
  return %0 : tensor<2x4x100x32xf32>
}

// -----

// Head dimensions that are not a multiple of the width (D = 12, Dv = 20):
// Qᵀ and Oᵀ get their rows rounded up to 16 and 24, the last block's row
// reads and row writes are masked to the dimension's end.
// CHECK-LABEL: func.func @odd_head_dims
// CHECK: memref.alloca(%c16) {alignment = 64 : i64} : memref<?x16xf32>
// CHECK: memref.alloca(%c24) {alignment = 64 : i64} : memref<?x16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c12 step %c8
// CHECK: %[[REST:.*]] = arith.subi %c12, %{{.*}} : index
// CHECK: %[[QMASK:.*]] = vector.create_mask %[[REST]] : vector<8xi1>
// CHECK: vector.maskedload %{{.*}}, %[[QMASK]], %{{.*}} : memref<1x2x?x12xf32, strided<[?, ?, 12, 1], offset: ?>>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c20 step %c8
// CHECK: %[[VREST:.*]] = arith.subi %c20, %{{.*}} : index
// CHECK: %[[OMASK:.*]] = vector.create_mask %[[VREST]] : vector<8xi1>
// CHECK: vector.maskedstore %{{.*}}, %[[OMASK]], %{{.*}} : memref<1x2x?x20xf32>, vector<8xi1>, vector<8xf32>
func.func @odd_head_dims(%q: tensor<1x2x?x12xf32>, %k: tensor<1x2x?x12xf32>, %v: tensor<1x2x?x20xf32>) -> tensor<1x2x?x20xf32> {
  %0 = rpe.attention %q, %k, %v : tensor<1x2x?x12xf32>, tensor<1x2x?x12xf32>, tensor<1x2x?x20xf32> -> tensor<1x2x?x20xf32>
  return %0 : tensor<1x2x?x20xf32>
}

// -----

// A Toeplitz lookup reads a contiguous vector of a padded diagonal (Lq + Lk -
// 1 + tile-q entries per head, built once from the buckets of a diagonal
// table of their own, not per head). T5's buckets need no logarithm: past
// the exact distances (below 8) the bucket steps up at the distances where
// Hugging Face's formula does (12, 16, 23, 32, 46, 64, 91; 15 from 91 on),
// compares and selects. key_lengths and causal bound the key loop; causal
// keys are masked with a lane comparison (i32 lanes against key - first row
// position), only in key blocks whose last key lies past the tile's first
// row position: the others (every row sees every key) take the branch
// without the mask.
// CHECK-LABEL: func.func @toeplitz
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<1xi32>)
// CHECK: %[[BUCKETS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xi32>)
// CHECK-NOT: math.log
// CHECK: arith.cmpi sge, %[[A:.*]], %c12 : index
// CHECK-NEXT: arith.select %{{.*}}, %c9, %c8 : index
// CHECK-NEXT: arith.cmpi sge, %[[A]], %c16 : index
// CHECK-NEXT: arith.select %{{.*}}, %c10, %{{.*}} : index
// CHECK-NEXT: arith.cmpi sge, %[[A]], %c23 : index
// CHECK-NEXT: arith.select %{{.*}}, %c11, %{{.*}} : index
// CHECK-NEXT: arith.cmpi sge, %[[A]], %c32 : index
// CHECK-NEXT: arith.select %{{.*}}, %c12, %{{.*}} : index
// CHECK-NEXT: arith.cmpi sge, %[[A]], %c46 : index
// CHECK-NEXT: arith.select %{{.*}}, %c13, %{{.*}} : index
// CHECK-NEXT: arith.cmpi sge, %[[A]], %c64 : index
// CHECK-NEXT: arith.select %{{.*}}, %c14, %{{.*}} : index
// CHECK-NEXT: arith.cmpi sge, %[[A]], %c91 : index
// CHECK-NEXT: arith.select %{{.*}}, %c15, %{{.*}} : index
// CHECK: %[[DIAG:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK-NOT: math.log
// CHECK: tensor.extract %[[BUCKETS]][%{{.*}}, %{{.*}}] : tensor<?x?xi32>
// CHECK-NOT: math.log
// CHECK: %[[DB:.*]] = bufferization.to_buffer %[[DIAG]] read_only : tensor<?x?xf32> to memref<?x?xf32>
// CHECK: scf.forall
// CHECK-NOT: rpe.bucket
// CHECK-NOT: math.log
// CHECK: arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END:.*]] step %{{.*}} {
// CHECK: %[[NEEDS:[0-9]+]] = arith.cmpi sgt, %{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK-NEXT: scf.if %[[NEEDS]] -> (vector<8xf32>) {
// CHECK: vector.load %[[DB]][%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK: arith.index_cast %{{.*}} : index to i32
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: } else {
// CHECK-NOT: arith.index_cast
// CHECK: vector.load %[[DB]][%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK-NOT: arith.index_cast
// CHECK: scf.yield

func.func @toeplitz(%q: tensor<1x2x60x8xf32>, %k: tensor<1x2x70x8xf32>, %t: tensor<32x2xf32>, %len: tensor<1xi32>) -> tensor<1x2x60x8xf32> {
  %0 = rpe.attention %q, %k, %k key_lengths(%len : tensor<1xi32>) causal scale = 1.0 : tensor<1x2x60x8xf32>, tensor<1x2x70x8xf32>, tensor<1x2x70x8xf32> -> tensor<1x2x60x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
    %v = tensor.extract %t[%bk, %h] : tensor<32x2xf32>
    %r = arith.addf %s, %v : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x60x8xf32>
}

// -----

// A window (Mistral's sliding window) starts the key loop at the first row's
// window, max(qPos0 - (W - 1), 0); a key block is masked when its last key
// lies past the tile's first row (causal) or its first key is outside the
// last row's window, key + W <= last position; the lanes from
// key + W - qPos0 - c·W on (clamped to [0, W]) are outside the window.
// CHECK-LABEL: func.func @window
// CHECK-DAG: %[[W:.*]] = arith.constant 24 : index
// CHECK-DAG: %[[W1:.*]] = arith.constant 23 : index
// CHECK: scf.forall
// CHECK: %[[FIRST:.*]] = arith.subi %{{.*}}, %[[W1]] : index
// CHECK: %[[START:.*]] = arith.maxsi %[[FIRST]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[START]] to %{{.*}} step %c64 {
// CHECK: %[[FUT:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : index
// CHECK: %[[KW:.*]] = arith.addi %{{.*}}, %[[W]] : index
// CHECK-NEXT: %[[OLD:.*]] = arith.cmpi sle, %[[KW]], %{{.*}} : index
// CHECK-NEXT: %[[NEEDS:.*]] = arith.ori %[[FUT]], %[[OLD]] : i1
// CHECK-NEXT: scf.if %[[NEEDS]] -> (vector<8xf32>) {
// CHECK: %[[REL:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[CAUSAL:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK-NEXT: %[[BOUND:.*]] = arith.addi %[[REL]], %[[W]] : index
// CHECK: %[[PAST:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK-NEXT: %[[HIDDEN:.*]] = arith.ori %[[CAUSAL]], %[[PAST]] : vector<8xi1>
// CHECK-NEXT: arith.select %[[HIDDEN]]
// CHECK: } else {
// CHECK-NOT: vector<8xi32>
// CHECK: scf.yield
func.func @window(%q: tensor<1x2x60x8xf32>, %k: tensor<1x2x70x8xf32>, %b: tensor<2x60x70xf32>) -> tensor<1x2x60x8xf32> {
  %0 = rpe.attention %q, %k, %k bias(%b : tensor<2x60x70xf32>) causal window = 24 scale = 1.0 : tensor<1x2x60x8xf32>, tensor<1x2x70x8xf32>, tensor<1x2x70x8xf32> -> tensor<1x2x60x8xf32>
  return %0 : tensor<1x2x60x8xf32>
}

// -----

// A lookahead A (ModernBERT's bidirectional window: window = A + 1) ends the
// key loop A keys past the tile's last row, min(qPos0 + tq + A, Lk); a key
// block is masked when its last key lies more than A past the tile's first
// row or its first key is outside the last row's window; the lanes before
// key - A - qPos0 - c·W see it.
// CHECK-LABEL: func.func @lookahead
// CHECK-DAG: %[[A:.*]] = arith.constant 20 : index
// CHECK-DAG: %[[W:.*]] = arith.constant 21 : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%c1, %c2, %c4)
// CHECK: %[[ROWS:.*]] = arith.addi %[[QPOS:[0-9a-z_]+]], %{{.*}} : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[ROWS]], %[[A]] : index
// CHECK-NEXT: %[[CL:.*]] = arith.maxsi %[[AHEAD]], %{{.*}} : index
// CHECK-NEXT: %[[END:.*]] = arith.minsi %[[CL]], %c70 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]] step %c64 {
// CHECK: %[[REACH:.*]] = arith.addi %[[QPOS]], %[[A]] : index
// CHECK-NEXT: %[[FUT:.*]] = arith.cmpi sgt, %{{.*}}, %[[REACH]] : index
// CHECK: %[[OLD:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[NEEDS:.*]] = arith.ori %[[FUT]], %[[OLD]] : i1
// CHECK-NEXT: scf.if %[[NEEDS]] -> (vector<8xf32>) {
// CHECK: %[[REL:.*]] = arith.subi %{{.*}}, %[[QPOS]] : index
// CHECK-NEXT: %[[BOUND:.*]] = arith.subi %[[REL]], %[[A]] : index
// CHECK: %[[AH:.*]] = arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK-NEXT: arith.addi %[[REL]], %[[W]] : index
// CHECK: %[[PAST:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK-NEXT: %[[HIDDEN:.*]] = arith.ori %[[AH]], %[[PAST]] : vector<8xi1>
// CHECK-NEXT: arith.select %[[HIDDEN]]
// CHECK: } else {
// CHECK-NOT: vector<8xi32>
// CHECK: scf.yield
func.func @lookahead(%q: tensor<1x2x60x8xf32>, %k: tensor<1x2x70x8xf32>) -> tensor<1x2x60x8xf32> {
  %0 = rpe.attention %q, %k, %k window = 21 lookahead = 20 scale = 1.0 : tensor<1x2x60x8xf32>, tensor<1x2x70x8xf32>, tensor<1x2x70x8xf32> -> tensor<1x2x60x8xf32>
  return %0 : tensor<1x2x60x8xf32>
}

// -----

// The Shaw / DeBERTa gather trick: the projection is gathered along the
// query lanes (masked to the rows of the tile) with the bucket from a
// head-independent diagonal table (1 × (Lq + Lk - 1 + tile-q), i32 entries
// read as a vector and widened to index); a window2d
// bias becomes a table over the plane differences P(i) - P(j) (P(t) = t +
// (t floordiv 3)·2), its buckets from a head-independent table of their own,
// gathered along the lanes: with a width that is not a
// multiple of the vector width, P of the lanes is a vector (outside the key
// loop) and P of the key a scalar; no per-lane rpe.bucket.
// CHECK-LABEL: func.func @gather_and_lanes
// CHECK: %[[BD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xi32>)
// CHECK:   arith.index_cast %{{.*}} : index to i32
// CHECK: %[[WB:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xi32>)
// CHECK: arith.floordivsi %{{.*}}, %c5 : index
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK-NOT: arith.floordivsi
// CHECK: tensor.extract %[[WB]][%{{.*}}, %{{.*}}] : tensor<?x?xi32>
// CHECK-NOT: arith.floordivsi
// CHECK: scf.forall
// CHECK: %[[BK32:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xi32>, vector<8xi32>
// CHECK: %[[BK:.*]] = arith.index_cast %[[BK32]] : vector<8xi32> to vector<8xindex>
// CHECK: vector.gather %{{.*}}[%{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<60xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NOT: rpe.bucket
// CHECK: arith.floordivsi %{{.*}}, %{{.*}} : vector<8xindex>
// CHECK: scf.for
// CHECK: arith.floordivsi %{{.*}}, %c3 : index
// CHECK: vector.gather %{{.*}} : memref<?xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NOT: vector.from_elements {{.*}} : vector<8xindex>

func.func @gather_and_lanes(%q: tensor<1x2x6x8xf32>, %qe: tensor<1x2x6x5xf32>, %t: tensor<15x2xf32>) -> tensor<1x2x6x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 2>
    %g = tensor.extract %qe[%b, %h, %i, %bk] : tensor<1x2x6x5xf32>
    %bw = rpe.bucket %i, %j by window2d<height = 2, width = 3>
    %w = tensor.extract %t[%bw, %h] : tensor<15x2xf32>
    %r = arith.addf %s, %g : f32
    %r2 = arith.addf %r, %w : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// A window whose width is a multiple of the vector width: the rows of every
// vector lie in one window row, so the table index P(i) - P(j) + shift is
// lane-affine and read as one contiguous vector per key (no gather). With a
// q_offset the rows need not be aligned: a gather.
// CHECK-LABEL: func.func @window_rows
// CHECK: %[[WT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK: %[[WB:.*]] = bufferization.to_buffer %[[WT]]
// CHECK: scf.forall
// CHECK-NOT: vector.gather
// CHECK: vector.load %[[WB]][%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK-NOT: vector.gather
// CHECK-LABEL: func.func @window_rows_offset
// CHECK: scf.forall
// CHECK: vector.gather %{{.*}} : memref<?xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>

func.func @window_rows(%q: tensor<1x2x32x8xf32>, %t: tensor<105x2xf32>) -> tensor<1x2x32x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x32x8xf32> {
  ^bb0(%s: f32, %bb: index, %h: index, %i: index, %j: index):
    %bw = rpe.bucket %i, %j by window2d<height = 4, width = 8>
    %w = tensor.extract %t[%bw, %h] : tensor<105x2xf32>
    %r = arith.addf %s, %w : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x32x8xf32>
}

func.func @window_rows_offset(%q: tensor<1x2x32x8xf32>, %t: tensor<105x2xf32>, %off: index) -> tensor<1x2x32x8xf32> {
  %0 = rpe.attention %q, %q, %q q_offset(%off) : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x32x8xf32> {
  ^bb0(%s: f32, %bb: index, %h: index, %i: index, %j: index):
    %bw = rpe.bucket %i, %j by window2d<height = 4, width = 8>
    %w = tensor.extract %t[%bw, %h] : tensor<105x2xf32>
    %r = arith.addf %s, %w : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x32x8xf32>
}

// -----

// rel_values with a Toeplitz bucketing: a transposed diagonal of the table
// (Dv × (Lq + Lk - 1 + tile-q)), read as contiguous vectors in the value
// block.
// CHECK-LABEL: func.func @rel_values
// CHECK: %[[RD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK: %[[RB:.*]] = bufferization.to_buffer %[[RD]] read_only : tensor<?x?xf32> to memref<?x?xf32>
// CHECK: scf.forall
// CHECK: vector.load %[[RB]][%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.fma

func.func @rel_values(%q: tensor<1x2x6x8xf32>, %e: tensor<5x8xf32>) -> tensor<1x2x6x8xf32> {
  %0 = rpe.attention %q, %q, %q rel_values(%e : tensor<5x8xf32>) by clip<max_distance = 2> : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Uniform key tiles: the bucket tables (the gather trick's, rel_values') are
// scanned once for runs of one value; a key tile whose diagonals all lie in
// one run reads the bucket once, gathers the projection once per row vector
// and adds its rel_values row once, scaled by the tile's probability sum.
// Other tiles read the buckets and gather per key.
// CHECK-LABEL: func.func @uniform_tiles
// CHECK: %[[RUNS:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?xindex>
// CHECK: scf.for
// CHECK:   arith.cmpi eq
// CHECK:   arith.cmpi eq
// CHECK:   arith.andi
// CHECK:   memref.store %{{.*}}, %[[RUNS]]
// CHECK: scf.forall
// CHECK: %[[END:.*]] = memref.load %[[RUNS]][%[[LOW:.*]]] : memref<?xindex>
// CHECK: %[[UNI:.*]] = arith.cmpi sge, %[[END]], %{{.*}} : index
// CHECK: scf.if %[[UNI]] {
// CHECK:   memref.load %{{.*}}[%c0, %[[LOW]]] : memref<?x?xi32>
// CHECK:   vector.gather
// CHECK-NOT: vector.gather
// CHECK-NOT: memref<?x?xi32>, vector<8xi32>
// CHECK:   %[[REL:.*]] = memref.load %[[RD:.*]][%{{.*}}, %[[LOW]]] : memref<?x?xf32>
// CHECK:   %[[RELV:.*]] = vector.broadcast %[[REL]]
// CHECK:   vector.fma %[[RELV]]
// CHECK: } else {
// CHECK:   vector.load %{{.*}} : memref<?x?xi32>, vector<8xi32>
// CHECK:   arith.index_cast %{{.*}} : vector<8xi32> to vector<8xindex>
// CHECK:   vector.gather
// CHECK:   vector.load %[[RD]][%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>

func.func @uniform_tiles(%q: tensor<1x2x?x8xf32>, %qe: tensor<1x2x?x5xf32>, %e: tensor<5x8xf32>) -> tensor<1x2x?x8xf32> {
  %0 = rpe.attention %q, %q, %q rel_values(%e : tensor<5x8xf32>) by clip<max_distance = 2> : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 2>
    %g = tensor.extract %qe[%b, %h, %i, %bk] : tensor<1x2x?x5xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x8xf32>
}

// -----

// permute-reads: a key's row of a gather-trick table read at the buckets of
// the row vector (p2c) is one vector load of the row from the lower of the
// end lanes' buckets (moved left to end inside the 17-column row: at most
// column 9) and a permute of its lanes (vector.extract at the 32-bit offsets,
// vpermps on x86), or the gather when some offset falls outside the vector,
// also for a row that does not depend on the key. The window's first column
// is computed once per diagonal before the kernel (-1: gathered, and for
// the last W - 1 diagonals, whose buckets run past the table), so a read
// loads it, branches, and subtracts it from the buckets. A table narrower
// than a vector (5 columns) and reads of query rows keep the gather.
// Without the option: gathers only. After the read, the lines of the row 4
// keys on (window-read-prefetch), clamped to the last row, at the window's
// first column ± 4 (clamped to [0, 16]).
// PERM-LABEL: func.func @key_row_window
// PERM: %[[DIAG:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<?x?xi32> to memref<?x?xi32>
// PERM: %[[LEADS:.*]] = memref.dim %[[DIAG]], %c0 : memref<?x?xi32>
// PERM: %[[LEN:.*]] = memref.dim %[[DIAG]], %c1 : memref<?x?xi32>
// PERM: %[[STARTS:.*]] = memref.alloc(%[[LEADS]], %[[LEN]]) {alignment = 64 : i64} : memref<?x?xi32>
// PERM: %[[WLEN:.*]] = arith.subi %[[LEN]], %c7 : index
// PERM: %[[WINDOWS:.*]] = arith.maxsi %[[WLEN]], %c0 : index
// PERM: scf.for %[[A:.*]] = %c0 to %[[LEADS]] step %c1 {
// PERM:   scf.for %[[D:.*]] = %c0 to %[[WINDOWS]] step %c1 {
// PERM:     %[[B:.*]] = vector.load %[[DIAG]][%[[A]], %[[D]]] : memref<?x?xi32>, vector<8xi32>
// PERM:     %[[FIRST:.*]] = vector.extract %[[B]][0] : i32 from vector<8xi32>
// PERM:     %[[LAST:.*]] = vector.extract %[[B]][7] : i32 from vector<8xi32>
// PERM:     %[[LOW:.*]] = arith.minsi %[[FIRST]], %[[LAST]] : i32
// PERM:     %[[LOW9:.*]] = arith.minsi %[[LOW]], %c9_i32 : i32
// PERM:     %[[START:.*]] = arith.maxsi %[[LOW9]], %c0_i32 : i32
// PERM:     %[[SPLAT:.*]] = vector.broadcast %[[START]] : i32 to vector<8xi32>
// PERM:     %[[OFF:.*]] = arith.subi %[[B]], %[[SPLAT]] : vector<8xi32>
// PERM:     %[[OUT:.*]] = arith.cmpi uge, %[[OFF]], %{{.*}} : vector<8xi32>
// PERM:     %[[ANY:.*]] = vector.reduction <or>, %[[OUT]] : vector<8xi1> into i1
// PERM:     %[[ENTRY:.*]] = arith.select %[[ANY]], %c-1_i32, %[[START]] : i32
// PERM:     memref.store %[[ENTRY]], %[[STARTS]][%[[A]], %[[D]]] : memref<?x?xi32>
// PERM:   }
// PERM:   scf.for %[[D:.*]] = %[[WINDOWS]] to %[[LEN]] step %c1 {
// PERM:     memref.store %c-1_i32, %[[STARTS]][%[[A]], %[[D]]] : memref<?x?xi32>
// PERM:   }
// PERM: }
// In a uniform key tile (one bucket for all its pairs) a key's row is read
// once per key, and the row 4 keys on is prefetched at the same column
// (rows 68 bytes apart); the narrow table's rows (20 bytes) are not.
// PERM: %[[UV:.*]] = memref.load %[[KE:.*]][%{{.*}}, %{{.*}}, %[[UKEY:[0-9]+]], %[[UBK:.*]]] : memref<1x2x?x17xf32>
// PERM-NEXT: %[[UROWS:.*]] = memref.dim %[[KE]], %c2 : memref<1x2x?x17xf32>
// PERM-NEXT: %[[ULAST:.*]] = arith.subi %[[UROWS]], %c1 : index
// PERM-NEXT: %[[UON:.*]] = arith.addi %[[UKEY]], %c4 : index
// PERM-NEXT: %[[UNEXT:.*]] = arith.minsi %[[UON]], %[[ULAST]] : index
// PERM-NEXT: memref.prefetch %[[KE]][%{{.*}}, %{{.*}}, %[[UNEXT]], %[[UBK]]], read, locality<3>, data : memref<1x2x?x17xf32>
// PERM-NEXT: memref.load %{{.*}} : memref<1x2x?x5xf32>
// PERM-NEXT: vector.broadcast %[[UV]]
// PERM: %[[W0:.*]] = memref.load %[[STARTS]][%c0, %[[AT:.*]]] : memref<?x?xi32>
// PERM: %[[FITS:.*]] = arith.cmpi sge, %[[W0]], %c0_i32 : i32
// PERM: %[[W:.*]] = arith.index_cast %[[W0]] : i32 to index
// PERM: scf.if %[[FITS]] -> (vector<8xf32>) {
// PERM:   %[[KB:.*]] = vector.load %[[DIAG]][%c0, %[[AT]]] : memref<?x?xi32>, vector<8xi32>
// PERM:   %[[KSPLAT:.*]] = vector.broadcast %[[W0]] : i32 to vector<8xi32>
// PERM:   %[[KOFF:.*]] = arith.subi %[[KB]], %[[KSPLAT]] : vector<8xi32>
// PERM:   %[[ROW:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}, %[[KEYROW:[^,]*]], %[[W]]] : memref<1x2x?x17xf32>, vector<8xf32>
// PERM-COUNT-8: vector.extract %[[ROW]][%{{.*}}] : f32 from vector<8xf32>
// PERM:   vector.from_elements
// PERM: } else {
// PERM:   vector.load %[[DIAG]][%c0, %[[AT]]] : memref<?x?xi32>, vector<8xi32>
// PERM:   vector.gather {{.*}} : memref<?xf32>, vector<8xindex>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// PERM: }
// PERM-NEXT: %[[ROWS:.*]] = memref.dim %{{.*}}, %c2 : memref<1x2x?x17xf32>
// PERM-NEXT: %[[LASTROW:.*]] = arith.subi %[[ROWS]], %c1 : index
// PERM-NEXT: %[[ON:.*]] = arith.addi %[[KEYROW]], %c4 : index
// PERM-NEXT: %[[NEXT:.*]] = arith.minsi %[[ON]], %[[LASTROW]] : index
// PERM-NEXT: %[[BELOW:.*]] = arith.subi %[[W]], %c4 : index
// PERM-NEXT: %[[BELOW0:.*]] = arith.maxsi %[[BELOW]], %c0 : index
// PERM-NEXT: %[[ABOVE:.*]] = arith.addi %[[W]], %c4 : index
// PERM-NEXT: %[[ABOVE16:.*]] = arith.minsi %[[ABOVE]], %c16 : index
// PERM-NEXT: memref.prefetch %{{.*}}[%{{.*}}, %{{.*}}, %[[NEXT]], %[[BELOW0]]], read, locality<3>, data : memref<1x2x?x17xf32>
// PERM-NEXT: memref.prefetch %{{.*}}[%{{.*}}, %{{.*}}, %[[NEXT]], %[[ABOVE16]]], read, locality<3>, data : memref<1x2x?x17xf32>
// The narrow table: a gather, no window.
// PERM-NEXT: arith.subi
// PERM-NEXT: arith.addi
// PERM-NEXT: vector.load %{{.*}} : memref<?x?xi32>, vector<8xi32>
// PERM-NEXT: arith.index_cast
// PERM-NOT: scf.if
// PERM: vector.gather
// A window of a row that is not the key's (row 3): no prefetch.
// PERM: vector.from_elements
// PERM-NOT: memref.prefetch
// PERM: vector.from_elements
// PERM: memref.prefetch {{.*}} : memref<1x2x?x17xf32>
// PERM0-LABEL: func.func @key_row_window
// PERM0: vector.from_elements
// PERM0-NOT: memref.prefetch {{.*}} : memref<1x2x?x17xf32>
// PERM0-LABEL: func.func @query_row_window
// PERM0: vector.shuffle
// PERM0-NOT: memref.prefetch {{.*}} : memref<1x2x?x17xf32>
// CHECK-LABEL: func.func @key_row_window
// CHECK-NOT: vector.from_elements
// CHECK-NOT: vector.reduction <or>

func.func @key_row_window(%q: tensor<1x2x?x8xf32>, %ke: tensor<1x2x?x17xf32>, %narrow: tensor<1x2x?x5xf32>) -> tensor<1x2x?x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 8>
    %g = tensor.extract %ke[%b, %h, %j, %bk] : tensor<1x2x?x17xf32>
    %bn = rpe.bucket %i, %j by clip<max_distance = 2>
    %n = tensor.extract %narrow[%b, %h, %j, %bn] : tensor<1x2x?x5xf32>
    %c3 = arith.constant 3 : index
    %f = tensor.extract %ke[%b, %h, %c3, %bk] : tensor<1x2x?x17xf32>
    %r0 = arith.addf %s, %g : f32
    %r1 = arith.addf %r0, %n : f32
    %r = arith.addf %r1, %f : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x8xf32>
}

// -----

// permute-reads, query rows: a table row per query row read at the buckets
// of (row, key) (c2p) is a gather across rows per key. In the key tiles that
// are not uniform, each row reads the buckets of W keys at a time through a
// row window (as above; a loop over key vectors and row vectors, the W rows
// of a row vector unrolled), the W×W blocks are transposed (three rounds of
// shuffles at 8 lanes) into a TK × TQ scratch buffer, and each key of the
// whole vectors of keys reads one vector of it; the keys past them (a
// partial last tile) gather as before. Uniform tiles are unchanged.
// PERM-LABEL: func.func @query_row_window
// PERM: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// PERM: %[[SCRATCH:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// PERM: scf.if %{{.*}} {
// PERM-NOT: %[[SCRATCH]]
// PERM: } else {
// PERM: %[[WHOLE:.*]] = arith.muli %{{.*}}, %c8 : index
// PERM: scf.for %[[G:.*]] = %c0 to %[[WHOLE]] step %c8 {
// PERM: scf.for %[[C:.*]] = %c0 to %c{{[0-9]+}} step %c8 {
// PERM:   %[[F32:.*]] = memref.load %{{.*}} : memref<?x?xi32>
// PERM:   %[[FITS:.*]] = arith.cmpi sge, %[[F32]], %c0_i32 : i32
// PERM:   %[[F:.*]] = arith.index_cast %[[F32]] : i32 to index
// PERM:   scf.if %[[FITS]] -> (vector<8xf32>) {
// PERM:     vector.load %{{.*}} : memref<?x?xi32>, vector<8xi32>
// PERM:     vector.load %{{.*}} : memref<1x2x?x17xf32>, vector<8xf32>
// PERM:   } else {
// PERM:     vector.gather
// PERM:   }
// The row's lines 2 key vectors on (row-read-prefetch): its window's first
// column ± 16.
// PERM:   arith.subi %[[F]], %c16 : index
// PERM:   arith.addi %[[F]], %c16 : index
// PERM:   memref.prefetch %{{.*}} : memref<1x2x?x17xf32>
// PERM:   memref.prefetch %{{.*}} : memref<1x2x?x17xf32>
// PERM-COUNT-24: vector.shuffle
// PERM:   vector.store %{{.*}}, %[[SCRATCH]][%{{.*}}, %[[C]]] : memref<64x16xf32>, vector<8xf32>
// PERM: scf.for %{{.*}} = %c0 to %{{.*}} step %c{{[0-9]+}} iter_args
// PERM: vector.load %[[SCRATCH]][%{{.*}}, %c0] : memref<64x16xf32>, vector<8xf32>
// CHECK-LABEL: func.func @query_row_window
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK-NOT: memref.alloca() {alignment = 64 : i64} : memref<64x16xf32>
// CHECK: return

func.func @query_row_window(%q: tensor<1x2x?x8xf32>, %qe: tensor<1x2x?x17xf32>) -> tensor<1x2x?x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 8>
    %g = tensor.extract %qe[%b, %h, %i, %bk] : tensor<1x2x?x17xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x8xf32>
}

// -----

// A key's uniform score_mod values (here a per-key table read) are computed
// once per key, for its first row vector, and reused by the others: with
// tile-q=16 at 8 lanes, the one-vector specialisation reads 8 + 1 (blocks
// of 8 keys, then one at a time) and the two-vector one 4 + 1 (blocks of 4
// keys × 2 vectors), 14 reads in all (19 if each row vector read its own).
// CHECK-LABEL: func.func @per_key_values
// CHECK-COUNT-14: memref.load %{{.*}} : memref<?xf32>
// CHECK-NOT: memref.load %{{.*}} : memref<?xf32>
// CHECK: return

func.func @per_key_values(%q: tensor<1x2x?x8xf32>, %kb: tensor<?xf32>) -> tensor<1x2x?x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = tensor.extract %kb[%j] : tensor<?xf32>
    %r = arith.addf %s, %x : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x8xf32>
}

// -----

// A score_mod with regions is left to rpe-tile-attention.
// CHECK-LABEL: func.func @region_in_score_mod
// CHECK: rpe.attention
// CHECK-NOT: scf.forall

func.func @region_in_score_mod(%q: tensor<1x1x4x8xf32>, %c: i1) -> tensor<1x1x4x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %r = scf.if %c -> f32 {
      scf.yield %s : f32
    } else {
      %n = arith.negf %s : f32
      scf.yield %n : f32
    }
    rpe.yield %r : f32
  }
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// score_mod values that depend only on (b, h) (a per-head temperature read
// from a tensor) are computed once per query tile, before the kernel's
// specialisations, not per score vector.
// CHECK-LABEL: func.func @tile_invariant
// CHECK-SAME: (%{{.*}}: tensor<1x2x6x8xf32>, %[[S:.*]]: tensor<2xf32>)
// CHECK: %[[SB:.*]] = bufferization.to_buffer %[[S]] read_only
// CHECK: scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}) in
// CHECK: %[[M:.*]] = memref.load %[[SB]][%[[H]]] : memref<2xf32>
// CHECK: scf.index_switch
// CHECK-NOT: memref.load %[[SB]]
// CHECK: vector.broadcast %[[M]] : f32 to vector<8xf32>
// CHECK-NOT: memref.load %[[SB]]
// CHECK: return
func.func @tile_invariant(%q: tensor<1x2x6x8xf32>, %temp: tensor<2xf32>) -> tensor<1x2x6x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = tensor.extract %temp[%h] : tensor<2xf32>
    %r = arith.mulf %s, %t : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// A term that depends on the positions only through i - j (here ALiBi's
// slope · (j - i), in f64, the way rpe-fuse-attention writes it) is
// tabulated once per (head, diagonal) with its own arithmetic; the kernel
// reads one contiguous vector of the table per score vector and does no
// f64 arithmetic.
// CHECK-LABEL: func.func @diagonal_term
// CHECK: %[[T:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?xf32>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK: %[[TB:.*]] = bufferization.to_buffer %[[T]] read_only
// CHECK: scf.forall
// CHECK-NOT: f64
// CHECK: vector.load %[[TB]][%{{.*}}, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK-NOT: f64
// CHECK: return
func.func @diagonal_term(%q: tensor<1x2x6x8xf32>, %slopes: tensor<2xf64>) -> tensor<1x2x6x8xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x6x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %m = tensor.extract %slopes[%h] : tensor<2xf64>
    %d = arith.subi %j, %i : index
    %d64 = arith.index_cast %d : index to i64
    %df = arith.sitofp %d64 : i64 to f64
    %t = arith.mulf %m, %df : f64
    %t32 = arith.truncf %t : f64 to f32
    %r = arith.addf %s, %t32 : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Plain attention (no score terms): when the rows of all query heads that
// share a kv head fit one tile (Lq · H/Hkv <= tile-q), one tile per (batch,
// kv head) packs them (packed row p: head hk·4 + p / Lq, row p mod Lq), so K
// and V are read once per kv head; the causal mask compares each lane's own
// position. Otherwise, one head per tile. Up to decode-rows (8) rows, the
// decode kernel runs instead, for the least of 1, 2, 4, 8 rows that holds
// them (see @decode_kernel).
// CHECK-LABEL: func.func @grouped_decode
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x?x16xf32>, %[[K:.*]]: tensor<1x2x?x16xf32>, %[[OFF:.*]]: index)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[LQ:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<1x8x?x16xf32>
// CHECK: %[[ROWS:.*]] = arith.muli %[[LQ]], %{{.*}} : index
// CHECK: %[[SOME:.*]] = arith.cmpi ugt, %[[LQ]], %{{.*}} : index
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[ROWS]], %[[C16]] : index
// CHECK: %[[GROUPED:.*]] = arith.andi %[[FITS]], %[[SOME]] : i1
// CHECK: scf.if %[[GROUPED]] {
// CHECK: arith.cmpi ule, %[[ROWS]], %{{.*}} : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) {
// CHECK: } else {
// CHECK-NEXT: arith.cmpi ule, %[[ROWS]], %{{.*}} : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) {
// CHECK: } else {
// CHECK-NEXT: arith.cmpi ule, %[[ROWS]], %[[C4]] : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) {
// CHECK: } else {
// CHECK-NEXT: arith.cmpi ule, %[[ROWS]], %{{.*}} : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) {
// CHECK: } else {
// CHECK-NEXT: scf.forall (%{{.*}}, %[[HK:.*]], %{{.*}}) in (%{{.*}}, %{{.*}}, %{{.*}}) {
// CHECK: arith.divui %{{.*}}, %[[LQ]] : index
// CHECK: arith.remui %{{.*}}, %[[LQ]] : index
// CHECK: arith.remui %{{.*}}, %{{.*}} : vector<8xindex>
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<8xindex>
// CHECK: } else {
// CHECK: scf.forall
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<8xi32>
// Without the decode kernel: grouped tiles from 1 row.
// NODEC-LABEL: func.func @grouped_decode
// NODEC: %[[GROUPED:.*]] = arith.andi
// NODEC-NEXT: scf.if %[[GROUPED]] {
// NODEC-NEXT: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in
// NODEC-NOT: vector.reduction
// NODEC: return
func.func @grouped_decode(%q: tensor<1x8x?x16xf32>, %k: tensor<1x2x?x16xf32>, %off: index) -> tensor<1x8x?x16xf32> {
  %0 = rpe.attention %q, %k, %k q_offset(%off) causal : tensor<1x8x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x8x?x16xf32>
  return %0 : tensor<1x8x?x16xf32>
}

// -----

// The decode kernel (at most 4 rows here: Lq = 1, group 4): one iteration
// per (batch, kv head); per key, the dot products of the 4 rows as vectors
// along the head dimension (K read row by row, one vector load per W
// elements, shared by the 4 rows) into partial sums; then, in a loop over
// the rows, W keys at a time their lanes summed across (log2 W rounds of
// two shuffles and an add) into a vector of scores along keys, masked past
// the row's key end (create_mask), the row max and sum as reductions;
// Σ_j p·v with V rows as vectors (4 rows × 4 vectors of accumulators);
// nothing of size Lq×Lk (the scratch: 4 × 64 × 8 partial sums, 4 × 64
// probabilities, 4 key ends, maxima, sums and rescale factors).
// CHECK-LABEL: func.func @decode_kernel
// CHECK: memref.alloca(%{{.*}}) {alignment = 64 : i64} : memref<4x?xf32>
// CHECK: memref.alloca(%{{.*}}) {alignment = 64 : i64} : memref<4x?xf32>
// CHECK-NEXT: %[[PART:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x64x8xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<4x64xf32>
// CHECK-NEXT: %[[ENDS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xindex>
// CHECK-COUNT-3: memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK: %[[KV:.*]] = vector.load %{{.*}} : memref<1x2x?x16xf32, strided<{{.*}}>>, vector<8xf32>
// CHECK-COUNT-4: vector.fma %[[KV]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[PART]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x64x8xf32>, vector<8xf32>
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %[[ENDS]][%[[R]]] : memref<4xindex>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf32>, vector<8xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [4, 5, 6, 7, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 8, 9, 4, 5, 12, 13] : vector<8xf32>, vector<8xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 2, 10, 4, 12, 6, 14] : vector<8xf32>, vector<8xf32>
// CHECK: %[[SEEN:.*]] = vector.create_mask %{{.*}} : vector<8xi1>
// CHECK: arith.select %[[SEEN]]
// CHECK: vector.reduction <maximumf>, %{{.*}} : vector<8xf32> into f32
// CHECK: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK-COUNT-16: vector.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NOT: memref<{{.*}}?x?xf32>
// CHECK: return
// NODEC-LABEL: func.func @decode_kernel
// NODEC-NOT: vector.reduction
// NODEC: return
func.func @decode_kernel(%q: tensor<1x8x1x16xf32>, %k: tensor<1x2x?x16xf32>, %off: index) -> tensor<1x8x1x16xf32> {
  %0 = rpe.attention %q, %k, %k q_offset(%off) causal : tensor<1x8x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x8x1x16xf32>
  return %0 : tensor<1x8x1x16xf32>
}

// -----

// The decode kernel with a window: each row's window start beside its key
// end; the key loop runs from the least start to the greatest end, and a
// row's scores hide the lanes before its start.
// CHECK-LABEL: func.func @decode_window
// CHECK: %[[ENDS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1xindex>
// CHECK-NEXT: %[[STARTS:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1xindex>
// CHECK: %[[RANGE:.*]]:2 = scf.for {{.*}} -> (index, index) {
// CHECK: memref.store %{{.*}}, %[[ENDS]]
// CHECK: arith.subi %{{.*}}, %c99 : index
// CHECK: memref.store %{{.*}}, %[[STARTS]]
// CHECK: scf.for %{{.*}} = %[[RANGE]]#1 to %[[RANGE]]#0 step %c64 {
// CHECK: memref.load %[[STARTS]]
// CHECK: vector.create_mask
// CHECK: %[[BEFORE:.*]] = vector.create_mask %{{.*}} : vector<8xi1>
// CHECK-NEXT: arith.xori %[[BEFORE]], %{{.*}} : vector<8xi1>
func.func @decode_window(%q: tensor<1x8x1x16xf32>, %k: tensor<1x2x?x16xf32>, %off: index) -> tensor<1x8x1x16xf32> {
  %0 = rpe.attention %q, %k, %k q_offset(%off) causal window = 100 : tensor<1x8x1x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x8x1x16xf32>
  return %0 : tensor<1x8x1x16xf32>
}
