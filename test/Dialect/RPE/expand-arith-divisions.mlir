// RUN: rpe-opt %s -rpe-expand-arith-divisions | FileCheck %s

// Ceil and floor divisions become arith ops convert-arith-to-llvm lowers;
// the float min / max ops stay (one LLVM intrinsic each, max.NaN.f32 on
// NVPTX), where arith-expand would make each a compare, a NaN test and
// selects.
// CHECK-LABEL: func.func @divisions
// CHECK-NOT: arith.ceildivui
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.floordivsi
// CHECK: arith.divui
// CHECK: arith.divsi
// CHECK: return
func.func @divisions(%a: index, %b: index) -> (index, index, index) {
  %0 = arith.ceildivui %a, %b : index
  %1 = arith.ceildivsi %a, %b : index
  %2 = arith.floordivsi %a, %b : index
  return %0, %1, %2 : index, index, index
}

// CHECK-LABEL: func.func @min_max
// CHECK-NEXT: %[[A:.*]] = arith.maximumf %arg0, %arg1 : f32
// CHECK-NEXT: %[[B:.*]] = arith.minimumf %[[A]], %arg1 : f32
// CHECK-NEXT: %[[C:.*]] = arith.maxnumf %[[B]], %arg0 : f32
// CHECK-NEXT: %[[D:.*]] = arith.minnumf %[[C]], %arg0 : f32
// CHECK-NEXT: return %[[D]] : f32
func.func @min_max(%x: f32, %y: f32) -> f32 {
  %0 = arith.maximumf %x, %y : f32
  %1 = arith.minimumf %0, %y : f32
  %2 = arith.maxnumf %1, %x : f32
  %3 = arith.minnumf %2, %x : f32
  return %3 : f32
}
