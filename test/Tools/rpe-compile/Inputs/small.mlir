// A module with the entry-point shapes the C interface has to cover: a memref
// result, several results, a scalar argument and a scalar result; results
// that are an argument or one value twice (each still the caller's to free).
func.func @bias_and_alibi(%table: tensor<5x2xf32>, %off: index)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = rpe.relative_bias %table offset %off by clip<max_distance = 2> : tensor<5x2xf32> -> tensor<2x3x4xf32>
  %1 = rpe.alibi offset %off slopes [0.5, 0.25] symmetric : tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

func.func @bias(%table: tensor<5x2xf32>, %l: index) -> tensor<2x?x?xf32> {
  %0 = rpe.relative_bias %table sizes(%l, %l) by clip<max_distance = 2> : tensor<5x2xf32> -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

func.func @bucket(%i: index, %j: index) -> index {
  %0 = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  return %0 : index
}

func.func @echo_twice(%table: tensor<5x2xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xf32>) {
  %0 = arith.addf %table, %table : tensor<5x2xf32>
  return %table, %0, %0 : tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xf32>
}

func.func private @not_exported(%x: f32) -> f32 {
  return %x : f32
}
