// RUN: rpe-opt %s -rpe-read-only-arguments | FileCheck %s

// Tensor arguments of public functions with a body are not writable; other
// arguments are left alone.
// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {bufferization.writable = false}, %{{.*}}: memref<4xf32>, %{{.*}}: index, %{{.*}}: tensor<?x8xf16> {bufferization.writable = false})
func.func @entry(%a: tensor<4xf32>, %m: memref<4xf32>, %i: index,
                 %b: tensor<?x8xf16>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// A value the user set is kept.
// CHECK-LABEL: func.func @user_choice
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {bufferization.writable = true})
func.func @user_choice(%a: tensor<4xf32> {bufferization.writable = true})
    -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// Private functions (their callers are in the module) and declarations are
// left alone.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
// CHECK: func.func private @external(tensor<4xf32>){{$}}
func.func private @external(tensor<4xf32>)
