// RUN: rpe-opt %s -rpe-gpu-attention -verify-diagnostics -split-input-file

func.func @too_wide(%q: tensor<1x1x8x512xf32>) -> tensor<1x1x8x512xf32> {
  // expected-error @below {{cannot run on the GPU: head dimensions 512 and 512 exceed max-head-dim (256)}}
  %0 = rpe.attention %q, %q, %q : tensor<1x1x8x512xf32>, tensor<1x1x8x512xf32>, tensor<1x1x8x512xf32> -> tensor<1x1x8x512xf32>
  return %0 : tensor<1x1x8x512xf32>
}
