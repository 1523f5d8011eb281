module {
  func.func @t5_attention(%q: tensor<4x16x?x64xbf16>, %k: tensor<4x16x?x64xbf16>, %v: tensor<4x16x?x64xbf16>, %table: tensor<32x16xbf16>) -> tensor<4x16x?x64xbf16> {
    %c2 = arith.constant 2 : index
    %dim = tensor.dim %q, %c2 : tensor<4x16x?x64xbf16>
    %dim_1 = tensor.dim %k, %c2 : tensor<4x16x?x64xbf16>
    %bias = rpe.relative_bias %table sizes(%dim, %dim_1) by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x16xbf16> -> tensor<16x?x?xbf16>
    %out = rpe.attention %q, %k, %v bias(%bias : tensor<16x?x?xbf16>) scale = 1.0 : tensor<4x16x?x64xbf16>, tensor<4x16x?x64xbf16>, tensor<4x16x?x64xbf16> -> tensor<4x16x?x64xbf16>
    return %out : tensor<4x16x?x64xbf16>
  }
}
