// rpe-cpu-pipeline{cache-allocations}: buffers come from and go back to
// _mlir_memref_to_llvm_alloc / _free (librpe_cpu_runtime.a's cache, which
// rpe-compile --emit=shared links); by default, and in objects, from
// malloc / free.
//
// RUN: rpe-opt %s -rpe-cpu-pipeline="cache-allocations=1" | FileCheck %s --check-prefix=CACHE
// RUN: rpe-opt %s -rpe-cpu-pipeline="cache-allocations=1" | FileCheck %s --check-prefix=NOMALLOC
// RUN: rpe-opt %s -rpe-cpu-pipeline | FileCheck %s --check-prefix=MALLOC

// CACHE-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CACHE-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CACHE-DAG: llvm.call @_mlir_memref_to_llvm_alloc
// CACHE-DAG: llvm.call @_mlir_memref_to_llvm_free
// NOMALLOC-NOT: {{@malloc|@free}}

// MALLOC-DAG: llvm.call @malloc
// MALLOC-DAG: llvm.call @free
// MALLOC-NOT: _mlir_memref_to_llvm

// A temporary between two kernels, freed before the function returns.
func.func @two_kernels(%x: tensor<512x512xf32>) -> tensor<512xf32> {
  %e = tensor.empty() : tensor<512x512xf32>
  %exp = linalg.exp ins(%x : tensor<512x512xf32>) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %t = tensor.empty() : tensor<512x512xf32>
  %tr = linalg.transpose ins(%exp : tensor<512x512xf32>) outs(%t : tensor<512x512xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<512xf32>
  %r1 = linalg.fill ins(%z : f32) outs(%r0 : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.reduce ins(%tr : tensor<512x512xf32>) outs(%r1 : tensor<512xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<512xf32>
}
