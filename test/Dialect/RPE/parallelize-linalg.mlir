// RUN: rpe-opt %s -split-input-file -rpe-parallelize-linalg | FileCheck %s
// RUN: rpe-opt %s -split-input-file -rpe-parallelize-linalg="num-threads=3 min-iterations=1" | FileCheck %s --check-prefix=T3
// RUN: rpe-opt %s -split-input-file -rpe-parallelize-linalg="num-threads=1" | FileCheck %s --check-prefix=T1
// RUN: not rpe-opt %s -rpe-parallelize-linalg="num-threads=two" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --num-threads option: 'two' value invalid

// A projection-like contraction (b, h, r, d, n), b of static size 1: split
// along h, the first parallel loop that is not trivially 1, into one
// scf.forall iteration per thread writing its slice of the result.
// CHECK-LABEL: func.func @projection
// CHECK: scf.forall (%[[T:.*]]) in (2) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x8x?x33xf32>)
// CHECK:   %[[S:.*]] = tensor.extract_slice %[[OUT]][0, %{{.*}}, 0, 0] [1, 4, %{{.*}}, 33] [1, 1, 1, 1]
// CHECK:   linalg.generic {{.*}} outs(%[[S]] : tensor<1x4x?x33xf32>)
// CHECK:   tensor.parallel_insert_slice
// T1-LABEL: func.func @projection
// T1-NOT: scf.forall
// T1: return
// T3-LABEL: func.func @projection
// T3: scf.forall (%{{.*}}) in (3)

#x = affine_map<(b, h, r, d, n) -> (b, h, r, d)>
#t = affine_map<(b, h, r, d, n) -> (d, n)>
#o = affine_map<(b, h, r, d, n) -> (b, h, r, n)>
func.func @projection(%x: tensor<1x8x?x64xf32>, %t: tensor<64x33xf32>, %init: tensor<1x8x?x33xf32>) -> tensor<1x8x?x33xf32> {
  %0 = linalg.generic {indexing_maps = [#x, #t, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%x, %t : tensor<1x8x?x64xf32>, tensor<64x33xf32>) outs(%init : tensor<1x8x?x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x?x33xf32>
  return %0 : tensor<1x8x?x33xf32>
}

// -----

// Small static ops stay whole (below min-iterations); so do ops already in
// an scf.forall (they run on a thread) and ops on buffers.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.forall (%{{.*}}) in (2)
// CHECK: linalg.fill
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK:   linalg.fill
// CHECK: linalg.fill {{.*}} outs(%{{.*}} : memref<?x?xf32>)
// T3-LABEL: func.func @left_alone
// T3: scf.forall (%{{.*}}) in (3)
// T3: scf.forall (%{{.*}}) in (4)
// T3-NOT: scf.forall (
func.func @left_alone(%big: tensor<?x33xf32>, %m: memref<?x?xf32>) -> (tensor<8x33xf32>, tensor<?x33xf32>) {
  %c = arith.constant 0.0 : f32
  %small = tensor.empty() : tensor<8x33xf32>
  %0 = linalg.fill ins(%c : f32) outs(%small : tensor<8x33xf32>) -> tensor<8x33xf32>
  %1 = scf.forall (%i) in (4) shared_outs(%o = %big) -> (tensor<?x33xf32>) {
    %f = linalg.fill ins(%c : f32) outs(%o : tensor<?x33xf32>) -> tensor<?x33xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %f into %o[0, 0] [%i, 33] [1, 1] : tensor<?x33xf32> into tensor<?x33xf32>
    }
  }
  linalg.fill ins(%c : f32) outs(%m : memref<?x?xf32>)
  return %0, %1 : tensor<8x33xf32>, tensor<?x33xf32>
}

// -----

// An op whose init is a fill: each thread fills its own tile right before
// the op (the loop's output is the empty tensor the fill filled), so that
// they meet on one buffer; the fill, without users then, goes. A fill that
// another op also reads stays for it (and is parallelized itself).
// CHECK-LABEL: func.func @fill_init
// T3-LABEL: func.func @fill_init
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x?x64xf32>, %[[T:.*]]: tensor<64x512xf32>)
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<1x8x?x512xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs(%[[OUT:.*]] = %[[E]])
// CHECK:   %[[S:.*]] = tensor.extract_slice %[[OUT]]
// CHECK:   %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : tensor<1x4x?x512xf32>)
// CHECK:   linalg.generic {{.*}} outs(%[[F]] : tensor<1x4x?x512xf32>)
// CHECK: return
// CHECK-LABEL: func.func @fill_also_read
// CHECK: %[[WHOLE:.*]] = scf.forall
// CHECK:   linalg.fill
// CHECK-NOT: linalg.generic
// CHECK: scf.forall
// CHECK:   linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: scf.forall
// CHECK:   linalg.add
#fx = affine_map<(b, h, r, d, n) -> (b, h, r, d)>
#ft = affine_map<(b, h, r, d, n) -> (d, n)>
#fo = affine_map<(b, h, r, d, n) -> (b, h, r, n)>
func.func @fill_init(%x: tensor<1x8x?x64xf32>, %t: tensor<64x512xf32>) -> tensor<1x8x?x512xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %l = tensor.dim %x, %c2 : tensor<1x8x?x64xf32>
  %e = tensor.empty(%l) : tensor<1x8x?x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x?x512xf32>) -> tensor<1x8x?x512xf32>
  %0 = linalg.generic {indexing_maps = [#fx, #ft, #fo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%x, %t : tensor<1x8x?x64xf32>, tensor<64x512xf32>) outs(%f : tensor<1x8x?x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x?x512xf32>
  return %0 : tensor<1x8x?x512xf32>
}

func.func @fill_also_read(%x: tensor<1x8x?x64xf32>, %t: tensor<64x512xf32>) -> tensor<1x8x?x512xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 1.0 : f32
  %l = tensor.dim %x, %c2 : tensor<1x8x?x64xf32>
  %e = tensor.empty(%l) : tensor<1x8x?x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x?x512xf32>) -> tensor<1x8x?x512xf32>
  %0 = linalg.generic {indexing_maps = [#fx, #ft, #fo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%x, %t : tensor<1x8x?x64xf32>, tensor<64x512xf32>) outs(%f : tensor<1x8x?x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x?x512xf32>
  %e2 = tensor.empty(%l) : tensor<1x8x?x512xf32>
  %1 = linalg.add ins(%0, %f : tensor<1x8x?x512xf32>, tensor<1x8x?x512xf32>) outs(%e2 : tensor<1x8x?x512xf32>) -> tensor<1x8x?x512xf32>
  return %1 : tensor<1x8x?x512xf32>
}
