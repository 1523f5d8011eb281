// RUN: rpe-opt %s -rpe-fuse-attention -split-input-file | FileCheck %s

// rpe-fuse-attention (f): transformers' RoPE as torch-mlir writes it (the
// LLaMA family's rotate_half form; inv_freq as HF computes it in f32,
// 1 / theta^(2t/D)) becomes rpe.rotary with theta read from inv_freq.

// CHECK-LABEL: func.func @rope_theta_1e4
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x6x8xf32>, %[[P:.*]]: tensor<1x6x1xi64>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0], [1, 2]] : tensor<1x6x1xi64> into tensor<1x6xi64>
// CHECK-NEXT: %[[Y:.*]] = rpe.rotary %[[X]], %[[C]] : tensor<1x2x6x8xf32>, tensor<1x6xi64>
// CHECK-NEXT: return %[[Y]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_theta_1e4(%x: tensor<1x2x6x8xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x8xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]> : tensor<4xf32>
  %e0 = tensor.empty() : tensor<1x6x1xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos : tensor<1x6x1xi64>) outs(%e0 : tensor<1x6x1xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x6x1xf32>
  %e1 = tensor.empty() : tensor<1x6x4xf32>
  %freqs = linalg.generic {indexing_maps = [#col, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %inv : tensor<1x6x1xf32>, tensor<4xf32>) outs(%e1 : tensor<1x6x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x6x4xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x6x4xf32>, tensor<1x6x4xf32>) -> tensor<1x6x8xf32>
  %e2 = tensor.empty() : tensor<1x6x8xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x6x8xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x8xf32>
  %cos4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %sin4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %e3 = tensor.empty() : tensor<1x2x6x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %e4 = tensor.empty() : tensor<1x2x6x4xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x2x6x4xf32>) outs(%e4 : tensor<1x2x6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x6x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x2x6x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rot, %sin4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xc, %rs : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x8xf32>
  return %y : tensor<1x2x6x8xf32>
}

// -----

// LLaMA 3's rope_theta.
// CHECK-LABEL: func.func @rope_theta_5e5
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {theta = 5.000000e+05 : f64}
// CHECK-NOT: math.cos
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_theta_5e5(%x: tensor<1x2x6x8xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x8xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.760603070e-02, 1.414213446e-03, 5.318296462e-05]> : tensor<4xf32>
  %e0 = tensor.empty() : tensor<1x6x1xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos : tensor<1x6x1xi64>) outs(%e0 : tensor<1x6x1xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x6x1xf32>
  %e1 = tensor.empty() : tensor<1x6x4xf32>
  %freqs = linalg.generic {indexing_maps = [#col, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %inv : tensor<1x6x1xf32>, tensor<4xf32>) outs(%e1 : tensor<1x6x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x6x4xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x6x4xf32>, tensor<1x6x4xf32>) -> tensor<1x6x8xf32>
  %e2 = tensor.empty() : tensor<1x6x8xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x6x8xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x8xf32>
  %cos4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %sin4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %e3 = tensor.empty() : tensor<1x2x6x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %e4 = tensor.empty() : tensor<1x2x6x4xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x2x6x4xf32>) outs(%e4 : tensor<1x2x6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x6x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x2x6x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rot, %sin4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xc, %rs : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x8xf32>
  return %y : tensor<1x2x6x8xf32>
}

// -----

// Not a geometric sequence (the third frequency is 0.02): stays.
// CHECK-LABEL: func.func @rope_not_geometric
// CHECK-NOT: rpe.rotary
// CHECK: math.cos
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_not_geometric(%x: tensor<1x2x6x8xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x8xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 1.999999955e-02, 1.000000047e-03]> : tensor<4xf32>
  %e0 = tensor.empty() : tensor<1x6x1xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos : tensor<1x6x1xi64>) outs(%e0 : tensor<1x6x1xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x6x1xf32>
  %e1 = tensor.empty() : tensor<1x6x4xf32>
  %freqs = linalg.generic {indexing_maps = [#col, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %inv : tensor<1x6x1xf32>, tensor<4xf32>) outs(%e1 : tensor<1x6x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x6x4xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x6x4xf32>, tensor<1x6x4xf32>) -> tensor<1x6x8xf32>
  %e2 = tensor.empty() : tensor<1x6x8xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x6x8xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x8xf32>
  %cos4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %sin4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %e3 = tensor.empty() : tensor<1x2x6x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %e4 = tensor.empty() : tensor<1x2x6x4xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x2x6x4xf32>) outs(%e4 : tensor<1x2x6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x6x4xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x2x6x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rot, %sin4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xc, %rs : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x8xf32>
  return %y : tensor<1x2x6x8xf32>
}

// -----

// The halves of rotate_half swapped (cat(-x_lo, x_hi)): no RoPE, stays.
// CHECK-LABEL: func.func @rope_swapped
// CHECK-NOT: rpe.rotary
// CHECK: math.cos
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_swapped(%x: tensor<1x2x6x8xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x8xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.000000047e-03]> : tensor<4xf32>
  %e0 = tensor.empty() : tensor<1x6x1xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos : tensor<1x6x1xi64>) outs(%e0 : tensor<1x6x1xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x6x1xf32>
  %e1 = tensor.empty() : tensor<1x6x4xf32>
  %freqs = linalg.generic {indexing_maps = [#col, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %inv : tensor<1x6x1xf32>, tensor<4xf32>) outs(%e1 : tensor<1x6x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x6x4xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x6x4xf32>, tensor<1x6x4xf32>) -> tensor<1x6x8xf32>
  %e2 = tensor.empty() : tensor<1x6x8xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x6x8xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x8xf32>) outs(%e2 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x8xf32>
  %cos4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %sin4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 6, 8] : tensor<1x6x8xf32> into tensor<1x1x6x8xf32>
  %e3 = tensor.empty() : tensor<1x2x6x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %e4 = tensor.empty() : tensor<1x2x6x4xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%lo : tensor<1x2x6x4xf32>) outs(%e4 : tensor<1x2x6x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x6x4xf32>
  %rot = tensor.concat dim(3) %neg, %hi : (tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x2x6x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rot, %sin4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xc, %rs : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x8xf32>
  return %y : tensor<1x2x6x8xf32>
}
