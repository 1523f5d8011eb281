// RUN: rpe-opt %s -split-input-file -rpe-legalize-math -verify-diagnostics | FileCheck %s

// f32 erf and erfc: polynomials (no call, no math.erf left); other types
// and asinh/acosh/atanh/cbrt: libm calls (vectors unrolled); ops that
// convert-math-to-llvm lowers stay as they are.
// CHECK-DAG: func.func private @erf(f64) -> f64
// CHECK-DAG: func.func private @cbrtf(f32) -> f32
// CHECK-DAG: func.func private @asinh(f64) -> f64
// CHECK-LABEL: func.func @lowered
// CHECK-NOT: math.erf
// CHECK: math.exp
// CHECK: call @erf(%{{.*}}) : (f64) -> f64
// CHECK: call @cbrtf(%{{.*}}) : (f32) -> f32
// CHECK-COUNT-2: call @asinh(%{{.*}}) : (f64) -> f64
// CHECK: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.cbrt
// CHECK-NOT: math.asinh
// CHECK: return
func.func @lowered(%a: f32, %b: f64, %v: vector<2xf64>, %w: vector<8xf32>) -> (f32, f32, f64, f32, vector<2xf64>, vector<8xf32>, f32) {
  %0 = math.erf %a : f32
  %1 = math.erfc %a : f32
  %2 = math.erf %b : f64
  %3 = math.cbrt %a : f32
  %4 = math.asinh %v : vector<2xf64>
  %5 = math.erf %w : vector<8xf32>
  %6 = math.tanh %a : f32
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f64, f32, vector<2xf64>, vector<8xf32>, f32
}

// -----

// isinf: |x| == inf; isnormal: smallest normal <= |x| < inf (ordered, so
// false for NaN); clampf: max with the low bound, then min with the high one.
// CHECK-LABEL: func.func @classify
// CHECK-SAME: (%[[X:.*]]: f32, %[[LO:.*]]: f32, %[[HI:.*]]: f32)
// CHECK-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[TINY:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK: %[[ISINF:.*]] = arith.cmpf oeq, %[[ABS]], %[[INF]] : f32
// CHECK: %[[ABS2:.*]] = math.absf %[[X]] : f32
// CHECK: %[[GE:.*]] = arith.cmpf oge, %[[ABS2]], %[[TINY]] : f32
// CHECK: %[[LT:.*]] = arith.cmpf olt, %[[ABS2]], %[[INF]] : f32
// CHECK: %[[NORMAL:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[UP:.*]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK: %[[CLAMP:.*]] = arith.minimumf %[[UP]], %[[HI]] : f32
// CHECK: return %[[ISINF]], %[[NORMAL]], %[[CLAMP]]
func.func @classify(%x: f32, %lo: f32, %hi: f32) -> (i1, i1, f32) {
  %0 = math.isinf %x : f32
  %1 = math.isnormal %x : f32
  %2 = math.clampf %x to [%lo, %hi] : f32
  return %0, %1, %2 : i1, i1, f32
}

// -----

// A function of the module with the name of the libm function the op needs.
// expected-note @below {{defined here}}
func.func @cbrt(%x: f64) -> f64 {
  return %x : f64
}
func.func @user(%x: f64) -> f64 {
  // expected-error @below {{'math.cbrt' lowers to a call of libm's 'cbrt', but the module defines a function of that name; rename it}}
  %0 = math.cbrt %x : f64
  return %0 : f64
}

// -----

// math.fpowi on vectors (a vectorized score_mod's s^n): LLVM's powi takes a
// scalar exponent, so upstream's expansion: multiplications for a constant
// exponent (x^3 = x·x·x), sitofp and powf for a variable one. Scalar fpowi
// keeps its intrinsic.
// CHECK-LABEL: func.func @fpowi
// CHECK-SAME: (%[[V:.*]]: vector<16xf32>, %[[N:.*]]: vector<16xi32>, %[[S:.*]]: f32, %[[M:.*]]: i32)
// CHECK: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : vector<16xf32>
// CHECK: %[[CUBE:.*]] = arith.mulf %[[SQ]], %[[V]] : vector<16xf32>
// CHECK: %[[F:.*]] = arith.sitofp %[[N]] : vector<16xi32> to vector<16xf32>
// CHECK: %[[P:.*]] = math.powf %[[V]], %[[F]] : vector<16xf32>
// CHECK: %[[SC:.*]] = math.fpowi %[[S]], %[[M]] : f32, i32
// CHECK: return %[[CUBE]], %[[P]], %[[SC]]
func.func @fpowi(%v: vector<16xf32>, %n: vector<16xi32>, %s: f32, %m: i32) -> (vector<16xf32>, vector<16xf32>, f32) {
  %c3 = arith.constant dense<3> : vector<16xi32>
  %cube = math.fpowi %v, %c3 : vector<16xf32>, vector<16xi32>
  %p = math.fpowi %v, %n : vector<16xf32>, vector<16xi32>
  %sc = math.fpowi %s, %m : f32, i32
  return %cube, %p, %sc : vector<16xf32>, vector<16xf32>, f32
}
