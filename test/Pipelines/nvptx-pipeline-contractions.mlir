// RUN: rpe-opt %s -rpe-nvptx-pipeline="format=isa" -mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx -o - | FileCheck %s --check-prefix=PTX

// Contractions outside the attention kernel on the GPU: DeBERTa's c2p and
// p2c projections (Q·P_kᵀ and K·P_qᵀ over 16 buckets, D = 32) come from
// rpe.disentangled_bias in the CPU's axpy order (b, h, i, d, bucket); the
// NVPTX pipeline puts the reduction over d inside (rpe-interchange-
// reductions{reductions-innermost}), so each thread owns one (b, h, i,
// bucket) element and loops over d alone. (Before, each thread owned a row
// and ran d and the 16 buckets serially, the output row re-read and
// re-written per d.) rpe-promote-accumulators carries the element in a
// register across the loop over d: one load before it, one store after.
// CHECK: gpu.func @{{.*}}(%[[Q:.*]]: memref<1x2x?x32xbf16>, %[[COUNT:.*]]: index, %[[OUT:.*]]: memref<1x2x?x16xf32>, %[[PT:.*]]: memref<2x32x16xf32>) kernel
// CHECK: %[[ID:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi ult, %[[ID]], %[[COUNT]] : index
// CHECK: %[[BUCKET:.*]] = arith.remui %[[ID]], %c16 : index
// CHECK: %[[ROWS:.*]] = arith.divui %[[ID]], %c16 : index
// CHECK: %[[ROW:.*]] = arith.remui %[[ROWS]], %{{.*}} : index
// CHECK: %[[HEAD:.*]] = arith.remui %{{.*}}, %c2 : index
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[OUT]][%c0, %[[HEAD]], %[[ROW]], %[[BUCKET]]]
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[D:.*]] = %c0 to %c32 step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: memref.load %[[Q]][%c0, %[[HEAD]], %[[ROW]], %[[D]]]
// CHECK-NEXT: memref.load %[[PT]][%[[HEAD]], %[[D]], %[[BUCKET]]]
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[OUT]][%c0, %[[HEAD]], %[[ROW]], %[[BUCKET]]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return

// The PTX of that kernel: the loop over d (unrolled by two) loads and
// multiplies; the one global store follows it.
// PTX-LABEL: .entry __rpe_kernel_1_kernel_0(
// PTX: ld.global.b32
// PTX-NOT: st.global
// PTX: $L__[[LOOP:BB[0-9_]+]]:
// PTX-NOT: st.global
// PTX: fma.rn.f32
// PTX-NOT: st.global
// PTX: @%p{{[0-9]+}} bra $L__[[LOOP]];
// PTX-NEXT: st.global.b32
// PTX: .entry
module {
  func.func @deberta_attention(%q: tensor<1x2x?x32xbf16>, %k: tensor<1x2x?x32xbf16>, %v: tensor<1x2x?x32xbf16>, %pos_q: tensor<2x16x32xbf16>, %pos_k: tensor<2x16x32xbf16>) -> tensor<1x2x?x32xbf16> {
    %empty = tensor.empty() : tensor<2x16x32xbf16>
    %factor = arith.constant 0.10206207261596577 : f32
    %pos_q_scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos_q : tensor<2x16x32xbf16>) outs(%empty : tensor<2x16x32xbf16>) {
    ^bb0(%sa: bf16, %so: bf16):
      %sx = arith.extf %sa : bf16 to f32
      %sm = arith.mulf %sx, %factor : f32
      %st = arith.truncf %sm : f32 to bf16
      linalg.yield %st : bf16
    } -> tensor<2x16x32xbf16>
    %empty_1 = tensor.empty() : tensor<2x16x32xbf16>
    %factor_1 = arith.constant 0.10206207261596577 : f32
    %pos_k_scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos_k : tensor<2x16x32xbf16>) outs(%empty_1 : tensor<2x16x32xbf16>) {
    ^bb0(%sa: bf16, %so: bf16):
      %sx = arith.extf %sa : bf16 to f32
      %sm = arith.mulf %sx, %factor_1 : f32
      %st = arith.truncf %sm : f32 to bf16
      linalg.yield %st : bf16
    } -> tensor<2x16x32xbf16>
    %bias = rpe.disentangled_bias %q, %k, %pos_q_scaled, %pos_k_scaled by log<position_buckets = 8, max_relative_positions = 16> c2p p2c : tensor<1x2x?x32xbf16>, tensor<1x2x?x32xbf16>, tensor<2x16x32xbf16>, tensor<2x16x32xbf16> -> tensor<1x2x?x?xbf16>
    %out = rpe.attention %q, %k, %v bias(%bias : tensor<1x2x?x?xbf16>) scale = 0.10206207261596577 : tensor<1x2x?x32xbf16>, tensor<1x2x?x32xbf16>, tensor<1x2x?x32xbf16> -> tensor<1x2x?x32xbf16>
    return %out : tensor<1x2x?x32xbf16>
  }
}
