// RUN: rpe-opt %s -rpe-early-deallocation -split-input-file | FileCheck %s

// Glue as ownership-based deallocation leaves it: every buffer freed at the
// end. Results of @fresh (which returns its own allocation) and local
// allocations are freed after the last use of any alias (the expand_shape
// view of %b is used last by the third call); the returned buffer stays
// retained, nothing else is left in the dealloc.
func.func private @fresh(%arg0: memref<4xf32>) -> memref<4xf32> {
  %alloc = memref.alloc() : memref<4xf32>
  memref.copy %arg0, %alloc : memref<4xf32> to memref<4xf32>
  return %alloc : memref<4xf32>
}
func.func private @use(%arg0: memref<2x2xf32>, %arg1: memref<4xf32>) -> memref<4xf32> {
  %alloc = memref.alloc() : memref<4xf32>
  return %alloc : memref<4xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[A]]
// CHECK-NEXT: %[[B:.*]] = call @fresh(%[[A]])
// CHECK-NEXT: memref.dealloc %[[A]] : memref<4xf32>
// CHECK-NEXT: %[[V:.*]] = memref.expand_shape %[[B]]
// CHECK-NEXT: %[[C:.*]] = call @fresh(%[[X]])
// CHECK-NEXT: %[[D:.*]] = call @use(%[[V]], %[[C]])
// CHECK-DAG: memref.dealloc %[[B]] : memref<4xf32>
// CHECK-DAG: memref.dealloc %[[C]] : memref<4xf32>
// CHECK: %[[R:.*]] = bufferization.dealloc retain (%[[D]] : memref<4xf32>)
// CHECK-NOT: memref.dealloc
// CHECK: return %[[D]]
func.func @chain(%x: memref<4xf32>) -> memref<4xf32> {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %b = func.call @fresh(%a) : (memref<4xf32>) -> memref<4xf32>
  %v = memref.expand_shape %b [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  %c = func.call @fresh(%x) : (memref<4xf32>) -> memref<4xf32>
  %d = func.call @use(%v, %c) : (memref<2x2xf32>, memref<4xf32>) -> memref<4xf32>
  %base_a, %off_a, %size_a, %stride_a = memref.extract_strided_metadata %a : memref<4xf32> -> memref<f32>, index, index, index
  %base_b, %off_b, %size_b, %stride_b = memref.extract_strided_metadata %b : memref<4xf32> -> memref<f32>, index, index, index
  %base_c, %off_c, %size_c, %stride_c = memref.extract_strided_metadata %c : memref<4xf32> -> memref<f32>, index, index, index
  %r = bufferization.dealloc (%base_a, %base_b, %base_c : memref<f32>, memref<f32>, memref<f32>) if (%true, %true, %true) retain (%d : memref<4xf32>)
  return %d : memref<4xf32>
}

// -----

// What stays in the dealloc: the result of a callee that may return its
// argument (an alias of %a), a buffer freed under a run-time condition, and
// one that flows into an op that could alias it (arith.select on memrefs).
func.func private @maybe_alias(%arg0: memref<4xf32>) -> memref<4xf32> {
  return %arg0 : memref<4xf32>
}
func.func private @fresh(%arg0: memref<4xf32>) -> memref<4xf32> {
  %alloc = memref.alloc() : memref<4xf32>
  return %alloc : memref<4xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.dealloc
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<f32>, memref<f32>, memref<f32>, memref<f32>) if (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: memref.dealloc
func.func @kept(%x: memref<4xf32>, %cond: i1) -> memref<4xf32> {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %b = func.call @maybe_alias(%a) : (memref<4xf32>) -> memref<4xf32>
  %c = func.call @fresh(%x) : (memref<4xf32>) -> memref<4xf32>
  %e = func.call @fresh(%x) : (memref<4xf32>) -> memref<4xf32>
  %s = arith.select %cond, %e, %x : memref<4xf32>
  %base_a, %off_a, %size_a, %stride_a = memref.extract_strided_metadata %a : memref<4xf32> -> memref<f32>, index, index, index
  %base_b, %off_b, %size_b, %stride_b = memref.extract_strided_metadata %b : memref<4xf32> -> memref<f32>, index, index, index
  %base_c, %off_c, %size_c, %stride_c = memref.extract_strided_metadata %c : memref<4xf32> -> memref<f32>, index, index, index
  %base_e, %off_e, %size_e, %stride_e = memref.extract_strided_metadata %e : memref<4xf32> -> memref<f32>, index, index, index
  %r = bufferization.dealloc (%base_a, %base_b, %base_c, %base_e : memref<f32>, memref<f32>, memref<f32>, memref<f32>) if (%true, %true, %cond, %true) retain (%s : memref<4xf32>)
  return %s : memref<4xf32>
}

// -----

// A view of the buffer yielded out of a region aliases the region op's
// result: the buffer stays in the dealloc.
// CHECK-LABEL: func.func @yielded
// CHECK-NOT: memref.dealloc
// CHECK: bufferization.dealloc (%{{.*}} : memref<f32>) if (%{{.*}}) retain (%{{.*}} : memref<2x2xf32>)
func.func @yielded(%cond: i1) -> memref<2x2xf32> {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %r = scf.if %cond -> memref<2x2xf32> {
    %v = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
    scf.yield %v : memref<2x2xf32>
  } else {
    %b = memref.alloc() : memref<2x2xf32>
    scf.yield %b : memref<2x2xf32>
  }
  %base, %off, %size, %stride = memref.extract_strided_metadata %a : memref<4xf32> -> memref<f32>, index, index, index
  %d = bufferization.dealloc (%base : memref<f32>) if (%true) retain (%r : memref<2x2xf32>)
  return %r : memref<2x2xf32>
}
