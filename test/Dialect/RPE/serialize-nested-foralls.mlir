// RUN: rpe-opt %s -rpe-serialize-nested-foralls -split-input-file | FileCheck %s

// A loop over heads in parallel holding a kernel's loop over tiles: the
// inner forall becomes an scf.for on the head's thread, its scratch
// prepared as rpe-hoist-forall-allocas does (the stack scope inlined, the
// invariant alloca in front of the loop, the per-iteration one an alloc
// freed at the end of the iteration); the outer forall stays.
// CHECK-LABEL: func.func @heads_and_tiles
// CHECK-SAME: (%[[OUT:.*]]: memref<8x4xf32>)
// CHECK: scf.forall (%[[H:.*]]) in (8) {
// CHECK-NEXT: %[[A:.*]] = memref.alloca() : memref<64xf32>
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[C4]] step %[[C1]] {
// CHECK-NOT: memref.alloca
// CHECK: %[[C:.*]] = memref.alloc(%[[T]]) : memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[H]], %[[T]]]
// CHECK: memref.dealloc %[[C]] : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NOT: scf.forall
// CHECK: return
func.func @heads_and_tiles(%out: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  scf.forall (%h) in (8) {
    scf.forall (%t) in (4) {
      memref.alloca_scope {
        %a = memref.alloca() : memref<64xf32>
        %c = memref.alloca(%t) : memref<?xf32>
        memref.store %f, %a[%c0] : memref<64xf32>
        memref.store %f, %c[%c0] : memref<?xf32>
        memref.store %f, %out[%h, %t] : memref<8x4xf32>
      }
    }
  }
  return
}

// -----

// Two levels inside, with lower bounds and steps (a group loop); loops
// that are not nested stay foralls, and so does a nested forall on
// tensors (its results: not what the OpenMP lowering sees).
// CHECK-LABEL: func.func @deeper
// CHECK-SAME: (%[[N:.*]]: index,
// CHECK: scf.forall (%{{.*}}) in (2) {
// CHECK: %[[C24:.*]] = arith.constant 24 : index
// CHECK: scf.for %[[G:.*]] = %{{.*}} to %[[N]] step %[[C24]] {
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C3]] step %{{.*}} {
// CHECK-NOT: scf.forall
// CHECK: scf.forall (%{{.*}}) in (5) {
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs
func.func @deeper(%n: index, %out: memref<?xf32>, %t: tensor<2xf32>) -> tensor<2xf32> {
  %f = arith.constant 1.0 : f32
  scf.forall (%i) in (2) {
    scf.forall (%g) = (0) to (%n) step (24) {
      scf.forall (%k) in (3) {
        memref.store %f, %out[%g] : memref<?xf32>
      }
    }
  }
  scf.forall (%i) in (5) {
    memref.store %f, %out[%i] : memref<?xf32>
  }
  %r = scf.forall (%i) in (3) shared_outs(%o = %t) -> (tensor<2xf32>) {
    %s = scf.forall (%j) in (2) shared_outs(%p = %o) -> (tensor<2xf32>) {
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %p into %p[0] [2] [1] : tensor<2xf32> into tensor<2xf32>
      }
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[0] [2] [1] : tensor<2xf32> into tensor<2xf32>
    }
  }
  return %r : tensor<2xf32>
}
