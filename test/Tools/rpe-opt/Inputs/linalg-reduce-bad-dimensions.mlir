func.func @f(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %r = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%b : tensor<2xf32>) dimensions = 1
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2xf32>
}
