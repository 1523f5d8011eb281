func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [16x16xf32>) outs(%b : tensor<3x2xf32>) {
  return %t : tensor<3x2xf32>
}
