// RUN: rpe-opt %s -rpe-gpu-tensor-cores -canonicalize -split-input-file -verify-diagnostics | FileCheck %s

// rpe-gpu-attention's tensor-core nests (f32 extensions of f16 workgroup
// reads, a 16x8x16 contract per step): q·kᵀ reads B as [n][k] (ldmatrix
// x2), p·v reads it transposed from [k][n] (ldmatrix x2 trans); the
// contracts become mma.sync m16n8k16 with f16 operands and f32
// accumulation; the unmarked scalar code around them is left alone.
// CHECK-LABEL: func.func @nests
// CHECK: arith.divui
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8 {
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = false} : memref<32x64xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = true} : memref<32x64xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync
// CHECK-NOT: vector.contract
// CHECK-NOT: rpe.mma
func.func @nests(%x: index) -> index {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %w = arith.divui %x, %c32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
      workgroup(%Qs : memref<64x64xf16, #gpu.address_space<workgroup>>,
                %Ks : memref<32x64xf16, #gpu.address_space<workgroup>>,
                %S : memref<64x32xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %z16 = arith.constant 0.0 : f16
    %z32 = arith.constant 0.0 : f32
    %zero = arith.constant dense<0.0> : vector<16x8xf32>
    %r0 = arith.muli %tx, %c16 : index
    scf.for %n0 = %c0 to %c32 step %c8 {
      %acc = scf.for %k0 = %c0 to %c64 step %c16 iter_args(%a = %zero) -> vector<16x8xf32> {
        %A = vector.transfer_read %Qs[%r0, %k0], %z16 {in_bounds = [true, true]} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
        %B = vector.transfer_read %Ks[%n0, %k0], %z16 {in_bounds = [true, true]} : memref<32x64xf16, #gpu.address_space<workgroup>>, vector<8x16xf16>
        %A32 = arith.extf %A : vector<16x16xf16> to vector<16x16xf32>
        %B32 = arith.extf %B : vector<8x16xf16> to vector<8x16xf32>
        %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %A32, %B32, %a : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
        scf.yield %r : vector<16x8xf32>
      }
      vector.transfer_write %acc, %S[%r0, %n0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>
    } {rpe.mma}
    scf.for %n0 = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %S[%r0, %n0], %z32 {in_bounds = [true, true]} : memref<64x32xf32, #gpu.address_space<workgroup>>, vector<16x8xf32>
      %acc = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%a = %init) -> vector<16x8xf32> {
        %A = vector.transfer_read %Qs[%r0, %k0], %z16 {in_bounds = [true, true]} : memref<64x64xf16, #gpu.address_space<workgroup>>, vector<16x16xf16>
        %B = vector.transfer_read %Ks[%k0, %n0], %z16 {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<32x64xf16, #gpu.address_space<workgroup>>, vector<8x16xf16>
        %A32 = arith.extf %A : vector<16x16xf16> to vector<16x16xf32>
        %B32 = arith.extf %B : vector<8x16xf16> to vector<8x16xf32>
        %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %A32, %B32, %a : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
        scf.yield %r : vector<16x8xf32>
      }
      vector.transfer_write %acc, %S[%r0, %n0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>
    } {rpe.mma}
    gpu.terminator
  }
  return %w : index
}

// -----

// A marked nest whose contract has no mma.sync shape is an error.
func.func @no_mma_shape(%m: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  // expected-error @below {{rpe-gpu-tensor-cores: a vector.contract of the mma nest is not 16x16 · 8x16 f16 into 16x8 f32 (m16n8k16)}}
  scf.for %i = %c0 to %c1 step %c1 {
    %a = vector.transfer_read %m[%c0, %c0], %z {in_bounds = [true, true]} : memref<4x4xf32>, vector<4x4xf32>
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %a, %a : vector<4x4xf32>, vector<4x4xf32> into vector<4x4xf32>
    vector.transfer_write %r, %m[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<4x4xf32>
  } {rpe.mma}
  return
}

// -----

// bf16: the reads go through f16 views of the same workgroup bytes (the
// ldmatrix moves bits), and the mma is nvvm.mma.sync with bf16
// multiplicands: A and B rows as i32 pairs, C row-major, the result packed
// back into the 2x2 accumulator.
// CHECK-LABEL: func.func @bf16_nest
// CHECK: %[[BYTES:.*]] = memref.alloca() : memref<1024xi8, #gpu.address_space<workgroup>>
// CHECK: %[[F16:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<1024xi8, #gpu.address_space<workgroup>> to memref<16x32xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.ldmatrix %[[F16]]{{.*}} {numTiles = 4 : i32, transpose = false} : memref<16x32xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %[[F16]]{{.*}} {numTiles = 2 : i32, transpose = false} : memref<16x32xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK-COUNT-6: llvm.bitcast %{{.*}} : vector<2xf16> to i32
// CHECK-COUNT-4: vector.extract %{{.*}}[{{[01]}}, {{[01]}}] : f32 from vector<2x2xf32>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-4: llvm.extractvalue
// CHECK: vector.from_elements {{.*}} : vector<2x2xf32>
// CHECK-NOT: nvgpu.mma.sync
func.func @bf16_nest(%out: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %z = arith.constant 0.0 : bf16
  %zero = arith.constant dense<0.0> : vector<16x8xf32>
  %bytes = memref.alloca() : memref<1024xi8, #gpu.address_space<workgroup>>
  %m = memref.view %bytes[%c0][] : memref<1024xi8, #gpu.address_space<workgroup>> to memref<16x32xbf16, #gpu.address_space<workgroup>>
  scf.for %n0 = %c0 to %c16 step %c8 {
    %acc = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%a = %zero) -> vector<16x8xf32> {
      %A = vector.transfer_read %m[%c0, %k0], %z {in_bounds = [true, true]} : memref<16x32xbf16, #gpu.address_space<workgroup>>, vector<16x16xbf16>
      %B = vector.transfer_read %m[%n0, %k0], %z {in_bounds = [true, true]} : memref<16x32xbf16, #gpu.address_space<workgroup>>, vector<8x16xbf16>
      %A32 = arith.extf %A : vector<16x16xbf16> to vector<16x16xf32>
      %B32 = arith.extf %B : vector<8x16xbf16> to vector<8x16xf32>
      %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %A32, %B32, %a : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
      scf.yield %r : vector<16x8xf32>
    }
    vector.transfer_write %acc, %out[%c0, %n0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x16xf32>
  } {rpe.mma}
  return
}

// -----

// A bf16 read of anything but a view of bytes cannot be reinterpreted.
func.func @bf16_not_a_view(%m: memref<16x16xbf16, #gpu.address_space<workgroup>>, %out: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : bf16
  %zero = arith.constant dense<0.0> : vector<16x8xf32>
  scf.for %i = %c0 to %c1 step %c1 {
    // expected-error @below {{rpe-gpu-tensor-cores: a bf16 read of an mma nest must read a memref.view of bytes}}
    %A = vector.transfer_read %m[%c0, %c0], %z {in_bounds = [true, true]} : memref<16x16xbf16, #gpu.address_space<workgroup>>, vector<16x16xbf16>
    %B = vector.transfer_read %m[%c0, %c0], %z {in_bounds = [true, true]} : memref<16x16xbf16, #gpu.address_space<workgroup>>, vector<8x16xbf16>
    %A32 = arith.extf %A : vector<16x16xbf16> to vector<16x16xf32>
    %B32 = arith.extf %B : vector<8x16xbf16> to vector<8x16xf32>
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %A32, %B32, %zero : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    vector.transfer_write %r, %out[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
  } {rpe.mma}
  return
}
