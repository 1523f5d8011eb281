#map = affine_map<(d0) -> (d0)>
#its = [7]
#its2 = #its
#trait = {indexing_maps = [#map], iterator_types = #its2}
#trait2 = #trait
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic #trait2 outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
