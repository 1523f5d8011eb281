// RUN: rpe-opt %s -rpe-decompose-softmax -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf32>)
// CHECK-NOT: linalg.softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x3x5xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<2x3x5xf32>, tensor<2x3xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<2x3x5xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<2x3x5xf32>, tensor<2x3xf32>)
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %e = tensor.empty() : tensor<2x3x5xf32>
  %0 = linalg.softmax dimension(2) ins(%x : tensor<2x3x5xf32>) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// linalg.softmax verifies with any element type; the decomposition builds
// float ops (it crashed on integers).
func.func @integer_softmax(%x: tensor<2x5xi32>) -> tensor<2x5xi32> {
  %e = tensor.empty() : tensor<2x5xi32>
  // expected-error @below {{'linalg.softmax' op has 'i32' elements: a softmax needs floating-point ones}}
  %0 = linalg.softmax dimension(1) ins(%x : tensor<2x5xi32>) outs(%e : tensor<2x5xi32>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}
