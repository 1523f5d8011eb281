// At L = 4096 the default (fused) pipeline never creates anything Lq×Lk: no
// tensor or buffer with two 4096 dimensions after fusion and tiling or after
// bufferization, and no allocation of 4096² elements in the final LLVM IR.
// The per-head Toeplitz diagonal is H × (Lq + Lk - 1 + 64) = 8 × 8255 (64:
// the vector kernel's query tile, read past the last row without a mask);
// the kernel's scratch is 64×64 (Qᵀ, Oᵀ, Sᵀ tiles).
// The reference pipeline on the same input does materialize the bias (the
// REF lines), so the checks can fail.
//
// RUN: rpe-opt %s -rpe-cpu-pipeline -mlir-print-ir-after=convert-rpe-to-linalg -mlir-print-ir-after=one-shot-bufferize -o %t.fused.mlir 2> %t.fused.ir
// RUN: FileCheck %s --check-prefix=IR < %t.fused.ir
// RUN: FileCheck %s --check-prefix=LLVM < %t.fused.mlir
// RUN: rpe-opt %s -rpe-cpu-pipeline="reference=1" -mlir-print-ir-after=convert-rpe-to-linalg -o %t.ref.mlir 2> %t.ref.ir
// RUN: FileCheck %s --check-prefix=REF < %t.ref.ir
// RUN: FileCheck %s --check-prefix=REFLLVM < %t.ref.mlir

// IR: IR Dump After ConvertRPEToLinalgPass
// IR-NOT: 4096x4096
// IR: scf.forall
// IR-NOT: 4096x4096
// IR: IR Dump After OneShotBufferizePass
// IR-NOT: 4096x4096
// IR: memref<8x8255xf32>
// IR-NOT: 4096x4096

// 4096² = 16777216 elements, 8·4096² = 134217728, in bytes ×4.
// LLVM: llvm.func @t5_attention_4096
// LLVM-NOT: {{16777216|67108864|134217728|536870912}}
// LLVM: llvm.func @_mlir_ciface_t5_attention_4096

// REF: IR Dump After ConvertRPEToLinalgPass
// REF: tensor<8x4096x4096xf32>
// REFLLVM: {{16777216|134217728}}

func.func @t5_attention_4096(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>,
                             %v: tensor<1x8x4096x64xf32>, %table: tensor<32x8xf32>)
    -> tensor<1x8x4096x64xf32> {
  %bias = rpe.relative_bias %table by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x8xf32> -> tensor<8x4096x4096xf32>
  %o = rpe.attention %q, %k, %v bias(%bias : tensor<8x4096x4096xf32>) causal scale = 1.0 : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}
