// Entry points for the device wrappers of a --target=nvptx header: two memref
// results and a scalar argument; a table whose bucket count is checked.
func.func @bias_and_alibi(%table: tensor<5x2xf32>, %off: index)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = rpe.relative_bias %table offset %off by clip<max_distance = 2> : tensor<5x2xf32> -> tensor<2x3x4xf32>
  %1 = rpe.alibi offset %off slopes [0.5, 0.25] symmetric : tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

func.func @bias(%table: tensor<?x2xf32>, %l: index) -> tensor<2x?x?xf32> {
  %0 = rpe.relative_bias %table sizes(%l, %l) by clip<max_distance = 2> : tensor<?x2xf32> -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

// A result that is its argument: the host variant must copy it back and
// free the one device buffer once.
func.func @identity(%t: tensor<5x2xf32>) -> tensor<5x2xf32> {
  return %t : tensor<5x2xf32>
}
