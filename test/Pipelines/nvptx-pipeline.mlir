// REQUIRES: cuda-toolkit
// RUN: rpe-opt %s -rpe-nvptx-pipeline="format=isa" | FileCheck %s
// RUN: rpe-opt %s -rpe-nvptx-pipeline="format=isa" | FileCheck %s --check-prefix=BIN
// RUN: rpe-opt %s -rpe-nvptx-pipeline="format=isa" | FileCheck %s --check-prefix=NOLXL
// RUN: rpe-compile %s --target=nvptx --chip=sm_80 --emit=ptx -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx -o %t.sm90.ptx
// RUN: %ptxas -arch=sm_90 -v %t.sm90.ptx -o %t.sm90.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --input-file=%t.sm90.ptx --check-prefix=PTX90

// T5-biased causal attention at L = 4096 through rpe-nvptx-pipeline: one
// device module with the attention kernel and the kernel that tabulates the
// T5 terms per (head, diagonal); host code that allocates device memory and
// launches them; nothing of size Lq×Lk anywhere.
// BIN: gpu.binary @rpe_kernels
// BIN-SAME: #nvvm.target<O = 3, chip = "sm_80", features = "+ptx80", link = ["{{.*}}/nvvm/libdevice/libdevice.10.bc"]>
// BIN-SAME: .version 8.0
// BIN-SAME: .entry __rpe_attention_kernel
// CHECK: llvm.func @t5_causal
// CHECK: llvm.call @__rpe_attention
// CHECK: llvm.func internal @__rpe_attention
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @rpe_kernels::@__rpe_attention_kernel blocks
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func <%[[S:.*]] : !llvm.ptr> @rpe_kernels::@__rpe_attention_kernel_0 blocks
// CHECK: llvm.call @mgpuMemFree
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S]])
// NOLXL-NOT: 4096x4096
// NOLXL-NOT: 16777216

// Both kernels assemble without spilling (ptxas rejects more than 48 KiB
// of static shared memory).
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// PTXAS-COUNT-2: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// PTX90: .target sm_90
// PTX90: .entry __rpe_attention_kernel_0(
// PTX90-DAG: bar.sync
// PTX90-DAG: ex2.approx.ftz.f32
// PTX90-DAG: fma.rn.f32
func.func @t5_causal(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>, %table: tensor<32x8xf32>) -> tensor<1x8x4096x64xf32> {
  %bias = rpe.relative_bias %table by t5<num_buckets = 32, max_distance = 128, bidirectional = false> : tensor<32x8xf32> -> tensor<8x4096x4096xf32>
  %0 = rpe.attention %q, %k, %v bias(%bias : tensor<8x4096x4096xf32>) causal scale = 1.0 : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
