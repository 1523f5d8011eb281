// T5 self-attention with a bidirectional relative position bias (T5 uses
// scale = 1): the function the C example calls. Lq and Lk are dynamic.
func.func @t5_attention(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                        %v: tensor<1x8x?x64xf32>, %table: tensor<32x8xf32>)
    -> tensor<1x8x?x64xf32> {
  %c2 = arith.constant 2 : index
  %lq = tensor.dim %q, %c2 : tensor<1x8x?x64xf32>
  %lk = tensor.dim %k, %c2 : tensor<1x8x?x64xf32>
  %bias = rpe.relative_bias %table sizes(%lq, %lk)
      by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
      : tensor<32x8xf32> -> tensor<8x?x?xf32>
  %o = rpe.attention %q, %k, %v bias(%bias : tensor<8x?x?xf32>) scale = 1.0
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
      -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
