// DeBERTa attention: the p2c term reads key j's row of the per-head table
// at the buckets of a row vector, which lie within one vector's width of
// each other. rpe-cpu-pipeline sets rpe-vectorize-attention's permute-reads
// for x86 targets with a variable permute of the vector width (AVX-512F at
// 16 lanes, AVX2 at 8), and LLVM turns the lane permute into one vpermd /
// vpermps; a target without one (generic x86-64: 4 lanes) keeps gathers.
// RUN: rpe-opt %s -rpe-cpu-pipeline="target-cpu=skylake-avx512" | FileCheck %s --check-prefix=IR
// RUN: rpe-opt %s -rpe-cpu-pipeline="target-cpu=generic" | FileCheck %s --check-prefix=NOPERM
// RUN: rpe-compile %s --emit=asm --mcpu=skylake-avx512 -O3 -o - | FileCheck %s --check-prefix=AVX512
// RUN: rpe-compile %s --emit=asm --mcpu=haswell -O3 -o - | FileCheck %s --check-prefix=AVX2
// RUN: rpe-compile %s --emit=asm --mcpu=generic -O3 -o - | FileCheck %s --check-prefix=SSE

// IR-LABEL: llvm.func internal @__rpe_attention_heads(
// IR: llvm.intr.vector.reduce.or
// IR-COUNT-16: llvm.extractelement %{{.*}}[%{{.*}} : i64] : vector<16xf32>
// NOPERM-LABEL: llvm.func internal @__rpe_attention_heads(
// NOPERM-NOT: llvm.intr.vector.reduce.or
// NOPERM-NOT: llvm.extractelement %{{.*}}[%{{.*}} : i64] : vector<4xf32>

// AVX512-LABEL: __rpe_attention_heads:
// AVX512: vperm{{d|ps}} {{.*}}%zmm
// AVX2-LABEL: __rpe_attention_heads:
// AVX2: vperm{{d|ps}} {{.*}}%ymm
// SSE-LABEL: __rpe_attention_heads:
// SSE-NOT: vperm
// SSE: .size __rpe_attention_heads,

func.func @attn(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                %v: tensor<1x8x?x64xf32>, %pos_q: tensor<8x512x64xf32>,
                %pos_k: tensor<8x512x64xf32>) -> tensor<1x8x?x64xf32> {
  %bias = rpe.disentangled_bias %q, %k, %pos_q, %pos_k
      by log<position_buckets = 256, max_relative_positions = 512> c2p p2c
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<8x512x64xf32>,
        tensor<8x512x64xf32> -> tensor<1x8x?x?xf32>
  %out = rpe.attention %q, %k, %v bias(%bias : tensor<1x8x?x?xf32>)
      scale = 0.125
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
      -> tensor<1x8x?x64xf32>
  return %out : tensor<1x8x?x64xf32>
}
