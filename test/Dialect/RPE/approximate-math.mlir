// RUN: rpe-opt %s -split-input-file -rpe-approximate-math | FileCheck %s
// RUN: rpe-opt %s -split-input-file -rpe-approximate-math=fma=false | FileCheck %s --check-prefix=NOFMA
// RUN: not rpe-opt %s -rpe-approximate-math=fma=maybe 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --fma option: 'maybe' is invalid value for boolean argument

// An f32 exp in a linalg body (SiLU's sigmoid): range reduction, a
// polynomial in FMAs, and 2^n from the exponent bits; no exp left.
// CHECK-LABEL: func.func @sigmoid
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: math.floor
// CHECK: math.fma
// CHECK: arith.shli
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK-NOT: math.exp
// CHECK: arith.divf
// CHECK: linalg.yield
// Without FMA hardware: multiplies and adds.
// NOFMA-LABEL: func.func @sigmoid
// NOFMA-NOT: math.exp
// NOFMA-NOT: math.fma
// NOFMA: linalg.yield
func.func @sigmoid(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %one = arith.constant 1.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %one, %1 : f32
    %3 = arith.divf %one, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// An f32 tanh in a linalg body (GELU's tanh form): clamped, then a rational
// polynomial; no tanh left.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: linalg.generic
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK: arith.divf
// CHECK-NOT: math.tanh
// CHECK: linalg.yield
// NOFMA-LABEL: func.func @gelu_tanh
// NOFMA-NOT: math.tanh
// NOFMA-NOT: math.fma
// NOFMA: linalg.yield
func.func @gelu_tanh(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.797884583 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%y : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %c : f32
    %1 = math.tanh %0 : f32
    %2 = arith.addf %one, %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.mulf %3, %half : f32
    linalg.yield %4 : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// The user's own math.fma stays an FMA without FMA hardware too, in the
// body with the exp and in another one.
// NOFMA-LABEL: func.func @own_fma
// NOFMA: linalg.generic
// NOFMA-NOT: math.exp
// NOFMA: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// NOFMA-NOT: math.fma
// NOFMA: linalg.yield
// NOFMA: linalg.generic
// NOFMA-NEXT: ^bb0
// NOFMA-NEXT: math.fma
func.func @own_fma(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%y : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    %1 = math.fma %0, %in, %out : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%y : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = math.fma %in, %in, %out : f32
    linalg.yield %1 : f32
  } -> tensor<8xf32>
  return %r, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// Left alone: f64 (the polynomials are f32 ones), other math ops (log:
// bucket logarithms must stay libm's), an exp outside a linalg body, and
// an exp in an attention's score_mod (user math there stays libm's).
// CHECK-LABEL: func.func @left_alone
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.log %{{.*}} : f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: rpe.attention
// CHECK: math.exp %{{.*}} : f32
// CHECK: rpe.yield
func.func @left_alone(%x: tensor<8xf64>, %s: f32, %q: tensor<1x1x4x8xf32>, %y: tensor<8xf32>) -> (tensor<8xf64>, f32, tensor<1x1x4x8xf32>, tensor<8xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      outs(%x : tensor<8xf64>) {
  ^bb0(%out: f64):
    %0 = math.exp %out : f64
    linalg.yield %0 : f64
  } -> tensor<8xf64>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      outs(%y : tensor<8xf32>) {
  ^bb0(%out: f32):
    %0 = math.log %out : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %e = math.exp %s : f32
  %a = rpe.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> {
  ^bb0(%sc: f32, %b: index, %h: index, %i: index, %j: index):
    %m = math.exp %sc : f32
    rpe.yield %m : f32
  }
  return %r, %e, %a, %l : tensor<8xf64>, f32, tensor<1x1x4x8xf32>, tensor<8xf32>
}
