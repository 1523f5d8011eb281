// RUN: rpe-opt %s -rpe-gpu-align-workgroup | FileCheck %s
// RUN: rpe-opt %s -rpe-gpu-align-workgroup=alignment=64 | FileCheck %s --check-prefix=A64
// RUN: rpe-opt %s -rpe-gpu-align-workgroup -convert-gpu-to-nvvm | FileCheck %s --check-prefix=NVVM
// RUN: not rpe-opt %s -rpe-gpu-align-workgroup=alignment=24 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not="current operation"

// Every workgroup attribution gets llvm.align 16, unless it has more
// already; private attributions keep theirs. The NVVM lowering aligns the
// buffers' globals so.
// CHECK-LABEL: gpu.func @tiles
// CHECK-SAME: workgroup(%{{.*}} : memref<4096xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<32x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// CHECK-SAME: private(%{{.*}} : memref<4xf32, #gpu.address_space<private>>)
// A64: workgroup(%{{.*}} : memref<4096xi8, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}, %{{.*}} : memref<32x72xf16, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}, %{{.*}} : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64})
// NVVM: llvm.mlir.global internal @__wg_tiles_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4096 x i8>
// NVVM: llvm.mlir.global internal @__wg_tiles_1() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<2304 x f16>
// NVVM: llvm.mlir.global internal @__wg_tiles_2() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<8 x f32>
// BAD: error: rpe-gpu-align-workgroup: alignment must be a power of two, got 24
gpu.module @kernels {
  gpu.func @tiles(%a: memref<4xf32>) workgroup(%bytes : memref<4096xi8, #gpu.address_space<workgroup>>, %k : memref<32x72xf16, #gpu.address_space<workgroup>>, %s : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}) private(%p : memref<4xf32, #gpu.address_space<private>>) kernel {
    %c0 = arith.constant 0 : index
    %x = memref.load %s[%c0] : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %x, %a[%c0] : memref<4xf32>
    gpu.return
  }
}
