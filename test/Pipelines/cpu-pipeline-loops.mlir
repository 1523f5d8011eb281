// Attention in a loop that carries its result (layers written as an
// scf.for): each iteration yields a new buffer and frees the one it
// replaced when it owns it. one-shot-bufferize rejected such loops ("Yield
// operand #0 is not equivalent to the corresponding iter bbArg") until the
// pipelines allowed loops to return allocations. Values against
// rpe.reference: python/tests/test_compile.py, test_attention_in_a_loop.
// RUN: rpe-opt %s -rpe-cpu-pipeline | FileCheck %s
// RUN: rpe-opt %s -rpe-cpu-pipeline="reference=1" | FileCheck %s --check-prefix=REF
// RUN: rpe-opt %s -rpe-cpu-pipeline="num-threads=2" | FileCheck %s

// CHECK-LABEL: llvm.func @layers(
// The loop header carries the buffer (a memref descriptor) and whether the
// loop owns it.
// CHECK: ^[[HEAD:bb[0-9]+]](%{{.*}}: i64, %{{.*}}: !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>, %{{.*}}: i1):
// CHECK: llvm.call @__rpe_attention(
// CHECK: llvm.call @free(
// CHECK: llvm.br ^[[HEAD]](
// REF-LABEL: llvm.func @layers(
// REF: ^[[HEAD:bb[0-9]+]](%{{.*}}: i64, %{{.*}}: !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)>, %{{.*}}: i1):
// REF: llvm.call @free(
// REF: llvm.br ^[[HEAD]](
func.func @layers(%q: tensor<1x2x8x4xf32>, %n: index) -> tensor<1x2x8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %q) -> tensor<1x2x8x4xf32> {
    %o = rpe.attention %acc, %q, %q causal : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
    scf.yield %o : tensor<1x2x8x4xf32>
  }
  return %r : tensor<1x2x8x4xf32>
}
