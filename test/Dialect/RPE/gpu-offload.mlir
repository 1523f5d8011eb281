// RUN: rpe-opt %s -rpe-gpu-offload -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-gpu-offload="deallocate=false" -split-input-file | FileCheck %s --check-prefix=NOFREE
// RUN: not rpe-opt %s -rpe-gpu-offload="block-size=0" 2>&1 | FileCheck %s --check-prefix=BADOPT --implicit-check-not="current operation"

// BADOPT: error: rpe-gpu-offload: block-size must be in 1..1024, got 0

// A parallel loop nest: one thread per iteration, linearized with the
// innermost dimension fastest, 256 threads per block, no launch when the
// space is empty. The temporary buffer is device memory, freed at the end
// of its block; the returned one is not.
// CHECK-LABEL: func.func @parallel
// CHECK-SAME: (%[[A:.*]]: memref<4x?xf32>, %[[N:.*]]: index)
// CHECK: %[[TMP:.*]] = gpu.alloc  (%[[N]]) : memref<4x?xf32>
// CHECK: %[[RES:.*]] = gpu.alloc  (%[[N]]) : memref<4x?xf32>
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[TOTAL:.*]], %c256
// CHECK: scf.if
// All kernels go to one device module.
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK-SAME: module(@rpe_kernels)
// CHECK: %[[LIN:.*]] = arith.addi %{{.*}}, %[[TX]]
// CHECK: arith.cmpi ult, %[[LIN]], %[[TOTAL]]
// CHECK: arith.remui %[[LIN]], %{{.*}}
// CHECK: memref.load %[[A]]
// CHECK: memref.store %{{.*}}, %[[TMP]]
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[RES]]
// CHECK: gpu.dealloc  %[[TMP]] : memref<4x?xf32>
// CHECK-NOT: gpu.dealloc
// CHECK: return %[[RES]]
// NOFREE-LABEL: func.func @parallel
// NOFREE-NOT: gpu.dealloc
// NOFREE: return
func.func @parallel(%a: memref<4x?xf32>, %n: index) -> memref<4x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %tmp = memref.alloc(%n) : memref<4x?xf32>
  %res = memref.alloc(%n) : memref<4x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %n) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %tmp[%i, %j] : memref<4x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %n) step (%c1, %c1) {
    %x = memref.load %tmp[%i, %j] : memref<4x?xf32>
    memref.store %x, %res[%i, %j] : memref<4x?xf32>
    scf.reduce
  }
  return %res : memref<4x?xf32>
}

// -----

// A copy and a sequential nest (a linalg reduction without parallel
// dimensions) run on the device: a copy of whole buffers as one
// device-to-device gpu.memcpy, a copy of a strided view as a kernel. A
// scalar the host needs comes back through a device scalar copied to the
// host's stack.
// CHECK-LABEL: func.func @sequential
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[S:.*]]: memref<f32>)
// CHECK-NOT: gpu.launch
// CHECK: gpu.memcpy  %[[B]], %[[A]] : memref<8xf32>, memref<8xf32>
// CHECK: %[[VIEW:.*]] = memref.subview %[[A]]
// CHECK: %[[HEAD:.*]] = memref.subview %[[B]]
// CHECK: gpu.launch
// CHECK: %[[X:.*]] = memref.load %[[VIEW]]
// CHECK: memref.store %[[X]], %[[HEAD]]
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[S]][]
// CHECK: %[[DEV:.*]] = gpu.alloc  () : memref<f32>
// CHECK: gpu.launch
// CHECK: %[[V:.*]] = memref.load %[[S]][]
// CHECK: memref.store %[[V]], %[[DEV]][]
// CHECK: %[[HOST:.*]] = memref.alloca() : memref<f32>
// CHECK: gpu.memcpy  %[[HOST]], %[[DEV]] : memref<f32>, memref<f32>
// CHECK: gpu.dealloc  %[[DEV]]
// CHECK: %[[R:.*]] = memref.load %[[HOST]][]
// CHECK: return %[[R]]
func.func @sequential(%a: memref<8xf32>, %b: memref<8xf32>, %s: memref<f32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  memref.copy %a, %b : memref<8xf32> to memref<8xf32>
  %view = memref.subview %a[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  %head = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %view, %head : memref<4xf32, strided<[2]>> to memref<4xf32, strided<[1]>>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    %acc = memref.load %s[] : memref<f32>
    %y = arith.addf %x, %acc : f32
    memref.store %y, %s[] : memref<f32>
  }
  %r = memref.load %s[] : memref<f32>
  return %r : f32
}

// -----

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// A constant a kernel reads is copied to device memory, freed before the
// return.
// CHECK-LABEL: func.func @constant
// CHECK: %[[G:.*]] = memref.get_global @table
// CHECK: %[[D:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK: gpu.memcpy  %[[D]], %[[G]]
// CHECK: gpu.launch
// CHECK: memref.load %[[D]]
// CHECK: gpu.dealloc  %[[D]]
// CHECK-NEXT: return
func.func @constant(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.get_global @table : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %g[%i] : memref<4xf32>
    memref.store %x, %out[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

memref.global "private" constant @slopes : memref<3xf64> = dense<[0.5, 0.125, 0.03125]>

func.func private @callee(memref<3xf64>) -> f64

// A constant passed to a function (whose arguments are device memory, as an
// outlined attention op's are) is copied to the device first: the callee's
// kernels read it (a GPU run of ALiBi attention with explicit slopes was an
// illegal address). Host loads keep reading the global itself.
// CHECK-LABEL: func.func @constant_argument
// CHECK: %[[G:.*]] = memref.get_global @slopes
// CHECK-NEXT: %[[D:.*]] = gpu.alloc  () : memref<3xf64>
// CHECK-NEXT: gpu.memcpy  %[[D]], %[[G]]
// CHECK: call @callee(%[[D]])
// CHECK: memref.load %[[G]]
// CHECK: gpu.dealloc  %[[D]]
// CHECK-NEXT: return
func.func @constant_argument() -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @slopes : memref<3xf64>
  %r = call @callee(%g) : (memref<3xf64>) -> f64
  %x = memref.load %g[%c0] : memref<3xf64>
  return %r, %x : f64, f64
}

// -----

memref.global "private" constant @ones : memref<4xf32> = dense<1.0>

// A returned constant is a device buffer the caller owns: copied, not
// freed.
// CHECK-LABEL: func.func @constant_result
// CHECK: %[[G:.*]] = memref.get_global @ones
// CHECK-NEXT: %[[D:.*]] = gpu.alloc  () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy  %[[D]], %[[G]]
// CHECK-NOT: gpu.dealloc
// CHECK: return %[[D]], %[[V:.*]] :
func.func @constant_result() -> (memref<4xf32>, memref<2x2xf32>) {
  %g = memref.get_global @ones : memref<4xf32>
  %v = memref.expand_shape %g [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  return %g, %v : memref<4xf32>, memref<2x2xf32>
}

// -----

memref.global "private" constant @host_only : memref<4xf32> = dense<2.0>

// A constant only the host reads stays where it is.
// CHECK-LABEL: func.func @constant_on_host
// CHECK-NOT: gpu.alloc
// CHECK-NOT: gpu.memcpy
// CHECK: return
func.func @constant_on_host(%i: index) -> f32 {
  %g = memref.get_global @host_only : memref<4xf32>
  %x = memref.load %g[%i] : memref<4xf32>
  return %x : f32
}

// -----

memref.global "private" constant @index : memref<4xi64> = dense<[3, 2, 1, 0]>

// A constant that kernels read through a view made on the host: the view
// moves to the device copy.
// CHECK-LABEL: func.func @constant_view
// CHECK: %[[G:.*]] = memref.get_global @index
// CHECK: %[[D:.*]] = gpu.alloc  () : memref<4xi64>
// CHECK: gpu.memcpy  %[[D]], %[[G]]
// CHECK: %[[V:.*]] = memref.expand_shape %[[D]]
// CHECK: gpu.launch
// CHECK: memref.load %[[V]]
func.func @constant_view(%out: memref<2x2xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %g = memref.get_global @index : memref<4xi64>
  %v = memref.expand_shape %g [[0, 1]] output_shape [2, 2] : memref<4xi64> into memref<2x2xi64>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c2) step (%c1, %c1) {
    %x = memref.load %v[%i, %j] : memref<2x2xi64>
    memref.store %x, %out[%i, %j] : memref<2x2xi64>
    scf.reduce
  }
  return
}
