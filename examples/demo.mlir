// A small tour of the rpe dialect: run
//   build/bin/rpe-opt examples/demo.mlir -canonicalize
// to see buckets of constant positions fold, a one-bucket table become a
// broadcast, two RoPE rotations compose, and a zero bias disappear.

// Where does the key at distance +200 land in T5's 32 log-spaced buckets?
func.func @t5_bucket_of_distance_200() -> index {
  %c0 = arith.constant 0 : index
  %c200 = arith.constant 200 : index
  %b = rpe.bucket %c0, %c200 by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  return %b : index
}

// The seed's RelativePositionBias (clip) and a Swin window bias.
func.func @biases(%clip_table: tensor<9x4xf32>, %swin_table: tensor<169x3xf32>,
                  %l: index) -> (tensor<4x?x?xf32>, tensor<3x49x49xf32>) {
  %0 = rpe.relative_bias %clip_table sizes(%l, %l) by clip<max_distance = 4> : tensor<9x4xf32> -> tensor<4x?x?xf32>
  %1 = rpe.relative_bias %swin_table by window2d<height = 7, width = 7> : tensor<169x3xf32> -> tensor<3x49x49xf32>
  return %0, %1 : tensor<4x?x?xf32>, tensor<3x49x49xf32>
}

// max_distance = 0 leaves one bucket: the bias is a broadcast of one row.
func.func @one_bucket(%table: tensor<1x4xf32>) -> tensor<4x8x8xf32> {
  %0 = rpe.relative_bias %table by clip<max_distance = 0> : tensor<1x4xf32> -> tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}

// RoPE twice with the same frequencies is RoPE once with summed positions.
func.func @rope_twice(%x: tensor<1x8x16x64xf32>, %p1: tensor<16xi64>, %p2: tensor<16xi64>) -> tensor<1x8x16x64xf32> {
  %0 = rpe.rotary %x, %p1 : tensor<1x8x16x64xf32>, tensor<16xi64>
  %1 = rpe.rotary %0, %p2 : tensor<1x8x16x64xf32>, tensor<16xi64>
  return %1 : tensor<1x8x16x64xf32>
}

// T5 attention (scale 1) with a causal mask; a zero bias adds nothing.
func.func @t5_attention(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>,
                        %v: tensor<1x8x16x64xf32>, %table: tensor<32x8xf32>)
    -> (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) {
  %bias = rpe.relative_bias %table by t5<num_buckets = 32, max_distance = 128, bidirectional = false> : tensor<32x8xf32> -> tensor<8x16x16xf32>
  %0 = rpe.attention %q, %k, %v bias(%bias : tensor<8x16x16xf32>) causal scale = 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  %zero = arith.constant dense<0.0> : tensor<8x16x16xf32>
  %1 = rpe.attention %q, %k, %v bias(%zero : tensor<8x16x16xf32>) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0, %1 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>
}
