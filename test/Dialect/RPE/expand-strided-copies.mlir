// RUN: rpe-opt %s -rpe-expand-strided-copies | FileCheck %s

// A copy out of a slice (what bufferization makes of a head's q taken out
// of B×H×L×D): memrefCopy would move one element at a time.
// CHECK-LABEL: func.func @from_slice
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>) outs(%{{.*}} : memref<1x1x?x64xf32>)
func.func @from_slice(%src: memref<1x8x?x64xf32>, %h: index, %l: index) -> memref<1x1x?x64xf32> {
  %s = memref.subview %src[0, %h, 0, 0] [1, 1, %l, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>
  %a = memref.alloc(%l) : memref<1x1x?x64xf32>
  memref.copy %s, %a : memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>> to memref<1x1x?x64xf32>
  return %a : memref<1x1x?x64xf32>
}

// Into a slice (a head's output inserted into its place).
// CHECK-LABEL: func.func @into_slice
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<4x64xf32>) outs(%{{.*}} : memref<4x64xf32, strided<[128, 1], offset: ?>>)
func.func @into_slice(%src: memref<4x64xf32>, %dst: memref<4x128xf32>, %c: index) {
  %s = memref.subview %dst[0, %c] [4, 64] [1, 1] : memref<4x128xf32> to memref<4x64xf32, strided<[128, 1], offset: ?>>
  memref.copy %src, %s : memref<4x64xf32> to memref<4x64xf32, strided<[128, 1], offset: ?>>
  return
}

// Contiguous on both sides (llvm.memcpy): unchanged; so is a static
// row-major layout, and rank 0.
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<?x64xf32> to memref<?x64xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x64xf32, strided<[64, 1], offset: 128>> to memref<4x64xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<f32> to memref<f32>
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<?x64xf32>, %b: memref<?x64xf32>, %c: memref<4x64xf32, strided<[64, 1], offset: 128>>, %d: memref<4x64xf32>, %e: memref<f32>, %f: memref<f32>) {
  memref.copy %a, %b : memref<?x64xf32> to memref<?x64xf32>
  memref.copy %c, %d : memref<4x64xf32, strided<[64, 1], offset: 128>> to memref<4x64xf32>
  memref.copy %e, %f : memref<f32> to memref<f32>
  return
}
