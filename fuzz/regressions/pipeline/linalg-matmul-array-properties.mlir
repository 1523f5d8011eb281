
// The fill stays, and C is loaded: a fill not right before the op, a fill
// of another buffer, a dynamic k (which may be 0: the op writes nothing
// then, the fill's value must be there), and A read from a view of C's
// buffer (it must read the fill's value).
// CHECK-LABEL: func.func @fill_kept
// CHECK: linalg.fill {{.*}} outs(%arg2 :
// CHECK: memref.copy
// CHECK: vector.load %arg2
// CHECK: linalg.fill {{.*}} outs(%arg9 :
// CHECK: vector.load %arg5
// CHECK: linalg.fill {{.*}} outs(%arg8 :
// CHECK: vector.load %arg8
// CHECK: linalg.fill {{.*}} outs(%arg10 :
// CHECK: vector.load %arg10
func.func @fill_kept(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>,
                     %a2: memref<?x64xf32>, %b2: memref<64x32xf32>, %c2: memref<?x32xf32>,
                     %a3: memref<?x?xf32>, %b3: memref<?x32xf32>, %c3: memref<?x32xf32>,
                     %other: memref<?x32xf32>, %sq: memref<32x32xf32>,
                     %b4: memref<8x32xf32>) {
  %v = arith.constant 0.0 : f32
  linalg.fill ins(%v : f32) outs(%c : memref<?x32xf32>)
  memref.copy %other, %c : memref<?x32xf32> to memref<?x32xf32>
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  linalg.fill ins(%v : f32) outs(%other : memref<?x32xf32>)
  linalg.matmul<[32, 1]>>
  linalg.fill ins(%v : f32) outs(%sq : memref<32x32xf32>)
  linalg.matmul ins(%a4, %b4 : memref<32x8xf32, strided<[32, 1]>>, memref<8x32xf32>) outs(%sq : memref<32x32xf32>)
  return
}
