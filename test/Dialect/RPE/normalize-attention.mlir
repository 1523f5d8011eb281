// RUN: rpe-opt %s -split-input-file -rpe-normalize-attention | FileCheck %s
// RUN: rpe-opt %s -split-input-file -rpe-normalize-attention -rpe-fuse-attention | FileCheck %s --check-prefix=FUSE

// Attention as torch-mlir's FX importer writes it (linalg-on-tensors, a
// Hugging Face T5 layer): B·H-collapsed batch_matmuls between
// collapse/expand_shape, projections stored B×L×H×D and transposed, a bias
// and a B×1×L×L mask added, softmax as max / sub / exp / sum / div with the
// reduced dimension kept (B×H×L×1).
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#row1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#mask = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>

// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @t5_layer
// CHECK-SAME: (%[[QP:.*]]: tensor<1x16x4x8xf32>, %[[KP:.*]]: tensor<1x16x4x8xf32>, %[[VP:.*]]: tensor<1x16x4x8xf32>
// The contractions run over (b, h, i, j | e) and read the B×L×H×D
// projections through permuted maps: no batch_matmul, transpose or reshape.
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QP]], %[[KP]] : tensor<1x16x4x8xf32>, tensor<1x16x4x8xf32>) outs(%{{.*}} : tensor<1x4x16x16xf32>)
// The softmax pieces stay separate generics (nothing fused into P·V).
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic {indexing_maps = [#[[P]], #[[V]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[VP]] : tensor<1x4x16x16xf32>, tensor<1x16x4x8xf32>) outs(%{{.*}} : tensor<1x4x16x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield

// After rpe-fuse-attention: one rpe.attention on q, k, v transposed to
// B×H×L×D, the bias as its operand, the mask read in score_mod.
// FUSE-LABEL: func.func @t5_layer
// FUSE-SAME: (%[[QP:.*]]: tensor<1x16x4x8xf32>, %[[KP:.*]]: tensor<1x16x4x8xf32>, %[[VP:.*]]: tensor<1x16x4x8xf32>, %[[BIAS:.*]]: tensor<1x4x16x16xf32>, %[[MASK:.*]]: tensor<1x1x16x16xf32>)
// FUSE-DAG: %[[Q:.*]] = linalg.transpose ins(%[[QP]] : tensor<1x16x4x8xf32>) outs(%{{.*}} : tensor<1x4x16x8xf32>) permutation = [0, 2, 1, 3]
// FUSE-DAG: %[[K:.*]] = linalg.transpose ins(%[[KP]] : tensor<1x16x4x8xf32>) outs(%{{.*}} : tensor<1x4x16x8xf32>) permutation = [0, 2, 1, 3]
// FUSE-DAG: %[[V:.*]] = linalg.transpose ins(%[[VP]] : tensor<1x16x4x8xf32>) outs(%{{.*}} : tensor<1x4x16x8xf32>) permutation = [0, 2, 1, 3]
// FUSE: %[[O:.*]] = rpe.attention %[[Q]], %[[K]], %[[V]] bias(%[[BIAS]] : tensor<1x4x16x16xf32>) scale = 1.000000e+00
// FUSE-NEXT: ^bb0(%[[S:.*]]: f32, %[[B:.*]]: index, %{{.*}}: index, %[[I:.*]]: index, %[[J:.*]]: index):
// FUSE-NEXT: %[[M:.*]] = tensor.extract %[[MASK]][%[[B]], %{{.*}}, %[[I]], %[[J]]] : tensor<1x1x16x16xf32>
// FUSE-NEXT: %[[SM:.*]] = arith.addf %[[S]], %[[M]] : f32
// FUSE-NEXT: rpe.yield %[[SM]] : f32
// FUSE-NOT: linalg.generic {{.*}}reduction
// FUSE: return
func.func @t5_layer(%qp: tensor<1x16x4x8xf32>, %kp: tensor<1x16x4x8xf32>, %vp: tensor<1x16x4x8xf32>,
                    %bias: tensor<1x4x16x16xf32>, %mask: tensor<1x1x16x16xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<1x4x16x8xf32>
  %q = linalg.transpose ins(%qp : tensor<1x16x4x8xf32>) outs(%e1 : tensor<1x4x16x8xf32>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty() : tensor<1x4x8x16xf32>
  %kt = linalg.transpose ins(%kp : tensor<1x16x4x8xf32>) outs(%e2 : tensor<1x4x8x16xf32>) permutation = [0, 2, 3, 1]
  %v = linalg.transpose ins(%vp : tensor<1x16x4x8xf32>) outs(%e1 : tensor<1x4x16x8xf32>) permutation = [0, 2, 1, 3]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %se = tensor.empty() : tensor<4x16x16xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s3 = linalg.batch_matmul ins(%qc, %kc : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%sz : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
  %e4 = tensor.empty() : tensor<1x4x16x16xf32>
  %sb = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %sm = linalg.generic {indexing_maps = [#id4, #mask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sb, %mask : tensor<1x4x16x16xf32>, tensor<1x1x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %me = tensor.empty() : tensor<1x4x16xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%me : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sm : tensor<1x4x16x16xf32>) outs(%mf : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  %max1 = tensor.expand_shape %max [[0], [1], [2, 3]] output_shape [1, 4, 16, 1] : tensor<1x4x16xf32> into tensor<1x4x16x1xf32>
  %d = linalg.generic {indexing_maps = [#id4, #row1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm, %max1 : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d : tensor<1x4x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %ue = tensor.empty() : tensor<1x4x16x1xf32>
  %uz = linalg.fill ins(%zero : f32) outs(%ue : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row1], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<1x4x16x16xf32>) outs(%uz : tensor<1x4x16x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %oe = tensor.empty() : tensor<4x16x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<4x16x16xf32>, tensor<4x16x8xf32>) outs(%oz : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [1, 4, 16, 8] : tensor<4x16x8xf32> into tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// -----

// BLOOM's ALiBi (transformers' baddbmm, through torch-mlir): on the
// B·H-collapsed scores, a scaling and the B·H×1×L ALiBi term read with a
// constant 0 for its unit row dimension; then expanded and a B×1×L×L mask
// added. The ALiBi read drops its unit dimension (a B·H×L tensor read as
// (b·h, j)) so that the element-wise steps, like the contractions, move to
// (b, h, i, j). The mask's own unit dimension (not on collapsed scores) is
// left as it is.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#alibi3 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#mask = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[KEY:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[MASK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @bloom_alibi
// CHECK-SAME: %[[ALIBI:[a-z0-9]+]]: tensor<4x1x16xf32>, %[[M:[a-z0-9]+]]: tensor<1x1x16x16xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[ALIBI]] {{\[}}[0, 1], [2]] : tensor<4x1x16xf32> into tensor<4x16xf32>
// CHECK: %[[A4:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1], [2]] output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
// CHECK: linalg.generic {indexing_maps = [#[[KEY]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[A4]], %{{.*}} : tensor<1x4x16xf32>, tensor<1x4x16x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[MASK]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[M]] : tensor<1x4x16x16xf32>, tensor<1x1x16x16xf32>)
// CHECK-NOT: tensor.expand_shape {{.*}} into tensor<1x1x4x16x16xf32>
// FUSE-LABEL: func.func @bloom_alibi
// FUSE: %[[B:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 4, 1, 16] : tensor<1x4x16xf32> into tensor<1x4x1x16xf32>
// FUSE: rpe.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%[[B]] : tensor<1x4x1x16xf32>) scale = 2.500000e-01
// FUSE: tensor.extract %{{.*}} : tensor<1x1x16x16xf32>
// FUSE-NOT: linalg.softmax
// FUSE: return
func.func @bloom_alibi(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>, %v: tensor<1x4x16x8xf32>,
                       %alibi: tensor<4x1x16xf32>, %mask: tensor<1x1x16x16xf32>) -> tensor<1x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %e2 = tensor.empty() : tensor<1x4x8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x16x8xf32>) outs(%e2 : tensor<1x4x8x16xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %se = tensor.empty() : tensor<4x16x16xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s3 = linalg.batch_matmul ins(%qc, %kc : tensor<4x16x8xf32>, tensor<4x8x16xf32>) outs(%sz : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %sc = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s3 : tensor<4x16x16xf32>) outs(%se : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %quarter : f32
    linalg.yield %r : f32
  } -> tensor<4x16x16xf32>
  %sa = linalg.generic {indexing_maps = [#alibi3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alibi, %sc : tensor<4x1x16xf32>, tensor<4x16x16xf32>) outs(%se : tensor<4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x16x16xf32>
  %s = tensor.expand_shape %sa [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xf32> into tensor<1x4x16x16xf32>
  %e4 = tensor.empty() : tensor<1x4x16x16xf32>
  %sm = linalg.generic {indexing_maps = [#id4, #mask, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<1x4x16x16xf32>, tensor<1x1x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<1x4x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %oe = tensor.empty() : tensor<4x16x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o3 = linalg.batch_matmul ins(%pc, %vc : tensor<4x16x16xf32>, tensor<4x16x8xf32>) outs(%oz : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [1, 4, 16, 8] : tensor<4x16x8xf32> into tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}
