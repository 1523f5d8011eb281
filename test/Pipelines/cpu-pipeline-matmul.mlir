// A matmul (as a model's projection writes it: a fill, then linalg.matmul)
// after rpe-cpu-pipeline is the register-blocked kernel of
// rpe-vectorize-contractions at the target's width: with AVX-512, 6 rows ×
// 4 vectors of 16 lanes (24 FMAs per k); with AVX2, 6 × 2 of 8 lanes (12);
// masked loads for the last columns. Without FMA (generic: 4 lanes), a
// multiply and an add.
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=skylake-avx512' | FileCheck %s --check-prefix=AVX512
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell' | FileCheck %s --check-prefix=AVX2
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=generic' | FileCheck %s --check-prefix=GENERIC
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell matmul-tile-m=3 matmul-tile-n=1' | FileCheck %s --check-prefix=SMALL
// B's cache blocks are copied when C has matmul-pack-min-rows rows (64 by
// default; here per thread, decided per call: the rows are dynamic), and
// never with 0.
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell num-threads=2' -mlir-print-ir-after=rpe-vectorize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACK
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell matmul-pack-min-rows=100' -mlir-print-ir-after=rpe-vectorize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACK100
// RUN: rpe-opt %s -rpe-cpu-pipeline='target-cpu=haswell matmul-pack-min-rows=0' -mlir-print-ir-after=rpe-vectorize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACK0
// PACK-LABEL: func.func private @__rpe_kernel
// PACK-DAG: %[[C64:.*]] = arith.constant 64 : index
// PACK: scf.forall
// PACK: arith.cmpi uge, %{{.*}}, %[[C64]] : index
// PACK: %[[BUF:.*]] = memref.alloc(
// PACK: memref.dealloc %[[BUF]]
// PACK100: %[[C100:.*]] = arith.constant 100 : index
// PACK100: arith.cmpi uge, %{{.*}}, %[[C100]] : index
// PACK0-LABEL: func.func @proj
// PACK0-NOT: arith.cmpi uge
// PACK0: vector.fma

// AVX512-LABEL: llvm.func @proj
// AVX512-COUNT-24: llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// AVX512: llvm.intr.masked.load
// AVX2-LABEL: llvm.func @proj
// AVX2-COUNT-12: llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// AVX2-NOT: vector<16xf32>
// GENERIC-LABEL: llvm.func @proj
// GENERIC-NOT: llvm.intr.fmuladd
// GENERIC: llvm.fmul {{.*}} : vector<4xf32>
// GENERIC: llvm.fadd {{.*}} : vector<4xf32>
// SMALL-LABEL: llvm.func @proj
// SMALL-COUNT-3: llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// SMALL-NOT: llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// SMALL: llvm.intr.masked.load
func.func @proj(%x: tensor<?x512xf32>, %w: tensor<512x384xf32>) -> tensor<?x384xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x512xf32>
  %e = tensor.empty(%m) : tensor<?x384xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x384xf32>) -> tensor<?x384xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x512xf32>, tensor<512x384xf32>) outs(%f : tensor<?x384xf32>) -> tensor<?x384xf32>
  return %r : tensor<?x384xf32>
}
