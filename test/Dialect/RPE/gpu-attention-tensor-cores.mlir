// RUN: rpe-opt %s -rpe-gpu-attention -canonicalize -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-gpu-attention -split-input-file | FileCheck %s --check-prefix=NOLXL
// RUN: rpe-opt %s -rpe-gpu-attention="mma-threads=1 mma-block-rows=32 mma-tile-k=16" -canonicalize -split-input-file | FileCheck %s --check-prefix=OPTS
// RUN: rpe-opt %s -rpe-gpu-attention="tensor-cores=false" -split-input-file | FileCheck %s --check-prefix=SIMT
// RUN: not rpe-opt %s -rpe-gpu-attention="mma-tile-k=24" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADOPT --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-gpu-attention="mma-threads=48" -split-input-file 2>&1 | FileCheck %s --check-prefix=BADOPT --implicit-check-not="current operation"

// BADOPT: error: rpe-gpu-attention: mma-block-rows and mma-tile-k must be positive multiples of 16 and mma-threads 1 or a positive multiple of 32

// f16 T5-biased causal GQA attention at L = 4096 on tensor cores: blocks of
// 256 threads (8 warps) and 64 rows; Q, K and V tiles (f16 views of
// workgroup bytes), the score and output tiles (f32), P (f16) and the row
// statistics in workgroup memory; both matmuls are warp-level
// vector.contract nests marked rpe.mma.
// NOLXL-NOT: 4096x4096
// CHECK-LABEL: func.func @t5_causal_gqa_f16
// CHECK: } -> tensor<8x8191xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x8x4096x64xf16>
// CHECK: gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c8, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[NT:.*]] = %c256, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK-SAME: workgroup(%[[QB:.*]] : memref<8192xi8, #gpu.address_space<workgroup>>, %[[KB:.*]] : memref<4096xi8, #gpu.address_space<workgroup>>, %[[VB:.*]] : memref<4096xi8, #gpu.address_space<workgroup>>, %[[S:.*]] : memref<64x32xf32, #gpu.address_space<workgroup>>, %[[PB:.*]] : memref<4096xi8, #gpu.address_space<workgroup>>, %[[O:.*]] : memref<64x64xf32, #gpu.address_space<workgroup>>, %[[ST:.*]] : memref<2x64xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[QS:.*]] = memref.view %[[QB]][%c0][] : memref<8192xi8, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[KS:.*]] = memref.view %[[KB]][%c0][] : {{.*}} to memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[VS:.*]] = memref.view %[[VB]][%c0][] : {{.*}} to memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[P:.*]] = memref.view %[[PB]][%c0][] : {{.*}} to memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: %[[WARP:.*]] = affine.apply #{{.*}}()[%[[TX]]]
// The block's threads stage the query rows, then per key tile the keys and
// values.
// CHECK: memref.store %{{.*}}, %[[QS]]
// CHECK: scf.for %[[K0:.*]] = %c0 to %{{.*}} step %c32 {
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[KS]]
// CHECK: memref.store %{{.*}}, %[[VS]]
// CHECK: gpu.barrier
// S = Q·Kᵀ: the 16-row slices a warp owns, 16×8 tiles over 16-wide slices
// of D.
// CHECK: scf.for %[[MT:.*]] = %c0 to %c4 step %c1 {
// CHECK: %[[OWN:.*]] = affine.apply #{{.*}}(%[[MT]])[%[[NT]]]
// CHECK: arith.cmpi eq, %[[OWN]], %[[WARP]]
// CHECK: scf.for %[[N0:.*]] = %c0 to %c32 step %c8 {
// CHECK: scf.for %[[D0:.*]] = %c0 to %c64 step %c16 iter_args(%{{.*}} = %cst{{.*}}) -> (vector<16x8xf32>) {
// CHECK: vector.transfer_read %[[QS]][%{{.*}}, %[[D0]]]{{.*}} vector<16x16xf16>
// CHECK: vector.transfer_read %[[KS]][%[[N0]], %[[D0]]]{{.*}} vector<8x16xf16>
// CHECK: vector.contract {{.*}} : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
// CHECK: vector.transfer_write %{{.*}}, %[[S]][%{{.*}}, %[[N0]]]
// CHECK: } {rpe.mma}
// CHECK: gpu.barrier
// Four adjacent lanes per row (256 threads, 64 rows), each every fourth
// key: scale, T5 table, masks; the row max and sum combined with shuffles;
// P; the first lane keeps the row's statistics.
// CHECK: %[[PART:.*]] = arith.remui %[[TX]], %c4
// CHECK: %[[R0:.*]] = arith.divui %[[TX]], %c4
// CHECK: scf.for %[[R:.*]] = %[[R0]] to %c64 step %c64 {
// CHECK: scf.for %[[J:.*]] = %[[PART]] to %c32 step %c4 iter_args(
// CHECK: memref.load %[[S]][%[[R]], %[[J]]]
// CHECK: tensor.extract %{{.*}}[%[[BY]], %{{.*}}] : tensor<8x8191xf32>
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}}, %[[P]][%[[R]], %{{.*}}]
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: arith.addf
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[PART]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.store %{{.*}}, %[[ST]][%c0, %[[R]]]
// CHECK: gpu.barrier
// O += P·V, V read as [n][k] (transposed).
// CHECK: vector.transfer_read %[[O]]
// CHECK: vector.transfer_read %[[P]]{{.*}} vector<16x16xf16>
// CHECK: vector.transfer_read %[[VS]]{{.*}}permutation_map = #{{.*}}{{.*}} vector<8x16xf16>
// CHECK: vector.contract
// CHECK: vector.transfer_write %{{.*}}, %[[O]]
// CHECK: } {rpe.mma}
// out = O / l for rows below Lq.
// CHECK: memref.store %{{.*}}, %[[OUT]]
// OPTS-LABEL: func.func @t5_causal_gqa_f16
// OPTS: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1)
// OPTS-SAME: workgroup(%{{.*}} : memref<4096xi8, {{.*}}>, %{{.*}} : memref<2048xi8, {{.*}}>, %{{.*}} : memref<2048xi8, {{.*}}>, %{{.*}} : memref<32x16xf32, {{.*}}>, %{{.*}} : memref<1024xi8, {{.*}}>, %{{.*}} : memref<32x64xf32, {{.*}}>, %{{.*}} : memref<2x32xf32, {{.*}}>)
// One thread: every row and key, no shuffles.
// OPTS-NOT: gpu.shuffle
// OPTS: return
// SIMT-LABEL: func.func @t5_causal_gqa_f16
// SIMT-NOT: vector.contract
// SIMT: math.fma
func.func @t5_causal_gqa_f16(%q: tensor<1x8x4096x64xf16>, %k: tensor<1x2x4096x64xf16>, %v: tensor<1x2x4096x64xf16>, %table: tensor<32x8xf32>) -> tensor<1x8x4096x64xf16> {
  %0 = rpe.attention %q, %k, %v causal : tensor<1x8x4096x64xf16>, tensor<1x2x4096x64xf16>, tensor<1x2x4096x64xf16> -> tensor<1x8x4096x64xf16> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = false>
    %t = tensor.extract %table[%bk, %h] : tensor<32x8xf32>
    %r = arith.addf %s, %t : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x8x4096x64xf16>
}

// -----

// D = 128: 64 rows would need 76 KiB of workgroup memory, so the block
// keeps 32 rows (46 KiB).
// CHECK-LABEL: func.func @wide_heads
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<8192xi8, {{.*}}>, %{{.*}} : memref<8192xi8, {{.*}}>, %{{.*}} : memref<8192xi8, {{.*}}>, %{{.*}} : memref<32x32xf32, {{.*}}>, %{{.*}} : memref<2048xi8, {{.*}}>, %{{.*}} : memref<32x128xf32, {{.*}}>, %{{.*}} : memref<2x32xf32, {{.*}}>)
// CHECK: vector.contract
func.func @wide_heads(%q: tensor<2x4x?x128xf16>, %k: tensor<2x4x?x128xf16>, %v: tensor<2x4x?x128xf16>) -> tensor<2x4x?x128xf16> {
  %0 = rpe.attention %q, %k, %v : tensor<2x4x?x128xf16>, tensor<2x4x?x128xf16>, tensor<2x4x?x128xf16> -> tensor<2x4x?x128xf16>
  return %0 : tensor<2x4x?x128xf16>
}

// -----

// bf16: the same kernel with bf16 views, P rounded to bf16.
// CHECK-LABEL: func.func @bf16
// CHECK: memref.view %{{.*}}[%c0][] : memref<4096xi8, #gpu.address_space<workgroup>> to memref<32x64xbf16, #gpu.address_space<workgroup>>
// CHECK: vector.transfer_read {{.*}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<16x16xbf16>
// CHECK: arith.extf %{{.*}} : vector<16x16xbf16> to vector<16x16xf32>
// CHECK: vector.contract
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16(%q: tensor<1x2x?x64xbf16>) -> tensor<1x2x?x64xbf16> {
  %0 = rpe.attention %q, %q, %q causal : tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16> -> tensor<1x2x?x64xbf16>
  return %0 : tensor<1x2x?x64xbf16>
}

// -----

// D = 256: even 16 rows with 32-key tiles exceed 48 KiB; 16-key tiles fit
// (41.6 KiB).
// CHECK-LABEL: func.func @d256
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<8192xi8, {{.*}}>, %{{.*}} : memref<8192xi8, {{.*}}>, %{{.*}} : memref<8192xi8, {{.*}}>, %{{.*}} : memref<16x16xf32, {{.*}}>, %{{.*}} : memref<512xi8, {{.*}}>, %{{.*}} : memref<16x256xf32, {{.*}}>, %{{.*}} : memref<2x16xf32, {{.*}}>)
// CHECK: vector.contract
func.func @d256(%q: tensor<1x2x?x256xbf16>) -> tensor<1x2x?x256xbf16> {
  %0 = rpe.attention %q, %q, %q causal : tensor<1x2x?x256xbf16>, tensor<1x2x?x256xbf16>, tensor<1x2x?x256xbf16> -> tensor<1x2x?x256xbf16>
  return %0 : tensor<1x2x?x256xbf16>
}

// -----

// Not for tensor cores: f32 operands, D not a multiple of 16 (bf16, f16),
// rel_values. They take the SIMT kernel.
// CHECK-LABEL: func.func @simt_cases
// CHECK-NOT: vector.contract
// CHECK-NOT: rpe.mma
// CHECK: return
func.func @simt_cases(%q: tensor<1x2x16x64xf32>, %qb: tensor<1x2x16x24xbf16>, %qn: tensor<1x2x16x24xf16>, %qr: tensor<1x2x16x32xf16>, %rel: tensor<9x32xf16>) -> (tensor<1x2x16x64xf32>, tensor<1x2x16x24xbf16>, tensor<1x2x16x24xf16>, tensor<1x2x16x32xf16>) {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x2x16x64xf32>
  %1 = rpe.attention %qb, %qb, %qb : tensor<1x2x16x24xbf16>, tensor<1x2x16x24xbf16>, tensor<1x2x16x24xbf16> -> tensor<1x2x16x24xbf16>
  %2 = rpe.attention %qn, %qn, %qn : tensor<1x2x16x24xf16>, tensor<1x2x16x24xf16>, tensor<1x2x16x24xf16> -> tensor<1x2x16x24xf16>
  %3 = rpe.attention %qr, %qr, %qr rel_values(%rel : tensor<9x32xf16>) by clip<max_distance = 4> : tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16>, tensor<1x2x16x32xf16> -> tensor<1x2x16x32xf16>
  return %0, %1, %2, %3 : tensor<1x2x16x64xf32>, tensor<1x2x16x24xbf16>, tensor<1x2x16x24xf16>, tensor<1x2x16x32xf16>
}
