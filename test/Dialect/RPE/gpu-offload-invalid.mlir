// RUN: rpe-opt %s -rpe-gpu-offload -verify-diagnostics -split-input-file

func.func @reduction(%a: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{rpe-gpu-offload: parallel loops with reductions are not supported on the GPU}}
  %r = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}

// -----

func.func @host_stack(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %buf = memref.alloca() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    // expected-error @below {{rpe-gpu-offload: a GPU kernel would read host memory}}
    %x = memref.load %buf[%i] : memref<8xf32>
    memref.store %x, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
