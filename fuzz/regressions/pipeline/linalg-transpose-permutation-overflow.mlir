func.func @f(%a: tensor<2x3xf32>, %e: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [888888888888888888888888888888888888888888888888888888888888888888880, 0]
  return %t : tensor<3x2xf32>
}
