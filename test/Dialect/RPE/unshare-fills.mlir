// RUN: rpe-opt %s -rpe-unshare-fills | FileCheck %s

// Two matmuls into one (CSE-merged) zero fill: the second gets a fill of
// its own, on an empty tensor of its own; the first keeps the original.
// CHECK-LABEL: func.func @two_tables
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x512xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<?x512xf32>)
// CHECK: %[[A:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64x512xf32>) outs(%[[F]] : tensor<?x512xf32>)
// CHECK: %[[E2:.*]] = tensor.empty(%{{.*}}) : tensor<?x512xf32>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<?x512xf32>)
// CHECK: %[[B:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64x512xf32>) outs(%[[F2]] : tensor<?x512xf32>)
// CHECK: return %[[A]], %[[B]]
func.func @two_tables(%q: tensor<?x64xf32>, %k: tensor<?x64xf32>, %pk: tensor<64x512xf32>, %pq: tensor<64x512xf32>) -> (tensor<?x512xf32>, tensor<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %l = tensor.dim %q, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%l) : tensor<?x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
  %a = linalg.matmul ins(%q, %pk : tensor<?x64xf32>, tensor<64x512xf32>) outs(%f : tensor<?x512xf32>) -> tensor<?x512xf32>
  %b = linalg.matmul ins(%k, %pq : tensor<?x64xf32>, tensor<64x512xf32>) outs(%f : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %a, %b : tensor<?x512xf32>, tensor<?x512xf32>
}

// One destination use (and a read that is not one): unchanged.
// CHECK-LABEL: func.func @one_destination
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @one_destination(%q: tensor<8x64xf32>, %pk: tensor<64x512xf32>) -> (tensor<8x512xf32>, tensor<8x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x512xf32>) -> tensor<8x512xf32>
  %a = linalg.matmul ins(%q, %pk : tensor<8x64xf32>, tensor<64x512xf32>) outs(%f : tensor<8x512xf32>) -> tensor<8x512xf32>
  %e2 = tensor.empty() : tensor<8x512xf32>
  %s = linalg.add ins(%a, %f : tensor<8x512xf32>, tensor<8x512xf32>) outs(%e2 : tensor<8x512xf32>) -> tensor<8x512xf32>
  return %a, %s : tensor<8x512xf32>, tensor<8x512xf32>
}

// A fill of a function argument (not of a tensor.empty) is cloned alone.
// CHECK-LABEL: func.func @fill_of_argument
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[INIT:.*]] : tensor<8x512xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[F]] :
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[INIT]] : tensor<8x512xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[F2]] :
func.func @fill_of_argument(%q: tensor<8x64xf32>, %pk: tensor<64x512xf32>, %init: tensor<8x512xf32>) -> (tensor<8x512xf32>, tensor<8x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%init : tensor<8x512xf32>) -> tensor<8x512xf32>
  %a = linalg.matmul ins(%q, %pk : tensor<8x64xf32>, tensor<64x512xf32>) outs(%f : tensor<8x512xf32>) -> tensor<8x512xf32>
  %b = linalg.matmul ins(%q, %pk : tensor<8x64xf32>, tensor<64x512xf32>) outs(%f : tensor<8x512xf32>) -> tensor<8x512xf32>
  return %a, %b : tensor<8x512xf32>, tensor<8x512xf32>
}
