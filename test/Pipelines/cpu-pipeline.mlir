// rpe-cpu-pipeline lowers rpe all the way to the LLVM dialect, translatable
// to LLVM IR, with C-interface wrappers for public functions.
// RUN: rpe-opt %s -rpe-cpu-pipeline | FileCheck %s
// RUN: rpe-opt %s -rpe-cpu-pipeline="emit-c-interface=false" | FileCheck %s --check-prefix=NOCIFACE
// RUN: rpe-opt %s -rpe-cpu-pipeline | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: not rpe-opt %s -rpe-cpu-pipeline="no-such-option=1" 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: rpe-opt %s -rpe-cpu-pipeline="shape-checks=0" | FileCheck %s --check-prefix=NOCHECKS

// Only the LLVM dialect is left.
// CHECK-NOT: rpe.
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-NOT: cf.
// The attention is a call of its outlined kernel (rpe-outline-kernels).
// CHECK-LABEL: llvm.func @t5_attention(
// CHECK: llvm.call @__rpe_attention(
// CHECK-LABEL: llvm.func @_mlir_ciface_t5_attention(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.call @t5_attention(
// The size check of the entry point (rpe-insert-shape-checks), with its
// wrapper; the private helper gets neither.
// CHECK-LABEL: llvm.func @t5_attention_check(
// CHECK-LABEL: llvm.func @_mlir_ciface_t5_attention_check(
// CHECK-NOT: @_mlir_ciface_helper
// CHECK-NOT: @helper_check
// The kernel: private and internal (rpe-internalize-functions), never
// inlined, no C interface.
// CHECK-LABEL: llvm.func internal @__rpe_attention(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-SAME: sym_visibility = "private"
// CHECK: llvm.call @malloc
// T5's buckets are compares (no logarithm); the kernel's exp is a
// polynomial (2^n from the shifted sum's bits).
// CHECK-NOT: llvm.intr.log
// CHECK: llvm.icmp "sge" %{{.*}}, %{{.*}} : i64
// CHECK-NOT: llvm.intr.log
// CHECK: llvm.shl %{{.*}} : vector<{{[0-9]+}}xi32>
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: @_mlir_ciface___rpe_attention

// NOCHECKS-NOT: _check

// NOCIFACE-NOT: _mlir_ciface

// LLVMIR: define {{.*}}@t5_attention(
// LLVMIR: define void @_mlir_ciface_t5_attention(ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}})

// BADOPT: no-such-option

func.func @t5_attention(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                        %v: tensor<1x2x?x8xf32>, %table: tensor<32x2xf32>)
    -> tensor<1x2x?x8xf32> {
  %c2 = arith.constant 2 : index
  %lq = tensor.dim %q, %c2 : tensor<1x2x?x8xf32>
  %lk = tensor.dim %k, %c2 : tensor<1x2x?x8xf32>
  %bias = rpe.relative_bias %table sizes(%lq, %lk) by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x2xf32> -> tensor<2x?x?xf32>
  %o = rpe.attention %q, %k, %v bias(%bias : tensor<2x?x?xf32>) scale = 1.0 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %r = func.call @helper(%o) : (tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

func.func private @helper(%x: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  return %x : tensor<1x2x?x8xf32>
}
