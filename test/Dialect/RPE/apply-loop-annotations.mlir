// RUN: rpe-opt %s -split-input-file -rpe-apply-loop-annotations -verify-diagnostics | FileCheck %s
// RUN: rpe-opt %s -split-input-file -rpe-apply-loop-annotations -verify-diagnostics | mlir-translate --split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// What scf-to-cf and convert-cf-to-llvm leave of a scf.for with an
// llvm.loop_annotation: a discardable attribute on the latch branch, which
// the translation ignores. It becomes the branch's property (printed
// without the "llvm." prefix) and reaches LLVM IR as !llvm.loop metadata.
#unroll = #llvm.loop_unroll<disable = true>
#noUnroll = #llvm.loop_annotation<unroll = #unroll>
#vectorize = #llvm.loop_vectorize<disable = true>
#noVectorize = #llvm.loop_annotation<vectorize = #vectorize>

// CHECK-LABEL: llvm.func @loop(
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #{{.*}}}
// CHECK-NOT: llvm.loop_annotation =
// LLVM-LABEL: define void @loop(
// LLVM: br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// LLVM: ![[LOOP]] = distinct !{![[LOOP]], ![[UNROLL:[0-9]+]]}
// LLVM: ![[UNROLL]] = !{!"llvm.loop.unroll.disable"}
llvm.func @loop(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^header(%c0 : i64)
^header(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^body, ^exit
^body:
  %next = llvm.add %i, %c1 : i64
  llvm.br ^header(%next : i64) {llvm.loop_annotation = #noUnroll}
^exit:
  llvm.return
}

// -----

// A property that is already set wins over the discardable attribute, which
// goes; llvm.cond_br latches are handled too.
#unroll = #llvm.loop_unroll<disable = true>
#noUnroll = #llvm.loop_annotation<unroll = #unroll>
#vectorize = #llvm.loop_vectorize<disable = true>
#noVectorize = #llvm.loop_annotation<vectorize = #vectorize>

// CHECK-LABEL: llvm.func @kept(
// CHECK: llvm.cond_br %{{.*}}, ^bb1(%{{.*}} : i64), ^bb2 {loop_annotation = #{{.*}}}
// CHECK-NOT: llvm.loop_annotation =
// LLVM-LABEL: define void @kept(
// LLVM: br i1 %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// LLVM: ![[LOOP]] = distinct !{![[LOOP]], ![[VECTORIZE:[0-9]+]]}
// LLVM: ![[VECTORIZE]] = !{!"llvm.loop.vectorize.enable", i1 false}
llvm.func @kept(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^body(%c0 : i64)
^body(%i: i64):
  %next = llvm.add %i, %c1 : i64
  %more = llvm.icmp "slt" %next, %n : i64
  llvm.cond_br %more, ^body(%next : i64), ^exit {loop_annotation = #noVectorize, llvm.loop_annotation = #noUnroll}
^exit:
  llvm.return
}

// -----

llvm.func @not_an_annotation(%n: i64) {
  // expected-error @+1 {{'llvm.loop_annotation' must be an #llvm.loop_annotation, got 1 : i64}}
  llvm.br ^exit {llvm.loop_annotation = 1 : i64}
^exit:
  llvm.return
}
