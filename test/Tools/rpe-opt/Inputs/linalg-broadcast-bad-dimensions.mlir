func.func @f(%a: tensor<3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = linalg.broadcast ins(%a : tensor<3xf32>) outs(%b : tensor<2x3xf32>) dimensions = [0 1]
  return %t : tensor<2x3xf32>
}
