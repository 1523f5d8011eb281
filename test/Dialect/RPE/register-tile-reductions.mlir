// RUN: rpe-opt %s -rpe-register-tile-reductions="rows=2 columns=2" -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-register-tile-reductions -rpe-register-tile-reductions -split-input-file | FileCheck %s --check-prefix=TWICE
// RUN: not rpe-opt %s -rpe-register-tile-reductions="rows=0" 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not rpe-opt %s -rpe-register-tile-reductions="columns=17" 2>&1 | FileCheck %s --check-prefix=ERR17

// ERR: rpe-register-tile-reductions: rows and columns must be in 1..16, got 0 and 4
// ERR17: rpe-register-tile-reductions: rows and columns must be in 1..16, got 4 and 17

// A contraction after rpe-promote-accumulators, M rows dynamic: each
// iteration computes a 2 × 2 block, rows 2·it and 2·it + 1, columns jt and
// jt + 256 (N / 2 apart), read at indices clamped to the last row / column.
// One loop over k carries the four sums; A is read per row, B per column
// (the copies are the same loads for CSE). The init loads come before the
// loop; after it, the block's first output is stored, the others only when
// their row and column are inside.
// CHECK-LABEL: func.func @contraction
// CHECK-SAME: (%[[A:.*]]: memref<?x64xf32>, %[[B:.*]]: memref<64x512xf32>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C511:.*]] = arith.constant 511 : index
// CHECK-DAG: %[[C512:.*]] = arith.constant 512 : index
// CHECK: %[[M:.*]] = memref.dim %[[A]]
// CHECK: %[[OUT:.*]] = memref.alloc(%[[M]])
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[M]], %[[C2]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[M]], %[[C1]] : index
// CHECK: scf.parallel (%[[IT:.*]], %[[JT:.*]]) = (%{{.*}}, %{{.*}}) to (%[[TILES]], %[[C256]]) step
// CHECK: %[[R0B:.*]] = arith.muli %[[IT]], %[[C2]]
// CHECK: %[[R0:.*]] = arith.minui %[[R0B]], %[[LAST]]
// CHECK: %[[R1B:.*]] = arith.addi %[[R0B]], %[[C1]]
// CHECK: %[[R1:.*]] = arith.minui %[[R1B]], %[[LAST]]
// CHECK: %[[IN_R1:.*]] = arith.cmpi ult, %[[R1B]], %[[M]]
// CHECK: %[[J0:.*]] = arith.minui %[[JT]], %[[C511]]
// CHECK: %[[J1B:.*]] = arith.addi %[[JT]], %[[C256]]
// CHECK: %[[J1:.*]] = arith.minui %[[J1B]], %[[C511]]
// CHECK: %[[IN_J1:.*]] = arith.cmpi ult, %[[J1B]], %[[C512]]
// CHECK: %[[I00:.*]] = memref.load %[[OUT]][%[[R0]], %[[J0]]]
// CHECK: %[[I01:.*]] = memref.load %[[OUT]][%[[R0]], %[[J1]]]
// CHECK: %[[I10:.*]] = memref.load %[[OUT]][%[[R1]], %[[J0]]]
// CHECK: %[[I11:.*]] = memref.load %[[OUT]][%[[R1]], %[[J1]]]
// CHECK: %[[S:.*]]:4 = scf.for %[[K:.*]] = {{.*}} iter_args(%[[A00:.*]] = %[[I00]], %[[A01:.*]] = %[[I01]], %[[A10:.*]] = %[[I10]], %[[A11:.*]] = %[[I11]]) -> (f32, f32, f32, f32) {
// CHECK: memref.load %[[A]][%[[R0]], %[[K]]]
// CHECK: memref.load %[[B]][%[[K]], %[[J0]]]
// CHECK: arith.addf %[[A00]]
// CHECK: memref.load %[[B]][%[[K]], %[[J1]]]
// CHECK: arith.addf %[[A01]]
// CHECK: memref.load %[[A]][%[[R1]], %[[K]]]
// CHECK: arith.addf %[[A10]]
// CHECK: arith.addf %[[A11]]
// CHECK: scf.yield
// CHECK: memref.store %[[S]]#0, %[[OUT]][%[[R0]], %[[J0]]]
// CHECK-NEXT: scf.if %[[IN_J1]] {
// CHECK-NEXT: memref.store %[[S]]#1, %[[OUT]][%[[R0]], %[[J1]]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[IN_R1]] {
// CHECK-NEXT: memref.store %[[S]]#2, %[[OUT]][%[[R1]], %[[J0]]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[IN11:.*]] = arith.andi %[[IN_R1]], %[[IN_J1]]
// CHECK-NEXT: scf.if %[[IN11]] {
// CHECK-NEXT: memref.store %[[S]]#3, %[[OUT]][%[[R1]], %[[J1]]]
// CHECK-NEXT: }
// CHECK: } {rpe.register_tiled}
// Tiled once: a second run leaves the loop alone.
// TWICE-LABEL: func.func @contraction
// TWICE: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// TWICE-NOT: scf.for
// TWICE: } {rpe.register_tiled}
func.func @contraction(%a: memref<?x64xf32>, %b: memref<64x512xf32>) -> memref<?x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %m = memref.dim %a, %c0 : memref<?x64xf32>
  %out = memref.alloc(%m) : memref<?x512xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c512) step (%c1, %c1) {
    %init = memref.load %out[%i, %j] : memref<?x512xf32>
    %r = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memref.load %a[%i, %k] : memref<?x64xf32>
      %y = memref.load %b[%k, %j] : memref<64x512xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i, %j] : memref<?x512xf32>
    scf.reduce
  }
  return %out : memref<?x512xf32>
}

// -----

// Leading dimensions (batch, head) keep their indices; an odd N = 5 puts
// columns ceil(5 / 2) = 3 apart.
// CHECK-LABEL: func.func @batched
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[H:.*]], %[[IT:.*]], %[[JT:.*]]) = ({{.*}}) to (%{{.*}}, %{{.*}}, %[[C3]])
// CHECK: %[[J1B:.*]] = arith.addi %[[JT]], %[[C3]]
// CHECK: arith.minui %[[J1B]], %[[C4]]
// CHECK: arith.cmpi ult, %[[J1B]], %{{.*}}
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK: memref.load %{{.*}}[%[[H]],
func.func @batched(%a: memref<2x7x8xf32>, %b: memref<2x8x5xf32>, %out: memref<2x7x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%h, %i, %j) = (%c0, %c0, %c0) to (%c2, %c7, %c5) step (%c1, %c1, %c1) {
    %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%h, %i, %k] : memref<2x7x8xf32>
      %y = memref.load %b[%h, %k, %j] : memref<2x8x5xf32>
      %s = math.fma %x, %y, %acc : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%h, %i, %j] : memref<2x7x5xf32>
    scf.reduce
  }
  return
}

// -----

// Left alone: element-wise (no reduction loop); a reduction loop that
// stores; loads that all depend on both i and j (nothing to share); a
// reduction bound that depends on i; a lower bound that is not 0.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: rpe.register_tiled
// CHECK: return
func.func @left_alone(%a: memref<8x8xf32>, %b: memref<8x8x8xf32>, %out: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<8x8xf32>
    memref.store %x, %out[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%i, %k] : memref<8x8xf32>
      %y = memref.load %a[%k, %j] : memref<8x8xf32>
      %s = math.fma %x, %y, %acc : f32
      memref.store %s, %out[%i, %j] : memref<8x8xf32>
      scf.yield %s : f32
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %b[%i, %j, %k] : memref<8x8x8xf32>
      %s = arith.addf %x, %acc : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %r = scf.for %k = %c0 to %i step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%i, %k] : memref<8x8xf32>
      %y = memref.load %a[%k, %j] : memref<8x8xf32>
      %s = math.fma %x, %y, %acc : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c1) to (%c8, %c8) step (%c1, %c1) {
    %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %a[%i, %k] : memref<8x8xf32>
      %y = memref.load %a[%k, %j] : memref<8x8xf32>
      %s = math.fma %x, %y, %acc : f32
      scf.yield %s : f32
    }
    memref.store %r, %out[%i, %j] : memref<8x8xf32>
    scf.reduce
  }
  return
}
