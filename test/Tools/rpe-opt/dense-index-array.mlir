// MLIR 22's parser crashes on dense arrays of `index` (parseDenseArrayAttr
// asks the index type for a bit width). rpe's tools reject them with an
// error at the array instead of crashing; the inputs are the fuzzers'
// reproducers (fuzz/regressions).
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/dense-index-array-operand-segments.mlir 2>&1 | FileCheck %s --check-prefix=SEGMENTS --implicit-check-not="Stack dump"
// RUN: not rpe-opt %s 2>&1 | FileCheck %s --implicit-check-not="Stack dump"
// RUN: not rpe-opt < %s 2>&1 | FileCheck %s --check-prefix=STDIN --implicit-check-not="Stack dump"
// STDIN: <stdin>:[[@LINE+18]]:28: error: dense arrays of 'index'
// RUN: not rpe-compile %s -o %t.o 2>&1 | FileCheck %s --implicit-check-not="Stack dump"
// RUN: not rpe-compile %rpe_src_root/fuzz/regressions/capi/dense-index-array.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=CAPI --implicit-check-not="Stack dump"
// The CI fuzz smoke run's find: NUL bytes and spaces inside the brackets.
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/dense-index-array-nul-and-spaces.mlir 2>&1 | FileCheck %s --check-prefix=NUL --implicit-check-not="Stack dump"
// NUL: dense-index-array-nul-and-spaces.mlir:14:28: error: dense arrays of 'index'
// A later find: MLIR's lexer ends a `//` comment at '\r', so the array after
// a carriage return inside a comment is code (the prefilter took it for
// comment and the parser crashed).
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/dense-index-array-after-cr-comment.mlir 2>&1 | FileCheck %s --check-prefix=CR --implicit-check-not="Stack dump"
// CR: dense-index-array-after-cr-comment.mlir:3:53: error: dense arrays of 'index'
// RUN: not rpe-opt %S/Inputs/dense-index-array-split.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT --implicit-check-not="Stack dump"
// SPLIT: dense-index-array-split.mlir:4:28: error: dense arrays of 'index'
// SEGMENTS: dense-index-array-operand-segments.mlir:2:60: error: dense arrays of 'index' (array<index...>) are not supported: MLIR 22's parser crashes on them; use i64
// CAPI: dense-index-array.mlir:2:28: error: dense arrays of 'index'
// A commented-out array<index: 1> is left alone; the one below is not.
// CHECK: dense-index-array.mlir:[[@LINE+2]]:28: error: dense arrays of 'index'
func.func @f() {
  %x = arith.constant {a = array< index >} 0 : index
  return
}
