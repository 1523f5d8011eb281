// RUN: rpe-opt %s -rpe-gpu-attention -verify-diagnostics -split-input-file
// With 64-key tiles the SIMT kernel's f32 tiles (keys, values, probabilities
// of 128 rows: 64 KiB) no longer fit in a block's 48 KiB; the f16 attention
// takes the tensor-core kernel, which shrinks its own tiles to fit.
// RUN: not rpe-opt %s -rpe-gpu-attention="tile-k=64" -split-input-file 2>&1 | FileCheck %s --check-prefix=TILES --implicit-check-not="SIMT kernel's tiles"

func.func @too_wide(%q: tensor<1x1x8x512xf32>) -> tensor<1x1x8x512xf32> {
  // expected-error @below {{cannot run on the GPU: head dimensions 512 and 512 exceed max-head-dim (256)}}
  %0 = rpe.attention %q, %q, %q : tensor<1x1x8x512xf32>, tensor<1x1x8x512xf32>, tensor<1x1x8x512xf32> -> tensor<1x1x8x512xf32>
  return %0 : tensor<1x1x8x512xf32>
}

// -----

// TILES: gpu-attention-invalid.mlir:[[# @LINE + 2]]:8: error: 'rpe.attention' op cannot run on the GPU: the SIMT kernel's tiles need 65536 bytes of workgroup memory, above the 49152 a block gets (tile-k = 64, block-rows = 128); lower tile-k or block-rows
func.func @simt_tiles(%q: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %0 = rpe.attention %q, %q, %q causal : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %0 : tensor<1x2x?x64xf32>
}

// -----

// The same with a Toeplitz term: the pattern tabulated it, then declined,
// and the greedy driver applied it again, forever.
// TILES: gpu-attention-invalid.mlir:[[# @LINE + 2]]:8: error: 'rpe.attention' op cannot run on the GPU: the SIMT kernel's tiles need 65536 bytes of workgroup memory, above the 49152 a block gets (tile-k = 64, block-rows = 128); lower tile-k or block-rows
func.func @simt_tiles_toeplitz(%q: tensor<1x2x?x64xf32>, %table: tensor<32x2xf32>) -> tensor<1x2x?x64xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
    %t = tensor.extract %table[%bk, %h] : tensor<32x2xf32>
    %r = arith.addf %s, %t : f32
    rpe.yield %r : f32
  }
  return %0 : tensor<1x2x?x64xf32>
}

// -----

func.func @tensor_core_tiles(%q: tensor<1x2x?x64xf16>) -> tensor<1x2x?x64xf16> {
  %0 = rpe.attention %q, %q, %q causal : tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x2x?x64xf16>
  return %0 : tensor<1x2x?x64xf16>
}
