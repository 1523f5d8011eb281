// RUN: rpe-opt %s -rpe-emit-c-interface | FileCheck %s

// CHECK-LABEL: func.func @public_fn
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @public_fn() {
  return
}

// Private functions and declarations are left alone.
// CHECK-LABEL: func.func private @private_fn()
// CHECK-NOT: llvm.emit_c_interface
func.func private @private_fn() {
  return
}

// CHECK: func.func private @external(i32){{$}}
func.func private @external(i32)

// Already marked: unchanged.
// CHECK-LABEL: func.func @marked
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @marked() attributes {llvm.emit_c_interface} {
  return
}
