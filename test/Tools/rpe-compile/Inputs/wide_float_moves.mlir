// f128 values the NVPTX backend only moves (a copy, a select):
// rpe-check-llvm-types lets them through.
func.func @transpose_f128(%a: tensor<4x8xf128>) -> tensor<8x4xf128> {
  %e = tensor.empty() : tensor<8x4xf128>
  %r = linalg.transpose ins(%a : tensor<4x8xf128>) outs(%e : tensor<8x4xf128>) permutation = [1, 0]
  return %r : tensor<8x4xf128>
}

#m = affine_map<(i, j) -> (i, j)>
func.func @select_f128(%c: tensor<4x8xi1>, %a: tensor<4x8xf128>, %b: tensor<4x8xf128>) -> tensor<4x8xf128> {
  %e = tensor.empty() : tensor<4x8xf128>
  %r = linalg.generic {indexing_maps = [#m, #m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%c, %a, %b : tensor<4x8xi1>, tensor<4x8xf128>, tensor<4x8xf128>) outs(%e : tensor<4x8xf128>) {
  ^bb0(%x: i1, %y: f128, %z: f128, %o: f128):
    %s = arith.select %x, %y, %z : f128
    linalg.yield %s : f128
  } -> tensor<4x8xf128>
  return %r : tensor<4x8xf128>
}
