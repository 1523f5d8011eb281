func.func @f(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %o = "rpe.attention"(%q, %q, %q) <{operandSegmentSizes = array<index: 1, 0, 0>}> : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}
