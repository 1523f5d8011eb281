// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="bucket-column-rows=0" | FileCheck %s
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads | FileCheck %s --check-prefix=GROUPS
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="parallel-heads=1 parallel-query-block=0" | FileCheck %s --check-prefix=PAR
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="num-threads=2" | FileCheck %s --check-prefix=PARBLOCK
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="num-threads=8" | FileCheck %s --check-prefix=PARBLOCK
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="num-threads=3" | FileCheck %s --check-prefix=PARTS
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="num-threads=4" | FileCheck %s --check-prefix=PARTS4
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="query-block=0" | FileCheck %s --check-prefix=NOBLOCK
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="min-table-columns=8" | FileCheck %s --check-prefix=NARROW
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="key-band=0 bucket-column-rows=0" | FileCheck %s --check-prefix=NOBAND
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads="bucket-columns=0" | FileCheck %s --check-prefix=NOCOLS
// RUN: rpe-opt %s -split-input-file -rpe-split-attention-heads -canonicalize | FileCheck %s --check-prefix=COLS
// RUN: not rpe-opt %s -split-input-file -rpe-split-attention-heads="query-block=-1" 2>&1 | FileCheck %s --check-prefix=BADBLOCK --implicit-check-not="current operation"
// RUN: not rpe-opt %s -split-input-file -rpe-split-attention-heads="bucket-column-rows=-2" 2>&1 | FileCheck %s --check-prefix=BADROWS --implicit-check-not="current operation"
// RUN: not rpe-opt %s -split-input-file -rpe-split-attention-heads="num-threads=-1" 2>&1 | FileCheck %s --check-prefix=BADTHREADS --implicit-check-not="current operation"
// RUN: not rpe-opt %s -split-input-file -rpe-split-attention-heads="num-threads=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=MANYTHREADS --implicit-check-not="current operation"
// RUN: not rpe-opt %s -split-input-file -rpe-split-attention-heads="parallel-query-block=-8" 2>&1 | FileCheck %s --check-prefix=BADPARBLOCK --implicit-check-not="current operation"
// RUN: not rpe-opt %s -split-input-file -rpe-split-attention-heads="part-rows-multiple=0" 2>&1 | FileCheck %s --check-prefix=BADPARTROWS --implicit-check-not="current operation"

// BADBLOCK: error: rpe-split-attention-heads: query-block must not be negative, got -1
// BADROWS: error: rpe-split-attention-heads: bucket-column-rows must not be negative, got -2

// A DeBERTa-style c2p table (q·pos_kᵀ, B×H×L×NB, read at the query
// position): by default one (batch, head) after another (scf.for: the
// threads share a head), and within a head blocks of 2048 query rows, each
// with its rows of q and of the table (the producer tiled to them) and the
// attention at q_offset = the block's first row, reading the table's row
// %i - row0. q, k, v and key_lengths are sliced per head; nothing of the
// whole table is left. score_mod's other use of %h (the per-head
// temperature) gets the global head.
// CHECK-LABEL: func.func @c2p
// CHECK-NOT: linalg.{{.*}} -> tensor<2x4x?x128xf32>
// CHECK: %[[LOOP:.*]] = scf.for %[[BH:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x4x?x16xf32>)
// CHECK: %[[B:.*]] = arith.divui %[[BH]], %{{.*}}
// CHECK: %[[H:.*]] = arith.remui %[[BH]], %{{.*}}
// CHECK: %[[HK:.*]] = arith.divui %[[H]], %{{.*}}
// CHECK: tensor.extract_slice %arg1[%[[B]], %[[HK]], 0, 0] [1, 1, %{{.*}}, 16]
// CHECK: tensor.extract_slice %arg3[%[[B]]] [1] [1]
// CHECK-NEXT: %[[LEN:.*]] = tensor.extract %arg3[%[[B]]] : tensor<2xi32>
// CHECK-NEXT: %[[LENI:.*]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK-NEXT: %[[LEN1:.*]] = arith.subi %[[LENI]], %c1 : index
// CHECK-NEXT: %[[LASTVIS:.*]] = arith.maxsi %[[LEN1]], %c0 : index
// CHECK: %[[BLOCKS:.*]] = scf.for %[[R0:.*]] = %{{.*}} to %{{.*}} step %c2048 iter_args(%[[ACC2:.*]] = %[[ACC]])
// CHECK: %[[ROWS:.*]] = arith.minsi %{{.*}}, %c2048
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[R0]], 0] [1, 1, %[[ROWS]], 16]
// With bucket-column-rows=0 (the CHECK lines), only the table's columns
// between the buckets of the block's smallest
// i - j (row0 - KL, KL the last key that key_lengths[b] lets a row see,
// min(Lk - 1, max(key_lengths[b] - 1, 0))) and largest (row0 + rows - 1),
// widened to whole
// groups of 16 columns, [LO, END), are computed (bucket-columns), in
// place in a tensor of the table's 128 columns (an allocation: a slice of
// a tensor.empty would become an empty tensor of its own); the columns
// outside are not written (no read uses them), and the range's own fill
// comes right before the projection (rpe-vectorize-contractions folds it).
// CHECK: %[[E:.*]] = bufferization.alloc_tensor(%[[ROWS]]) : tensor<1x1x?x128xf32>
// CHECK: %[[KL:.*]] = arith.minsi %{{.*}}, %[[LASTVIS]] : index
// CHECK: arith.subi %[[R0]], %[[KL]] : index
// CHECK: %[[BMIN:.*]] = arith.minsi %[[FIRST:[0-9]+]], %[[LAST:[0-9]+]] : index
// CHECK: %[[BMAX:.*]] = arith.maxsi %[[FIRST]], %[[LAST]] : index
// CHECK: %[[REM:.*]] = arith.remui %[[BMIN]], %c16 : index
// CHECK: %[[LO:.*]] = arith.subi %[[BMIN]], %[[REM]] : index
// CHECK: %[[PAST:.*]] = arith.addi %[[BMAX]], %c1 : index
// CHECK: %[[NGRP:.*]] = arith.ceildivui %[[PAST]], %c16 : index
// CHECK: %[[UP:.*]] = arith.muli %[[NGRP]], %c16 : index
// CHECK: %[[END:.*]] = arith.minui %[[UP]], %c128 : index
// CHECK: %[[N:.*]] = arith.subi %[[END]], %[[LO]] : index
// CHECK: tensor.extract_slice %arg2[%[[H]], 0, %[[LO]]] [1, 16, %[[N]]]
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[INIT:.*]] = tensor.extract_slice %[[E]][0, 0, 0, %[[LO]]] [1, 1, %{{.*}}, %[[N]]]
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%{{.*}}) outs(%[[INIT]] : tensor<1x1x?x?xf32>)
// CHECK-NEXT: %[[TT:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<1x1x?x?xf32>)
// CHECK: %[[T:.*]] = tensor.insert_slice %[[TT]] into %[[E]][0, 0, 0, %[[LO]]] [1, 1, %{{.*}}, %[[N]]]
// CHECK: %[[O:.*]] = rpe.attention %[[Q]], {{.*}} key_lengths(%{{.*}} : tensor<1xi32>) q_offset(%[[R0]]) {{.*}} -> tensor<1x1x?x16xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[BA:.*]]: index, %[[HA:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-DAG: %[[HG:.*]] = arith.addi %[[HA]], %[[H]] : index
// CHECK-DAG: %[[IL:.*]] = arith.subi %[[I]], %[[R0]] : index
// CHECK: %[[BK:.*]] = rpe.bucket %[[I]], %[[J]]
// CHECK: tensor.extract %[[T]][%[[BA]], %[[HA]], %[[IL]], %[[BK]]] : tensor<1x1x?x128xf32>
// CHECK: tensor.extract %arg4[%[[HG]]] : tensor<4xf32>
// By default (bucket-column-rows=24) the range is that of each group of 24
// rows, [r, r + n) with r = row0 + s: the groups run in an scf.forall
// (one parallel region for the table), each computing its rows' range of
// columns in place (the other columns are not written).
// GROUPS-LABEL: func.func @c2p
// GROUPS: scf.for %[[R0:.*]] = %{{.*}} to %{{.*}} step %c2048
// GROUPS: %[[ROWS:.*]] = arith.minsi %{{.*}}, %c2048
// GROUPS: %[[E:.*]] = bufferization.alloc_tensor(%[[ROWS]]) : tensor<1x1x?x128xf32>
// GROUPS: %[[T:.*]] = scf.forall (%[[S:.*]]) = (0) to (%[[ROWS]]) step (24) shared_outs(%[[SH:.*]] = %[[E]]) -> (tensor<1x1x?x128xf32>) {
// GROUPS: %[[LEFT:.*]] = arith.subi %[[ROWS]], %[[S]] : index
// GROUPS: %[[N:.*]] = arith.minsi %[[LEFT]], %c24 : index
// GROUPS: %[[R:.*]] = arith.addi %[[R0]], %[[S]] : index
// GROUPS: %[[PAST:.*]] = arith.addi %[[R]], %[[N]] : index
// GROUPS: %[[RLAST:.*]] = arith.subi %[[PAST]], %c1 : index
// The bucket of (r, KL) and of (r + n - 1, 0) (keys from 0 always keep
// key 0: no test for an empty set of keys):
// GROUPS: %[[GKL:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// GROUPS-NEXT: arith.subi %[[R]], %[[GKL]] : index
// GROUPS: arith.cmpi slt, %[[RLAST]], %c0 : index
// GROUPS: %[[GREM:.*]] = arith.remui %{{.*}}, %c16 : index
// GROUPS: %[[LO:.*]] = arith.subi %{{.*}}, %[[GREM]] : index
// GROUPS: arith.ceildivui
// GROUPS: %[[CN:.*]] = arith.subi %{{.*}}, %[[LO]] : index
// GROUPS: tensor.extract_slice %arg0[%{{.*}}, %{{.*}}, %[[R]], 0] [1, 1, %[[N]], 16]
// GROUPS: tensor.extract_slice %arg2[%{{.*}}, 0, %[[LO]]] [1, 16, %[[CN]]]
// GROUPS-NOT: tensor.insert_slice
// GROUPS: %[[INIT:.*]] = tensor.extract_slice %[[SH]][0, 0, %[[S]], %[[LO]]] [1, 1, %[[N]], %[[CN]]]
// GROUPS-NEXT: %[[F:.*]] = linalg.fill ins(%{{.*}}) outs(%[[INIT]] : tensor<1x1x?x?xf32>)
// GROUPS-NEXT: %[[TT:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<1x1x?x?xf32>)
// GROUPS-NOT: tensor.insert_slice
// GROUPS: scf.forall.in_parallel {
// GROUPS-NEXT: tensor.parallel_insert_slice %[[TT]] into %[[SH]][0, 0, %[[S]], %[[LO]]] [1, 1, %[[N]], %[[CN]]]
// GROUPS: rpe.attention
// GROUPS: tensor.extract %[[T]][%{{.*}}] : tensor<1x1x?x128xf32>
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[O]] into %[[ACC2]][%[[B]], %[[H]], %[[R0]], 0] [1, 1, %{{.*}}, 16]
// CHECK-NEXT: scf.yield %[[INS]]
// CHECK: scf.yield %[[BLOCKS]]
// The marker rpe-outline-kernels moves the loop out by (as a whole).
// CHECK-NEXT: } {rpe.split_heads}
// CHECK: return %[[LOOP]]
// CHECK-NOT: linalg.{{.*}} -> tensor<2x4x?x128xf32>

// bucket-columns=0: the block's rows of the table, every column.
// NOCOLS-LABEL: func.func @c2p
// NOCOLS: %[[ROWS:.*]] = arith.minsi %{{.*}}, %c2048
// NOCOLS: %[[E:.*]] = tensor.empty(%[[ROWS]]) : tensor<1x1x?x128xf32>
// NOCOLS: %[[F:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E]] : tensor<1x1x?x128xf32>)
// NOCOLS: %[[T:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<1x1x?x128xf32>)
// NOCOLS: rpe.attention
// NOCOLS: tensor.extract %[[T]]

// query-block=0: the head's whole table, no loop over rows.
// NOBLOCK-LABEL: func.func @c2p
// NOBLOCK: scf.for
// NOBLOCK-NOT: scf.for
// NOBLOCK: linalg.generic
// NOBLOCK: } -> tensor<1x1x?x128xf32>
// NOBLOCK: rpe.attention
// NOBLOCK-NOT: q_offset
// NOBLOCK: tensor.insert_slice
// NOBLOCK: } {rpe.split_heads}

// BADTHREADS: error: rpe-split-attention-heads: num-threads must not be negative, got -1
// The work split builds a select per divisor of num-threads (it ran for
// hours at 2^62).
// MANYTHREADS: error: rpe-split-attention-heads: num-threads must be at most 1024, got 4611686018427387904
// BADPARBLOCK: error: rpe-split-attention-heads: parallel-query-block must not be negative, got -8
// BADPARTROWS: error: rpe-split-attention-heads: part-rows-multiple must be positive, got 0

// With num-threads = 2 (H = 4 a multiple) or 8 (B·H = 2·4, B static): an
// scf.forall over (batch, head), each thread its head's blocks of
// parallel-query-block rows, written into the head's slice of the output,
// which goes in whole. With 3 threads the 8 pairs do not split evenly:
// each thread takes 2 pairs whole and 2 of the 6 parts of the 2 pairs left
// over (3 parts each, T / gcd(B·H, T), of the same multiple of 16 rows):
// 12 iterations, each writing its rows of the head's slice.
// PARBLOCK-LABEL: func.func @c2p
// PARBLOCK: %[[LOOP:.*]] = scf.forall (%[[BH:.*]]) in (%{{.*}}) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x4x?x16xf32>)
// PARBLOCK: %[[B:.*]] = arith.divui %[[BH]], %{{.*}}
// PARBLOCK: %[[H:.*]] = arith.remui %[[BH]], %{{.*}}
// PARBLOCK: %[[HEAD:.*]] = tensor.extract_slice %[[ACC]][%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 16]
// PARBLOCK: %[[BLOCKS:.*]] = scf.for %[[R0:.*]] = %{{.*}} to %{{.*}} step %c1024 iter_args(%[[OUT:.*]] = %[[HEAD]]) -> (tensor<1x1x?x16xf32>)
// PARBLOCK: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (24)
// PARBLOCK: %[[O:.*]] = rpe.attention {{.*}} q_offset(%[[R0]])
// PARBLOCK: %[[IN:.*]] = tensor.insert_slice %[[O]] into %[[OUT]][0, 0, %[[R0]], 0]
// PARBLOCK-NEXT: scf.yield %[[IN]]
// PARBLOCK: scf.forall.in_parallel
// PARBLOCK-NEXT: tensor.parallel_insert_slice %[[BLOCKS]] into %[[ACC]][%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 16]
// PARBLOCK: } {rpe.split_heads}
// PARBLOCK: return %[[LOOP]]
// PARTS-LABEL: func.func @c2p
// PARTS: %[[LOOP:.*]] = scf.forall (%[[IV:.*]]) in (%c12) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x4x?x16xf32>)
// PARTS-NEXT: %[[T:.*]] = arith.divui %[[IV]], %c4
// PARTS-NEXT: %[[J:.*]] = arith.remui %[[IV]], %c4
// PARTS-NEXT: %[[WHOLE:.*]] = arith.cmpi ult, %[[J]], %c2
// PARTS-NEXT: %[[TW:.*]] = arith.muli %[[T]], %c2
// PARTS-NEXT: %[[WP:.*]] = arith.addi %[[TW]], %[[J]]
// PARTS-NEXT: %[[TS:.*]] = arith.muli %[[T]], %c2
// PARTS-NEXT: %[[JR:.*]] = arith.subi %[[J]], %c2
// PARTS-NEXT: %[[K:.*]] = arith.addi %[[TS]], %[[JR]]
// PARTS-NEXT: %[[KP:.*]] = arith.divui %[[K]], %c3
// PARTS-NEXT: %[[PP:.*]] = arith.addi %[[KP]], %c6
// PARTS-NEXT: %[[BH:.*]] = arith.select %[[WHOLE]], %[[WP]], %[[PP]]
// PARTS-NEXT: %[[P:.*]] = arith.select %[[WHOLE]], %c1, %c3
// PARTS-NEXT: %[[KR:.*]] = arith.remui %[[K]], %c3
// PARTS-NEXT: %[[PART:.*]] = arith.select %[[WHOLE]], %c0, %[[KR]]
// PARTS-NEXT: %[[PER:.*]] = arith.ceildivui %{{.*}}, %[[P]]
// PARTS-NEXT: %[[PER16:.*]] = arith.ceildivui %[[PER]], %c16
// PARTS-NEXT: %[[ROWS:.*]] = arith.muli %[[PER16]], %c16
// PARTS-NEXT: %[[S:.*]] = arith.muli %[[PART]], %[[ROWS]]
// PARTS-NEXT: %[[START:.*]] = arith.minui %[[S]], %[[L:.*]] : index
// PARTS-NEXT: %[[E:.*]] = arith.addi %[[START]], %[[ROWS]]
// PARTS-NEXT: %[[END:.*]] = arith.minui %[[E]], %[[L]] : index
// PARTS-NEXT: %[[B:.*]] = arith.divui %[[BH]], %c4
// PARTS-NEXT: %[[H:.*]] = arith.remui %[[BH]], %c4
// PARTS: %[[N:.*]] = arith.subi %[[END]], %[[START]]
// PARTS-NEXT: %[[SLICE:.*]] = tensor.extract_slice %[[ACC]][%[[B]], %[[H]], %[[START]], 0] [1, 1, %[[N]], 16]
// PARTS-NEXT: %[[BLOCKS:.*]] = scf.for %[[R0:.*]] = %[[START]] to %[[END]] step %c1024 iter_args(%[[OUT:.*]] = %[[SLICE]]) -> (tensor<1x1x?x16xf32>)
// PARTS-NEXT: %[[LEFT:.*]] = arith.subi %[[END]], %[[R0]]
// PARTS-NEXT: arith.minsi %[[LEFT]], %c1024
// PARTS: %[[O:.*]] = rpe.attention {{.*}} q_offset(%[[R0]])
// PARTS: %[[LOCAL:.*]] = arith.subi %[[R0]], %[[START]]
// PARTS: %[[IN:.*]] = tensor.insert_slice %[[O]] into %[[OUT]][0, 0, %[[LOCAL]], 0]
// PARTS-NEXT: scf.yield %[[IN]]
// PARTS: scf.forall.in_parallel
// PARTS-NEXT: tensor.parallel_insert_slice %[[BLOCKS]] into %[[ACC]][%[[B]], %[[H]], %[[START]], 0] [1, 1, %{{.*}}, 16]
// PARTS: } {rpe.split_heads}
// PARTS: return %[[LOOP]]

// parallel-heads=1 parallel-query-block=0: an scf.forall over (batch,
// head), a head's whole table per thread.
// PAR-LABEL: func.func @c2p
// PAR: %[[LOOP:.*]] = scf.forall (%[[BH:.*]]) in (%{{.*}}) shared_outs(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x4x?x16xf32>)
// PAR: %[[B:.*]] = arith.divui %[[BH]], %{{.*}}
// PAR: %[[H:.*]] = arith.remui %[[BH]], %{{.*}}
// PAR: %[[HK:.*]] = arith.divui %[[H]], %{{.*}}
// PAR: %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 16]
// PAR: tensor.extract_slice %arg1[%[[B]], %[[HK]], 0, 0] [1, 1, %{{.*}}, 16]
// PAR: tensor.extract_slice %arg3[%[[B]]] [1] [1]
// PAR: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<1x1x?x128xf32>
// PAR: %[[F:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E]] : tensor<1x1x?x128xf32>)
// PAR: %[[T:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<1x1x?x128xf32>)
// PAR: %[[O:.*]] = rpe.attention {{.*}} key_lengths(%{{.*}} : tensor<1xi32>) {{.*}} -> tensor<1x1x?x16xf32> {
// PAR-NEXT: ^bb0(%{{.*}}: f32, %[[BA:.*]]: index, %[[HA:.*]]: index, %[[I:.*]]: index, %{{.*}}: index):
// PAR: %[[HG:.*]] = arith.addi %[[HA]], %[[H]] : index
// PAR: tensor.extract %[[T]][%[[BA]], %[[HA]], %[[I]], %{{.*}}] : tensor<1x1x?x128xf32>
// PAR: tensor.extract %arg4[%[[HG]]] : tensor<4xf32>
// PAR: scf.forall.in_parallel
// PAR-NEXT: tensor.parallel_insert_slice %[[O]] into %[[ACC]][%[[B]], %[[H]], 0, 0] [1, 1, %{{.*}}, 16]
// PAR: } {rpe.split_heads}
// PAR: return %[[LOOP]]
// PAR-NOT: linalg.{{.*}} -> tensor<2x4x?x128xf32>

#q = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#p = affine_map<(b, h, i, d, n) -> (h, d, n)>
#o = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @c2p(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %pk: tensor<4x16x128xf32>, %len: tensor<2xi32>, %temp: tensor<4xf32>) -> tensor<2x4x?x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %l = tensor.dim %q, %c2 : tensor<2x4x?x16xf32>
  %e = tensor.empty(%l) : tensor<2x4x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x?x128xf32>) -> tensor<2x4x?x128xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<2x4x?x16xf32>, tensor<4x16x128xf32>) outs(%f : tensor<2x4x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x?x128xf32>
  %0 = rpe.attention %q, %k, %k key_lengths(%len : tensor<2xi32>) : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<2x4x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<2x4x?x128xf32>
    %tau = tensor.extract %temp[%h] : tensor<4xf32>
    %r = arith.addf %s, %g : f32
    %r2 = arith.mulf %r, %tau : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<2x4x?x16xf32>
}

// -----

// Shaw's clipped buckets: a table of 9 columns stays whole by default (the
// per-head loop costs more than the table); with min-table-columns=8 it
// splits. A table read in another way (here as an operand of a tensor.dim),
// a table the function also returns, and a dense bias keep the attention
// as it is.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: scf.for
// CHECK: rpe.attention
// NARROW-LABEL: func.func @narrow
// NARROW: scf.for
// NARROW: rpe.attention {{.*}} -> tensor<1x1x?x16xf32>
// CHECK-LABEL: func.func @other_read
// CHECK-NOT: scf.for
// NARROW-LABEL: func.func @other_read
// NARROW-NOT: scf.for
// CHECK-LABEL: func.func @returned_table
// CHECK-NOT: scf.for
// NARROW-LABEL: func.func @returned_table
// NARROW-NOT: scf.for
// CHECK-LABEL: func.func @dense_bias
// CHECK-NOT: scf.for
// NARROW-LABEL: func.func @dense_bias
// NARROW-NOT: scf.for

#q = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#p = affine_map<(b, h, i, d, n) -> (d, n)>
#o = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @narrow(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

func.func @other_read(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %n = tensor.dim %t, %c2 : tensor<1x2x?x9xf32>
    %nf = arith.index_cast %n : index to i32
    %nff = arith.sitofp %nf : i32 to f32
    %r = arith.addf %s, %g : f32
    %r2 = arith.addf %r, %nff : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

func.func @returned_table(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>) -> (tensor<1x2x?x16xf32>, tensor<1x2x?x9xf32>) {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0, %t : tensor<1x2x?x16xf32>, tensor<1x2x?x9xf32>
}

func.func @dense_bias(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>, %bias: tensor<1x2x?x?xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%l) : tensor<1x2x?x9xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  %0 = rpe.attention %q, %q, %q bias(%bias : tensor<1x2x?x?xf32>) : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 4>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x9xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

// -----

// c2p (read at the query position %i) and p2c (read at the key position
// %j and the bucket of (i, j), which saturates from |i - j| = M = 128 for
// log<64, 128>): c2p per block; p2c's two saturated columns (127: keys
// before the band, i - j >= M; 0: keys after it) once per head, and per
// block the band of min(2048 + 2·127, Lk) keys that starts at row0 - 127
// (or earlier, to end at Lk; at 0 at least). score_mod reads the band's row
// j - start when j is in it, else the column of j's side. With a q_offset
// the rows are not blocked (the table's rows would not start at the
// block's first row).
// CHECK-LABEL: func.func @c2p_p2c
// NARROW-LABEL: func.func @c2p_p2c
// CHECK: scf.for
// CHECK: tensor.extract_slice %arg3[%{{.*}}, 0, 127] [1, 16, 1]
// CHECK: %[[BEFORE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x?x1xf32>)
// CHECK: tensor.extract_slice %arg3[%{{.*}}, 0, 0] [1, 16, 1]
// CHECK: %[[AFTER:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x?x1xf32>)
// CHECK: scf.for %[[R0:[a-z0-9_]+]] =
// Both tables only for the columns between the buckets of the distances
// their rows see (bucket-columns): c2p's of the block's rows against every
// key, p2c's of the block's rows against the band's keys.
// CHECK: %[[REM:.*]] = arith.remui %{{.*}}, %c16 : index
// CHECK: %[[LO:.*]] = arith.subi %{{.*}}, %[[REM]] : index
// CHECK: %[[C2PT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x?x16xf32>, tensor<1x16x?xf32>)
// CHECK: %[[C2P:.*]] = tensor.insert_slice %[[C2PT]] into %{{.*}}[0, 0, 0, %[[LO]]]
// CHECK: %[[LEN:.*]] = arith.minsi %[[LK:.*]], %c2302 : index
// CHECK: %[[FROM:.*]] = arith.subi %[[R0]], %c127 : index
// CHECK: %[[LAST:.*]] = arith.subi %[[LK]], %[[LEN]] : index
// CHECK: %[[S0:.*]] = arith.minsi %[[FROM]], %[[LAST]] : index
// CHECK: %[[START:.*]] = arith.maxsi %[[S0]], %c0 : index
// The band's keys [start, start + len): the smallest distance is row0 -
// (start + len - 1), the largest row0 + rows - 1 - start.
// CHECK: %[[BANDPAST:.*]] = arith.addi %[[START]], %[[LEN]] : index
// CHECK: %[[BANDLAST:.*]] = arith.subi %[[BANDPAST]], %c1 : index
// CHECK: arith.subi %[[R0]], %[[BANDLAST]] : index
// CHECK: %[[REM2:.*]] = arith.remui %{{.*}}, %c16 : index
// CHECK: %[[LO2:.*]] = arith.subi %{{.*}}, %[[REM2]] : index
// CHECK: tensor.extract_slice %arg1[0, %{{.*}}, %[[START]], 0] [1, 1, %[[LEN]], 16]
// CHECK: tensor.extract_slice %arg3[%{{.*}}, 0, %[[LO2]]]
// CHECK: %[[BANDT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x?x?xf32>)
// CHECK: %[[BAND:.*]] = tensor.insert_slice %[[BANDT]] into %{{.*}}[0, 0, 0, %[[LO2]]]
// CHECK: rpe.attention {{.*}} q_offset(%[[R0]])
// CHECK: ^bb0(%{{.*}}: f32, %[[BA:.*]]: index, %[[HA:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[IL:.*]] = arith.subi %[[I]], %[[R0]]
// CHECK: %[[BK:.*]] = rpe.bucket %[[I]], %[[J]]
// CHECK: tensor.extract %[[C2P]][%[[BA]], %[[HA]], %[[IL]], %[[BK]]]
// CHECK: %[[JL:.*]] = arith.subi %[[J]], %[[START]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[JL]], %[[LEN]] : index
// CHECK: %[[ROW:.*]] = arith.select %[[IN]], %[[JL]], %c0 : index
// CHECK: %[[ISBEFORE:.*]] = arith.cmpi slt, %[[J]], %[[START]] : index
// CHECK: %[[EB:.*]] = tensor.extract %[[BEFORE]][%[[BA]], %[[HA]], %[[J]], %c0]
// CHECK: %[[EA:.*]] = tensor.extract %[[AFTER]][%[[BA]], %[[HA]], %[[J]], %c0]
// CHECK: %[[EDGE:.*]] = arith.select %[[ISBEFORE]], %[[EB]], %[[EA]] : f32
// CHECK: %[[P:.*]] = tensor.extract %[[BAND]][%[[BA]], %[[HA]], %[[ROW]], %[[BK]]]
// CHECK: %[[P2C:.*]] = arith.select %[[IN]], %[[P]], %[[EDGE]] : f32
// CHECK: arith.addf %{{.*}}, %[[P2C]] : f32
// By default both tables per group of 24 rows: c2p's of query rows, p2c's
// of the band's keys [k, k + n), k = start + s, whose smallest distance is
// row0 - (k + n - 1).
// GROUPS-LABEL: func.func @c2p_p2c
// GROUPS: scf.for
// GROUPS: scf.for %[[R0:[a-z0-9_]+]] =
// GROUPS: scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (24)
// GROUPS: tensor.parallel_insert_slice
// GROUPS: %[[LEN:.*]] = arith.minsi %{{.*}}, %c2302 : index
// GROUPS: %[[START:.*]] = arith.maxsi %{{.*}}, %c0 : index
// GROUPS: scf.forall (%[[S:.*]]) = (0) to (%[[LEN]]) step (24)
// GROUPS: %[[N:.*]] = arith.minsi %{{.*}}, %c24 : index
// GROUPS: %[[K:.*]] = arith.addi %[[START]], %[[S]] : index
// GROUPS: %[[KPAST:.*]] = arith.addi %[[K]], %[[N]] : index
// GROUPS: %[[KLAST:.*]] = arith.subi %[[KPAST]], %c1 : index
// GROUPS: arith.subi %[[R0]], %[[KLAST]] : index
// GROUPS: tensor.extract_slice %arg1[0, %{{.*}}, %[[K]], 0] [1, 1, %[[N]], 16]
// GROUPS: tensor.parallel_insert_slice
// Causal with key_lengths: a group of band keys [k, k + n) ends at
// min(k + n - 1, KL); when no key is left (k > KL) its range is that of
// the one pair (row0, KL); then both distances are clamped at 0.
// GROUPS-LABEL: func.func @c2p_p2c_masked
// GROUPS: %[[L:.*]] = tensor.extract %arg4[%{{.*}}] : tensor<1xi32>
// GROUPS-NEXT: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// GROUPS-NEXT: %[[LEN1:.*]] = arith.subi %[[LI]], %c1 : index
// GROUPS-NEXT: %[[KL:.*]] = arith.maxsi %[[LEN1]], %c0 : index
// GROUPS: scf.for %[[R0:[a-z0-9_]+]] =
// GROUPS: %[[ROWS:.*]] = arith.minsi %{{.*}}, %c2048 : index
// GROUPS: tensor.parallel_insert_slice
// GROUPS: %[[LEN:.*]] = arith.minsi %{{.*}}, %c2302 : index
// GROUPS: scf.forall (%[[S:.*]]) = (0) to (%[[LEN]]) step (24)
// GROUPS: %[[K:.*]] = arith.addi %{{.*}}, %[[S]] : index
// GROUPS: %[[KPAST:.*]] = arith.addi %[[K]], %{{.*}} : index
// GROUPS-NEXT: %[[KLAST:.*]] = arith.subi %[[KPAST]], %c1 : index
// GROUPS: %[[KLV:.*]] = arith.minsi %[[KLAST]], %[[KL]] : index
// GROUPS-NEXT: %[[NONE:.*]] = arith.cmpi sgt, %[[K]], %[[KLV]] : index
// GROUPS-NEXT: %[[QL:.*]] = arith.select %[[NONE]], %[[R0]], %{{.*}} : index
// GROUPS-NEXT: %[[KF:.*]] = arith.select %[[NONE]], %[[KLV]], %[[K]] : index
// GROUPS-NEXT: %[[QF:.*]] = arith.maxsi %[[R0]], %[[KLV]] : index
// GROUPS-NEXT: %[[QL2:.*]] = arith.maxsi %[[QL]], %[[KF]] : index
// GROUPS-NEXT: arith.subi %[[QF]], %[[KLV]] : index
// GROUPS: arith.subi %[[QL2]], %[[KF]] : index
// GROUPS: tensor.parallel_insert_slice
// key-band=0: p2c whole per head, before the loop over query blocks (every
// column: bucket-columns is for tables computed per block).
// NOBAND-LABEL: func.func @c2p_p2c
// NOBAND: scf.for
// NOBAND: %[[P2C:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x?x16xf32>, tensor<1x16x128xf32>)
// NOBAND: scf.for %[[R0:[a-z0-9_]+]] =
// NOBAND: %[[C2PT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x?x16xf32>, tensor<1x16x?xf32>)
// NOBAND: %[[C2P:.*]] = tensor.insert_slice %[[C2PT]]
// NOBAND: rpe.attention {{.*}} q_offset(%[[R0]])
// NOBAND: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// NOBAND: %[[IL:.*]] = arith.subi %[[I]], %[[R0]]
// NOBAND-DAG: tensor.extract %[[C2P]][%{{.*}}, %{{.*}}, %[[IL]], %{{.*}}]
// NOBAND-DAG: tensor.extract %[[P2C]][%{{.*}}, %{{.*}}, %[[J]], %{{.*}}]
// NOBAND-NOT: arith.select
// NOBAND: rpe.yield
// With a q_offset (no query blocks) the heads stay one after another
// whatever num-threads: a thread would hold its head's whole tables.
// PARBLOCK-LABEL: func.func @with_q_offset
// PARBLOCK-NOT: scf.forall
// PARBLOCK: scf.for
// PARBLOCK: } {rpe.split_heads}
// CHECK-LABEL: func.func @with_q_offset
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: rpe.attention {{.*}} q_offset(%arg3)
// CHECK: } {rpe.split_heads}

#q = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#p = affine_map<(b, h, i, d, n) -> (h, d, n)>
#o = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @c2p_p2c(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %pk: tensor<2x16x128xf32>, %pq: tensor<2x16x128xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %lq = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %lk = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%lq) : tensor<1x2x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x?x128xf32>) -> tensor<1x2x?x128xf32>
  %c2p = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<1x2x?x16xf32>, tensor<2x16x128xf32>) outs(%f : tensor<1x2x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x128xf32>
  %e2 = tensor.empty(%lk) : tensor<1x2x?x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x?x128xf32>) -> tensor<1x2x?x128xf32>
  %p2c = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%k, %pq : tensor<1x2x?x16xf32>, tensor<2x16x128xf32>) outs(%f2 : tensor<1x2x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x128xf32>
  %0 = rpe.attention %q, %k, %k : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %x = tensor.extract %c2p[%b, %h, %i, %bk] : tensor<1x2x?x128xf32>
    %y = tensor.extract %p2c[%b, %h, %j, %bk] : tensor<1x2x?x128xf32>
    %r = arith.addf %s, %x : f32
    %r2 = arith.addf %r, %y : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

func.func @c2p_p2c_masked(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %pk: tensor<2x16x128xf32>, %pq: tensor<2x16x128xf32>, %len: tensor<1xi32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %lq = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %lk = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%lq) : tensor<1x2x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x?x128xf32>) -> tensor<1x2x?x128xf32>
  %c2p = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<1x2x?x16xf32>, tensor<2x16x128xf32>) outs(%f : tensor<1x2x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x128xf32>
  %e2 = tensor.empty(%lk) : tensor<1x2x?x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x?x128xf32>) -> tensor<1x2x?x128xf32>
  %p2c = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%k, %pq : tensor<1x2x?x16xf32>, tensor<2x16x128xf32>) outs(%f2 : tensor<1x2x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x128xf32>
  %0 = rpe.attention %q, %k, %k key_lengths(%len : tensor<1xi32>) causal : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %x = tensor.extract %c2p[%b, %h, %i, %bk] : tensor<1x2x?x128xf32>
    %y = tensor.extract %p2c[%b, %h, %j, %bk] : tensor<1x2x?x128xf32>
    %r = arith.addf %s, %x : f32
    %r2 = arith.addf %r, %y : f32
    rpe.yield %r2 : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

func.func @with_q_offset(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %pk: tensor<2x16x128xf32>, %off: index) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %lq = tensor.dim %q, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%lq) : tensor<1x2x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x?x128xf32>) -> tensor<1x2x?x128xf32>
  %c2p = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<1x2x?x16xf32>, tensor<2x16x128xf32>) outs(%f : tensor<1x2x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x128xf32>
  %0 = rpe.attention %q, %k, %k q_offset(%off) : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %row = arith.subi %i, %off : index
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %x = tensor.extract %c2p[%b, %h, %row, %bk] : tensor<1x2x?x128xf32>
    %r = arith.addf %s, %x : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

// -----

// The key band for clip and t5 buckets: clip<64> saturates from |i - j| =
// 64 (columns 128 before the band, 0 after; bands of 2048 + 2·63 keys);
// t5<32, 128, bidirectional> from 91 (HF's log buckets reach 15 / 31
// before max_distance; bands of 2048 + 2·90). The t5 table has 32 columns:
// split only with min-table-columns=8.
// CHECK-LABEL: func.func @band_clip
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 128] [1, 16, 1]
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0] [1, 16, 1]
// CHECK: scf.for
// CHECK: arith.minsi %{{.*}}, %c2174 : index
// CHECK: arith.subi %{{.*}}, %c63 : index
// Clip buckets are monotonic in i - j: the band's columns of the block.
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x?x16xf32>, tensor<1x16x?xf32>)
// CHECK-LABEL: func.func @band_t5
// CHECK-NOT: scf.for
// NARROW-LABEL: func.func @band_t5
// NARROW: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 15] [1, 16, 1]
// NARROW: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 31] [1, 16, 1]
// NARROW: scf.for
// NARROW: arith.minsi %{{.*}}, %c2228 : index
// NARROW: arith.subi %{{.*}}, %c90 : index
// Bidirectional t5 buckets are not monotonic in i - j (each direction has
// its half): every column.
// NARROW: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x?x16xf32>, tensor<1x16x32xf32>)

#kq = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#kp = affine_map<(b, h, i, d, n) -> (h, d, n)>
#ko = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @band_clip(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %pq: tensor<2x16x129xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %lk = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%lk) : tensor<1x2x?x129xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x?x129xf32>) -> tensor<1x2x?x129xf32>
  %p2c = linalg.generic {indexing_maps = [#kq, #kp, #ko], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%k, %pq : tensor<1x2x?x16xf32>, tensor<2x16x129xf32>) outs(%f : tensor<1x2x?x129xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x129xf32>
  %0 = rpe.attention %q, %k, %k : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by clip<max_distance = 64>
    %y = tensor.extract %p2c[%b, %h, %j, %bk] : tensor<1x2x?x129xf32>
    %r = arith.addf %s, %y : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

func.func @band_t5(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %pq: tensor<2x16x32xf32>) -> tensor<1x2x?x16xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %lk = tensor.dim %k, %c2 : tensor<1x2x?x16xf32>
  %e = tensor.empty(%lk) : tensor<1x2x?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32>
  %p2c = linalg.generic {indexing_maps = [#kq, #kp, #ko], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%k, %pq : tensor<1x2x?x16xf32>, tensor<2x16x32xf32>) outs(%f : tensor<1x2x?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x32xf32>
  %0 = rpe.attention %q, %k, %k : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
    %y = tensor.extract %p2c[%b, %h, %j, %bk] : tensor<1x2x?x32xf32>
    %r = arith.addf %s, %y : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf32>
}

// -----

// bucket-columns widens the range to whole 64-byte lines of the table's
// element type: 32 columns of f16 (16 of f32 above).
// CHECK-LABEL: func.func @c2p_f16
// CHECK: bufferization.alloc_tensor(%{{.*}}) : tensor<1x1x?x128xf16>
// CHECK: %[[REM:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK: arith.subi %{{.*}}, %[[REM]] : index
// CHECK: arith.ceildivui %{{.*}}, %c32 : index

#hq = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#hp = affine_map<(b, h, i, d, n) -> (h, d, n)>
#ho = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @c2p_f16(%q: tensor<1x2x?x16xf16>, %k: tensor<1x2x?x16xf16>, %pk: tensor<2x16x128xf16>) -> tensor<1x2x?x16xf16> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f16
  %l = tensor.dim %q, %c2 : tensor<1x2x?x16xf16>
  %e = tensor.empty(%l) : tensor<1x2x?x128xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<1x2x?x128xf16>) -> tensor<1x2x?x128xf16>
  %t = linalg.generic {indexing_maps = [#hq, #hp, #ho], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<1x2x?x16xf16>, tensor<2x16x128xf16>) outs(%f : tensor<1x2x?x128xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %m = arith.mulf %a, %b : f16
    %s = arith.addf %c, %m : f16
    linalg.yield %s : f16
  } -> tensor<1x2x?x128xf16>
  %0 = rpe.attention %q, %k, %k : tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16>, tensor<1x2x?x16xf16> -> tensor<1x2x?x16xf16> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<1x2x?x128xf16>
    %gf = arith.extf %g : f16 to f32
    %r = arith.addf %s, %gf : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x16xf16>
}

// -----

// Position tables transposed in the function (rpe-fuse-attention's
// projections): each head transposes only its own table's columns that
// the call reads, into a buffer of one head. At Lq = Lk = 24, log<64, 128>
// gives the buckets 64 ± 23, [41, 87]: whole lines of 16 f32, columns
// [32, 96) of 128. The edge columns of p2c's key band (0 and 127) lie
// outside: the band holds all 24 keys, so they are never selected. A
// transposed table that the function also returns stays whole.
// COLS-LABEL: func.func @transposed_tables
// COLS-NOT: tensor<2x16x128xf32>
// COLS: scf.for %{{.*}} = %c0 to %c2 step %c1
// COLS: %[[H:.*]] = arith.remui
// COLS: %[[PKB:.*]] = bufferization.alloc_tensor() : tensor<1x16x128xf32>
// COLS-NEXT: %[[PKS:.*]] = tensor.extract_slice %arg2[%[[H]], 32, 0] [1, 64, 16] [1, 1, 1] : tensor<2x128x16xf32> to tensor<1x64x16xf32>
// COLS-NEXT: %[[PKI:.*]] = tensor.extract_slice %[[PKB]][0, 0, 32] [1, 16, 64] [1, 1, 1] : tensor<1x16x128xf32> to tensor<1x16x64xf32>
// COLS-NEXT: %[[PKT:.*]] = linalg.generic {{.*}} ins(%[[PKS]] : tensor<1x64x16xf32>) outs(%[[PKI]] : tensor<1x16x64xf32>)
// COLS: %[[PQB:.*]] = bufferization.alloc_tensor() : tensor<1x16x128xf32>
// COLS-NEXT: %[[PQS:.*]] = tensor.extract_slice %arg3[%[[H]], 32, 0] [1, 64, 16] [1, 1, 1] : tensor<2x128x16xf32> to tensor<1x64x16xf32>
// COLS-NEXT: %[[PQI:.*]] = tensor.extract_slice %[[PQB]][0, 0, 32] [1, 16, 64] [1, 1, 1] : tensor<1x16x128xf32> to tensor<1x16x64xf32>
// COLS-NEXT: %[[PQT:.*]] = linalg.generic {{.*}} ins(%[[PQS]] : tensor<1x64x16xf32>) outs(%[[PQI]] : tensor<1x16x64xf32>)
// COLS: %[[PQ:.*]] = tensor.insert_slice %[[PQT]] into %[[PQB]][0, 0, 32] [1, 16, 64] [1, 1, 1]
// COLS-NOT: %arg2
// COLS-NOT: %arg3
// COLS: tensor.extract_slice %[[PQ]][0, 0, 127] [1, 16, 1]
// COLS: tensor.extract_slice %[[PQ]][0, 0, 0] [1, 16, 1]
// The groups' columns are the call's here: the slices of the one-head
// tables fold to the transposed tiles.
// COLS: linalg.generic {{.*}} ins(%{{.*}}, %[[PKT]] : tensor<1x1x24x16xf32>, tensor<1x16x64xf32>)
// COLS: linalg.generic {{.*}} ins(%{{.*}}, %[[PQT]] : tensor<1x1x24x16xf32>, tensor<1x16x64xf32>)
// COLS: rpe.attention
// COLS: } {rpe.split_heads}
// COLS-LABEL: func.func @transposed_table_returned
// COLS: %[[WHOLE:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<2x128x16xf32>) outs(%{{.*}} : tensor<2x16x128xf32>)
// COLS: scf.for
// COLS: bufferization.alloc_tensor() : tensor<1x16x128xf32>
// COLS-NEXT: tensor.extract_slice %arg3
// COLS-NOT: bufferization.alloc_tensor() : tensor<1x16x128xf32>
// COLS: tensor.extract_slice %[[WHOLE]][%{{.*}}, 0, 32] [1, 16, 64]
// COLS: } {rpe.split_heads}
// COLS: return %{{.*}}, %[[WHOLE]]

#tq = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#tp = affine_map<(b, h, i, d, n) -> (h, d, n)>
#to = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
#tt = affine_map<(h, d, n) -> (h, n, d)>
#ti = affine_map<(h, d, n) -> (h, d, n)>
func.func @transposed_tables(%q: tensor<1x2x24x16xf32>, %k: tensor<1x2x24x16xf32>, %pk: tensor<2x128x16xf32>, %pq: tensor<2x128x16xf32>) -> tensor<1x2x24x16xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<2x16x128xf32>
  %pkt = linalg.generic {indexing_maps = [#tt, #ti], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pk : tensor<2x128x16xf32>) outs(%et : tensor<2x16x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x16x128xf32>
  %pqt = linalg.generic {indexing_maps = [#tt, #ti], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pq : tensor<2x128x16xf32>) outs(%et : tensor<2x16x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x16x128xf32>
  %e = tensor.empty() : tensor<1x2x24x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x24x128xf32>) -> tensor<1x2x24x128xf32>
  %c2p = linalg.generic {indexing_maps = [#tq, #tp, #to], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pkt : tensor<1x2x24x16xf32>, tensor<2x16x128xf32>) outs(%f : tensor<1x2x24x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x24x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x24x128xf32>) -> tensor<1x2x24x128xf32>
  %p2c = linalg.generic {indexing_maps = [#tq, #tp, #to], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%k, %pqt : tensor<1x2x24x16xf32>, tensor<2x16x128xf32>) outs(%f2 : tensor<1x2x24x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x24x128xf32>
  %1 = rpe.attention %q, %k, %k : tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32> -> tensor<1x2x24x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %x = tensor.extract %c2p[%b, %h, %i, %bk] : tensor<1x2x24x128xf32>
    %y = tensor.extract %p2c[%b, %h, %j, %bk] : tensor<1x2x24x128xf32>
    %r = arith.addf %s, %x : f32
    %r2 = arith.addf %r, %y : f32
    rpe.yield %r2 : f32
  }
  return %1 : tensor<1x2x24x16xf32>
}

func.func @transposed_table_returned(%q: tensor<1x2x24x16xf32>, %k: tensor<1x2x24x16xf32>, %pk: tensor<2x128x16xf32>, %pq: tensor<2x128x16xf32>) -> (tensor<1x2x24x16xf32>, tensor<2x16x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<2x16x128xf32>
  %pkt = linalg.generic {indexing_maps = [#tt, #ti], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pk : tensor<2x128x16xf32>) outs(%et : tensor<2x16x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x16x128xf32>
  %pqt = linalg.generic {indexing_maps = [#tt, #ti], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pq : tensor<2x128x16xf32>) outs(%et : tensor<2x16x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x16x128xf32>
  %e = tensor.empty() : tensor<1x2x24x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x24x128xf32>) -> tensor<1x2x24x128xf32>
  %c2p = linalg.generic {indexing_maps = [#tq, #tp, #to], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pkt : tensor<1x2x24x16xf32>, tensor<2x16x128xf32>) outs(%f : tensor<1x2x24x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x24x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x24x128xf32>) -> tensor<1x2x24x128xf32>
  %p2c = linalg.generic {indexing_maps = [#tq, #tp, #to], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%k, %pqt : tensor<1x2x24x16xf32>, tensor<2x16x128xf32>) outs(%f2 : tensor<1x2x24x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x24x128xf32>
  %1 = rpe.attention %q, %k, %k : tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32> -> tensor<1x2x24x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %x = tensor.extract %c2p[%b, %h, %i, %bk] : tensor<1x2x24x128xf32>
    %y = tensor.extract %p2c[%b, %h, %j, %bk] : tensor<1x2x24x128xf32>
    %r = arith.addf %s, %x : f32
    %r2 = arith.addf %r, %y : f32
    rpe.yield %r2 : f32
  }
  return %1, %pkt : tensor<1x2x24x16xf32>, tensor<2x16x128xf32>
}

// -----

// Pairs that may not split evenly, and a batch only known at run time: the
// parts are 4 / gcd(B·H, 4), the gcd the largest divisor of 4 that divides
// B·H (a select per divisor); each thread takes B·H / 4 pairs whole and
// (B·H mod 4) / gcd parts. A causal attention's later rows cost more: its
// parts end where the rows' work, W(r) = r²/2 up to Lk and Lk²/2 +
// (r - Lk)·Lk after it, is (p + 1) / parts of W(Lq), rounded to 16 rows;
// W(Lk) and W(Lq) once, in front of the loop; the last part ends at Lq.
// PARTS4-LABEL: func.func @c2p_dynamic_batch
// PARTS4: %[[B:.*]] = tensor.dim %arg0, %c0
// PARTS4: %[[PAIRS:.*]] = arith.muli %[[B]], %c3
// PARTS4: %[[R2:.*]] = arith.remui %[[PAIRS]], %c2
// PARTS4: %[[D2:.*]] = arith.cmpi eq, %[[R2]], %c0
// PARTS4: %[[G2:.*]] = arith.select %[[D2]], %c2, %c1
// PARTS4: %[[R4:.*]] = arith.remui %[[PAIRS]], %c4
// PARTS4: %[[D4:.*]] = arith.cmpi eq, %[[R4]], %c0
// PARTS4: %[[G4:.*]] = arith.select %[[D4]], %c4, %[[G2]]
// PARTS4: %[[P:.*]] = arith.divui %c4, %[[G4]]
// PARTS4-NEXT: %[[W:.*]] = arith.divui %[[PAIRS]], %c4
// PARTS4-NEXT: %[[R:.*]] = arith.remui %[[PAIRS]], %c4
// PARTS4-NEXT: %[[S:.*]] = arith.divui %[[R]], %[[G4]]
// PARTS4-NEXT: %[[C:.*]] = arith.addi %[[W]], %[[S]]
// PARTS4-NEXT: %[[IT:.*]] = arith.muli %[[C]], %c4
// PARTS4-NEXT: scf.forall (%[[IV:.*]]) in (%[[IT]])
// PARTS4-NEXT: arith.divui %[[IV]], %[[C]]
// PARTS4-NEXT: arith.remui %[[IV]], %[[C]]
// PARTS4: } {rpe.split_heads}
// PARTS4-LABEL: func.func @c2p_causal
// PARTS4-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// PARTS4-DAG: %[[SIXTEEN:.*]] = arith.constant 1.600000e+01 : f64
// PARTS4: %[[LQ:.*]] = tensor.dim %arg0, %c2
// PARTS4: %[[LK:.*]] = tensor.dim %arg1, %c2
// PARTS4: %[[P:.*]] = arith.divui %c4, %{{.*}} : index
// PARTS4: %[[LQI:.*]] = arith.index_cast %[[LQ]] : index to i64
// PARTS4-NEXT: %[[LQF:.*]] = arith.sitofp %[[LQI]] : i64 to f64
// PARTS4-NEXT: %[[LKI:.*]] = arith.index_cast %[[LK]] : index to i64
// PARTS4-NEXT: %[[LKF:.*]] = arith.sitofp %[[LKI]] : i64 to f64
// PARTS4-NEXT: %[[LQ2:.*]] = arith.mulf %[[LQF]], %[[LQF]]
// PARTS4-NEXT: %[[TRI:.*]] = arith.mulf %[[LQ2]], %[[HALF]]
// PARTS4-NEXT: %[[LK2:.*]] = arith.mulf %[[LKF]], %[[LKF]]
// PARTS4-NEXT: %[[KNEE:.*]] = arith.mulf %[[LK2]], %[[HALF]]
// PARTS4-NEXT: %[[PAST:.*]] = arith.subf %[[LQF]], %[[LKF]]
// PARTS4-NEXT: %[[RECT:.*]] = arith.mulf %[[PAST]], %[[LKF]]
// PARTS4-NEXT: %[[KR:.*]] = arith.addf %[[KNEE]], %[[RECT]]
// PARTS4-NEXT: %[[WITHIN:.*]] = arith.cmpf ole, %[[LQF]], %[[LKF]]
// PARTS4-NEXT: %[[TOTAL:.*]] = arith.select %[[WITHIN]], %[[TRI]], %[[KR]]
// PARTS4: scf.forall
// PARTS4: %[[NPARTS:.*]] = arith.select %{{.*}}, %c1, %[[P]]
// PARTS4: %[[PART:.*]] = arith.select %{{.*}}, %c0, %{{.*}}
// PARTS4: %[[PARTSF:.*]] = arith.sitofp %{{.*}} : i64 to f64
// PARTS4: %[[PARTF:.*]] = arith.sitofp %{{.*}} : i64 to f64
// PARTS4-NEXT: %[[SC:.*]] = arith.mulf %[[TOTAL]], %[[PARTF]]
// PARTS4-NEXT: %[[SHARE:.*]] = arith.divf %[[SC]], %[[PARTSF]]
// PARTS4-NEXT: %[[TW:.*]] = arith.addf %[[SHARE]], %[[SHARE]]
// PARTS4-NEXT: %[[SQ:.*]] = math.sqrt %[[TW]]
// PARTS4-NEXT: %[[BEY:.*]] = arith.subf %[[SHARE]], %[[KNEE]]
// PARTS4-NEXT: %[[ROWS:.*]] = arith.divf %[[BEY]], %[[LKF]]
// PARTS4-NEXT: %[[AFTER:.*]] = arith.addf %[[LKF]], %[[ROWS]]
// PARTS4-NEXT: %[[WK:.*]] = arith.cmpf ole, %[[SHARE]], %[[KNEE]]
// PARTS4-NEXT: %[[R:.*]] = arith.select %[[WK]], %[[SQ]], %[[AFTER]]
// PARTS4-NEXT: %[[M:.*]] = arith.divf %[[R]], %[[SIXTEEN]]
// PARTS4-NEXT: %[[RD:.*]] = math.round %[[M]]
// PARTS4-NEXT: %[[CI:.*]] = arith.fptoui %[[RD]] : f64 to i64
// PARTS4-NEXT: %[[CX:.*]] = arith.index_castui %[[CI]] : i64 to index
// PARTS4-NEXT: %[[B16:.*]] = arith.muli %[[CX]], %c16
// PARTS4-NEXT: %[[START:.*]] = arith.minui %[[B16]], %[[LQ]]
// PARTS4-NEXT: %[[NEXT:.*]] = arith.addi %[[PART]], %c1
// PARTS4-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[NEXT]], %[[NPARTS]]
// PARTS4: math.sqrt
// PARTS4: %[[STOP:.*]] = arith.minui %{{.*}}, %[[LQ]]
// PARTS4-NEXT: %[[END:.*]] = arith.select %[[LAST]], %[[LQ]], %[[STOP]]
// PARTS4: scf.for %{{.*}} = %[[START]] to %[[END]] step %c1024
// PARTS4: } {rpe.split_heads}

// A causal attention sees only i - j >= 0: the c2p columns a group of rows
// [r, r + n) computes lie between the buckets of max(r - last key, 0) and
// max(r + n - 1, 0), not of r - last key (about half DeBERTa's columns).
// GROUPS-LABEL: func.func @c2p_causal
// GROUPS: %[[LK1:.*]] = arith.subi %{{.*}}, %c1 : index
// GROUPS-NEXT: %[[LASTKEY:.*]] = arith.maxsi %[[LK1]], %c0 : index
// GROUPS: scf.forall (%[[G:.*]]) = (0) to (%{{.*}}) step (24)
// GROUPS: %[[R:.*]] = arith.addi %{{.*}}, %[[G]] : index
// GROUPS-NEXT: %[[RN:.*]] = arith.addi %[[R]], %{{.*}} : index
// GROUPS-NEXT: %[[LASTROW:.*]] = arith.subi %[[RN]], %c1 : index
// GROUPS-NEXT: %[[QF:.*]] = arith.maxsi %[[R]], %[[LASTKEY]] : index
// GROUPS-NEXT: %[[QL:.*]] = arith.maxsi %[[LASTROW]], %c0 : index
// GROUPS-NEXT: arith.subi %[[QF]], %[[LASTKEY]] : index
// GROUPS: arith.cmpi slt, %[[QL]], %c0 : index
// GROUPS: } {rpe.split_heads}

#q = affine_map<(b, h, i, d, n) -> (b, h, i, d)>
#p = affine_map<(b, h, i, d, n) -> (h, d, n)>
#o = affine_map<(b, h, i, d, n) -> (b, h, i, n)>
func.func @c2p_dynamic_batch(%q: tensor<?x3x?x16xf32>, %k: tensor<?x3x?x16xf32>, %pk: tensor<3x16x128xf32>) -> tensor<?x3x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %nb = tensor.dim %q, %c0 : tensor<?x3x?x16xf32>
  %l = tensor.dim %q, %c2 : tensor<?x3x?x16xf32>
  %e = tensor.empty(%nb, %l) : tensor<?x3x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3x?x128xf32>) -> tensor<?x3x?x128xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<?x3x?x16xf32>, tensor<3x16x128xf32>) outs(%f : tensor<?x3x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x3x?x128xf32>
  %0 = rpe.attention %q, %k, %k : tensor<?x3x?x16xf32>, tensor<?x3x?x16xf32>, tensor<?x3x?x16xf32> -> tensor<?x3x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<?x3x?x128xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<?x3x?x16xf32>
}

func.func @c2p_causal(%q: tensor<?x3x?x16xf32>, %k: tensor<?x3x?x16xf32>, %pk: tensor<3x16x128xf32>) -> tensor<?x3x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %nb = tensor.dim %q, %c0 : tensor<?x3x?x16xf32>
  %l = tensor.dim %q, %c2 : tensor<?x3x?x16xf32>
  %e = tensor.empty(%nb, %l) : tensor<?x3x?x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3x?x128xf32>) -> tensor<?x3x?x128xf32>
  %t = linalg.generic {indexing_maps = [#q, #p, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%q, %pk : tensor<?x3x?x16xf32>, tensor<3x16x128xf32>) outs(%f : tensor<?x3x?x128xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x3x?x128xf32>
  %0 = rpe.attention %q, %k, %k causal : tensor<?x3x?x16xf32>, tensor<?x3x?x16xf32>, tensor<?x3x?x16xf32> -> tensor<?x3x?x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by log<position_buckets = 64, max_relative_positions = 128>
    %g = tensor.extract %t[%b, %h, %i, %bk] : tensor<?x3x?x128xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<?x3x?x16xf32>
}
