// RUN: rpe-opt %s -rpe-gpu-launch-to-loops -split-input-file -verify-diagnostics | FileCheck %s

// A one-thread-block launch becomes loops over the grid (z, y, x); thread
// ids are 0, barriers go, workgroup memory is one host buffer for all
// blocks, device allocations and copies are host ones.
// CHECK-LABEL: func.func @launch
// CHECK-SAME: (%[[OUT:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK: %[[DEV:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[WG:.*]] = memref.alloc() : memref<4xf32>
// CHECK: scf.for %[[Z:.*]] = %[[C0]] to %{{.*}} step %[[C1]] {
// CHECK: scf.for %[[Y:.*]] = %[[C0]] to %{{.*}} step %[[C1]] {
// CHECK: scf.for %[[X:.*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK: %[[I:.*]] = arith.addi %[[X]], %[[C0]] : index
// CHECK: memref.store %{{.*}}, %[[WG]][%[[C0]]]
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %[[WG]][%{{.*}}]
// CHECK: memref.store %{{.*}}, %[[DEV]][%[[I]]]
// CHECK: memref.dealloc %[[WG]]
// CHECK: memref.copy %[[DEV]], %[[OUT]]
// CHECK: memref.dealloc %[[DEV]]
// CHECK-NOT: gpu.
func.func @launch(%out: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %f = arith.constant 2.0 : f32
  %dev = gpu.alloc (%n) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%wg : memref<4xf32, #gpu.address_space<workgroup>>) {
    %i = arith.addi %bx, %tx : index
    memref.store %f, %wg[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %x = memref.load %wg[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    memref.store %x, %dev[%i] : memref<?xf32>
    gpu.terminator
  }
  gpu.memcpy %out, %dev : memref<?xf32>, memref<?xf32>
  gpu.dealloc %dev : memref<?xf32>
  return
}

// -----

func.func @wide(%n: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @below {{rpe-gpu-launch-to-loops: blocks must have one thread}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

// Views of workgroup memory (a view of bytes, a subview of it) view the
// host buffer: they lose the address space too.
// CHECK-LABEL: func.func @views
// CHECK: %[[WG:.*]] = memref.alloc() : memref<64xi8>
// CHECK: %[[V:.*]] = memref.view %[[WG]][%{{.*}}][] : memref<64xi8> to memref<4x4xf32>
// CHECK: %[[S:.*]] = memref.subview %[[V]][1, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: 4>>
// CHECK: memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<4xf32, strided<[1], offset: 4>>
// CHECK-NOT: address_space
func.func @views(%f: f32) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
      workgroup(%bytes : memref<64xi8, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %v = memref.view %bytes[%c0][] : memref<64xi8, #gpu.address_space<workgroup>> to memref<4x4xf32, #gpu.address_space<workgroup>>
    %s = memref.subview %v[1, 0] [1, 4] [1, 1] : memref<4x4xf32, #gpu.address_space<workgroup>> to memref<4xf32, strided<[1], offset: 4>, #gpu.address_space<workgroup>>
    memref.store %f, %s[%c0] : memref<4xf32, strided<[1], offset: 4>, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}
