
func.func @attn_scale(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op scale must be finite}}
  %0 = "rpe.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 2, 1, 0, 0, 0, 0, 0>, scale = 0x7FF0000000000000 : f64}> ({
  }) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

