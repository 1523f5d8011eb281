// RUN: rpe-opt %s -rpe-interchange-reductions -split-input-file | FileCheck %s
// RUN: rpe-opt %s -rpe-interchange-reductions=reductions-innermost=1 -split-input-file | FileCheck %s --check-prefix=GPU

// A matmul becomes a generic over (i, k, j): the innermost loop walks rows of
// B and C. The body is the matmul's multiply-add.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>, %c: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// Batched: (b, i, k, j).
// CHECK-LABEL: func.func @batch_matmul
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
func.func @batch_matmul(%a: tensor<4x16x32xf32>, %b: tensor<4x32x64xf32>, %c: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<4x16x32xf32>, tensor<4x32x64xf32>) outs(%c : tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}

// -----

// Left alone: a row sum (its input would be read down columns), a product
// with B read transposed (B[j, k]: j is not its contiguous dimension), and a
// matmul on buffers.
// CHECK-LABEL: func.func @left_alone
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<16x32xf32>, tensor<64x32xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x32xf32>, memref<32x64xf32>)
func.func @left_alone(%x: tensor<16x32xf32>, %acc: tensor<16xf32>, %a: tensor<16x32xf32>, %bt: tensor<64x32xf32>, %c: tensor<16x64xf32>, %ma: memref<16x32xf32>, %mb: memref<32x64xf32>, %mc: memref<16x64xf32>) -> (tensor<16xf32>, tensor<16x64xf32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x32xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %bt : tensor<16x32xf32>, tensor<64x32xf32>) outs(%c : tensor<16x64xf32>) {
  ^bb0(%x0: f32, %y0: f32, %o: f32):
    %m = arith.mulf %x0, %y0 : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  linalg.matmul ins(%ma, %mb : memref<16x32xf32>, memref<32x64xf32>) outs(%mc : memref<16x64xf32>)
  return %0, %1 : tensor<16xf32>, tensor<16x64xf32>
}

// -----

// reductions-innermost (the GPU's order): a contraction in the axpy order
// (b, i, k, j), as rpe.disentangled_bias's projections come, gets its
// parallel loops first: (b, i, j, k), the maps permuted to match, the body
// unchanged. Reductions that are innermost already (a matmul, a row sum)
// are left alone; a column sum (k, j) becomes (j, k).
// GPU-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// GPU-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// GPU-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// GPU-DAG: #[[COL_IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// GPU-LABEL: func.func @axpy_order
// GPU: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// GPU: arith.extf
// GPU: arith.mulf
// GPU: arith.addf
// GPU: linalg.matmul
// GPU: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x32xf32>) outs(%{{.*}} : tensor<16xf32>)
// GPU: linalg.generic {indexing_maps = [#[[COL_IN]], #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x32xf32>) outs(%{{.*}} : tensor<32xf32>)
// The CPU's order leaves the axpy form and the column sum as they are.
// CHECK-LABEL: func.func @axpy_order
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["reduction", "parallel"]
func.func @axpy_order(%q: tensor<4x16x64xbf16>, %pt: tensor<4x64x32xf32>, %c: tensor<4x16x32xf32>, %a: tensor<16x32xf32>, %b: tensor<32x64xf32>, %mc: tensor<16x64xf32>, %acc: tensor<16xf32>, %cols: tensor<32xf32>) -> (tensor<4x16x32xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<32xf32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(b, i, k, j) -> (b, i, k)>, affine_map<(b, i, k, j) -> (b, k, j)>, affine_map<(b, i, k, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%q, %pt : tensor<4x16x64xbf16>, tensor<4x64x32xf32>) outs(%c : tensor<4x16x32xf32>) {
  ^bb0(%x: bf16, %y: f32, %o: f32):
    %xf = arith.extf %x : bf16 to f32
    %m = arith.mulf %xf, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16x32xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%mc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<16x32xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<16x32xf32>) outs(%cols : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %0, %1, %2, %3 : tensor<4x16x32xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<32xf32>
}
