// A verifier error: the table needs 2·4 + 1 = 9 rows.
func.func @f(%t: tensor<8x2xf32>) -> tensor<2x4x4xf32> {
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<8x2xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}
