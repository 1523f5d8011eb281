// DeBERTa c2p + p2c at L = 4096, H = 8, 512 buckets: with the CPU
// pipeline's default (split-attention-heads) the gather-trick tables are
// computed one (batch, head) at a time — c2p (read at the query) per block
// of 2048 query rows, p2c (read at the key) per block too, for the
// 2048 + 2·511 keys whose buckets the block's rows tell apart (log<256,
// 512> saturates from |i - j| = 512), plus its two saturated columns
// (4096×1) per head — and
// nothing of 8×4096×512 (the whole tables, 64 MiB each) is ever a buffer;
// with split-attention-heads=0 they are (the NOSPLIT lines), so the checks
// can fail. The loop over (batch, head) is one function
// (rpe-outline-kernels) that reads each head's q, k, v in place: no slice
// is copied, and each table fills a buffer of its own (rpe-unshare-fills),
// not a copy of the other's.
//
// RUN: rpe-opt %s -rpe-cpu-pipeline -mlir-print-ir-after=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s
// RUN: rpe-opt %s -rpe-cpu-pipeline -mlir-print-ir-after=rpe-vectorize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=COPIES
// RUN: rpe-opt %s -rpe-cpu-pipeline="split-attention-heads=0" -mlir-print-ir-after=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// RUN: rpe-opt %s -rpe-cpu-pipeline="vector-width=16" -mlir-print-ir-after=rpe-vectorize-transposes -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLES
// RUN: rpe-opt %s -rpe-cpu-pipeline="num-threads=2" -mlir-print-ir-after=convert-scf-to-openmp -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: rpe-opt %s -rpe-cpu-pipeline="num-threads=3" -mlir-print-ir-after=convert-scf-to-openmp -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREADS3
// RUN: rpe-opt %s -rpe-cpu-pipeline="vector-width=8" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROWS8
// RUN: rpe-opt %s -rpe-cpu-pipeline="vector-width=16" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROWS16
// RUN: rpe-opt %s -rpe-cpu-pipeline="vectorize=0" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROWS16

// A head's parts end on whole row vectors of the vector kernel: the
// pipeline passes its vector width as part-rows-multiple (the pass's
// default, 16, without the vector kernel).
// ROWS8: rpe-split-attention-heads{{.*}} part-rows-multiple=8 {{.*}}}
// ROWS16: rpe-split-attention-heads{{.*}} part-rows-multiple=16 {{.*}}}

// With 2 threads the 8 heads split evenly: the heads are the one parallel
// region of the call, everything of a head on its thread
// (rpe-split-attention-heads{num-threads}, rpe-serialize-nested-foralls).
// With 3 they do not: each thread takes 2 heads whole and 2 of the 6
// thirds of the 2 heads left over, the 12 iterations the one parallel
// region.
// THREADS: func.func private @__rpe_attention_heads(
// THREADS: omp.parallel
// THREADS-NEXT: omp.wsloop
// THREADS-NEXT: omp.loop_nest (%{{.*}}) : index = (%{{.*}}) to (%c8{{.*}}) step
// THREADS-NOT: omp.parallel
// THREADS: return
// THREADS3: func.func private @__rpe_attention_heads(
// THREADS3: omp.parallel
// THREADS3-NEXT: omp.wsloop
// THREADS3-NEXT: omp.loop_nest (%{{.*}}) : index = (%{{.*}}) to (%c12{{.*}}) step
// THREADS3-NOT: omp.parallel
// THREADS3: return

// The position tables, scaled by 1/sqrt(3D) in the function, are prepared
// for the projections in one pass each: rpe-fuse-attention runs the
// scaling inside the transpose to D × NB, rpe-split-attention-heads has
// each head transpose its own table's columns that the call reads (all 512
// here: from |i - j| = 512 on, log<256, 512> saturates) into a buffer of
// one head, and rpe-vectorize-transposes makes that 16 × 16 register
// blocks (16 row loads, 64 shuffles, the scaling on the 16 columns, 16
// stores, each after its column's multiply).
// TABLES: func.func @deberta_4096(
// TABLES-NOT: call @__rpe_kernel
// TABLES: call @__rpe_attention_heads
// TABLES: func.func private @__rpe_attention_heads(
// TABLES: scf.for
// TABLES: %[[BUF:.*]] = memref.alloc() {{.*}} : memref<1x64x512xf32>
// TABLES-NEXT: %[[SRC:.*]] = memref.subview %arg{{[01]}}[%{{.*}}, %[[LO:.*]], 0] [1, %[[N:.*]], 64] [1, 1, 1] : memref<8x512x64xf32> to
// TABLES-NEXT: %[[DST:.*]] = memref.subview %[[BUF]][0, 0, %[[LO]]] [1, 64, %[[N]]] [1, 1, 1] : memref<1x64x512xf32> to
// TABLES-NOT: linalg.generic
// TABLES-COUNT-16: vector.load %[[SRC]][{{.*}}] : memref<1x?x64xf32, {{.*}}>, vector<16xf32>
// TABLES-COUNT-64: vector.shuffle
// TABLES-COUNT-16: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// TABLES-NEXT: vector.store %{{.*}}, %[[DST]][{{.*}}] : memref<1x64x?xf32, {{.*}}>, vector<16xf32>

// CHECK: IR Dump After OneShotBufferizePass
// CHECK-NOT: memref<1x8x4096x512xf32>
// CHECK: func.func private @__rpe_attention_heads(
// CHECK-NOT: memref<1x8x4096x512xf32>
// CHECK: scf.for
// Each head's transposed position tables (the TABLES lines) write their
// columns of a one-head buffer in place; bufferization copies the subviews
// onto themselves, copies that canonicalization removes (the COPIES lines).
// CHECK: %[[PK:.*]] = memref.alloc() {{.*}}: memref<1x64x512xf32>
// CHECK: %[[PKCOLS:.*]] = memref.subview %[[PK]][0, 0, %[[LO:.*]]] [1, 64, %[[N:.*]]] [1, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[PKCOLS]] :
// CHECK: %[[PKCOLS2:.*]] = memref.subview %[[PK]][0, 0, %[[LO]]] [1, 64, %[[N]]] [1, 1, 1]
// CHECK-NEXT: memref.copy %[[PKCOLS]], %[[PKCOLS2]]
// CHECK: %[[PQ:.*]] = memref.alloc() {{.*}}: memref<1x64x512xf32>
// CHECK: %[[PQCOLS:.*]] = memref.subview %[[PQ]][0, 0, %[[LO]]] [1, 64, %[[N]]] [1, 1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[PQCOLS]] :
// CHECK: %[[PQCOLS2:.*]] = memref.subview %[[PQ]][0, 0, %[[LO]]] [1, 64, %[[N]]] [1, 1, 1]
// CHECK-NEXT: memref.copy %[[PQCOLS]], %[[PQCOLS2]]
// CHECK-NOT: memref.copy
// CHECK: %[[E0:.*]] = memref.alloc() {{.*}}: memref<1x1x4096x1xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[E0]] :
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E0]] :
// CHECK-NOT: memref.copy
// CHECK: %[[E1:.*]] = memref.alloc() {{.*}}: memref<1x1x4096x1xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[E1]] :
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E1]] :
// CHECK-NOT: memref.copy
// CHECK: scf.for {{.*}} step %c2048
// CHECK-NOT: memref.copy
// Each table's projection writes the bucket columns of each group of 24
// rows in place (rpe-split-attention-heads{bucket-columns,
// bucket-column-rows}: the groups in an scf.forall, each a subview of its
// rows and columns of the table's buffer), its fill folded into the
// projection; the columns outside are not written. Bufferization copies
// the subviews onto themselves, copies that canonicalization removes (the
// COPIES lines).
// CHECK: %[[C2P:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<1x1x?x512xf32>
// CHECK-NEXT: scf.forall (%[[S:.*]]) = (0) to (%{{.*}}) step (24) {
// CHECK-NOT: linalg.fill
// CHECK: %[[C2PCOLS:.*]] = memref.subview %[[C2P]][0, 0, %[[S]], %{{.*}}] [1, 1, %[[N:.*]], %{{.*}}] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[C2PCOLS]] :
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[C2PCOLS]] :
// CHECK: memref.copy %[[C2PCOLS]], %{{.*}}
// CHECK: %[[P2C:.*]] = memref.alloc() {{.*}}: memref<1x1x3070x512xf32>
// CHECK-NEXT: scf.forall (%[[S2:.*]]) = (0) to (3070) step (24) {
// CHECK-NOT: linalg.fill
// CHECK: %[[P2CCOLS:.*]] = memref.subview %[[P2C]][0, 0, %[[S2]], %{{.*}}] [1, 1, %[[N2:.*]], %{{.*}}] [1, 1, 1, 1]
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[P2CCOLS]] :
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[P2CCOLS]] :
// CHECK: memref.copy %[[P2CCOLS]], %{{.*}}
// The kernel's q, k, v: the head's slices, cast (not copied).
// CHECK-NOT: memref.copy
// CHECK: memref.cast %{{.*}} : memref<1x1x4096x64xf32, strided<[2097152, 262144, 64, 1], offset: ?>> to memref<1x1x4096x64xf32, strided<[?, ?, 64, 1], offset: ?>>
// CHECK-NOT: memref.copy
// CHECK: scf.forall
// The block's output into its place (the kernel writes a buffer of its own).
// CHECK: memref.copy %{{.*}} : memref<1x1x?x64xf32> to memref<1x1x?x64xf32, strided<[2097152, 262144, 64, 1], offset: ?>>
// CHECK-NOT: memref<1x8x4096x512xf32>

// After canonicalization the one copy left is the block's output, and the
// projections' fills are folded into them: no fill is left in the tables'
// loops.
// COPIES: func.func private @__rpe_attention_heads(
// COPIES-NOT: memref.copy
// COPIES: scf.for {{.*}} step %c2048
// COPIES-NOT: linalg.fill
// COPIES: scf.forall {{.*}} step (24)
// COPIES-NOT: linalg.fill
// COPIES: vector.fma
// COPIES-NOT: linalg.fill
// COPIES: scf.forall {{.*}} step (24)
// COPIES-NOT: linalg.fill
// COPIES: vector.fma
// COPIES-NOT: memref.copy
// COPIES: scf.forall
// COPIES: memref.copy %{{.*}} : memref<1x1x?x64xf32> to memref<1x1x?x64xf32, strided<[2097152, 262144, 64, 1], offset: ?>>
// COPIES-NOT: memref.copy
// COPIES: return

// NOSPLIT: IR Dump After OneShotBufferizePass
// NOSPLIT: memref.alloc() {{.*}}: memref<1x8x4096x512xf32>

module {
  func.func @deberta_4096(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>, %pos_q: tensor<8x512x64xf32>, %pos_k: tensor<8x512x64xf32>) -> tensor<1x8x4096x64xf32> {
    %empty = tensor.empty() : tensor<8x512x64xf32>
    %factor = arith.constant 0.07216878364870323 : f32
    %pos_q_scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos_q : tensor<8x512x64xf32>) outs(%empty : tensor<8x512x64xf32>) {
    ^bb0(%sa: f32, %so: f32):
      %sm = arith.mulf %sa, %factor : f32
      linalg.yield %sm : f32
    } -> tensor<8x512x64xf32>
    %empty_1 = tensor.empty() : tensor<8x512x64xf32>
    %factor_1 = arith.constant 0.07216878364870323 : f32
    %pos_k_scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos_k : tensor<8x512x64xf32>) outs(%empty_1 : tensor<8x512x64xf32>) {
    ^bb0(%sa: f32, %so: f32):
      %sm = arith.mulf %sa, %factor_1 : f32
      linalg.yield %sm : f32
    } -> tensor<8x512x64xf32>
    %bias = rpe.disentangled_bias %q, %k, %pos_q_scaled, %pos_k_scaled by log<position_buckets = 256, max_relative_positions = 512> c2p p2c : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<8x512x64xf32>, tensor<8x512x64xf32> -> tensor<1x8x4096x4096xf32>
    %out = rpe.attention %q, %k, %v bias(%bias : tensor<1x8x4096x4096xf32>) scale = 0.07216878364870323 : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
    return %out : tensor<1x8x4096x64xf32>
  }
}

