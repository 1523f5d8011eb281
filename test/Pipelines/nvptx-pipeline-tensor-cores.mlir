// REQUIRES: cuda-toolkit
// RUN: rpe-opt %s -rpe-nvptx-pipeline="format=isa" | FileCheck %s --check-prefix=NOLXL
// RUN: rpe-compile %s --target=nvptx --chip=sm_80 --emit=ptx -o %t.sm80.ptx
// RUN: FileCheck %s --input-file=%t.sm80.ptx --check-prefix=PTX --implicit-check-not=setp.nan
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx -o %t.sm90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.sm90.ptx -o %t.sm90.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rpe-compile %s --target=nvptx --chip=sm_80 --emit=ptx --gpu-kernel-options="mma-registers=1 mma-tile-k=64" -o %t.reg80.ptx
// RUN: FileCheck %s --input-file=%t.reg80.ptx --check-prefix=REG --implicit-check-not=.local --implicit-check-not=setp.nan --implicit-check-not=div.u64 --implicit-check-not=rem.u64
// RUN: %ptxas -arch=sm_80 -v %t.reg80.ptx -o %t.reg80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx --gpu-kernel-options="mma-registers=1 mma-tile-k=64" -o %t.reg90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.reg90.ptx -o %t.reg90.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// 8 warps of one 16-row tile (one staged row per thread: this crashed
// upstream's expand-strided-metadata), and 8 warps asked for 1024 rows (a
// warp keeps two 16-row tiles at most: four spilled 940 bytes).
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx --gpu-kernel-options="mma-registers=1 mma-block-rows=128" -o %t.reg8w.ptx
// RUN: %ptxas -arch=sm_90 -v %t.reg8w.ptx -o %t.reg8w.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx --gpu-kernel-options="mma-registers=1 mma-block-rows=1024" -o %t.reg1024.ptx
// RUN: %ptxas -arch=sm_90 -v %t.reg1024.ptx -o %t.reg1024.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rpe-compile %s --target=nvptx --chip=sm_80 --emit=ptx -o %t.simt.ptx --tensor-cores=false
// RUN: FileCheck %s --input-file=%t.simt.ptx --check-prefix=SIMT

// f16 T5-biased causal GQA attention at L = 4096, D = 64, and bf16
// attention with D = 128 (32-row blocks), through rpe-nvptx-pipeline: the
// attention kernels' q·kᵀ and p·v run on tensor cores (ldmatrix + mma.sync
// m16n8k16, f16 / bf16 operands, f32 accumulation).
// NOLXL-NOT: 4096x4096
// NOLXL-NOT: 16777216
// PTX: .entry __rpe_attention_kernel_0(
// The tiles are 16-byte aligned (ldmatrix rows; rpe-gpu-align-workgroup).
// PTX-COUNT-7: .shared .align 16 .b8 __wg___rpe_attention_kernel_0_
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: bar.sync
// PTX-DAG: ex2.approx.ftz.f32
// PTX-DAG: shfl.sync.bfly.b32
// The row maxima: one max.NaN.f32 each (arith.maximumf not expanded into a
// compare, a NaN test and selects).
// PTX-DAG: max.NaN.f32
// PTX: .entry __rpe_attention_0_kernel(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// The three kernels (two attentions, the T5 diagonal table) assemble
// without spilling, the attention kernels within the 48 KiB of static
// shared memory.
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// PTXAS-COUNT-3: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// The register-resident kernel (mma-registers): fragments in registers (no
// local memory), the K and V tiles copied 16 bytes at a time (cp.async,
// double-buffered, when aligned) and read by ldmatrix (x4: two fragments
// per load; V transposed), row statistics over the quads by butterfly
// shuffles; D = 128 gets 32-key tiles (64 asked): still no spills.
// REG: .entry __rpe_attention_kernel_0(
// REG-COUNT-2: .shared .align 16 .b8 __wg___rpe_attention_kernel_0_
// REG-DAG: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16;
// REG-DAG: cp.async.commit_group
// REG-DAG: cp.async.wait_group 1;
// REG-DAG: st.shared.v4.b32
// REG-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// REG-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// REG-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// REG-DAG: shfl.sync.bfly.b32
// Softmax: max.NaN.f32 per score, exp as one FMA and ex2 (denormals
// flushed). The tile widths and trip counts are constants in the kernel
// (not kernel parameters): no 64-bit division anywhere.
// REG-DAG: max.NaN.f32
// REG-DAG: ex2.approx.ftz.f32
// REG: .entry __rpe_attention_0_kernel(
// REG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SIMT-NOT: mma.sync
// SIMT: fma.rn.f32
func.func @t5_causal_gqa_f16(%q: tensor<1x8x4096x64xf16>, %k: tensor<1x2x4096x64xf16>, %v: tensor<1x2x4096x64xf16>, %table: tensor<32x8xf16>) -> tensor<1x8x4096x64xf16> {
  %bias = rpe.relative_bias %table by t5<num_buckets = 32, max_distance = 128, bidirectional = false> : tensor<32x8xf16> -> tensor<8x4096x4096xf16>
  %0 = rpe.attention %q, %k, %v bias(%bias : tensor<8x4096x4096xf16>) causal : tensor<1x8x4096x64xf16>, tensor<1x2x4096x64xf16>, tensor<1x2x4096x64xf16> -> tensor<1x8x4096x64xf16>
  return %0 : tensor<1x8x4096x64xf16>
}

func.func @wide_bf16(%q: tensor<2x16x?x128xbf16>, %k: tensor<2x16x?x128xbf16>, %v: tensor<2x16x?x128xbf16>) -> tensor<2x16x?x128xbf16> {
  %0 = rpe.attention %q, %k, %v causal : tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  return %0 : tensor<2x16x?x128xbf16>
}
