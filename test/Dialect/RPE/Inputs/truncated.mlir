func.func @f(%t: tensor<9x4xf32>) -> tensor<4x8x8xf32> {
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9x4xf32> -> tensor<4x8x
