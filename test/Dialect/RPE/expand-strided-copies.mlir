// RUN: rpe-opt %s -rpe-expand-strided-copies | FileCheck %s
// RUN: rpe-opt %s -rpe-expand-strided-copies=row-chunk-bytes=128 | FileCheck %s --check-prefix=SMALL
// RUN: rpe-opt %s -rpe-expand-strided-copies=max-row-chunks=0 | FileCheck %s --check-prefix=NOVEC
// RUN: rpe-opt %s -rpe-expand-strided-copies=row-chunk-bytes=4611686018427387904 | FileCheck %s --check-prefix=HUGE
// RUN: not rpe-opt %s -rpe-expand-strided-copies=row-chunk-bytes=0 2>&1 | FileCheck %s --check-prefix=BYTES --implicit-check-not=error:
// RUN: not rpe-opt %s -rpe-expand-strided-copies=max-row-chunks=-1 2>&1 | FileCheck %s --check-prefix=CHUNKS --implicit-check-not=error:
// BYTES: error: rpe-expand-strided-copies: row-chunk-bytes must be positive, got 0
// CHUNKS: error: rpe-expand-strided-copies: max-row-chunks must not be negative, got -1

// With row-chunk-bytes=128 a row of 64 f32 is two chunks of 32; with
// max-row-chunks=0 every copy that is not contiguous becomes linalg.copy.
// SMALL-LABEL: func.func @from_slice
// SMALL: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c0{{.*}}] : memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>, vector<32xf32>
// SMALL: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c32{{.*}}] : memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>, vector<32xf32>
// SMALL-LABEL: func.func @into_slice
// Any row in one chunk (the chunk's size in bits overflowed at 2^62 bytes).
// HUGE-LABEL: func.func @long_rows
// HUGE: vector.load %{{.*}} : memref<?x256xf32, strided<[512, 1], offset: ?>>, vector<256xf32>
// HUGE-NOT: vector<128xf32>
// NOVEC-NOT: vector.load
// (8 strided copies, and the 4 of @zero_bit_elements.)
// NOVEC-COUNT-12: linalg.copy
// NOVEC-NOT: linalg.copy
// NOVEC-NOT: vector.load

// A copy out of a slice (what bufferization makes of a head's q taken out
// of B×H×L×D): memrefCopy would move one element at a time. Its rows have
// a static length and unit stride on both sides: a loop over the rows with
// one vector load and store per row (linalg.copy's static inner loop is
// unrolled by LLVM into scalar moves).
// CHECK-LABEL: func.func @from_slice
// CHECK-NOT: memref.copy
// CHECK: %[[S:.*]] = memref.subview
// CHECK: scf.for %[[A:.*]] = %c0 to %c1{{.*}} step %c1 {
// CHECK:   scf.for %[[B:.*]] = %c0 to %c1{{.*}} step %c1 {
// CHECK:     scf.for %[[R:.*]] = %c0 to %arg2 step %c1 {
// CHECK:       %[[ROW:.*]] = vector.load %[[S]][%[[A]], %[[B]], %[[R]], %c0{{.*}}] : memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>, vector<64xf32>
// CHECK:       vector.store %[[ROW]], %{{.*}}[%[[A]], %[[B]], %[[R]], %c0{{.*}}] : memref<1x1x?x64xf32>, vector<64xf32>
// CHECK-NOT: linalg.copy
func.func @from_slice(%src: memref<1x8x?x64xf32>, %h: index, %l: index) -> memref<1x1x?x64xf32> {
  %s = memref.subview %src[0, %h, 0, 0] [1, 1, %l, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>>
  %a = memref.alloc(%l) : memref<1x1x?x64xf32>
  memref.copy %s, %a : memref<1x1x?x64xf32, strided<[?, ?, 64, 1], offset: ?>> to memref<1x1x?x64xf32>
  return %a : memref<1x1x?x64xf32>
}

// Into a slice (a head's output inserted into its place).
// CHECK-LABEL: func.func @into_slice
// CHECK-NOT: memref.copy
// CHECK: scf.for %[[R:.*]] = %c0 to %c4{{.*}} step %c1 {
// CHECK:   %[[ROW:.*]] = vector.load %{{.*}}[%[[R]], %c0{{.*}}] : memref<4x64xf32>, vector<64xf32>
// CHECK:   vector.store %[[ROW]], %{{.*}}[%[[R]], %c0{{.*}}] : memref<4x64xf32, strided<[128, 1], offset: ?>>, vector<64xf32>
func.func @into_slice(%src: memref<4x64xf32>, %dst: memref<4x128xf32>, %c: index) {
  %s = memref.subview %dst[0, %c] [4, 64] [1, 1] : memref<4x128xf32> to memref<4x64xf32, strided<[128, 1], offset: ?>>
  memref.copy %src, %s : memref<4x64xf32> to memref<4x64xf32, strided<[128, 1], offset: ?>>
  return
}

// Rows longer than 512 bytes: 512-byte chunks (128 f32, 256 f16) when they
// divide the row, up to 8 of them.
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.for %[[R:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK:   %[[X:.*]] = vector.load %[[SRC:.*]][%[[R]], %c0{{.*}}] : memref<?x256xf32, strided<[512, 1], offset: ?>>, vector<128xf32>
// CHECK:   vector.store %[[X]], %[[DST:.*]][%[[R]], %c0{{.*}}]
// CHECK:   %[[Y:.*]] = vector.load %[[SRC]][%[[R]], %c128] : memref<?x256xf32, strided<[512, 1], offset: ?>>, vector<128xf32>
// CHECK:   vector.store %[[Y]], %[[DST]][%[[R]], %c128]
// CHECK: vector.load {{.*}} : memref<?x512xf16, strided<[1024, 1], offset: ?>>, vector<256xf16>
// CHECK: vector.load {{.*}} : memref<?x512xf16, strided<[1024, 1], offset: ?>>, vector<256xf16>
// CHECK-NOT: vector.load
// CHECK: return
func.func @long_rows(%a: memref<?x256xf32, strided<[512, 1], offset: ?>>, %b: memref<?x256xf32>,
                     %c: memref<?x512xf16, strided<[1024, 1], offset: ?>>, %d: memref<?x512xf16>) {
  memref.copy %a, %b : memref<?x256xf32, strided<[512, 1], offset: ?>> to memref<?x256xf32>
  memref.copy %c, %d : memref<?x512xf16, strided<[1024, 1], offset: ?>> to memref<?x512xf16>
  return
}

// Rows that are not of that form stay linalg.copy: a dynamic row length,
// a row of 200 f32 (800 bytes, not a multiple of 512), more than 8 chunks
// (2048 f32), a strided innermost dimension.
// CHECK-LABEL: func.func @other_rows
// CHECK-NOT: vector.load
// CHECK-COUNT-4: linalg.copy
// CHECK-NOT: vector.load
// CHECK: return
func.func @other_rows(%a: memref<4x?xf32, strided<[?, 1], offset: ?>>, %b: memref<4x?xf32>,
                      %c: memref<4x200xf32, strided<[400, 1], offset: ?>>, %d: memref<4x200xf32>,
                      %e: memref<2x2048xf32, strided<[4096, 1], offset: ?>>, %f: memref<2x2048xf32>,
                      %g: memref<4x64xf32, strided<[128, 2], offset: ?>>, %h: memref<4x64xf32>) {
  memref.copy %a, %b : memref<4x?xf32, strided<[?, 1], offset: ?>> to memref<4x?xf32>
  memref.copy %c, %d : memref<4x200xf32, strided<[400, 1], offset: ?>> to memref<4x200xf32>
  memref.copy %e, %f : memref<2x2048xf32, strided<[4096, 1], offset: ?>> to memref<2x2048xf32>
  memref.copy %g, %h : memref<4x64xf32, strided<[128, 2], offset: ?>> to memref<4x64xf32>
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

// Elements of no byte (i0) are not copied in vector chunks: the chunk's
// element count divided by their 0 bytes (a crash, SIGFPE). Nor are i24
// and f80: LLVM packs them in a vector (3 and 10 bytes apart, where the
// memref has them 4 and 16 apart: wrong values). i128 is.
// CHECK-LABEL: func.func @zero_bit_elements
// CHECK-NOT: vector.load
// CHECK: linalg.copy ins(%{{.*}} : memref<4x8xi0, strided<[16, 1]>>)
// CHECK-NOT: vector.load
// CHECK: linalg.copy ins(%{{.*}} : memref<4x8xi24, strided<[16, 1]>>)
// CHECK-NOT: vector.load
// CHECK: linalg.copy ins(%{{.*}} : memref<4x8xf80, strided<[16, 1]>>)
// CHECK: vector.load {{.*}} vector<8xi128>
func.func @zero_bit_elements(%a: memref<4x8xi0, strided<[16, 1]>>, %b: memref<4x8xi0, strided<[16, 1]>>,
                             %c: memref<4x8xi24, strided<[16, 1]>>, %d: memref<4x8xi24, strided<[16, 1]>>,
                             %e: memref<4x8xf80, strided<[16, 1]>>, %f: memref<4x8xf80, strided<[16, 1]>>,
                             %g: memref<4x8xi128, strided<[16, 1]>>, %h: memref<4x8xi128, strided<[16, 1]>>) {
  memref.copy %a, %b : memref<4x8xi0, strided<[16, 1]>> to memref<4x8xi0, strided<[16, 1]>>
  memref.copy %c, %d : memref<4x8xi24, strided<[16, 1]>> to memref<4x8xi24, strided<[16, 1]>>
  memref.copy %e, %f : memref<4x8xf80, strided<[16, 1]>> to memref<4x8xf80, strided<[16, 1]>>
  memref.copy %g, %h : memref<4x8xi128, strided<[16, 1]>> to memref<4x8xi128, strided<[16, 1]>>
  return
}
