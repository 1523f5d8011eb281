// RUN: rpe-opt %s -rpe-vectorize-contractions='vector-width=8 tile-m=2 tile-n=2' -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-vectorize-contractions='vector-width=8 tile-m=2 tile-n=1 fma=false block-n=0' -split-input-file | FileCheck %s --check-prefix=NOFMA
// RUN: not rpe-opt %s -rpe-vectorize-contractions='tile-m=0' 2>&1 | FileCheck %s --check-prefix=BADM --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-contractions='block-n=-1' 2>&1 | FileCheck %s --check-prefix=BADN --implicit-check-not="current operation"
// RUN: rpe-opt %s -rpe-vectorize-contractions='vector-width=8 tile-m=2 tile-n=2 pack-min-rows=0' -split-input-file | FileCheck %s --check-prefix=NOPACK
// RUN: not rpe-opt %s -rpe-vectorize-contractions='pack-min-rows=-1' 2>&1 | FileCheck %s --check-prefix=BADPACK --implicit-check-not="current operation"
// BADPACK: error: rpe-vectorize-contractions: pack-min-rows must not be negative, got -1

// BADM: error: rpe-vectorize-contractions: tile-m and tile-n must be in [1, 16], got 0 and 2
// A register block of 100000 rows would be unrolled (minutes to compile).
// RUN: not rpe-opt %s -rpe-vectorize-contractions='tile-m=100000' 2>&1 | FileCheck %s --check-prefix=BIGM --implicit-check-not="current operation"
// BIGM: error: rpe-vectorize-contractions: tile-m and tile-n must be in [1, 16], got 100000 and 2
// RUN: not rpe-opt %s -rpe-vectorize-contractions='vector-width=1000' 2>&1 | FileCheck %s --check-prefix=BIGW --implicit-check-not="current operation"
// BIGW: error: rpe-vectorize-contractions: vector-width must be in [1, 64], got 1000
// BADN: error: rpe-vectorize-contractions: block-n must not be negative, got -1

// A dynamic matmul: cache blocks of 512 columns and 256 values of k, row
// blocks of 2 rows × 2 vectors of 8 lanes in registers (loaded from C,
// four FMA chains over k, stored back), a masked block for the last columns
// and one row at a time for the last rows. B's cache block is read through
// a view at (k - pc, column - jc): B's own block, or, when C has at least
// pack-min-rows (64) rows, its copy in a buffer allocated once, whose rows
// are the block's rounded up to whole vectors plus one vector.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[AM:[a-z0-9_]+]]: memref<?x?xf32>, %[[BM:[a-z0-9_]+]]: memref<?x?xf32>, %[[CM:[a-z0-9_]+]]: memref<?x?xf32>)
// CHECK-NOT: linalg.matmul
// CHECK-DAG: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:[a-z0-9_]+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:[a-z0-9_]+]] = arith.constant 8 : index
// CHECK-DAG: %[[C16:[a-z0-9_]+]] = arith.constant 16 : index
// CHECK-DAG: %[[C64:[a-z0-9_]+]] = arith.constant 64 : index
// CHECK-DAG: %[[C256:[a-z0-9_]+]] = arith.constant 256 : index
// CHECK-DAG: %[[C512:[a-z0-9_]+]] = arith.constant 512 : index
// CHECK: %[[M:.*]] = memref.dim %[[AM]], %[[C0]]
// CHECK: %[[KS:.*]] = memref.dim %[[AM]], %[[C1]]
// CHECK: %[[N:.*]] = memref.dim %[[BM]], %[[C1]]
// CHECK: %[[PACKING:.*]] = arith.cmpi uge, %[[M]], %[[C64]]
// CHECK: %[[COLS:.*]] = arith.minui %[[N]], %[[C512]]
// CHECK: %[[VECS:.*]] = arith.ceildivui %[[COLS]], %[[C8]]
// CHECK: %[[VECS1:.*]] = arith.addi %[[VECS]], %[[C1]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[VECS1]], %[[C8]]
// CHECK: %[[KROWS:.*]] = arith.minui %[[KS]], %[[C256]]
// CHECK: %[[ROWS:.*]] = arith.select %[[PACKING]], %[[KROWS]], %[[C0]]
// CHECK: %[[PACK:.*]] = memref.alloc(%[[ROWS]], %[[STRIDE]]) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK: scf.for %[[JC:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %[[C512]]
// CHECK:   scf.for %[[PC:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %[[C256]]
// CHECK:     %[[DIRECT:.*]] = memref.subview %[[BM]][%[[PC]], %[[JC]]] [%[[KL:.*]], %[[NL:.*]]] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:     %[[BLOCK:.*]] = scf.if %[[PACKING]] -> (memref<?x?xf32, strided<[?, 1], offset: ?>>) {
// CHECK:       %[[COPY:.*]] = memref.subview %[[PACK]][0, 0] [%[[KL]], %[[NL]]] [1, 1]
// CHECK:       %[[COPYV:.*]] = memref.cast %[[COPY]]
// CHECK:       scf.for %[[KK:.*]] = %[[C0]] to %[[KL]] step %[[C1]]
// CHECK:         scf.for %[[CC:.*]] = %[[C0]] to %[[NL]] step %[[C8]]
// CHECK:           %[[PART:.*]] = vector.create_mask
// CHECK:           %[[V:.*]] = vector.maskedload %[[DIRECT]][%[[KK]], %[[CC]]], %[[PART]]
// CHECK:           vector.maskedstore %[[COPY]][%[[KK]], %[[CC]]], %[[PART]], %[[V]]
// CHECK:       scf.yield %[[COPYV]]
// CHECK:     } else {
// CHECK:       scf.yield %[[DIRECT]]
// CHECK:     scf.for %[[I:[a-z0-9_]+]] =
// CHECK:       scf.for %[[J:[a-z0-9_]+]] = %[[JC]] to %{{.*}} step %[[C16]]
// CHECK:         %[[C0V:[a-z0-9_]+]] = vector.load %[[CM]][%[[I]], %[[J]]] : memref<?x?xf32>, vector<8xf32>
// CHECK-COUNT-3: vector.load %[[CM]]
// CHECK:         %[[R:[a-z0-9_]+]]:4 = scf.for %[[K:[a-z0-9_]+]] = %[[PC]] to %{{.*}} step %{{.*}} iter_args
// CHECK:           %[[KB:.*]] = arith.subi %[[K]], %[[PC]]
// CHECK:           %[[JB:.*]] = arith.subi %[[J]], %[[JC]]
// CHECK:           vector.load %[[BLOCK]][%[[KB]], %[[JB]]] : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
// CHECK:           vector.load %[[BLOCK]][%[[KB]], %{{.*}}] : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
// CHECK:           %[[A0:[a-z0-9_]+]] = memref.load %[[AM]][%[[I]], %[[K]]]
// CHECK:           %[[S0:[a-z0-9_]+]] = vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK-COUNT-2:   vector.fma %[[S0]]
// CHECK:           memref.load %[[AM]]
// CHECK-COUNT-2:   vector.fma
// CHECK:           scf.yield
// CHECK-COUNT-4: vector.store %[[R]]
// CHECK:       scf.if
// CHECK:         vector.create_mask
// CHECK:         vector.create_mask
// CHECK-COUNT-4: vector.maskedload %[[CM]]
// CHECK:         scf.for
// CHECK-COUNT-2:   vector.maskedload %[[BLOCK]]
// CHECK-COUNT-4: vector.maskedstore %[[CM]]
// CHECK:     scf.for
// CHECK:       scf.for
// CHECK:         scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>)
// CHECK: memref.dealloc %[[PACK]]
// NOPACK-LABEL: func.func @matmul
// NOPACK-NOT: memref.alloc
// NOPACK: %[[DIRECT:.*]] = memref.subview %arg1
// NOPACK-NOT: scf.if
// NOPACK: vector.load %[[DIRECT]]
// NOPACK-NOT: memref.dealloc
// NOFMA-LABEL: func.func @matmul
// NOFMA-NOT: vector.fma
// NOFMA: %[[NB:[a-z0-9_]+]] = arith.maxui
// NOFMA: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[NB]]
// NOFMA: arith.mulf {{.*}} : vector<8xf32>
// NOFMA: arith.addf {{.*}} : vector<8xf32>
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// -----

// Batch dimensions become loops; A read transposed (k, i) and a broadcast B
// (no batch dimension) come from the indexing maps. f64 vectors hold half
// as many lanes.
// CHECK-LABEL: func.func @batched_transposed_a
// CHECK: scf.for %[[B:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step
// Ten rows, fewer than pack-min-rows: B's block is read in place.
// CHECK-NOT: memref.alloc
// CHECK: %[[BLOCK:.*]] = memref.subview %{{.*}} : memref<32x24xf64> to memref<?x?xf64, strided<[24, 1], offset: ?>>
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %[[PC:.*]] to {{.*}} -> (vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>)
// CHECK:   %[[KB:.*]] = arith.subi %[[K]], %[[PC]]
// CHECK:   vector.load %[[BLOCK]][%[[KB]], %{{.*}}] : memref<?x?xf64, strided<[24, 1], offset: ?>>, vector<4xf64>
// CHECK:   memref.load %{{.*}}[%[[B]], %[[K]], %{{.*}}] : memref<3x32x10xf64>
// CHECK-NOT: linalg.generic
func.func @batched_transposed_a(%a: memref<3x32x10xf64>, %b: memref<32x24xf64>, %c: memref<3x10x24xf64>) {
  linalg.generic {indexing_maps = [affine_map<(bb, i, j, k) -> (bb, k, i)>,
                                   affine_map<(bb, i, j, k) -> (k, j)>,
                                   affine_map<(bb, i, j, k) -> (bb, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<3x32x10xf64>, memref<32x24xf64>) outs(%c : memref<3x10x24xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %m = arith.mulf %y, %x : f64
    %s = arith.addf %m, %acc : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// A strided view of C whose rows are contiguous is fine.
// CHECK-LABEL: func.func @strided_output
// CHECK: vector.store {{.*}} : memref<8x16xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
func.func @strided_output(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32, strided<[64, 1], offset: ?>>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32, strided<[64, 1], offset: ?>>)
  return
}

// -----

// Left alone: B reduced along its last dimension (q·kᵀ form: no vector runs
// along the columns), a column-strided C, integers, other bodies, tensors.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: vector.
// CHECK-COUNT-5: linalg.
// CHECK: return
func.func @left_alone(%a: memref<8x4xf32>, %bt: memref<16x4xf32>, %c: memref<8x16xf32>,
                      %b: memref<4x16xf32>, %cs: memref<8x16xf32, strided<[1, 8]>>,
                      %ai: memref<8x4xi32>, %bi: memref<4x16xi32>, %ci: memref<8x16xi32>,
                      %ta: tensor<8x4xf32>, %tb: tensor<4x16xf32>, %tc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                 affine_map<(i, j, k) -> (j, k)>,
                                 affine_map<(i, j, k) -> (i, j)>]
      ins(%a, %bt : memref<8x4xf32>, memref<16x4xf32>) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%cs : memref<8x16xf32, strided<[1, 8]>>)
  linalg.matmul ins(%ai, %bi : memref<8x4xi32>, memref<4x16xi32>) outs(%ci : memref<8x16xi32>)
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                   affine_map<(i, j, k) -> (k, j)>,
                                   affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.maximumf %m, %acc : f32
    linalg.yield %s : f32
  }
  %r = linalg.matmul ins(%ta, %tb : tensor<8x4xf32>, tensor<4x16xf32>) outs(%tc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// C filled right before the op with a scalar, k static and within one k
// block: the accumulators start from that scalar (no load of C) and the
// fill goes. With k over several k blocks the first one starts from it,
// the others load what the first stored.
// CHECK-LABEL: func.func @filled
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<?x64xf32>, %[[B:[a-z0-9]+]]: memref<64x32xf32>, %[[C:[a-z0-9]+]]: memref<?x32xf32>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<1.500000e+00> : vector<8xf32>
// CHECK-NOT: linalg.fill
// CHECK-NOT: vector.load %[[C]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[S]], %{{.*}} = %[[S]], %{{.*}} = %[[S]], %{{.*}} = %[[S]])
// CHECK-NOT: vector.load %[[C]]
// CHECK: vector.store %{{.*}}, %[[C]]
// CHECK: scf.if
// CHECK-NOT: vector.maskedload %[[C]]
// CHECK: vector.maskedstore %[[C]]
// Across k blocks (k = 300 > 256).
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK: scf.if %[[EQ]] -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK:   scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: } else {
// CHECK:   vector.load %{{.*}} : memref<?x32xf32>, vector<8xf32>
func.func @filled(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>,
                  %a2: memref<?x300xf32>, %b2: memref<300x32xf32>, %c2: memref<?x32xf32>) {
  %v = arith.constant 1.5 : f32
  linalg.fill ins(%v : f32) outs(%c : memref<?x32xf32>)
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  linalg.fill ins(%v : f32) outs(%c2 : memref<?x32xf32>)
  linalg.matmul ins(%a2, %b2 : memref<?x300xf32>, memref<300x32xf32>) outs(%c2 : memref<?x32xf32>)
  return
}

// -----

// A dynamic k may be 0: the op then writes nothing, and C must hold the
// fill's value. The fill runs only then; otherwise the first k block starts
// from the fill's value (k may span several k blocks) and later ones load C.
// CHECK-LABEL: func.func @filled_dynamic_k
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<?x?xf32>, %[[B:[a-z0-9]+]]: memref<?x32xf32>, %[[C:[a-z0-9]+]]: memref<?x32xf32>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<1.500000e+00> : vector<8xf32>
// CHECK-DAG: %[[V:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[K:.*]] = memref.dim %[[A]], %[[C1]]
// CHECK: %[[NOK:.*]] = arith.cmpi eq, %[[K]], %[[C0]]
// CHECK-NEXT: scf.if %[[NOK]] {
// CHECK-NEXT:   linalg.fill ins(%[[V]] : f32) outs(%[[C]] : memref<?x32xf32>)
// CHECK-NEXT: }
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[PC:.*]] = %[[C0]] to %[[K]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[PC]], %[[C0]]
// CHECK: scf.if %[[FIRST]] -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-NEXT: scf.yield %[[S]], %[[S]], %[[S]], %[[S]]
// CHECK-NEXT: } else {
// CHECK-NEXT: vector.load %[[C]]
// CHECK-NOT: linalg.fill
func.func @filled_dynamic_k(%a: memref<?x?xf32>, %b: memref<?x32xf32>, %c: memref<?x32xf32>) {
  %v = arith.constant 1.5 : f32
  linalg.fill ins(%v : f32) outs(%c : memref<?x32xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x32xf32>) outs(%c : memref<?x32xf32>)
  return
}

// -----

// The fill stays, and C is loaded: a fill not right before the op, a fill
// of another buffer, and A read from a view of C's buffer (it must read
// the fill's value).
// CHECK-LABEL: func.func @fill_kept
// CHECK: linalg.fill {{.*}} outs(%arg2 :
// CHECK: memref.copy
// CHECK: vector.load %arg2
// CHECK: linalg.fill {{.*}} outs(%arg6 :
// CHECK: vector.load %arg5
// CHECK: linalg.fill {{.*}} outs(%arg7 :
// CHECK: vector.load %arg7
func.func @fill_kept(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>,
                     %a2: memref<?x64xf32>, %b2: memref<64x32xf32>, %c2: memref<?x32xf32>,
                     %other: memref<?x32xf32>, %sq: memref<32x32xf32>,
                     %b4: memref<8x32xf32>) {
  %v = arith.constant 0.0 : f32
  linalg.fill ins(%v : f32) outs(%c : memref<?x32xf32>)
  memref.copy %other, %c : memref<?x32xf32> to memref<?x32xf32>
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  linalg.fill ins(%v : f32) outs(%other : memref<?x32xf32>)
  linalg.matmul ins(%a2, %b2 : memref<?x64xf32>, memref<64x32xf32>) outs(%c2 : memref<?x32xf32>)
  %a4 = memref.subview %sq[0, 0] [32, 8] [1, 1] : memref<32x32xf32> to memref<32x8xf32, strided<[32, 1]>>
  linalg.fill ins(%v : f32) outs(%sq : memref<32x32xf32>)
  linalg.matmul ins(%a4, %b4 : memref<32x8xf32, strided<[32, 1]>>, memref<8x32xf32>) outs(%sq : memref<32x32xf32>)
  return
}

// -----

// Static row counts decide at build time: 64 rows pack (no run-time
// check), 63 do not. B in C's buffer is not packed either: the kernel
// would read all of B's block before writing C, not as it goes.
// CHECK-LABEL: func.func @pack_static
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<64x8xf32>, %[[B:[a-z0-9]+]]: memref<8x32xf32>, %[[C:[a-z0-9]+]]: memref<64x32xf32>
// CHECK-NOT: arith.cmpi uge
// CHECK: %[[PACK:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK-NOT: scf.if
// CHECK: memref.subview %[[PACK]][0, 0]
// CHECK: memref.dealloc %[[PACK]]
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @pack_static(%a: memref<64x8xf32>, %b: memref<8x32xf32>, %c: memref<64x32xf32>,
                       %a2: memref<63x8xf32>, %c2: memref<63x32xf32>,
                       %a3: memref<64x64xf32>, %sq: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x8xf32>, memref<8x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a2, %b : memref<63x8xf32>, memref<8x32xf32>) outs(%c2 : memref<63x32xf32>)
  linalg.matmul ins(%a3, %sq : memref<64x64xf32>, memref<64x64xf32>) outs(%sq : memref<64x64xf32>)
  return
}
