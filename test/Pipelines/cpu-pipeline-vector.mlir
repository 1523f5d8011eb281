// The attention kernel (outlined into @__rpe_attention) after
// rpe-cpu-pipeline is vector code of the target's
// width: FMAs on vector<16xf32> for AVX-512, vector<8xf32> for AVX2, and no
// call of a scalar or vector exp (the softmax exp is a polynomial in FMAs);
// without FMA (target-cpu=generic: 4 lanes) the kernel multiplies and adds.
// RUN: rpe-opt %s -rpe-cpu-pipeline="target-cpu=skylake-avx512" | FileCheck %s --check-prefixes=CHECK,W16
// RUN: rpe-opt %s -rpe-cpu-pipeline="target-cpu=haswell" | FileCheck %s --check-prefixes=CHECK,W8
// RUN: rpe-opt %s -rpe-cpu-pipeline="target-cpu=generic" | FileCheck %s --check-prefix=NOFMA
// The decode kernel's row bound is a pipeline option, checked when the
// pipeline string is parsed.
// RUN: not rpe-opt %s -rpe-cpu-pipeline="decode-rows=17" 2>&1 | FileCheck %s --check-prefix=BADDEC --implicit-check-not="current operation"
// BADDEC: error: rpe-cpu-pipeline: rpe-vectorize-attention: decode-rows must be in [0, 16], got 17
// From machine code: rpe-compile picks the width from --mcpu.
// RUN: rpe-compile %s --emit=asm --mcpu=skylake-avx512 -O3 -o - | FileCheck %s --check-prefix=AVX512
// RUN: rpe-compile %s --emit=asm --mcpu=haswell -O3 -o - | FileCheck %s --check-prefix=AVX2
// RUN: rpe-compile %s --emit=asm --mcpu=generic -O3 -o - | FileCheck %s --check-prefix=SSE
// The kernel's loops reach LLVM IR with unrolling disabled (they are
// register-blocked already; rpe-apply-loop-annotations). (The loops that
// build the diagonal tables before them carry no annotation: LLVM may
// vectorize them.)
// RUN: rpe-compile %s --emit=llvm --mcpu=skylake-avx512 -O3 -o - | FileCheck %s --check-prefix=LOOPS

// CHECK-LABEL: llvm.func internal @__rpe_attention(
// W16: llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// W8: llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: @expf

// NOFMA-LABEL: llvm.func internal @__rpe_attention(
// NOFMA-NOT: llvm.intr.fma
// NOFMA: llvm.fmul %{{.*}}, %{{.*}} : vector<4xf32>
// NOFMA-NOT: llvm.intr.fma

// LOOPS-LABEL: define internal {{.*}} @__rpe_attention(
// LOOPS: br i1 %{{.*}}, label %{{.*}}, label %{{.*}}, !llvm.loop !{{[0-9]+}}
// LOOPS: ![[LOOP:[0-9]+]] = distinct !{![[LOOP]], ![[NOUNROLL:[0-9]+]]}
// LOOPS: ![[NOUNROLL]] = !{!"llvm.loop.unroll.disable"}

// AVX512-LABEL: __rpe_attention:
// AVX512: vfmadd{{[0-9]+}}ps {{.*}}%zmm
// AVX512-NOT: expf
// AVX2-LABEL: __rpe_attention:
// AVX2-NOT: zmm
// AVX2: vfmadd{{[0-9]+}}ps {{.*}}%ymm
// AVX2-NOT: zmm
// AVX2-NOT: expf
// SSE-LABEL: __rpe_attention:
// SSE-NOT: vfmadd
// SSE: mulps
// SSE-NOT: expf

func.func @t5_attention(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                        %v: tensor<1x8x?x64xf32>, %table: tensor<32x8xf32>)
    -> tensor<1x8x?x64xf32> {
  %c2 = arith.constant 2 : index
  %lq = tensor.dim %q, %c2 : tensor<1x8x?x64xf32>
  %lk = tensor.dim %k, %c2 : tensor<1x8x?x64xf32>
  %bias = rpe.relative_bias %table sizes(%lq, %lk)
      by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
      : tensor<32x8xf32> -> tensor<8x?x?xf32>
  %o = rpe.attention %q, %k, %v bias(%bias : tensor<8x?x?xf32>) causal scale = 1.0
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
      -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
