// RUN: rpe-opt %s -rpe-simplify-deallocations | FileCheck %s
// RUN: rpe-opt %s -rpe-simplify-deallocations=max-memrefs=1 | FileCheck %s --check-prefix=LARGE
// RUN: not rpe-opt %s -rpe-simplify-deallocations=max-memrefs=-1 2>&1 | FileCheck %s --check-prefix=NEG --implicit-check-not=error:

// Upstream's simplification runs on a function whose deallocs free at most
// max-memrefs memrefs: the retained buffer aliases neither freed one, so its
// ownership is false and the freed, otherwise unused allocations go. With
// max-memrefs=1 the two-memref dealloc is too large and the function stays.
// CHECK-LABEL: func.func @two
// CHECK: %[[F:.*]] = arith.constant false
// CHECK-NOT: bufferization.dealloc
// CHECK: return %{{.*}}, %[[F]], %{{.*}}
// LARGE-LABEL: func.func @two
// LARGE: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<2xf32>, memref<2xf32>)
// NEG: error: rpe-simplify-deallocations: max-memrefs must not be negative, got -1
func.func @two(%c: i1, %d: i1) -> (memref<2xf32>, i1, i1) {
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<2xf32>
  %r = memref.alloc() : memref<2xf32>
  %o:1 = bufferization.dealloc (%a, %b : memref<2xf32>, memref<2xf32>) if (%c, %d) retain (%r : memref<2xf32>)
  return %r, %o#0, %c : memref<2xf32>, i1, i1
}
