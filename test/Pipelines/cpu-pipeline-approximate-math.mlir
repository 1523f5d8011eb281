// exp and tanh in elementwise code (SiLU and GELU's tanh form, as
// torch-mlir writes them) after rpe-cpu-pipeline: rpe-approximate-math's
// polynomials, no libm call, so that LLVM can vectorize the loops; with FMA
// hardware in FMAs, without it (generic) in multiplies and adds.
// approximate-math=0 keeps the intrinsics (a libm call per element).
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell' | FileCheck %s --implicit-check-not=llvm.intr.exp --implicit-check-not=llvm.intr.tanh
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=generic' | FileCheck %s --check-prefix=GENERIC --implicit-check-not=llvm.intr.exp --implicit-check-not=llvm.intr.tanh --implicit-check-not=llvm.intr.fma
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell approximate-math=0' | FileCheck %s --check-prefix=LIBM
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell num-threads=2' -mlir-print-ir-after=rpe-approximate-math -o /dev/null 2>&1 | FileCheck %s --check-prefix=TENSOR

// The two bodies, outlined (rpe-outline-kernels): exp's polynomial (its
// floor, its FMAs), tanh's (FMAs and a division).
// CHECK: llvm.func internal @__rpe_kernel
// CHECK: llvm.intr.floor
// CHECK: llvm.intr.fma
// CHECK: llvm.func internal @__rpe_kernel
// CHECK: llvm.intr.fma
// CHECK: llvm.fdiv
// GENERIC: llvm.func internal @__rpe_kernel
// GENERIC: llvm.intr.floor
// GENERIC: llvm.func internal @__rpe_kernel
// GENERIC: llvm.fdiv
// LIBM-DAG: llvm.intr.exp(%{{.*}}) : (f32) -> f32
// LIBM-DAG: llvm.intr.tanh(%{{.*}}) : (f32) -> f32
// The pass runs on the linalg ops on tensors (before they are split among
// the threads).
// TENSOR: IR Dump After RPEApproximateMathPass
// TENSOR-NOT: math.exp
// TENSOR-NOT: math.tanh
// TENSOR: linalg.generic
// TENSOR: math.floor
// TENSOR: linalg.generic
// TENSOR-NOT: math.exp
// TENSOR-NOT: math.tanh

func.func @silu(%x: tensor<?x512xf32>) -> tensor<?x512xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x512xf32>
  %e = tensor.empty(%n) : tensor<?x512xf32>
  %one = arith.constant 1.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x512xf32>) outs(%e : tensor<?x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %one, %1 : f32
    %3 = arith.divf %in, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?x512xf32>
  return %r : tensor<?x512xf32>
}

func.func @gelu_tanh(%x: tensor<?x512xf32>) -> tensor<?x512xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x512xf32>
  %e = tensor.empty(%n) : tensor<?x512xf32>
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.797884583 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x512xf32>) outs(%e : tensor<?x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %c : f32
    %1 = math.tanh %0 : f32
    %2 = arith.addf %one, %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.mulf %3, %half : f32
    linalg.yield %4 : f32
  } -> tensor<?x512xf32>
  return %r : tensor<?x512xf32>
}
