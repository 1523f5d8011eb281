func.func @narrow(%q: tensor<1x2x?x16xf32>, %emb: tensor<16x9xf32>, %e: tensor<1x2x?x9xf32>) -> tensor<1x2x?x9xf32> {
  %t = linalg.generic {indexing_maps = [affine_map<(b, h, i, d, n) -> (b, h, i, d)>, affine_map<(b, h, i, d, n) -> (d, n)>, affine_map<(b, h, i, d, n) -> (b, h, i, n)>], iterator_types = [0xFF800000, "parallel", "parallel", "reduction", "parallel"]} ins(%q, %emb : tensor<1x2x?x16xf32>, tensor<16x9xf32>) outs(%e : tensor<1x2x?x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x9xf32>
  return %t : tensor<1x2x?x9xf32>
}
