// MLIR 22's custom parser of linalg.generic casts every element of its
// trait's `iterator_types` to a StringAttr unchecked: an integer, a
// #linalg.iterator_type or a nested array there crashes it (mlir-opt
// crashes on all three inputs below). rpe's tools reject such a trait with
// an error at the entry, or at the trait's alias; the first input is the
// fuzzer's find (fuzz/regressions), minimized.
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/linalg-generic-iterator-types-integer.mlir 2>&1 | FileCheck %s --check-prefix=INTEGER --implicit-check-not="Stack dump"
// RUN: not rpe-compile %rpe_src_root/fuzz/regressions/pipeline/linalg-generic-iterator-types-integer.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=INTEGER --implicit-check-not="Stack dump"
// RUN: not rpe-opt %S/Inputs/linalg-generic-iterator-trait-alias.mlir 2>&1 | FileCheck %s --check-prefix=TRAIT --implicit-check-not="Stack dump"
// RUN: not rpe-opt %S/Inputs/linalg-generic-iterator-list-alias.mlir 2>&1 | FileCheck %s --check-prefix=LIST --implicit-check-not="Stack dump"
// INTEGER: linalg-generic-iterator-types-integer.mlir:2:171: error: expected 'iterator_types = [' strings ']' in a custom-form linalg.generic (MLIR 22's parser crashes on any other element)
// TRAIT: linalg-generic-iterator-trait-alias.mlir:4:23: error: expected 'iterator_types = [' strings ']' in the trait #trait of a custom-form linalg.generic
// LIST: linalg-generic-iterator-list-alias.mlir:4:48: error: expected 'iterator_types = [' strings ']' in a custom-form linalg.generic
// Aliases of aliases carry what the scan found in the first.
// RUN: not rpe-opt %S/Inputs/linalg-generic-iterator-alias-chain.mlir 2>&1 | FileCheck %s --check-prefix=CHAIN --implicit-check-not="Stack dump"
// CHAIN: linalg-generic-iterator-alias-chain.mlir:7:23: error: expected 'iterator_types = [' strings ']' in the trait #trait2 of a custom-form linalg.generic
// A value that is not an array is left to the parser, which reports it.
// RUN: not rpe-opt %S/Inputs/linalg-generic-iterator-not-array.mlir 2>&1 | FileCheck %s --check-prefix=NOTARRAY --implicit-check-not="Stack dump"
// NOTARRAY-NOT: strings
// NOTARRAY: linalg-generic-iterator-not-array.mlir:2:23: error: custom op 'linalg.generic' expected "iterator_types" array attribute

// Strings, written out or through aliases (of the list or of the whole
// trait), and the generic form's #linalg.iterator_type elements (not read
// by the custom parser) still parse; so do malformed lists in comments and
// strings: iterator_types = [7].
// RUN: rpe-opt %s | FileCheck %s
// CHECK-LABEL: func.func @ok
// CHECK-COUNT-4: linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK: note = "iterator_types = [7]"
#map = affine_map<(d0) -> (d0)>
#its = ["parallel"]
#trait = {indexing_maps = [#map], iterator_types = #its}
func.func @ok(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#map], iterator_types = [ "parallel" ]} outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#map], iterator_types = #its} outs(%0 : tensor<4xf32>) {
  ^bb0(%x: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  %2 = linalg.generic #trait outs(%1 : tensor<4xf32>) {
  ^bb0(%x: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  %3 = "linalg.generic"(%2) <{indexing_maps = [#map], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%x: f32):
    linalg.yield %x : f32
  }) {note = "iterator_types = [7]"} : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
