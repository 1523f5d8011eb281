// RUN: rpe-opt %s -rpe-internalize-functions | FileCheck %s

// What convert-func-to-llvm makes of a private func.func: a private symbol
// with external linkage. It becomes internal; public functions, functions
// with a linkage of their own and declarations are left alone.
// CHECK: llvm.func internal @kernel() attributes {sym_visibility = "private"}
llvm.func @kernel() attributes {sym_visibility = "private"} {
  llvm.return
}
// CHECK: llvm.func @entry()
llvm.func @entry() {
  llvm.call @kernel() : () -> ()
  llvm.return
}
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr attributes {sym_visibility = "private"}
llvm.func @malloc(i64) -> !llvm.ptr attributes {sym_visibility = "private"}
// CHECK: llvm.func weak @chosen()
llvm.func weak @chosen() {
  llvm.return
}
// CHECK: llvm.func linkonce_odr @once() attributes {sym_visibility = "private"}
llvm.func linkonce_odr @once() attributes {sym_visibility = "private"} {
  llvm.return
}
// func.func is not touched.
// CHECK: func.func private @not_llvm()
func.func private @not_llvm() {
  return
}
