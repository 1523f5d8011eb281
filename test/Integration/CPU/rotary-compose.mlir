// Two rotations composed by -canonicalize (positions summed with arith.addi
// on tensors, which the pipeline turns into linalg) run and print the same
// numbers as one rotation by the summed positions.
// RUN: rpe-opt %s -canonicalize -rpe-cpu-pipeline | %mlir_runner | FileCheck %s
// RUN: rpe-opt %s -canonicalize -rpe-cpu-pipeline="gpu-emulation=1" | %mlir_runner | FileCheck %s

// CHECK: data ={{ *$}}
// CHECK-NEXT: [[ROW0:.+]]
// CHECK-NEXT: [[ROW1:.+]]
// CHECK-NEXT: [[ROW2:.+]]
// CHECK: data ={{ *$}}
// CHECK-NEXT: [[ROW0]]
// CHECK-NEXT: [[ROW1]]
// CHECK-NEXT: [[ROW2]]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %x = arith.constant dense<[[[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 1.0], [-2.0, 0.125, 1.0, -1.5]]]> : tensor<1x3x4xf32>
  %p1 = arith.constant dense<[1, 20, 300]> : tensor<3xi64>
  %p2 = arith.constant dense<[7, 5, 11]> : tensor<3xi64>
  %sum = arith.constant dense<[8, 25, 311]> : tensor<3xi64>
  %a = rpe.rotary %x, %p1 : tensor<1x3x4xf32>, tensor<3xi64>
  %b = rpe.rotary %a, %p2 : tensor<1x3x4xf32>, tensor<3xi64>
  %c = rpe.rotary %x, %sum : tensor<1x3x4xf32>, tensor<3xi64>
  %bm = bufferization.to_buffer %b : tensor<1x3x4xf32> to memref<1x3x4xf32>
  %bu = memref.cast %bm : memref<1x3x4xf32> to memref<*xf32>
  call @printMemrefF32(%bu) : (memref<*xf32>) -> ()
  %cm = bufferization.to_buffer %c : tensor<1x3x4xf32> to memref<1x3x4xf32>
  %cu = memref.cast %cm : memref<1x3x4xf32> to memref<*xf32>
  call @printMemrefF32(%cu) : (memref<*xf32>) -> ()
  return
}
