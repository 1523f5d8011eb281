// RUN: rpe-opt %s -rpe-cpu-pipeline | FileCheck %s
// RUN: rpe-opt %s -rpe-cpu-pipeline="gpu-emulation=1" | FileCheck %s

// Complex arithmetic reaches the LLVM dialect on its parts (the values:
// python/tests/test_complex.py); memrefs of complex<f32> are {f32, f32}
// structs.
// CHECK-LABEL: llvm.func @cmul
// CHECK-NOT: complex.
// CHECK-NOT: unrealized_conversion_cast
// CHECK: llvm.load {{.*}} -> !llvm.struct<(f32, f32)>
// CHECK: llvm.fmul
// CHECK: llvm.store {{.*}} : !llvm.struct<(f32, f32)>, !llvm.ptr
func.func @cmul(%a: tensor<8xcomplex<f32>>, %b: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  %e = tensor.empty() : tensor<8xcomplex<f32>>
  %r = linalg.mul ins(%a, %b : tensor<8xcomplex<f32>>, tensor<8xcomplex<f32>>) outs(%e : tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  return %r : tensor<8xcomplex<f32>>
}
