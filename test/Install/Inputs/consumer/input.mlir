func.func @bucket_of_200() -> index {
  %c0 = arith.constant 0 : index
  %c200 = arith.constant 200 : index
  %b = rpe.bucket %c0, %c200 by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  return %b : index
}

func.func @clip_bias(%table: tensor<9x4xf32>) -> tensor<4x8x8xf32> {
  %0 = rpe.relative_bias %table by clip<max_distance = 4> : tensor<9x4xf32> -> tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}
