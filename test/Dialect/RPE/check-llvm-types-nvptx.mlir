// RUN: rpe-opt %s -rpe-check-llvm-types="nvptx-device-code=true" -split-input-file -verify-diagnostics | FileCheck %s

// rpe-nvptx-pipeline's check of the kernels before the NVPTX backend
// compiles them: f128 is only moved (loads, stores, selects, constants), f80
// not used at all, integers have up to 128 bits (up to 64 in conversions
// to and from floats). Host code is not checked.

// CHECK-LABEL: gpu.module @moves
gpu.module @moves {
  llvm.func @copy(%p: !llvm.ptr, %q: !llvm.ptr, %c: i1, %s: f128) {
    %a = llvm.load %p : !llvm.ptr -> f128
    %k = llvm.mlir.constant(1.5 : f128) : f128
    %b = llvm.select %c, %a, %k : i1, f128
    %t = llvm.select %c, %b, %s : i1, f128
    llvm.store %t, %q : f128, !llvm.ptr
    %g = llvm.getelementptr %q[1] : (!llvm.ptr) -> !llvm.ptr, f128
    llvm.store %a, %g : f128, !llvm.ptr
    %i = llvm.load %p : !llvm.ptr -> i128
    %j = llvm.mul %i, %i : i128
    %k64 = llvm.load %p : !llvm.ptr -> i64
    %f = llvm.sitofp %k64 : i64 to f32
    llvm.store %j, %q : i128, !llvm.ptr
    llvm.store %f, %q : f32, !llvm.ptr
    llvm.return
  }
}
// CHECK-LABEL: llvm.func @host
llvm.func @host(%a: f128, %b: f80, %c: i129) -> f128 {
  %s = llvm.fadd %a, %a : f128
  %t = llvm.fmul %b, %b : f80
  %u = llvm.add %c, %c : i129
  %v = llvm.sitofp %c : i129 to f32
  llvm.return %s : f128
}

// -----

gpu.module @add {
  llvm.func @add(%p: !llvm.ptr) {
    %a = llvm.load %p : !llvm.ptr -> f128
    // expected-error @below {{'llvm.fadd' op computes with 'f128' in GPU code: the NVPTX backend has no f128 arithmetic, it only moves such values; the CPU target compiles it}}
    %s = llvm.fadd %a, %a : f128
    llvm.store %s, %p : f128, !llvm.ptr
    llvm.return
  }
}

// -----

gpu.module @compare {
  llvm.func @compare(%p: !llvm.ptr) -> i1 {
    %a = llvm.load %p : !llvm.ptr -> vector<2xf128>
    // expected-error @below {{'llvm.fcmp' op computes with 'f128' in GPU code}}
    %c = llvm.fcmp "olt" %a, %a : vector<2xf128>
    %i = llvm.mlir.constant(0 : i32) : i32
    %e = llvm.extractelement %c[%i : i32] : vector<2xi1>
    llvm.return %e : i1
  }
}

// -----

// An f80 kernel parameter or constant: a crash in the backend.
gpu.module @parameter {
  // expected-error @below {{'llvm.func' op uses 'f80' in GPU code: the NVPTX backend has no 80-bit floats; the CPU target compiles it}}
  llvm.func @parameter(%p: !llvm.ptr, %s: f80) {
    llvm.store %s, %p : f80, !llvm.ptr
    llvm.return
  }
}

// -----

gpu.module @f80_constant {
  llvm.func @f80_constant(%p: !llvm.ptr) {
    // expected-error @below {{'llvm.mlir.constant' op uses 'f80' in GPU code}}
    %k = llvm.mlir.constant(1.5 : f80) : f80
    llvm.store %k, %p : f80, !llvm.ptr
    llvm.return
  }
}

// -----

// An op without a location (the body of a named linalg op) is reported at
// its closest ancestor's.
gpu.module @unknown_location {
  // expected-error @below {{'llvm.fdiv' op computes with 'f128' in GPU code}}
  llvm.func @unknown_location(%p: !llvm.ptr) {
    %a = llvm.load %p : !llvm.ptr -> f128
    %s = llvm.fdiv %a, %a : f128 loc(unknown)
    llvm.store %s, %p : f128, !llvm.ptr
    llvm.return
  }
}

// -----

// Its loads and stores moved 4 of the 10 bytes.
gpu.module @f80_copy {
  llvm.func @f80_copy(%p: !llvm.ptr, %q: !llvm.ptr) {
    // expected-error @below {{'llvm.load' op uses 'f80' in GPU code}}
    %x = llvm.load %p : !llvm.ptr -> f80
    llvm.store %x, %q : f80, !llvm.ptr
    llvm.return
  }
}

// -----

// i129 and i385 additions crashed the backend's legalization.
gpu.module @wide_integer {
  llvm.func @wide_integer(%p: !llvm.ptr) {
    // expected-error @below {{'llvm.load' op uses 'i129' in GPU code: the NVPTX backend handles integers of up to 128 bits; the CPU target compiles it}}
    %a = llvm.load %p : !llvm.ptr -> i129
    %s = llvm.add %a, %a : i129
    llvm.store %s, %p : i129, !llvm.ptr
    llvm.return
  }
}

// -----

// A library call the backend does not have (__floattisf).
gpu.module @wide_conversion {
  llvm.func @wide_conversion(%p: !llvm.ptr) {
    %a = llvm.load %p : !llvm.ptr -> i65
    // expected-error @below {{'llvm.sitofp' op converts between 'i65' and a float in GPU code: the NVPTX backend has no such conversion for integers over 64 bits; the CPU target compiles it}}
    %f = llvm.sitofp %a : i65 to f32
    llvm.store %f, %p : f32, !llvm.ptr
    llvm.return
  }
}

// -----

gpu.module @wide_truncation {
  llvm.func @wide_truncation(%p: !llvm.ptr) {
    %f = llvm.load %p : !llvm.ptr -> f64
    // expected-error @below {{'llvm.fptoui' op converts between 'i128' and a float in GPU code}}
    %i = llvm.fptoui %f : f64 to i128
    llvm.store %i, %p : i128, !llvm.ptr
    llvm.return
  }
}
