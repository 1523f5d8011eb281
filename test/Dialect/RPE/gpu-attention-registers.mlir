// RUN: rpe-opt %s -rpe-gpu-attention="mma-registers=1 mma-threads=128" -canonicalize -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-gpu-attention="mma-registers=1 mma-threads=1" -canonicalize -split-input-file | FileCheck %s --check-prefix=EMU
// RUN: rpe-opt %s -rpe-gpu-attention="mma-registers=1" -split-input-file | FileCheck %s --check-prefix=NOLXL
// RUN: rpe-opt %s -rpe-gpu-attention="mma-registers=1 mma-block-rows=128 mma-threads=128" -canonicalize -split-input-file | FileCheck %s --check-prefix=ROWS
// RUN: rpe-opt %s -rpe-gpu-attention="mma-registers=1 mma-threads=128 mma-stage-views=0" -canonicalize -split-input-file | FileCheck %s --check-prefix=NOVIEWS
// RUN: rpe-opt %s -rpe-gpu-attention="mma-registers=1 mma-threads=128 mma-lazy-rescale=1" -canonicalize -split-input-file | FileCheck %s --check-prefix=LAZY
// RUN: rpe-opt %s -rpe-gpu-attention="mma-registers=1 mma-block-rows=1024 mma-threads=256" -canonicalize -split-input-file | FileCheck %s --check-prefix=CAP

// f16 T5-biased causal GQA attention at L = 4096 as the register-resident
// tensor-core kernel: 4 warps of 16 rows (64-row blocks, 128 threads); the
// only workgroup memory is two K and two V tiles (double buffering, rows
// padded by 8 elements); the key loop carries O (16 rows × 64 columns over
// a warp: 32 f32 per lane), the row maxima and the sums (2 each) as SSA
// values.
// NOLXL-NOT: 4096x4096
// CHECK-LABEL: func.func @t5_causal_gqa_f16
// CHECK: %[[KB:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<1x2x4096x64xf16> to memref<1x2x4096x64xf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %[[VB:.*]] = bufferization.to_buffer %{{.*}} read_only
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c8, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[KS:.*]] : memref<2x32x72xf16, #gpu.address_space<workgroup>>, %[[VS:.*]] : memref<2x32x72xf16, #gpu.address_space<workgroup>>) {
// CHECK-NOT: private(
// CHECK: memref.extract_strided_metadata %[[KB]]
// CHECK: memref.extract_aligned_pointer_as_index %[[KB]]
// CHECK: memref.extract_strided_metadata %[[VB]]
// CHECK: memref.extract_aligned_pointer_as_index %[[VB]]
// CHECK: arith.andi {{.*}} : i1
// Q's fragments: read once, before the key loop.
// CHECK: tensor.extract %{{.*}} : tensor<1x8x4096x64xf16>
// The first tile into slot 0 where there are keys: runs of 8 elements, 256
// per tile, so 2 per thread (a loop of 2 iterations from the thread id, no
// block-size dependent bounds); one branch per tile on the alignment: one
// 16-byte cp.async per run where the operands' start and outer strides are
// 16-byte multiples on the device, else eight 2-byte loads and one 16-byte
// store; one cp.async group.
// A full tile (no key past the block's end, here kEnd >= 32) copies each
// thread's runs as one column of rows 16 apart: a strided view of K whose
// offset and stride are computed once, rows tx / 8 + 16·i, unclamped; the
// other tiles clamp their keys to the last one.
// CHECK: scf.if %{{.*}} {
// CHECK: scf.if %[[ALIGNED:.*]] {
// CHECK: %[[FULLTILE:.*]] = arith.cmpi uge, %{{.*}}, %c32 : index
// CHECK: scf.if %[[FULLTILE]] {
// CHECK: %[[R0:.*]] = arith.divui %[[TX]], %c8 : index
// CHECK: %[[CHUNK:.*]] = arith.remui %[[TX]], %c8 : index
// CHECK: %[[COL:.*]] = arith.muli %[[CHUNK]], %c8 : index
// CHECK: %[[KV:.*]] = memref.subview %[[KB]][0, %{{.*}}, %[[R0]], %[[COL]]] [1, 1, 2, 8] [1, 1, 16, 1] : memref<1x2x4096x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<2x8xf16, strided<[?, 1], offset: ?>>
// CHECK: scf.for %[[IV:.*]] = %c0 to %c2 step %c1 {
// CHECK: %[[ROWOFF:.*]] = arith.muli %[[IV]], %c16 : index
// CHECK: %[[ROW:.*]] = arith.addi %[[R0]], %[[ROWOFF]] : index
// CHECK: nvgpu.device_async_copy %[[KV]][%[[IV]], %c0], %[[KS]][%c0, %[[ROW]], %[[COL]]], 8 {bypassL1}
// CHECK: memref.subview %[[VB]]
// CHECK: nvgpu.device_async_copy
// CHECK: } else {
// CHECK: scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// With mma-stage-views=0, every tile clamps its keys: no views.
// NOVIEWS-LABEL: func.func @t5_causal_gqa_f16
// NOVIEWS-NOT: memref.subview
// NOVIEWS: nvgpu.device_async_copy
// NOVIEWS-NOT: memref.subview
// NOVIEWS: return
// CHECK: %[[STRIDE:.*]] = arith.muli %[[I]], %c128 : index
// CHECK: arith.addi %[[TX]], %[[STRIDE]] : index
// CHECK-NOT: scf.if
// CHECK: nvgpu.device_async_copy %[[KB]][%{{.*}}], %[[KS]][%c0, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<1x2x4096x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<2x32x72xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[VB]]
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK-COUNT-8: tensor.extract %{{.*}} : tensor<1x2x4096x64xf16>
// CHECK: vector.store %{{.*}}, %[[KS]][%c0, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x32x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: nvvm.cp.async.commit.group
// Per tile: the next tile into the other slot, a group, wait for all but
// that group, barrier; compute; barrier.
// CHECK: scf.for %[[K0:.*]] = %c0 to %{{.*}} step %c32 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[SLOT:.*]] = arith.remui %{{.*}}, %c2 : index
// CHECK: scf.if %{{.*}} {
// CHECK: %[[OTHER:.*]] = arith.subi %c1, %[[SLOT]] : index
// CHECK: nvgpu.device_async_copy %[[KB]][%{{.*}}], %[[KS]][%[[OTHER]], %{{.*}}, %{{.*}}], 8
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// S = Q·Kᵀ: 4 key tiles × 4 chunks of D; K's fragments by ldmatrix, x4:
// two chunks per load.
// CHECK: nvgpu.ldmatrix %[[KS]][%[[SLOT]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<2x32x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-COUNT-16: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// Scores (16 per lane, 2 row maxima), in three branches: full tiles whose
// last key the warp's first row sees (no mask at all), other full tiles
// (the causal mask only), the last tile (clamped keys, end mask). The
// score_mod adds the T5 diagonal's term to the score (the hoisted table of
// the 8191 distances), so q·k·scale + term is one FMA.
// CHECK: %[[FULL:.*]] = arith.cmpi ule, %{{.*}}, %{{.*}} : index
// CHECK: %[[SEEN:.*]] = arith.cmpi sle, %{{.*}}, %{{.*}} : index
// CHECK: %[[UNMASKED:.*]] = arith.andi %[[FULL]], %[[SEEN]] : i1
// CHECK: scf.if %[[UNMASKED]] -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NOT: arith.mulf
// CHECK-NOT: arith.cmpi sgt
// CHECK: %[[TERM:.*]] = tensor.extract %{{.*}} : tensor<8x8191xf32>
// CHECK: math.fma %{{.*}}, %{{.*}}, %[[TERM]] : f32
// CHECK-NOT: arith.cmpi sgt
// CHECK: } else {
// CHECK: scf.if %[[FULL]] -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: arith.cmpi sgt
// CHECK: } else {
// CHECK: arith.minui
// CHECK: }
// The row maxima over the quads of lanes.
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// p = 2^(s·log2(e) - m·log2(e)): one FMA and MUFU.EX2 (denormals flushed).
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// O *= alpha on every tile by default: no vote.
// CHECK-NOT: nvvm.vote.sync
// O += P·V: 8 column tiles × 2 key chunks, P straight from S, V's
// fragments by ldmatrix.trans, x4: two column tiles per load.
// CHECK: nvgpu.ldmatrix %[[VS]][%[[SLOT]], %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true} : memref<2x32x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-COUNT-16: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// The sums over the quads, then O / l.
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x8x4096x64xf16>
// CHECK: gpu.terminator

// With mma-lazy-rescale=1: alpha is exactly 1 where a row's maximum did not
// grow, and O *= alpha (the lane's 32 accumulators, 16 per row half) runs
// in a branch taken by the whole warp when any of its lanes has an alpha
// other than 1 (one vote).
// LAZY-LABEL: func.func @t5_causal_gqa_f16
// LAZY: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// LAZY: %[[SAME:.*]] = arith.cmpf oeq, %arg{{[0-9]+}}, %{{[0-9]+}} : f32
// LAZY-NEXT: %[[ALPHA0:.*]] = arith.select %[[SAME]], %[[ONE]], %{{[0-9]+}} : f32
// LAZY: %[[GREW0:.*]] = arith.cmpf une, %[[ALPHA0]], %[[ONE]] : f32
// LAZY-NEXT: %[[GREW1:.*]] = arith.cmpf une, %{{.*}}, %[[ONE]] : f32
// LAZY-NEXT: %[[GREW:.*]] = arith.ori %[[GREW0]], %[[GREW1]] : i1
// LAZY-NEXT: %[[VOTE:.*]] = nvvm.vote.sync  any %{{.*}}, %[[GREW]] -> i1
// LAZY-NEXT: scf.if %[[VOTE]] -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// LAZY-COUNT-16: arith.mulf %[[ALPHA0]], %arg
// LAZY-COUNT-16: arith.mulf %{{.*}}, %arg
// LAZY-NEXT: scf.yield
// LAZY-NEXT: } else {
// LAZY-NEXT: scf.yield %arg
// LAZY: nvgpu.ldmatrix {{.*}}transpose = true

// The host emulation (one thread per block): one warp of two 16-row tiles
// (a warp owns at most two: the 64-row blocks become 32-row ones, 128 of
// them) whose 32 lanes keep their registers in private memory; mma.sync and
// the shuffles become loops over the lanes, cp.async plain copies.
// EMU-LABEL: func.func @t5_causal_gqa_f16
// EMU: gpu.launch blocks({{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c8, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%{{.*}} : memref<2x32x72xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2x32x72xf16, #gpu.address_space<workgroup>>) private(%{{.*}} : memref<2048xf16, #gpu.address_space<private>>, %{{.*}} : memref<1024xf32, #gpu.address_space<private>>, %{{.*}} : memref<2048xf32, #gpu.address_space<private>>, %{{.*}} : memref<128xf32, #gpu.address_space<private>>, %{{.*}} : memref<128xf32, #gpu.address_space<private>>, %{{.*}} : memref<128xf32, #gpu.address_space<private>>)
// EMU: scf.for %{{.*}} = %c0 to %c32 step %c1 {
// EMU-NOT: nvvm.mma.sync
// EMU-NOT: nvgpu.ldmatrix
// EMU-NOT: nvgpu.device_async_copy
// EMU-NOT: nvvm.cp.async
// EMU-NOT: gpu.shuffle
// EMU-NOT: llvm.call_intrinsic
// EMU: return
func.func @t5_causal_gqa_f16(%q: tensor<1x8x4096x64xf16>, %k: tensor<1x2x4096x64xf16>, %v: tensor<1x2x4096x64xf16>, %table: tensor<32x8xf32>) -> tensor<1x8x4096x64xf16> {
  %0 = rpe.attention %q, %k, %v causal : tensor<1x8x4096x64xf16>, tensor<1x2x4096x64xf16>, tensor<1x2x4096x64xf16> -> tensor<1x8x4096x64xf16> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = false>
    %t = tensor.extract %table[%bk, %h] : tensor<32x8xf32>
    %r = arith.addf %s, %t : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x8x4096x64xf16>
}

// -----

// bf16 with D = 128: 32-key tiles whatever mma-tile-k says (registers), and
// bf16 mma.sync on i32 pairs. D = 256 and rel_values keep the other
// kernels.
// Without bias or score_mod the scale goes into the exponent: the scores
// stay q·k (no multiplication in the score branches), p = 2^(s·c - m·c)
// with c = log2(e)/√128.
// CHECK-LABEL: func.func @wide_bf16
// CHECK: %[[C:.*]] = arith.constant 0.127517432 : f32
// CHECK: workgroup(%{{.*}} : memref<2x32x136xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2x32x136xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: scf.if %{{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NOT: arith.mulf
// CHECK: } else {
// CHECK-NOT: arith.mulf
// CHECK: gpu.shuffle
// CHECK: math.fma %{{.*}}, %[[C]], %{{.*}} : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// 128 rows on 4 warps: two 16-row tiles per warp at D = 64 (the key loop
// carries O for both, 64 values, and 2 maxima and 2 sums per tile: 72),
// one at D = 128 (registers; 64 + 4 values), so 64 rows per block there.
// 1024 rows asked for with 8 warps: a warp owns at most two 16-row tiles
// (S and O of four exceed a thread's registers), so a block has 256 rows,
// 16 of them for L = 4096. 256 threads stage the 32-key tile's 8 runs per
// row in one pass: one row per thread, whose view has a unit row dimension
// of stride 1 (with the pass's row distance of 32 instead, upstream's
// expand-strided-metadata crashed on it).
// CAP-LABEL: func.func @t5_causal_gqa_f16
// CAP: gpu.launch blocks({{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c8, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c256,
// CAP: memref.subview %{{.*}}[0, %{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 1, 8] [1, 1, 1, 1] : memref<1x2x4096x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<1x8xf16, strided<[?, 1], offset: ?>>

// ROWS-LABEL: func.func @t5_causal_gqa_f16
// ROWS: %[[BLOCKS:.*]] = arith.constant 32 : index
// ROWS: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %c8, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c128,
// ROWS: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// ROWS-LABEL: func.func @wide_bf16
// ROWS: %[[ROWS:.*]] = arith.constant 64 : index
// ROWS: arith.ceildivui %{{.*}}, %[[ROWS]] : index
// ROWS: threads({{.*}}) in (%{{.*}} = %c128,
// ROWS: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// An odd number of D chunks (D = 16) and of column tiles (Dv = 24): x2
// loads, one fragment each.
// CHECK-LABEL: func.func @odd_f16
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = false} : memref<2x32x24xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK-NOT: numTiles = 4
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = true} : memref<2x32x32xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK-NOT: numTiles = 4
// CHECK: return
// CHECK-LABEL: func.func @d256_bf16
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.contract
func.func @wide_bf16(%q: tensor<2x16x?x128xbf16>, %k: tensor<2x16x?x128xbf16>, %v: tensor<2x16x?x128xbf16>) -> tensor<2x16x?x128xbf16> {
  %0 = rpe.attention %q, %k, %v causal : tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  return %0 : tensor<2x16x?x128xbf16>
}
func.func @odd_f16(%q: tensor<1x2x?x16xf16>, %k: tensor<1x2x?x16xf16>, %v: tensor<1x2x?x24xf16>) -> tensor<1x2x?x24xf16> {
  %0 = rpe.attention %q, %k, %v : tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x24xf16> -> tensor<1x2x?x24xf16>
  return %0 : tensor<1x2x?x24xf16>
}
func.func @d256_bf16(%q: tensor<1x2x?x256xbf16>) -> tensor<1x2x?x256xbf16> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x256xbf16>, tensor<1x2x?x256xbf16>, tensor<1x2x?x256xbf16> -> tensor<1x2x?x256xbf16>
  return %0 : tensor<1x2x?x256xbf16>
}
