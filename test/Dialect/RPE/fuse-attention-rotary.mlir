// RUN: rpe-opt %s -rpe-fuse-attention -split-input-file | FileCheck %s

// rpe-fuse-attention (f): transformers' RoPE as torch-mlir writes it (the
// LLaMA family's rotate_half form; inv_freq as HF computes it in f32,
// 1 / theta^(2t/D)) becomes rpe.rotary with theta read from inv_freq;
// an inv_freq under transformers' "linear" or "llama3" scaling (computed in
// f32 as transformers does) gives the op's `scaling` too, and a rotation
// of the first R dims concatenated with the rest gives `rotary_dim = R`.

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

// -----

// transformers' rope_type "linear" (inv_freq / factor): values[0] is
// 1 / factor.
// CHECK-LABEL: func.func @rope_linear
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_linear<factor = 4.000000e+00>}
// CHECK-NOT: math.cos
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_linear(%x: tensor<1x2x6x8xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x8xf32> {
  %inv = arith.constant dense<[2.500000000e-01, 2.500000037e-02, 2.499999944e-03, 2.500000119e-04]> : tensor<4xf32>
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

// rope_type "llama3" (factor 4, low_freq_factor 1, high_freq_factor 8,
// original 2048), D = 16: t = 0..3 unscaled, t = 4, 5 smoothed, t = 6, 7
// divided by the factor; the two smoothed entries give the parameters.
// CHECK-LABEL: func.func @rope_llama3
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_llama3<factor = 4.000000e+00, low_freq_factor = 1.000000e+00, high_freq_factor = 8.000000e+00, original_max_position = 2048>}
// CHECK-NOT: math.cos
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_llama3(%x: tensor<1x2x6x16xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 4.920885433e-03, 8.009854355e-04, 2.500000119e-04, 7.905694656e-05]> : tensor<8xf32>
  %e0 = tensor.empty() : tensor<1x6x1xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos : tensor<1x6x1xi64>) outs(%e0 : tensor<1x6x1xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x6x1xf32>
  %e1 = tensor.empty() : tensor<1x6x8xf32>
  %freqs = linalg.generic {indexing_maps = [#col, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %inv : tensor<1x6x1xf32>, tensor<8xf32>) outs(%e1 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x6x8xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x6x8xf32>, tensor<1x6x8xf32>) -> tensor<1x6x16xf32>
  %e2 = tensor.empty() : tensor<1x6x16xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x16xf32>) outs(%e2 : tensor<1x6x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x6x16xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x16xf32>) outs(%e2 : tensor<1x6x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x16xf32>
  %cos4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 6, 16] : tensor<1x6x16xf32> into tensor<1x1x6x16xf32>
  %sin4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 6, 16] : tensor<1x6x16xf32> into tensor<1x1x6x16xf32>
  %e3 = tensor.empty() : tensor<1x2x6x16xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos4 : tensor<1x2x6x16xf32>, tensor<1x1x6x16xf32>) outs(%e3 : tensor<1x2x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x16xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 8] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
  %e4 = tensor.empty() : tensor<1x2x6x8xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x2x6x8xf32>) outs(%e4 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x6x8xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x16xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rot, %sin4 : tensor<1x2x6x16xf32>, tensor<1x1x6x16xf32>) outs(%e3 : tensor<1x2x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x16xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xc, %rs : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) outs(%e3 : tensor<1x2x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x16xf32>
  return %y : tensor<1x2x6x16xf32>
}


// -----

// D = 8 (factor 8, 1, 4, 2048): one smoothed entry (t = 2), so
// high_freq_factor is taken as 4 and O fitted to it.
// CHECK-LABEL: func.func @rope_llama3_one_smoothed
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_llama3<factor = 8.000000e+00, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00, original_max_position = 2048>}
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_llama3_one_smoothed(%x: tensor<1x2x6x8xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x8xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 7.840188220e-03, 1.250000059e-04]> : tensor<4xf32>
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

// No smoothed entry (factor 8, 1, 2, 2048 at D = 8: t = 0..2 unscaled, t = 3
// divided): any O between the waves does; the first power of two with
// high_freq_factor 4 that gives these frequencies (4096).
// CHECK-LABEL: func.func @rope_llama3_none_smoothed
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_llama3<factor = 8.000000e+00, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00, original_max_position = 4096>}
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_llama3_none_smoothed(%x: tensor<1x2x6x8xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x8xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 1.000000015e-01, 9.999999776e-03, 1.250000059e-04]> : tensor<4xf32>
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

// Llama 3.1's configuration (rope_theta 5e5, head_dim 128, factor 8,
// low_freq_factor 1, high_freq_factor 4, original 8192), recovered as is.
// CHECK-LABEL: func.func @rope_llama3_1
// CHECK: rpe.rotary %{{.*}}, %{{.*}} {scaling = #rpe.rope_llama3<factor = 8.000000e+00, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00, original_max_position = 8192>, theta = 5.000000e+05 : f64}
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_llama3_1(%x: tensor<1x2x6x128xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x128xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 8.146172166e-01, 6.636012197e-01, 5.405809879e-01, 4.403666258e-01, 3.587302268e-01, 2.922278047e-01, 2.380538434e-01, 1.939227581e-01, 1.579728127e-01, 1.286873817e-01, 1.048309505e-01, 8.539710194e-02, 6.956595182e-02, 5.666961893e-02, 4.616404697e-02, 3.760603070e-02, 3.063452058e-02, 2.495540865e-02, 2.032910474e-02, 1.656044088e-02, 1.349042077e-02, 1.098952908e-02, 8.952259086e-03, 7.292665076e-03, 5.940729752e-03, 4.839421250e-03, 3.942275885e-03, 3.211446106e-03, 2.166570630e-03, 1.371893683e-03, 8.567514597e-04, 5.248460220e-04, 3.126936499e-04, 1.785077911e-04, 9.556212899e-05, 7.784655463e-05, 6.341514381e-05, 5.165907351e-05, 4.208236714e-05, 3.428102355e-05, 2.792590931e-05, 2.274892722e-05, 1.853166941e-05, 1.509621779e-05, 1.229763893e-05, 1.001786768e-05, 8.160727702e-06, 6.647870578e-06, 5.415469332e-06, 4.411534519e-06, 3.593712336e-06, 2.927499736e-06, 2.384791742e-06, 1.942692506e-06, 1.582550794e-06, 1.289173156e-06, 1.050182618e-06, 8.554969213e-07, 6.969025321e-07, 5.677088097e-07, 4.624653798e-07, 3.767322880e-07, 3.068925878e-07]> : tensor<64xf32>
  %e0 = tensor.empty() : tensor<1x6x1xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos : tensor<1x6x1xi64>) outs(%e0 : tensor<1x6x1xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x6x1xf32>
  %e1 = tensor.empty() : tensor<1x6x64xf32>
  %freqs = linalg.generic {indexing_maps = [#col, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %inv : tensor<1x6x1xf32>, tensor<64xf32>) outs(%e1 : tensor<1x6x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x6x64xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x6x64xf32>, tensor<1x6x64xf32>) -> tensor<1x6x128xf32>
  %e2 = tensor.empty() : tensor<1x6x128xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x128xf32>) outs(%e2 : tensor<1x6x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x6x128xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x128xf32>) outs(%e2 : tensor<1x6x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x128xf32>
  %cos4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 6, 128] : tensor<1x6x128xf32> into tensor<1x1x6x128xf32>
  %sin4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 6, 128] : tensor<1x6x128xf32> into tensor<1x1x6x128xf32>
  %e3 = tensor.empty() : tensor<1x2x6x128xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos4 : tensor<1x2x6x128xf32>, tensor<1x1x6x128xf32>) outs(%e3 : tensor<1x2x6x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x128xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 64] [1, 1, 1, 1] : tensor<1x2x6x128xf32> to tensor<1x2x6x64xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 64] [1, 2, 6, 64] [1, 1, 1, 1] : tensor<1x2x6x128xf32> to tensor<1x2x6x64xf32>
  %e4 = tensor.empty() : tensor<1x2x6x64xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x2x6x64xf32>) outs(%e4 : tensor<1x2x6x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x6x64xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<1x2x6x64xf32>, tensor<1x2x6x64xf32>) -> tensor<1x2x6x128xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rot, %sin4 : tensor<1x2x6x128xf32>, tensor<1x1x6x128xf32>) outs(%e3 : tensor<1x2x6x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x128xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xc, %rs : tensor<1x2x6x128xf32>, tensor<1x2x6x128xf32>) outs(%e3 : tensor<1x2x6x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x128xf32>
  return %y : tensor<1x2x6x128xf32>
}


// -----

// @rope_llama3 with its second smoothed entry 1e-4 off: no parameters give
// it, stays.
// CHECK-LABEL: func.func @rope_llama3_perturbed
// CHECK-NOT: rpe.rotary
// CHECK: math.cos
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_llama3_perturbed(%x: tensor<1x2x6x16xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x16xf32> {
  %inv = arith.constant dense<[1.000000000e+00, 3.162277639e-01, 1.000000015e-01, 3.162277862e-02, 4.920885433e-03, 8.010655292e-04, 2.500000119e-04, 7.905694656e-05]> : tensor<8xf32>
  %e0 = tensor.empty() : tensor<1x6x1xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pos : tensor<1x6x1xi64>) outs(%e0 : tensor<1x6x1xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x6x1xf32>
  %e1 = tensor.empty() : tensor<1x6x8xf32>
  %freqs = linalg.generic {indexing_maps = [#col, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %inv : tensor<1x6x1xf32>, tensor<8xf32>) outs(%e1 : tensor<1x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x6x8xf32>
  %emb = tensor.concat dim(2) %freqs, %freqs : (tensor<1x6x8xf32>, tensor<1x6x8xf32>) -> tensor<1x6x16xf32>
  %e2 = tensor.empty() : tensor<1x6x16xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x16xf32>) outs(%e2 : tensor<1x6x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x6x16xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%emb : tensor<1x6x16xf32>) outs(%e2 : tensor<1x6x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x6x16xf32>
  %cos4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 6, 16] : tensor<1x6x16xf32> into tensor<1x1x6x16xf32>
  %sin4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 6, 16] : tensor<1x6x16xf32> into tensor<1x1x6x16xf32>
  %e3 = tensor.empty() : tensor<1x2x6x16xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %cos4 : tensor<1x2x6x16xf32>, tensor<1x1x6x16xf32>) outs(%e3 : tensor<1x2x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x16xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 8] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
  %e4 = tensor.empty() : tensor<1x2x6x8xf32>
  %neg = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x2x6x8xf32>) outs(%e4 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x6x8xf32>
  %rot = tensor.concat dim(3) %neg, %lo : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x16xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%rot, %sin4 : tensor<1x2x6x16xf32>, tensor<1x1x6x16xf32>) outs(%e3 : tensor<1x2x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x16xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xc, %rs : tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) outs(%e3 : tensor<1x2x6x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x6x16xf32>
  return %y : tensor<1x2x6x16xf32>
}


// -----

// Partial rotary (GPT-NeoX, Phi, StableLM: q[..., :R] rotated, q[..., R:]
// passed, concatenated): one rpe.rotary with rotary_dim = R = 8.
// CHECK-LABEL: func.func @rope_partial
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x6x16xf32>, %[[P:.*]]: tensor<1x6x1xi64>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[P]]
// CHECK-NEXT: %[[Y:.*]] = rpe.rotary %[[X]], %[[C]] {rotary_dim = 8 : i64} : tensor<1x2x6x16xf32>, tensor<1x6xi64>
// CHECK-NEXT: return %[[Y]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_partial(%x: tensor<1x2x6x16xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x16xf32> {
  %xr = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
  %xp = tensor.extract_slice %x[0, 0, 0, 8] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
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
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xr, %cos4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %lo = tensor.extract_slice %xr[0, 0, 0, 0] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %hi = tensor.extract_slice %xr[0, 0, 0, 4] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
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
  %out = tensor.concat dim(3) %y, %xp : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x16xf32>
  return %out : tensor<1x2x6x16xf32>
}


// -----

// The passed part starts at 7, not 8 (not x[..., 8:]): the rotation of the
// first 8 dims is raised, the concat stays.
// CHECK-LABEL: func.func @rope_partial_wrong_rest
// CHECK: %[[Y:.*]] = rpe.rotary %{{.*}}, %{{.*}} : tensor<1x2x6x8xf32>
// CHECK: tensor.concat dim(3) %[[Y]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

func.func @rope_partial_wrong_rest(%x: tensor<1x2x6x16xf32>, %pos: tensor<1x6x1xi64>) -> tensor<1x2x6x16xf32> {
  %xr = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
  %xp = tensor.extract_slice %x[0, 0, 0, 7] [1, 2, 6, 8] [1, 1, 1, 1] : tensor<1x2x6x16xf32> to tensor<1x2x6x8xf32>
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
  %xc = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xr, %cos4 : tensor<1x2x6x8xf32>, tensor<1x1x6x8xf32>) outs(%e3 : tensor<1x2x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x6x8xf32>
  %lo = tensor.extract_slice %xr[0, 0, 0, 0] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
  %hi = tensor.extract_slice %xr[0, 0, 0, 4] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x8xf32> to tensor<1x2x6x4xf32>
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
  %out = tensor.concat dim(3) %y, %xp : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x16xf32>
  return %out : tensor<1x2x6x16xf32>
}

