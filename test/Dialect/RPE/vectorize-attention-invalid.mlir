// RUN: rpe-opt %s -split-input-file -verify-diagnostics -rpe-vectorize-attention="tile-k=1024 max-stack-kib=288"
// RUN: rpe-opt %s -split-input-file -rpe-vectorize-attention="tile-k=1024 max-stack-kib=1605" | FileCheck %s

// The kernels' stack scratch per thread is bounded (max-stack-kib): a tile
// too large is an error at the op, not a stack overflow at run time.
// Defaults: 16 lanes, tile-q = 64, decode-rows = 8.

// With a bias (no decode kernels, no packed heads): one kernel, whose
// scratch is Qᵀ and Oᵀ (64 + 64 rows of 64 floats), the scores (1024 × 64)
// and m, l (64 each): (8192 + 65536 + 128) · 4 B = 295424 B = 288.5 KiB.
func.func @bias(%q: tensor<1x2x?x64xf32>, %b: tensor<1x2x?x?xf32>) -> tensor<1x2x?x64xf32> {
  // expected-error @below {{the vector kernel needs up to 289 KiB of stack per thread with tile-k = 1024, tile-q = 64, more than max-stack-kib = 288: use a smaller tile-k}}
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<1x2x?x?xf32>) : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %0 : tensor<1x2x?x64xf32>
}

// -----

// Plain attention: two such kernels (one head per tile, and the query
// heads of a kv head packed into one tile): 2 · 295424 B, and decode
// kernels for 1, 2, 4 and 8 rows (15 rows), each row with its q and o rows
// (128 floats), 1024 × 16 partial dot products, 1024 probabilities, m, l
// and alpha (3 floats) and its key end (8 B): 15 · ((128 + 17408 + 3) · 4
// + 8) B = 1052460 B. In all 1643308 B = 1604.8 KiB.
func.func @plain(%q: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  // expected-error @below {{the vector kernel needs up to 1605 KiB of stack per thread}}
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %0 : tensor<1x2x?x64xf32>
}

// With max-stack-kib = 1605 both fit.
// CHECK-LABEL: func.func @bias
// CHECK: scf.forall
// CHECK-NOT: rpe.attention
// CHECK-LABEL: func.func @plain
// CHECK: scf.forall
// CHECK-NOT: rpe.attention
