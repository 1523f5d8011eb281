// MLIR 22's parseCommonStructuredOpParts (every custom-form linalg
// structured op: named ops, linalg.generic, linalg.elementwise,
// linalg.contract) parses an optional `<` attribute `>` as the op's
// properties and casts it to a DictionaryAttr unchecked. mlir-opt
// segfaults or aborts on the first five inputs below, and on the last
// (an enum attribute) reads the attribute's storage as a dictionary's
// (undefined behaviour; it happened to print the op without complaint).
// rpe's tools reject them with an error at the `<`. The first input is
// the fuzzer's find (fuzz/regressions).
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/linalg-matmul-array-properties.mlir 2>&1 | FileCheck %s --check-prefix=FUZZ --implicit-check-not="Stack dump"
// RUN: not rpe-compile %rpe_src_root/fuzz/regressions/pipeline/linalg-matmul-array-properties.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=FUZZ --implicit-check-not="Stack dump"
// FUZZ: linalg-matmul-array-properties.mlir:26:16: error: expected a dictionary of properties ('<{...}>') here: MLIR 22's parser of custom-form linalg ops crashes on any other attribute
// RUN: split-file %s %t
// RUN: not rpe-opt %t/named.mlir 2>&1 | FileCheck %s --check-prefix=NAMED --implicit-check-not="Stack dump"
// RUN: not rpe-opt %t/maps.mlir 2>&1 | FileCheck %s --check-prefix=MAPS --implicit-check-not="Stack dump"
// RUN: not rpe-opt %t/elementwise.mlir 2>&1 | FileCheck %s --check-prefix=ELEMENTWISE --implicit-check-not="Stack dump"
// RUN: not rpe-opt %t/generic.mlir 2>&1 | FileCheck %s --check-prefix=GENERIC --implicit-check-not="Stack dump"
// RUN: not rpe-opt %t/alias.mlir 2>&1 | FileCheck %s --check-prefix=ALIAS --implicit-check-not="Stack dump"
// RUN: not rpe-opt %t/dialect-attr.mlir 2>&1 | FileCheck %s --check-prefix=DIALECT --implicit-check-not="Stack dump"
// NAMED: named.mlir:2:19: error: expected a dictionary of properties
// MAPS: maps.mlir:2:138: error: expected a dictionary of properties
// ELEMENTWISE: elementwise.mlir:2:61: error: expected a dictionary of properties
// GENERIC: generic.mlir:3:67: error: expected a dictionary of properties
// ALIAS: alias.mlir:4:21: error: expected a dictionary of properties
// DIALECT: dialect-attr.mlir:2:21: error: expected a dictionary of properties

// Dictionaries, aliases of dictionaries (through another alias too), and
// `<` elsewhere in the head (a dialect attribute's body, types, maps) parse.
// RUN: rpe-opt %t/ok.mlir | FileCheck %s
// CHECK-LABEL: func.func @ok
// CHECK-COUNT-4: linalg.matmul
// CHECK: linalg.elementwise kind=#linalg.elementwise_kind<add>
// CHECK: linalg.generic

//--- ok.mlir
#props = {note = "<[1]>"}
#props_again = #props
#map_a = affine_map<(m, n, k) -> (m, k)>
func.func @ok(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>,
        tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = linalg.matmul<{}> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = linalg.matmul indexing_maps = [#map_a, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] <{}>
         ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = linalg.matmul <#props> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = linalg.matmul < #props_again > ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = linalg.elementwise kind=#linalg.elementwise_kind<add> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} <{}>
      ins(%a : tensor<4x4xf32>) outs(%b : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %lt = arith.cmpf olt, %x, %y : f32
    %s = arith.select %lt, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

//--- named.mlir
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.add <[1]> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

//--- maps.mlir
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] <1> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

//--- elementwise.mlir
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.elementwise kind=#linalg.elementwise_kind<add><"x"> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

//--- generic.mlir
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} <[2]>
      ins(%a : tensor<4x4xf32>) outs(%b : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

//--- alias.mlir
#array = [1]
#alias = #array
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul<#alias> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

//--- dialect-attr.mlir
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul<#linalg.elementwise_kind<add>> ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
