// Entry points whose argument sizes are checked at run time (every kind of
// constraint: equal sizes, bucket rows, GQA multiple, rotary_dim, key_lengths
// values, linalg loop sizes, an even head dimension).
func.func @attn(%q: tensor<1x?x?x?xf32>, %k: tensor<1x?x?x?xf32>, %v: tensor<1x?x?x?xf32>, %len: tensor<1xi32>) -> tensor<1x?x?x?xf32> {
  %o = rpe.attention %q, %k, %v key_lengths(%len : tensor<1xi32>) : tensor<1x?x?x?xf32>, tensor<1x?x?x?xf32>, tensor<1x?x?x?xf32> -> tensor<1x?x?x?xf32>
  return %o : tensor<1x?x?x?xf32>
}

func.func @bias(%table: tensor<?x2xf32>, %l: index) -> tensor<2x?x?xf32> {
  %b = rpe.relative_bias %table sizes(%l, %l) by clip<max_distance = 4> : tensor<?x2xf32> -> tensor<2x?x?xf32>
  return %b : tensor<2x?x?xf32>
}

func.func @rope(%x: tensor<2x8x?xf32>, %p: tensor<8xi64>) -> tensor<2x8x?xf32> {
  %r = rpe.rotary %x, %p {rotary_dim = 8 : i64} : tensor<2x8x?xf32>, tensor<8xi64>
  return %r : tensor<2x8x?xf32>
}

func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @rope_even(%x: tensor<2x8x?xf32>, %p: tensor<8xi64>) -> tensor<2x8x?xf32> {
  %r = rpe.rotary %x, %p : tensor<2x8x?xf32>, tensor<8xi64>
  return %r : tensor<2x8x?xf32>
}
