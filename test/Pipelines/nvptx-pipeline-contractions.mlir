// RUN: rpe-opt %s -rpe-nvptx-pipeline="format=isa thread-tile-rows=1 thread-tile-columns=1" -mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s
// RUN: rpe-opt %s -rpe-nvptx-pipeline="format=isa" -mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx -o - | FileCheck %s --check-prefix=PTX
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx -o - | FileCheck %s --check-prefix=PTXFMA
// RUN: rpe-compile %s --target=nvptx --chip=sm_90 --emit=ptx --gpu-kernel-options="thread-tile-rows=1 thread-tile-columns=1" -o - | FileCheck %s --check-prefix=PTXONE

// Contractions outside the attention kernel on the GPU: DeBERTa's c2p and
// p2c projections (Q·P_kᵀ and K·P_qᵀ over 16 buckets, D = 32) come from
// rpe.disentangled_bias in the CPU's axpy order (b, h, i, d, bucket); the
// NVPTX pipeline puts the reduction over d inside (rpe-interchange-
// reductions{reductions-innermost}), so each thread owns one (b, h, i,
// bucket) element and loops over d alone. (Before, each thread owned a row
// and ran d and the 16 buckets serially, the output row re-read and
// re-written per d.) rpe-promote-accumulators carries the element in a
// register across the loop over d: one load before it, one store after.
// With thread tiles of 1 × 1, that is the kernel:
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

// By default (rpe-register-tile-reductions, 4 × 4) each thread computes
// 4 rows × 4 buckets (buckets 4 apart: a warp's threads read consecutive
// buckets): one loop over d carries the 16 sums; the 12 outputs past the
// block's first row and column store under a bounds check.
// TILE: gpu.func @{{.*}}(%[[Q:.*]]: memref<1x2x?x32xbf16>, {{.*}}) kernel
// TILE-COUNT-16: memref.load
// TILE: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// TILE-NOT: memref.store
// TILE: scf.yield
// TILE-COUNT-4: memref.store
// TILE: scf.if
// TILE-NEXT: memref.store
// TILE: gpu.return

// In its PTX the 16 sums are loaded before the loop over d; in the loop, 4 loads
// of q (bf16) and 4 of the table per 16 FMAs (was 2 loads per FMA), no
// store; the stores after it.
// PTX-LABEL: .entry __rpe_kernel_0_kernel_0(
// PTX-COUNT-16: ld.global.b32
// PTX-NOT: st.global
// PTX: $L__[[LOOP:BB[0-9_]+]]:
// PTX-DAG: ld.global.b16
// PTX-DAG: ld.global.b16
// PTX-DAG: ld.global.b16
// PTX-DAG: ld.global.b16
// PTX-DAG: ld.global.b32
// PTX-DAG: ld.global.b32
// PTX-DAG: ld.global.b32
// PTX-DAG: ld.global.b32
// PTX-NOT: {{ld|st}}.global
// PTX: @%p{{[0-9]+}} bra $L__[[LOOP]];
// PTX-NEXT: setp
// PTX-COUNT-4: st.global.b32
// PTX-NEXT: @%p{{[0-9]+}} bra
// PTX: .entry
// rpe-compile's GPU kernel options reach the pass: with 1 × 1 tiles, one
// sum, stored once after the loop.
// PTXONE-LABEL: .entry __rpe_kernel_0_kernel_0(
// PTXONE: ld.global.b32
// PTXONE-NOT: ld.global.b32
// PTXONE: $L__[[LOOP:BB[0-9_]+]]:
// PTXONE-NOT: st.global
// PTXONE: @%p{{[0-9]+}} bra $L__[[LOOP]];
// PTXONE-NEXT: st.global.b32
// PTXONE-NEXT: $L__
// PTXFMA-LABEL: .entry __rpe_kernel_0_kernel_0(
// PTXFMA-COUNT-16: ld.global.b32
// PTXFMA: $L__[[LOOP:BB[0-9_]+]]:
// PTXFMA-COUNT-16: fma.rn.f32
// PTXFMA-NOT: fma.rn.f32
// PTXFMA: @%p{{[0-9]+}} bra $L__[[LOOP]];
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
