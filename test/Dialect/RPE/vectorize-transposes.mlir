// RUN: rpe-opt %s -rpe-vectorize-transposes=vector-width=4 -split-input-file | FileCheck %s
// RUN: not rpe-opt %s -rpe-vectorize-transposes=vector-width=12 2>&1 | FileCheck %s --check-prefix=BADW --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-transposes=vector-width=1 2>&1 | FileCheck %s --check-prefix=BADW1 --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-vectorize-transposes=vector-width=128 2>&1 | FileCheck %s --check-prefix=BADW128 --implicit-check-not="current operation"

// BADW: error: rpe-vectorize-transposes: vector-width must be a power of two in 2..64, got 12
// BADW1: error: rpe-vectorize-transposes: vector-width must be a power of two in 2..64, got 1
// BADW128: error: rpe-vectorize-transposes: vector-width must be a power of two in 2..64, got 128

// Static sizes that fill whole 4 × 4 blocks: per block, 4 row loads along
// the input's unit-stride dimension, 2 rounds of 4 shuffles, 4 stores along
// the output's; nothing masked.
// CHECK-LABEL: func.func @static
// CHECK-SAME: (%[[IN:.*]]: memref<8x4xf32>, %[[OUT:.*]]: memref<4x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: scf.for %[[A:.*]] = %{{.*}} to %{{.*}} step %[[C4:.*]] {
// CHECK: %[[R0:.*]] = vector.load %[[IN]][%[[A]], %[[C0:.*]]] : memref<8x4xf32>, vector<4xf32>
// CHECK: %[[R1:.*]] = vector.load %[[IN]]
// CHECK: %[[R2:.*]] = vector.load %[[IN]]
// CHECK: %[[R3:.*]] = vector.load %[[IN]]
// CHECK: %[[S0:.*]] = vector.shuffle %[[R0]], %[[R2]] [0, 1, 4, 5]
// CHECK: %[[S1:.*]] = vector.shuffle %[[R0]], %[[R2]] [2, 3, 6, 7]
// CHECK: %[[S2:.*]] = vector.shuffle %[[R1]], %[[R3]] [0, 1, 4, 5]
// CHECK: %[[S3:.*]] = vector.shuffle %[[R1]], %[[R3]] [2, 3, 6, 7]
// CHECK: %[[T0:.*]] = vector.shuffle %[[S0]], %[[S2]] [0, 4, 2, 6]
// CHECK: %[[T1:.*]] = vector.shuffle %[[S0]], %[[S2]] [1, 5, 3, 7]
// CHECK: %[[T2:.*]] = vector.shuffle %[[S1]], %[[S3]] [0, 4, 2, 6]
// CHECK: %[[T3:.*]] = vector.shuffle %[[S1]], %[[S3]] [1, 5, 3, 7]
// CHECK: vector.store %[[T0]], %[[OUT]][%[[C0]], %[[A]]]
// CHECK: vector.store %[[T1]], %[[OUT]]
// CHECK: vector.store %[[T2]], %[[OUT]]
// CHECK: vector.store %[[T3]], %[[OUT]]
// CHECK: }
// CHECK-NOT: scf.if
// CHECK-NOT: vector.masked
// CHECK: return
func.func @static(%in: memref<8x4xf32>, %out: memref<4x8xf32>) {
  linalg.transpose ins(%in : memref<8x4xf32>) outs(%out : memref<4x8xf32>) permutation = [1, 0]
  return
}

// -----

// Dynamic sizes: whole blocks up to size - size mod 4 in each dimension.
// A block past the end of the input's rows (c) reads under a lane mask
// and does not store the columns past it; a block past the last rows (a)
// reads the last row instead and stores under a lane mask. Each masks only
// the end it is at.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[IN:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?x?xf32>)
// CHECK-DAG: %[[C:.*]] = memref.dim %[[OUT]], %c0
// CHECK-DAG: %[[A:.*]] = memref.dim %[[OUT]], %c1
// CHECK-DAG: %[[AREM:.*]] = arith.remui %[[A]], %c4
// CHECK-DAG: %[[AFULL:.*]] = arith.subi %[[A]], %[[AREM]]
// CHECK-DAG: %[[CREM:.*]] = arith.remui %[[C]], %c4
// CHECK-DAG: %[[CFULL:.*]] = arith.subi %[[C]], %[[CREM]]
// CHECK: scf.for %[[A0:.*]] = %c0 to %[[AFULL]] step %c4 {
// CHECK:   scf.for %[[C0:.*]] = %c0 to %[[CFULL]] step %c4 {
// CHECK-COUNT-4: vector.load %[[IN]]
// CHECK-COUNT-8: vector.shuffle
// CHECK-COUNT-4: vector.store
// CHECK:   }
// CHECK:   %[[CEND:.*]] = arith.cmpi ult, %[[CFULL]], %[[C]]
// CHECK:   scf.if %[[CEND]] {
// CHECK:     %[[CMASK:.*]] = vector.create_mask
// CHECK-NOT: arith.minui
// CHECK-COUNT-4: vector.maskedload %[[IN]][{{.*}}, %[[CFULL]]], %[[CMASK]]
// CHECK-COUNT-8: vector.shuffle
// CHECK-NOT: vector.maskedstore
// CHECK:     vector.store %{{.*}}, %[[OUT]][%[[CFULL]], %[[A0]]]
// CHECK-COUNT-3: scf.if
// CHECK: %[[AEND:.*]] = arith.cmpi ult, %[[AFULL]], %[[A]]
// CHECK: scf.if %[[AEND]] {
// CHECK:   scf.for %[[C1:.*]] = %c0 to %[[CFULL]] step %c4 {
// CHECK:     %[[LAST:.*]] = arith.subi %[[A]], %c1
// CHECK:     arith.minui %[[AFULL]], %[[LAST]]
// CHECK-NOT: vector.maskedload
// CHECK-COUNT-4: vector.load
// CHECK:     %[[AMASK:.*]] = vector.create_mask
// CHECK:     vector.maskedstore %[[OUT]][%[[C1]], %[[AFULL]]], %[[AMASK]]
// CHECK:   scf.if
// CHECK-COUNT-4: vector.maskedload
// CHECK:     vector.maskedstore %[[OUT]][%[[CFULL]], %[[AFULL]]]
func.func @dynamic(%in: memref<?x?xf32>, %out: memref<?x?xf32>) {
  linalg.transpose ins(%in : memref<?x?xf32>) outs(%out : memref<?x?xf32>) permutation = [1, 0]
  return
}

// -----

// A generic: out[h, d, n] = float(in[h, n, d]) · s, the unit-stride
// dimensions d (input) and n (output), h an outer loop. The body runs on
// the transposed vectors; the scalar from outside is broadcast.
// CHECK-LABEL: func.func @scaled
// CHECK-SAME: (%[[IN:.*]]: memref<2x8x4xf16>, %[[OUT:.*]]: memref<2x4x8xf32>, %[[S:.*]]: f32)
// CHECK: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK: scf.for %[[H:.*]] = %c0 to %c2 step %c1 {
// CHECK:   scf.for %[[N:.*]] = %c0 to %c8 step %c4 {
// CHECK:     scf.for %[[D:.*]] = %c0 to %c4 step %c4 {
// CHECK:     vector.load %[[IN]][%[[H]], %[[N]], %[[D]]] : memref<2x8x4xf16>, vector<4xf16>
// CHECK-COUNT-8: vector.shuffle
// CHECK:     %[[X:.*]] = arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK-NOT: vector.broadcast
// CHECK:     %[[Y:.*]] = arith.mulf %[[X]], %[[SV]] fastmath<contract> : vector<4xf32>
// CHECK:     vector.store %[[Y]], %[[OUT]][%[[H]], %[[D]], %[[N]]] : memref<2x4x8xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
func.func @scaled(%in: memref<2x8x4xf16>, %out: memref<2x4x8xf32>, %s: f32) {
  linalg.generic {indexing_maps = [affine_map<(h, d, n) -> (h, n, d)>,
                                   affine_map<(h, d, n) -> (h, d, n)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%in : memref<2x8x4xf16>) outs(%out : memref<2x4x8xf32>) {
  ^bb0(%x: f16, %o: f32):
    %e = arith.extf %x : f16 to f32
    %m = arith.mulf %e, %s fastmath<contract> : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// 64-bit elements: half the lanes (2 for vector-width 4), one round.
// CHECK-LABEL: func.func @f64
// CHECK-COUNT-2: vector.load {{.*}} vector<2xf64>
// CHECK-COUNT-2: vector.shuffle
// CHECK-NOT: vector.shuffle
// CHECK-COUNT-2: vector.store {{.*}} vector<2xf64>
func.func @f64(%in: memref<2x2xf64>, %out: memref<2x2xf64>) {
  linalg.transpose ins(%in : memref<2x2xf64>) outs(%out : memref<2x2xf64>) permutation = [1, 0]
  return
}

// -----

// Widths LLVM would pack in a vector without the padding a memref element
// has (i1, i3, i24, i48, f80: wrong bytes, and f80's 6 lanes broke the
// register transpose) stay loops; i8 and f128 are vectorized (128 bits:
// a quarter of the f32 lanes, at least 2).
// CHECK-LABEL: func.func @widths
// CHECK-NOT: vector.
// CHECK-COUNT-5: linalg.transpose
// CHECK-NOT: linalg.transpose
// CHECK: vector.load {{.*}} vector<4xi8>
// CHECK: vector.load {{.*}} vector<2xf128>
func.func @widths(%a: memref<4x4xi1>, %b: memref<4x4xi3>, %c: memref<4x4xi24>,
                  %d: memref<4x4xi48>, %e: memref<4x4xf80>,
                  %f: memref<4x4xi8>, %g: memref<4x4xf128>) {
  %a2 = memref.alloc() : memref<4x4xi1>
  linalg.transpose ins(%a : memref<4x4xi1>) outs(%a2 : memref<4x4xi1>) permutation = [1, 0]
  %b2 = memref.alloc() : memref<4x4xi3>
  linalg.transpose ins(%b : memref<4x4xi3>) outs(%b2 : memref<4x4xi3>) permutation = [1, 0]
  %c2 = memref.alloc() : memref<4x4xi24>
  linalg.transpose ins(%c : memref<4x4xi24>) outs(%c2 : memref<4x4xi24>) permutation = [1, 0]
  %d2 = memref.alloc() : memref<4x4xi48>
  linalg.transpose ins(%d : memref<4x4xi48>) outs(%d2 : memref<4x4xi48>) permutation = [1, 0]
  %e2 = memref.alloc() : memref<4x4xf80>
  linalg.transpose ins(%e : memref<4x4xf80>) outs(%e2 : memref<4x4xf80>) permutation = [1, 0]
  %f2 = memref.alloc() : memref<4x4xi8>
  linalg.transpose ins(%f : memref<4x4xi8>) outs(%f2 : memref<4x4xi8>) permutation = [1, 0]
  %g2 = memref.alloc() : memref<4x4xf128>
  linalg.transpose ins(%g : memref<4x4xf128>) outs(%g2 : memref<4x4xf128>) permutation = [1, 0]
  return
}

// -----

// Left to the loops: a copy along the same unit-stride dimension, a body
// that reads the output, an integer division (lanes past the ends could
// divide by zero), a transpose in place, and a strided unit dimension.
// CHECK-LABEL: func.func @declined
// CHECK-NOT: vector.
// CHECK-COUNT-5: linalg.
// CHECK-NOT: vector.
func.func @declined(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %i: memref<4x4xi32>,
                    %j: memref<4x4xi32>, %s: memref<4x4xf32, strided<[1, 4]>>) {
  linalg.copy ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %o : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%i : memref<4x4xi32>) outs(%j : memref<4x4xi32>) {
  ^bb0(%x: i32, %o: i32):
    %c = arith.constant 7 : i32
    %y = arith.divsi %c, %x : i32
    linalg.yield %y : i32
  }
  linalg.transpose ins(%a : memref<4x4xf32>) outs(%a : memref<4x4xf32>) permutation = [1, 0]
  linalg.transpose ins(%a : memref<4x4xf32>) outs(%s : memref<4x4xf32, strided<[1, 4]>>) permutation = [1, 0]
  return
}
