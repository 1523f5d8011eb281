// RUN: rpe-opt %s -rpe-promote-accumulators -split-input-file | FileCheck %s

// The reduction loop of a contraction (as convert-linalg-to-parallel-loops
// writes it): C is a fresh allocation, A and B are arguments. C[i, j] is
// loaded once before the loop, carried, and stored once after it.
// CHECK-LABEL: func.func @contraction
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x16xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[C]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[A]][%[[I]], %[[K]]]
// CHECK-NEXT: %[[Y:.*]] = memref.load %[[B]][%[[K]], %[[J]]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT: scf.yield %[[NEXT]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[C]][%[[I]], %[[J]]]
// CHECK-NEXT: scf.reduce
func.func @contraction(%a: memref<4x8xf32>, %b: memref<8x16xf32>) -> memref<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c = memref.alloc() : memref<4x16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %k] : memref<4x8xf32>
      %y = memref.load %b[%k, %j] : memref<8x16xf32>
      %acc = memref.load %c[%i, %j] : memref<4x16xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      memref.store %s, %c[%i, %j] : memref<4x16xf32>
    }
    scf.reduce
  }
  return %c : memref<4x16xf32>
}

// -----

// C seen through a view (a subview of the allocation), A another
// allocation: still disjoint. A loop that already carries a value keeps it.
// CHECK-LABEL: func.func @through_a_view
// CHECK: %[[V:.*]] = memref.subview
// CHECK: %[[INIT:.*]] = memref.load %[[V]][%{{.*}}]
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[INIT]]) -> (i32, f32)
// CHECK-NOT: memref.store
// CHECK: }
// CHECK-NEXT: memref.store %[[R]]#1, %[[V]][%{{.*}}]
func.func @through_a_view(%n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %c = memref.alloc() : memref<16xf32>
  %a = memref.alloc() : memref<8xf32>
  %v = memref.subview %c[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  %count = scf.for %k = %c0 to %c8 step %c1 iter_args(%t = %zero) -> i32 {
    %x = memref.load %a[%k] : memref<8xf32>
    %acc = memref.load %v[%n] : memref<8xf32, strided<[1], offset: 4>>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %v[%n] : memref<8xf32, strided<[1], offset: 4>>
    %t1 = arith.addi %t, %one : i32
    scf.yield %t1 : i32
  }
  return %count : i32
}

// -----

// Left alone: C is an argument, which another argument may alias.
// CHECK-LABEL: func.func @argument_output
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK: memref.store
// CHECK: }
func.func @argument_output(%a: memref<8xf32>, %c: memref<4xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %x = memref.load %a[%k] : memref<8xf32>
    %acc = memref.load %c[%i] : memref<4xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%i] : memref<4xf32>
  }
  return
}

// -----

// A trip count that may be 0 (a dynamic head dimension): the loop goes
// inside `if (lb < ub)` first, so C[i] is loaded and stored only where the
// loop would have done it; its own results come out of the if (the else
// branch passes the initial values through). An unsigned loop compares
// unsigned.
// CHECK-LABEL: func.func @dynamic_trip_count
// CHECK-SAME: (%[[N:.*]]: index, %[[I:.*]]: index, %[[T0:.*]]: i32)
// CHECK: %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[RUNS:.*]] = arith.cmpi sgt, %[[N]], %[[C0:.*]] : index
// CHECK-NEXT: %[[IF:.*]] = scf.if %[[RUNS]] -> (i32) {
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[C]][%[[I]]]
// CHECK-NEXT: %[[R:.*]]:2 = scf.for %{{.*}} = %[[C0]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[T0]], %{{.*}} = %[[INIT]]) -> (i32, f32) {
// CHECK-NOT: memref.store
// CHECK: }
// CHECK-NEXT: memref.store %[[R]]#1, %[[C]][%[[I]]]
// CHECK-NEXT: scf.yield %[[R]]#0 : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[T0]] : i32
// CHECK-NEXT: }
// CHECK: arith.cmpi ugt, %[[N]], %{{.*}} : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.load %[[C]][%[[I]]]
// CHECK-NEXT: scf.for unsigned
// CHECK-NOT: else
// CHECK: memref.dealloc
// CHECK: return %[[IF]] : i32
func.func @dynamic_trip_count(%n: index, %i: index, %t0: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %c = memref.alloc() : memref<8xf32>
  %a = memref.alloc() : memref<8xf32>
  %count = scf.for %k = %c0 to %n step %c1 iter_args(%t = %t0) -> i32 {
    %x = memref.load %a[%k] : memref<8xf32>
    %acc = memref.load %c[%i] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%i] : memref<8xf32>
    %t1 = arith.addi %t, %one : i32
    scf.yield %t1 : i32
  }
  scf.for unsigned %k = %c1 to %n step %c1 {
    %x = memref.load %a[%k] : memref<8xf32>
    %acc = memref.load %c[%i] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%i] : memref<8xf32>
  }
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %c : memref<8xf32>
  return %count : i32
}

// -----

// Left alone: an index changes in the loop, C is read again after the
// store, a buffer of unknown origin (a global's) is read, and a loop runs
// no iteration.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: iter_args
// CHECK-NOT: scf.if
// CHECK: return
memref.global "private" @table : memref<8xf32> = dense<1.0>
func.func @left_alone(%i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c = memref.alloc() : memref<8xf32>
  %a = memref.alloc() : memref<8xf32>
  scf.for %k = %c8 to %c0 step %c1 {
    %x = memref.load %a[%k] : memref<8xf32>
    %acc = memref.load %c[%i] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%i] : memref<8xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %x = memref.load %a[%k] : memref<8xf32>
    %acc = memref.load %c[%k] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%k] : memref<8xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %x = memref.load %a[%k] : memref<8xf32>
    %acc = memref.load %c[%i] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%i] : memref<8xf32>
    %again = memref.load %c[%c0] : memref<8xf32>
    memref.store %again, %a[%k] : memref<8xf32>
  }
  %g = memref.get_global @table : memref<8xf32>
  scf.for %k = %c0 to %c8 step %c1 {
    %x = memref.load %g[%k] : memref<8xf32>
    %acc = memref.load %c[%i] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %c[%i] : memref<8xf32>
  }
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %c : memref<8xf32>
  return
}

// -----

// Left alone: a call in the loop may touch any memory.
// CHECK-LABEL: func.func @unknown_effects
// CHECK-NOT: iter_args
// CHECK: return
func.func private @opaque()
func.func @unknown_effects(%i: index) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<8xf32>
  scf.for %k = %c0 to %c8 step %c1 {
    %acc = memref.load %c[%i] : memref<8xf32>
    %s = arith.addf %acc, %one : f32
    memref.store %s, %c[%i] : memref<8xf32>
    func.call @opaque() : () -> ()
  }
  return %c : memref<8xf32>
}
