// An exp in elementwise code (SiLU, as torch-mlir writes it) after
// rpe-cpu-pipeline: rpe-approximate-exp's polynomial, no libm exp call, so
// that LLVM can vectorize the loop; with FMA hardware in FMAs, without it
// (generic) in multiplies and adds. approximate-exp=0 keeps the exp
// intrinsic (a libm expf call per element).
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell' | FileCheck %s
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=generic' | FileCheck %s --check-prefix=GENERIC
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell approximate-exp=0' | FileCheck %s --check-prefix=LIBM
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell num-threads=2' -mlir-print-ir-after=rpe-approximate-exp -o /dev/null 2>&1 | FileCheck %s --check-prefix=TENSOR

// CHECK-LABEL: llvm.func @silu
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.intr.floor
// CHECK: llvm.intr.fma
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.return
// GENERIC-LABEL: llvm.func @silu
// GENERIC-NOT: llvm.intr.exp
// GENERIC-NOT: llvm.intr.fma
// GENERIC: llvm.return
// LIBM-LABEL: llvm.func @silu
// LIBM: llvm.intr.exp(%{{.*}}) : (f32) -> f32
// The pass runs on the linalg ops on tensors, before they are split among
// the threads.
// TENSOR: linalg.generic
// TENSOR-NOT: math.exp
// TENSOR: math.floor
// TENSOR: linalg.yield
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
