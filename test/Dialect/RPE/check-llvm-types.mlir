// RUN: rpe-opt %s -rpe-check-llvm-types -allow-unregistered-dialect -split-input-file -verify-diagnostics | FileCheck %s

// LLVM IR has no i0: each kind of place a type can hide in.

// expected-error @below {{'func.func' op uses the type '(tensor<4xi0>) -> tensor<4xi0>', and LLVM IR has no zero-width integers (i0)}}
func.func @argument(%a: tensor<4xi0>) -> tensor<4xi0> {
  return %a : tensor<4xi0>
}

// -----

// A declaration has no block: its signature.
// expected-error @below {{'func.func' op uses the type '(memref<2xvector<4xi0>>) -> ()', and LLVM IR has no zero-width integers (i0)}}
func.func private @declaration(memref<2xvector<4xi0>>)

// -----

func.func @result() -> index {
  // expected-error @below {{'tensor.empty' op uses the type 'tensor<4x8xi0>', and LLVM IR has no zero-width integers (i0)}}
  %e = tensor.empty() : tensor<4x8xi0>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %e, %c0 : tensor<4x8xi0>
  return %d : index
}

// -----

llvm.func @llvm_struct() {
  // expected-error @below {{'llvm.mlir.undef' op uses the type '!llvm.struct<(f32, i0)>', and LLVM IR has no zero-width integers (i0)}}
  %u = llvm.mlir.undef : !llvm.struct<(f32, i0)>
  llvm.return
}

// -----

// Only a block argument (of an op rpe does not know) has the type.
func.func @block_argument() {
  // expected-error @below {{'test.region' op uses the type 'i0'}}
  "test.region"() ({
  ^bb0(%x: i0):
    "test.end"() : () -> ()
  }) : () -> ()
  return
}

// -----

// 2^23 bits is LLVM's widest integer; one bit more is an error. (A
// declaration: LLVM takes minutes to compile a body that moves one.)
// CHECK: func.func private @widest(i8388608) -> i8388608
func.func private @widest(i8388608) -> i8388608

// -----

// expected-error @below {{'func.func' op uses the type '(i8388609) -> ()', and LLVM IR has no integers wider than 8388608 bits ('i8388609')}}
func.func @too_wide(%a: i8388609) {
  return
}

// -----

// tf32 has no LLVM type (a workgroup buffer of it crashed the GPU
// lowering).
func.func @tf32() {
  // expected-error @below {{'memref.alloca' op uses the type 'memref<4xtf32>', and LLVM IR has no tf32 type (use f32)}}
  %a = memref.alloca() : memref<4xtf32>
  return
}

// -----

// Without nvptx-device-code, GPU code is checked for integers only.
// CHECK-LABEL: gpu.module @device
// CHECK: llvm.fadd {{.*}} : f128
// CHECK: llvm.mlir.constant(1.500000e+00 : f80)
gpu.module @device {
  llvm.func @device(%p: !llvm.ptr) {
    %a = llvm.load %p : !llvm.ptr -> f128
    %s = llvm.fadd %a, %a : f128
    llvm.store %s, %p : f128, !llvm.ptr
    %k = llvm.mlir.constant(1.5 : f80) : f80
    llvm.store %k, %p : f80, !llvm.ptr
    llvm.return
  }
}
