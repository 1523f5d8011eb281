// RUN: rpe-opt %s -rpe-hoist-forall-allocas -split-input-file | FileCheck %s

// Loop-invariant allocas move in front of the loop (the sequential
// iterations share them); an alloca sized inside the loop becomes an
// alloc freed at the end of the iteration; a stack scope directly in the
// body is inlined first.
// CHECK-LABEL: func.func @sequential_scratch
// CHECK-SAME: (%[[N:.*]]: index, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[A:.*]] = memref.alloca() : memref<64xf32>
// CHECK: %[[B:.*]] = memref.alloca(%[[N]]) {alignment = 64 : i64} : memref<?xf32>
// CHECK: scf.forall (%[[I:.*]]) in (4) {
// CHECK-NOT: memref.alloca_scope
// CHECK-NOT: memref.alloca
// CHECK: %[[C:.*]] = memref.alloc(%[[I]]) : memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: memref.dealloc %[[C]] : memref<?xf32>
// CHECK-NEXT: }
func.func @sequential_scratch(%n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    memref.alloca_scope {
      %a = memref.alloca() : memref<64xf32>
      %b = memref.alloca(%n) {alignment = 64 : i64} : memref<?xf32>
      %c = memref.alloca(%i) : memref<?xf32>
      memref.store %f, %a[%c0] : memref<64xf32>
      memref.store %f, %b[%c0] : memref<?xf32>
      memref.store %f, %c[%c0] : memref<?xf32>
      memref.store %f, %out[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// Allocas of nested scopes and foralls on tensors are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.forall
// CHECK: memref.alloca_scope {
// CHECK-NEXT: memref.alloca() : memref<8xf32>
// CHECK: scf.forall {{.*}} shared_outs
// CHECK: memref.alloca() : memref<16xf32>
func.func @left_alone(%t: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    scf.for %j = %c0 to %i step %i {
      memref.alloca_scope {
        %a = memref.alloca() : memref<8xf32>
        memref.store %f, %a[%c0] : memref<8xf32>
      }
    }
  }
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> (tensor<4xf32>) {
    %a = memref.alloca() : memref<16xf32>
    memref.store %f, %a[%c0] : memref<16xf32>
    %s = tensor.extract_slice %o[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}

// -----

// A loop in the body of an scf.for (the heads one after another, then the
// blocks of query rows, then the kernel's tiles): its invariant scratch
// goes in front of the outer loops, up to the function, since scf.for's
// lowering frees no stack per iteration; scratch sized by an outer loop
// goes on the heap around the loop.
// CHECK-LABEL: func.func @inside_for
// CHECK-SAME: (%[[N:.*]]: index, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[A:.*]] = memref.alloca() : memref<64xf32>
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %[[N]]
// CHECK-NEXT: scf.for %[[R:.*]] = %{{.*}} to %[[N]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc(%[[R]]) : memref<?xf32>
// CHECK-NEXT: scf.forall
// CHECK-NOT: memref.alloca
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]] : memref<?xf32>
func.func @inside_for(%n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.for %h = %c0 to %n step %c1 {
    scf.for %r = %c0 to %n step %c1 {
      scf.forall (%i) in (4) {
        memref.alloca_scope {
          %a = memref.alloca() : memref<64xf32>
          %b = memref.alloca(%r) : memref<?xf32>
          memref.store %f, %a[%c0] : memref<64xf32>
          memref.store %f, %b[%c0] : memref<?xf32>
          memref.store %f, %out[%i] : memref<4xf32>
        }
      }
    }
  }
  return
}

// -----

// Allocas in an scf.for inside the body (which frees no stack per
// iteration either): invariant ones go in front of the forall, one sized
// in the iteration on the heap around the inner loop, one sized by the
// inner loop on the heap in its body; a parallel loop inside is a stack
// scope of its own (the OpenMP lowering wraps each iteration in one).
// CHECK-LABEL: func.func @for_in_body
// CHECK-SAME: (%[[N:.*]]: index, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[A:.*]] = memref.alloca() : memref<64xf32>
// CHECK-NEXT: scf.forall (%[[I:.*]]) in (4) {
// CHECK-NEXT: %[[B:.*]] = memref.alloc(%[[I]]) : memref<?xf32>
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %[[N]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc(%[[J]]) : memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: scf.parallel
// CHECK-NEXT: memref.alloca() : memref<8xf32>
// CHECK: memref.dealloc %[[C]] : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[B]] : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @for_in_body(%n: index, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.alloca() : memref<64xf32>
      %b = memref.alloca(%i) : memref<?xf32>
      %c = memref.alloca(%j) : memref<?xf32>
      memref.store %f, %a[%c0] : memref<64xf32>
      memref.store %f, %b[%c0] : memref<?xf32>
      memref.store %f, %c[%c0] : memref<?xf32>
      scf.parallel (%k) = (%c0) to (%n) step (%c1) {
        %d = memref.alloca() : memref<8xf32>
        memref.store %f, %d[%c0] : memref<8xf32>
        scf.reduce
      }
    }
  }
  return
}
