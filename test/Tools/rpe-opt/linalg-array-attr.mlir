// MLIR 22's custom parsers of linalg.transpose / broadcast / reduce store
// the null attribute of a malformed `permutation` / `dimensions` list and
// crash. rpe's tools reject such text with an error at the keyword; the
// first input is the fuzzer's find (fuzz/regressions), minimized; mlir-opt
// crashes on all three.
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/linalg-transpose-malformed-permutation.mlir 2>&1 | FileCheck %s --check-prefix=TRANSPOSE --implicit-check-not="Stack dump"
// RUN: not rpe-compile %rpe_src_root/fuzz/regressions/pipeline/linalg-transpose-malformed-permutation.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=TRANSPOSE --implicit-check-not="Stack dump"
// RUN: not rpe-opt %S/Inputs/linalg-broadcast-bad-dimensions.mlir 2>&1 | FileCheck %s --check-prefix=BROADCAST --implicit-check-not="Stack dump"
// RUN: not rpe-opt %S/Inputs/linalg-reduce-bad-dimensions.mlir 2>&1 | FileCheck %s --check-prefix=REDUCE --implicit-check-not="Stack dump"
// An integer beyond int64 in the list (the fuzzer's second find): the same.
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/linalg-transpose-permutation-overflow.mlir 2>&1 | FileCheck %s --check-prefix=OVERFLOW --implicit-check-not="Stack dump"
// RUN: not rpe-compile %rpe_src_root/fuzz/regressions/pipeline/linalg-transpose-permutation-overflow.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=OVERFLOW --implicit-check-not="Stack dump"
// The int64 limits themselves pass the scan; the verifier rejects them.
// RUN: not rpe-opt %S/Inputs/linalg-transpose-int64-limits.mlir 2>&1 | FileCheck %s --check-prefix=LIMITS --implicit-check-not="Stack dump"
// TRANSPOSE: linalg-transpose-malformed-permutation.mlir:2:78: error: expected 'permutation = [' 64-bit integers ']' (MLIR 22's parser crashes on a malformed one)
// BROADCAST: linalg-broadcast-bad-dimensions.mlir:2:76: error: expected 'dimensions = [' 64-bit integers ']'
// REDUCE: linalg-reduce-bad-dimensions.mlir:2:73: error: expected 'dimensions = [' 64-bit integers ']'
// OVERFLOW: linalg-transpose-permutation-overflow.mlir:2:78: error: expected 'permutation = [' 64-bit integers ']'
// LIMITS-NOT: 64-bit integers
// LIMITS: linalg-transpose-int64-limits.mlir:2:8: error: 'linalg.transpose' op

// Well-formed lists (and malformed ones in comments or strings:
// permutation = [oops) still parse.
// RUN: rpe-opt %s | FileCheck %s
// CHECK-LABEL: func.func @ok
// CHECK: linalg.transpose {{.*}} permutation = [1, 0]
// CHECK: linalg.broadcast {{.*}} dimensions = [0]
// CHECK: linalg.reduce {{.*}} dimensions = [1]
// CHECK: linalg.transpose {{.*}} permutation = [1, 0] {{.*}}note = "permutation = [oops"
func.func @ok(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %c: tensor<3xf32>, %d: tensor<2x3xf32>, %e: tensor<2xf32>)
    -> (tensor<3x2xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<3x2xf32>) {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [ 1 , 0 ]
  %u = linalg.broadcast ins(%c : tensor<3xf32>) outs(%d : tensor<2x3xf32>) dimensions = [0]
  %r = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%e : tensor<2xf32>) dimensions = [1]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  %g = "linalg.transpose"(%a, %b) <{permutation = array<i64: 1, 0>}> ({
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }) {note = "permutation = [oops"} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %t, %u, %r, %g : tensor<3x2xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<3x2xf32>
}
