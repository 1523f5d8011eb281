// MLIR 22's parser recurses per bracket level and overflows the stack a few
// thousand levels down (on an 8 MiB stack: 2100 nested generic regions,
// 6300 dictionaries, 6800 arrays or parentheses, 16000 types). rpe's tools
// reject brackets nested more than 1000 deep with an error at the bracket
// past the limit, and take 1000. The first input is the fuzzer's
// reproducer (fuzz/regressions): attributes nested 9564 deep.
// RUN: not rpe-opt %rpe_src_root/fuzz/regressions/pipeline/deep-attribute-nesting.mlir 2>&1 | FileCheck %s --check-prefix=FUZZ --implicit-check-not="Stack dump"
// FUZZ: deep-attribute-nesting.mlir:3:{{[0-9]+}}: error: brackets nested more than 1000 deep: MLIR 22's parser recurses per level and would overflow the stack
//
// Each kind 8000 deep: the error, not a crash.
// RUN: %python %S/Inputs/nest.py array 8000 > %t.array.mlir
// RUN: not rpe-opt %t.array.mlir 2>&1 | FileCheck %s --check-prefix=ARRAY --implicit-check-not="Stack dump"
// ARRAY: array.mlir:1:1031: error: brackets nested more than 1000 deep
// RUN: %python %S/Inputs/nest.py dict 8000 > %t.dict.mlir
// RUN: not rpe-opt %t.dict.mlir 2>&1 | FileCheck %s --check-prefix=DEEP --implicit-check-not="Stack dump"
// RUN: %python %S/Inputs/nest.py region 8000 > %t.region.mlir
// RUN: not rpe-opt %t.region.mlir --allow-unregistered-dialect 2>&1 | FileCheck %s --check-prefix=DEEP --implicit-check-not="Stack dump"
// RUN: %python %S/Inputs/nest.py type 20000 > %t.type.mlir
// RUN: not rpe-opt %t.type.mlir 2>&1 | FileCheck %s --check-prefix=DEEP --implicit-check-not="Stack dump"
// RUN: %python %S/Inputs/nest.py affine 8000 > %t.affine.mlir
// RUN: not rpe-opt %t.affine.mlir 2>&1 | FileCheck %s --check-prefix=DEEP --implicit-check-not="Stack dump"
// RUN: not rpe-compile %t.array.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=ARRAY --implicit-check-not="Stack dump"
// DEEP: error: brackets nested more than 1000 deep
// On stdin too (read once, checked, then parsed from the same buffer).
// RUN: not rpe-opt < %t.array.mlir 2>&1 | FileCheck %s --check-prefix=STDIN --implicit-check-not="Stack dump"
// STDIN: <stdin>:1:1031: error: brackets nested more than 1000 deep
//
// At the limit: 999 arrays in the attribute dictionary (1000 brackets)
// parse, from a file and from stdin.
// RUN: %python %S/Inputs/nest.py array 999 > %t.ok.mlir
// RUN: rpe-opt %t.ok.mlir | FileCheck %s --check-prefix=OK
// RUN: rpe-opt < %t.ok.mlir | FileCheck %s --check-prefix=OK
// OK: func.func @f() attributes {a = {{\[+}}]
