func.func @f(%a: tensor<2x3xf32>, %e: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [9223372036854775807, -9223372036854775808]
  return %t : tensor<3x2xf32>
}
