// RUN: rpe-opt %s -rpe-owned-results -split-input-file | FileCheck %s

// An argument returned as is, or through a view: the caller gets a copy
// (freeing the result must not free its input).
// CHECK-LABEL: func.func @argument(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<8xf32>)
// CHECK: %[[VIEW:.*]] = memref.cast %[[B]]
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = memref.dim %[[A]], %[[C0]]
// CHECK: %[[OWN:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: memref.copy %[[A]], %[[OWN]]
// CHECK: %[[OWN2:.*]] = memref.alloc() : memref<8xf32>
// CHECK: memref.copy %[[VIEW]], %[[OWN2]]
// CHECK: return %[[OWN]], %[[OWN2]]
func.func @argument(%a: memref<?xf32>, %b: memref<8xf32>) -> (memref<?xf32>, memref<8xf32>) {
  %c = memref.cast %b : memref<8xf32> to memref<8xf32>
  return %a, %c : memref<?xf32>, memref<8xf32>
}

// -----

// One buffer returned twice, directly and through a view: the first keeps
// it, the second gets a copy. A second, distinct buffer is left alone.
// CHECK-LABEL: func.func @twice(
// CHECK: %[[R:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[S:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[V:.*]] = memref.expand_shape %[[R]]
// CHECK: %[[OWN:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[R]], %[[OWN]]
// CHECK: %[[OWN2:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: memref.copy %[[V]], %[[OWN2]]
// CHECK: return %[[R]], %[[OWN]], %[[S]], %[[OWN2]]
func.func @twice(%x: f32) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<2x2xf32>) {
  %r = memref.alloc() : memref<4xf32>
  %s = memref.alloc() : memref<4xf32>
  linalg.fill ins(%x : f32) outs(%r : memref<4xf32>)
  linalg.fill ins(%x : f32) outs(%s : memref<4xf32>)
  %v = memref.expand_shape %r [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  return %r, %r, %s, %v : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<2x2xf32>
}

// -----

// A constant global is copied each time it is returned.
// CHECK-LABEL: func.func @constant(
// CHECK: %[[G:.*]] = memref.get_global @table
// CHECK: %[[OWN:.*]] = memref.alloc() : memref<2xf32>
// CHECK: memref.copy %[[G]], %[[OWN]]
// CHECK: %[[OWN2:.*]] = memref.alloc() : memref<2xf32>
// CHECK: memref.copy %[[G]], %[[OWN2]]
// CHECK: return %[[OWN]], %[[OWN2]]
memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
func.func @constant() -> (memref<2xf32>, memref<2xf32>) {
  %g = memref.get_global @table : memref<2xf32>
  return %g, %g : memref<2xf32>, memref<2xf32>
}

// -----

// Private functions (their callers are in the module), scalars and the
// buffers a function allocates once are left alone.
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: memref.alloc
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-LABEL: func.func @fresh(
// CHECK: memref.alloc
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
func.func private @helper(%a: memref<4xf32>, %x: f32) -> (memref<4xf32>, memref<4xf32>, f32) {
  return %a, %a, %x : memref<4xf32>, memref<4xf32>, f32
}
func.func @fresh(%x: f32) -> (memref<4xf32>, f32, f32) {
  %r = memref.alloc() : memref<4xf32>
  linalg.fill ins(%x : f32) outs(%r : memref<4xf32>)
  return %r, %x, %x : memref<4xf32>, f32, f32
}
