// One case per verifier rule of the rpe dialect.
// RUN: rpe-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Bucketing attribute parameters
//===----------------------------------------------------------------------===//

// expected-error @+1 {{#rpe.clip parameter 'max_distance' must be in [0, 1073741824], got -1}}
func.func @clip_negative() attributes {a = #rpe.clip<max_distance = -1>} { return }

// -----

// expected-error @+1 {{#rpe.clip parameter 'max_distance' must be in [0, 1073741824], got 4611686018427387904}}
func.func @clip_absurd() attributes {a = #rpe.clip<max_distance = 4611686018427387904>} { return }

// -----

// expected-error @+1 {{#rpe.t5 parameter 'num_buckets' must be in [2, 1073741824], got 1}}
func.func @t5_one_bucket() attributes {a = #rpe.t5<num_buckets = 1, max_distance = 8, bidirectional = false>} { return }

// -----

// expected-error @+1 {{#rpe.t5 parameter 'num_buckets' must be in [4, 1073741824], got 2}}
func.func @t5_bidirectional_two() attributes {a = #rpe.t5<num_buckets = 2, max_distance = 8, bidirectional = true>} { return }

// -----

// expected-error @+1 {{#rpe.t5 parameter 'max_distance' must be in [9, 1073741824], got 8}}
func.func @t5_max_distance() attributes {a = #rpe.t5<num_buckets = 32, max_distance = 8, bidirectional = true>} { return }

// -----

// expected-error @+1 {{#rpe.log parameter 'position_buckets' must be 0 or >= 2, got 1}}
func.func @log_one() attributes {a = #rpe.log<position_buckets = 1, max_relative_positions = 512>} { return }

// -----

// expected-error @+1 {{#rpe.log parameter 'position_buckets' must be in [0, 1073741824], got -4}}
func.func @log_negative() attributes {a = #rpe.log<position_buckets = -4, max_relative_positions = 512>} { return }

// -----

// expected-error @+1 {{#rpe.log parameter 'max_relative_positions' must exceed position_buckets / 2 + 1 = 129, got 129}}
func.func @log_span() attributes {a = #rpe.log<position_buckets = 256, max_relative_positions = 129>} { return }

// -----

// expected-error @+1 {{#rpe.log parameter 'max_relative_positions' must be in [1, 1073741824], got 0}}
func.func @log_zero() attributes {a = #rpe.log<position_buckets = 0, max_relative_positions = 0>} { return }

// -----

// expected-error @+1 {{#rpe.window2d parameter 'height' must be in [1, 16384], got 0}}
func.func @window_empty() attributes {a = #rpe.window2d<height = 0, width = 7>} { return }

// -----

// expected-error @+1 {{#rpe.window2d parameter 'width' must be in [1, 16384], got 1099511627776}}
func.func @window_absurd() attributes {a = #rpe.window2d<height = 7, width = 1099511627776>} { return }

// -----

func.func @unknown_scheme(%i: index) -> index {
  // expected-error @+1 {{expected a bucketing scheme: clip<...>, t5<...>, log<...> or window2d<...>}}
  %0 = rpe.bucket %i, %i by linear<k = 3>
  return %0 : index
}

// -----

func.func @not_a_bucketing(%i: index) -> index {
  // expected-error @+1 {{invalid properties {bucketing = 3 : i64} for op rpe.bucket: Invalid attribute `bucketing` in property conversion: 3 : i64}}
  %0 = "rpe.bucket"(%i, %i) <{bucketing = 3 : i64}> : (index, index) -> index
  return %0 : index
}

// -----

func.func @bucket_types(%i: i32) -> index {
  // expected-error @+1 {{'rpe.bucket' op operand #0 must be index, but got 'i32'}}
  %0 = "rpe.bucket"(%i, %i) <{bucketing = #rpe.clip<max_distance = 1>}> : (i32, i32) -> index
  return %0 : index
}

//===----------------------------------------------------------------------===//
// rpe.relative_bias
//===----------------------------------------------------------------------===//

// -----

func.func @rb_table_rank(%t: tensor<9xf32>) -> tensor<1x4x4xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op expects table of rank 2 (NB×H), got 'tensor<9xf32>'}}
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// -----

func.func @rb_result_rank(%t: tensor<9x2xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op expects result of rank 3 (H×Lq×Lk), got 'tensor<2x4xf32>'}}
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9x2xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @rb_element_type(%t: tensor<9x2xf32>) -> tensor<2x4x4xf16> {
  // expected-error @+1 {{'rpe.relative_bias' op element type mismatch: table has 'f32' but result has 'f16'}}
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9x2xf32> -> tensor<2x4x4xf16>
  return %0 : tensor<2x4x4xf16>
}

// -----

func.func @rb_f64(%t: tensor<9x2xf64>) -> tensor<2x4x4xf64> {
  // expected-error @+1 {{'rpe.relative_bias' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9x2xf64> -> tensor<2x4x4xf64>
  return %0 : tensor<2x4x4xf64>
}

// -----

func.func @rb_buckets(%t: tensor<8x2xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op table has 8 bucket rows but #rpe.clip<max_distance = 4> has 9 buckets}}
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<8x2xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @rb_heads(%t: tensor<9x2xf32>) -> tensor<3x4x4xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op head count mismatch: table has 2 but result has 3}}
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9x2xf32> -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

func.func @rb_dynamic_sizes(%t: tensor<9x2xf32>, %l: index) -> tensor<2x?x?xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op expects one dynamic size per '?' in the result type: 2 expected, got 1}}
  %0 = rpe.relative_bias %t sizes(%l) by clip<max_distance = 4> : tensor<9x2xf32> -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

// -----

func.func @rb_absurd_length(%t: tensor<9x2xf32>) -> tensor<2x4611686018427387904x1xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op Lq = 4611686018427387904 exceeds the maximum sequence length 2147483647}}
  %0 = rpe.relative_bias %t by clip<max_distance = 4> : tensor<9x2xf32> -> tensor<2x4611686018427387904x1xf32>
  return %0 : tensor<2x4611686018427387904x1xf32>
}

// -----

func.func @rb_window(%t: tensor<169x2xf32>) -> tensor<2x48x49xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op Lq = 48 but #rpe.window2d<height = 7, width = 7> covers 49 tokens (height·width)}}
  %0 = rpe.relative_bias %t by window2d<height = 7, width = 7> : tensor<169x2xf32> -> tensor<2x48x49xf32>
  return %0 : tensor<2x48x49xf32>
}

//===----------------------------------------------------------------------===//
// rpe.alibi
//===----------------------------------------------------------------------===//

// -----

func.func @alibi_rank() -> tensor<4x4xf32> {
  // expected-error @+1 {{'rpe.alibi' op expects result of rank 3 (H×Lq×Lk), got 'tensor<4x4xf32>'}}
  %0 = rpe.alibi : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @alibi_slopes() -> tensor<3x4x4xf32> {
  // expected-error @+1 {{'rpe.alibi' op has 2 slopes but 3 heads}}
  %0 = rpe.alibi slopes [0.5, 0.25] : tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

func.func @alibi_nan() -> tensor<1x4x4xf32> {
  // expected-error @+1 {{'rpe.alibi' op slopes must be finite, got nan}}
  %0 = "rpe.alibi"() <{operandSegmentSizes = array<i32: 0, 0>, slopes = array<f64: 0x7FF8000000000000>}> : () -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// -----

func.func @alibi_sizes(%l: index) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'rpe.alibi' op expects one dynamic size per '?' in the result type: 0 expected, got 1}}
  %0 = rpe.alibi sizes(%l) : tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

//===----------------------------------------------------------------------===//
// rpe.rotary
//===----------------------------------------------------------------------===//

// -----

func.func @rotary_rank(%x: tensor<8xf32>, %p: tensor<8xi64>) -> tensor<8xf32> {
  // expected-error @+1 {{'rpe.rotary' op expects x of rank >= 2 (…×L×D), got 'tensor<8xf32>'}}
  %0 = rpe.rotary %x, %p : tensor<8xf32>, tensor<8xi64>
  return %0 : tensor<8xf32>
}

// -----

func.func @rotary_pos_rank(%x: tensor<2x8x4xf32>, %p: tensor<1x2x8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op expects positions of rank 1 (L) or 2 (B×L), got 'tensor<1x2x8xi64>'}}
  %0 = rpe.rotary %x, %p : tensor<2x8x4xf32>, tensor<1x2x8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_0(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_linear parameter 'factor' must be finite and positive, got 0.000000e+00}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_linear<factor = 0.0>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_1(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_linear parameter 'factor' must be finite and positive, got -2.000000e+00}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_linear<factor = -2.0>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_2(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_llama3 needs high_freq_factor > low_freq_factor, got 1.000000e+00 and 4.000000e+00}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_llama3<factor = 8.0, low_freq_factor = 4.0, high_freq_factor = 1.0, original_max_position = 8192>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_3(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_llama3 parameter 'low_freq_factor' must be finite and positive, got 0.000000e+00}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_llama3<factor = 8.0, low_freq_factor = 0.0, high_freq_factor = 4.0, original_max_position = 8192>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_4(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_llama3 parameter 'original_max_position' must be in [1, 1099511627776], got 0}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_llama3<factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position = 0>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_5(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_yarn needs beta_fast > beta_slow, got 1.000000e+00 and 3.200000e+01}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_yarn<factor = 4.0, original_max_position = 4096, beta_fast = 1.0, beta_slow = 32.0>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_6(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_yarn parameter 'beta_slow' must be finite and positive, got 0.000000e+00}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_yarn<factor = 4.0, original_max_position = 4096, beta_fast = 32.0, beta_slow = 0.0>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_7(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_yarn parameter 'factor' must be finite and positive, got INF}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_yarn<factor = 0x7FF0000000000000, original_max_position = 4096, beta_fast = 32.0, beta_slow = 1.0>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_8(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{#rpe.rope_dynamic parameter 'original_max_position' must be in [1, 1099511627776], got -5}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.rope_dynamic<factor = 2.0, original_max_position = -5>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_scaling_kind(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op attribute 'scaling' failed to satisfy constraint}}
  %0 = rpe.rotary %x, %p {scaling = #rpe.clip<max_distance = 4>} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_batch_positions(%x: tensor<8x4xf32>, %p: tensor<1x8xi64>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op positions of shape B×L need x of rank >= 3, got 'tensor<8x4xf32>'}}
  %0 = rpe.rotary %x, %p : tensor<8x4xf32>, tensor<1x8xi64>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @rotary_length(%x: tensor<2x8x4xf32>, %p: tensor<7xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op sequence length mismatch: x has 8 but positions has 7}}
  %0 = rpe.rotary %x, %p : tensor<2x8x4xf32>, tensor<7xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_batch(%x: tensor<2x8x4xf32>, %p: tensor<3x8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op batch size mismatch: x has 2 but positions has 3}}
  %0 = rpe.rotary %x, %p : tensor<2x8x4xf32>, tensor<3x8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_theta(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op theta must be finite and positive, got -1.000000e+00}}
  %0 = rpe.rotary %x, %p {theta = -1.0 : f64} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_odd(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op rotary_dim must be even and non-negative, got 3}}
  %0 = rpe.rotary %x, %p {rotary_dim = 3 : i64} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_too_wide(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op rotary_dim = 6 exceeds the head dimension D = 4}}
  %0 = rpe.rotary %x, %p {rotary_dim = 6 : i64} : tensor<2x8x4xf32>, tensor<8xi64>
  return %0 : tensor<2x8x4xf32>
}

// -----

func.func @rotary_odd_head(%x: tensor<2x8x5xf32>, %p: tensor<8xi64>) -> tensor<2x8x5xf32> {
  // expected-error @+1 {{'rpe.rotary' op rotary_dim defaults to D = 5, which must be even}}
  %0 = rpe.rotary %x, %p : tensor<2x8x5xf32>, tensor<8xi64>
  return %0 : tensor<2x8x5xf32>
}

// -----

func.func @rotary_float_positions(%x: tensor<2x8x4xf32>, %p: tensor<8xf32>) -> tensor<2x8x4xf32> {
  // expected-error @+1 {{'rpe.rotary' op operand #1 must be ranked tensor of signless integer values}}
  %0 = rpe.rotary %x, %p : tensor<2x8x4xf32>, tensor<8xf32>
  return %0 : tensor<2x8x4xf32>
}

//===----------------------------------------------------------------------===//
// rpe.shaw_logits / rpe.shaw_values
//===----------------------------------------------------------------------===//

// -----

func.func @shaw_q_rank(%q: tensor<2x8x16xf32>, %e: tensor<9x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.shaw_logits' op expects q of rank 4 (B×H×Lq×D), got 'tensor<2x8x16xf32>'}}
  %0 = rpe.shaw_logits %q, %e by clip<max_distance = 4> : tensor<2x8x16xf32>, tensor<9x16xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @shaw_missing_key_length(%q: tensor<1x2x8x16xf32>, %e: tensor<9x16xf32>) -> tensor<1x2x8x?xf32> {
  // expected-error @+1 {{'rpe.shaw_logits' op expects a key_length operand exactly when Lk is dynamic in the result type}}
  %0 = rpe.shaw_logits %q, %e by clip<max_distance = 4> : tensor<1x2x8x16xf32>, tensor<9x16xf32> -> tensor<1x2x8x?xf32>
  return %0 : tensor<1x2x8x?xf32>
}

// -----

func.func @shaw_extra_key_length(%q: tensor<1x2x8x16xf32>, %e: tensor<9x16xf32>, %l: index) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.shaw_logits' op expects a key_length operand exactly when Lk is dynamic in the result type}}
  %0 = rpe.shaw_logits %q, %e key_length %l by clip<max_distance = 4> : tensor<1x2x8x16xf32>, tensor<9x16xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @shaw_buckets(%q: tensor<1x2x8x16xf32>, %e: tensor<7x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.shaw_logits' op emb has 7 bucket rows but #rpe.clip<max_distance = 4> has 9 buckets}}
  %0 = rpe.shaw_logits %q, %e by clip<max_distance = 4> : tensor<1x2x8x16xf32>, tensor<7x16xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @shaw_head_dim(%q: tensor<1x2x8x16xf32>, %e: tensor<9x8xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.shaw_logits' op head dimension mismatch: q has 16 but emb has 8}}
  %0 = rpe.shaw_logits %q, %e by clip<max_distance = 4> : tensor<1x2x8x16xf32>, tensor<9x8xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @shaw_result_heads(%q: tensor<1x2x8x16xf32>, %e: tensor<9x16xf32>) -> tensor<1x3x8x8xf32> {
  // expected-error @+1 {{'rpe.shaw_logits' op head count mismatch: q has 2 but result has 3}}
  %0 = rpe.shaw_logits %q, %e by clip<max_distance = 4> : tensor<1x2x8x16xf32>, tensor<9x16xf32> -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @shaw_element_type(%q: tensor<1x2x8x16xf32>, %e: tensor<9x16xbf16>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.shaw_logits' op element type mismatch: q has 'f32' but emb has 'bf16'}}
  %0 = rpe.shaw_logits %q, %e by clip<max_distance = 4> : tensor<1x2x8x16xf32>, tensor<9x16xbf16> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @shaw_values_rank(%p: tensor<2x8x8xf32>, %e: tensor<9x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.shaw_values' op expects p of rank 4 (B×H×Lq×Lk), got 'tensor<2x8x8xf32>'}}
  %0 = rpe.shaw_values %p, %e by clip<max_distance = 4> : tensor<2x8x8xf32>, tensor<9x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @shaw_values_dim(%p: tensor<1x2x8x8xf32>, %e: tensor<9x16xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.shaw_values' op head dimension mismatch: emb has 16 but result has 8}}
  %0 = rpe.shaw_values %p, %e by clip<max_distance = 4> : tensor<1x2x8x8xf32>, tensor<9x16xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @shaw_values_buckets(%p: tensor<1x2x8x8xf32>, %e: tensor<9x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.shaw_values' op emb has 9 bucket rows but #rpe.clip<max_distance = 3> has 7 buckets}}
  %0 = rpe.shaw_values %p, %e by clip<max_distance = 3> : tensor<1x2x8x8xf32>, tensor<9x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @shaw_values_lq(%p: tensor<1x2x8x8xf32>, %e: tensor<9x16xf32>) -> tensor<1x2x4x16xf32> {
  // expected-error @+1 {{'rpe.shaw_values' op query length mismatch: p has 8 but result has 4}}
  %0 = rpe.shaw_values %p, %e by clip<max_distance = 4> : tensor<1x2x8x8xf32>, tensor<9x16xf32> -> tensor<1x2x4x16xf32>
  return %0 : tensor<1x2x4x16xf32>
}

//===----------------------------------------------------------------------===//
// rpe.disentangled_bias
//===----------------------------------------------------------------------===//

// -----

func.func @deberta_no_terms(%q: tensor<1x2x8x4xf32>, %p: tensor<2x16x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.disentangled_bias' op needs at least one of 'c2p' and 'p2c'}}
  %0 = rpe.disentangled_bias %q, %q, %p, %p by log<position_buckets = 0, max_relative_positions = 8> : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @deberta_pos_rank(%q: tensor<1x2x8x4xf32>, %p: tensor<16x4xf32>, %pk: tensor<2x16x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.disentangled_bias' op expects pos_q of rank 3 (H×NB×D), got 'tensor<16x4xf32>'}}
  %0 = rpe.disentangled_bias %q, %q, %p, %pk by log<position_buckets = 0, max_relative_positions = 8> c2p : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @deberta_pos_heads(%q: tensor<1x2x8x4xf32>, %p: tensor<3x16x4xf32>, %pk: tensor<2x16x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.disentangled_bias' op head count mismatch: q has 2 but pos_q has 3}}
  %0 = rpe.disentangled_bias %q, %q, %p, %pk by log<position_buckets = 0, max_relative_positions = 8> c2p : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<3x16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @deberta_pos_buckets(%q: tensor<1x2x8x4xf32>, %p: tensor<2x16x4xf32>, %pk: tensor<2x12x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.disentangled_bias' op pos_k has 12 bucket rows but #rpe.log<position_buckets = 0, max_relative_positions = 8> has 16 buckets}}
  %0 = rpe.disentangled_bias %q, %q, %p, %pk by log<position_buckets = 0, max_relative_positions = 8> c2p : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x16x4xf32>, tensor<2x12x4xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @deberta_head_dim(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x6xf32>, %p: tensor<2x16x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.disentangled_bias' op head dimension mismatch: q has 4 but k has 6}}
  %0 = rpe.disentangled_bias %q, %k, %p, %p by log<position_buckets = 0, max_relative_positions = 8> c2p : tensor<1x2x8x4xf32>, tensor<1x2x8x6xf32>, tensor<2x16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @deberta_key_length(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x6x4xf32>, %p: tensor<2x16x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.disentangled_bias' op key length mismatch: k has 6 but result has 8}}
  %0 = rpe.disentangled_bias %q, %k, %p, %p by log<position_buckets = 0, max_relative_positions = 8> p2c : tensor<1x2x8x4xf32>, tensor<1x2x6x4xf32>, tensor<2x16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @deberta_batch(%q: tensor<1x2x8x4xf32>, %k: tensor<2x2x8x4xf32>, %p: tensor<2x16x4xf32>) -> tensor<1x2x8x8xf32> {
  // expected-error @+1 {{'rpe.disentangled_bias' op batch size mismatch: q has 1 but k has 2}}
  %0 = rpe.disentangled_bias %q, %k, %p, %p by log<position_buckets = 0, max_relative_positions = 8> p2c : tensor<1x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x16x4xf32>, tensor<2x16x4xf32> -> tensor<1x2x8x8xf32>
  return %0 : tensor<1x2x8x8xf32>
}

//===----------------------------------------------------------------------===//
// rpe.attention
//===----------------------------------------------------------------------===//

// -----

func.func @attn_rank(%q: tensor<2x8x16xf32>, %k: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op expects q of rank 4 (B×H×Lq×D), got 'tensor<2x8x16xf32>'}}
  %0 = rpe.attention %q, %k, %k : tensor<2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @attn_window(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op attribute 'window' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 4611686018427387904}}
  %0 = rpe.attention %q, %q, %q causal window = 0 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @attn_window_huge(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op attribute 'window' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 4611686018427387904}}
  %0 = rpe.attention %q, %q, %q window = 4611686018427387905 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @attn_lookahead_zero(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op attribute 'lookahead' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 2305843009213693952}}
  %0 = rpe.attention %q, %q, %q lookahead = 0 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @attn_lookahead_huge(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op attribute 'lookahead' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1 whose maximum value is 2305843009213693952}}
  %0 = rpe.attention %q, %q, %q window = 3 lookahead = 2305843009213693953 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @attn_lookahead_causal(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op 'causal' and 'lookahead' are exclusive ('causal' is a lookahead of 0)}}
  %0 = rpe.attention %q, %q, %q causal lookahead = 2 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return %0 : tensor<1x2x8x16xf32>
}

// -----

func.func @attn_gqa(%q: tensor<1x6x8x16xf32>, %k: tensor<1x4x8x16xf32>) -> tensor<1x6x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op query head count 6 is not a multiple of the key/value head count 4}}
  %0 = rpe.attention %q, %k, %k : tensor<1x6x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x6x8x16xf32>
  return %0 : tensor<1x6x8x16xf32>
}

// -----

func.func @attn_no_kv_heads(%q: tensor<1x0x8x16xf32>, %k: tensor<1x0x8x16xf32>) -> tensor<1x0x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op key/value head count must be positive (the query heads form groups of H / Hkv), got 0}}
  %0 = rpe.attention %q, %k, %k : tensor<1x0x8x16xf32>, tensor<1x0x8x16xf32>, tensor<1x0x8x16xf32> -> tensor<1x0x8x16xf32>
  return %0 : tensor<1x0x8x16xf32>
}

// -----

func.func @attn_kv_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op key/value head count mismatch: k has 2 but v has 4}}
  %0 = rpe.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_kv_length(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x9x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op key length mismatch: k has 8 but v has 9}}
  %0 = rpe.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x9x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x8xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op head dimension mismatch: q has 16 but k has 8}}
  %0 = rpe.attention %q, %k, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_value_dim(%q: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x32xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op value dimension mismatch: v has 32 but result has 16}}
  %0 = rpe.attention %q, %q, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x32xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_result_type(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf16> {
  // expected-error @+1 {{'rpe.attention' op element type mismatch: q has 'f32' but result has 'f16'}}
  %0 = rpe.attention %q, %q, %q : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf16>
  return %0 : tensor<1x4x8x16xf16>
}

// -----

func.func @attn_bias_rank(%q: tensor<1x4x8x16xf32>, %b: tensor<8x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op expects bias of rank 3 (H×Lq×Lk) or 4 (B×H×Lq×Lk), got 'tensor<8x8xf32>'}}
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<8x8xf32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_bias_shape(%q: tensor<1x4x8x16xf32>, %b: tensor<4x8x7xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op key length mismatch: k has 8 but bias has 7}}
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<4x8x7xf32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_bias_batch(%q: tensor<2x4x8x16xf32>, %b: tensor<3x4x8x8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op batch size mismatch: q has 2 but bias has 3}}
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<3x4x8x8xf32>) : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attn_bias_type(%q: tensor<1x4x8x16xf32>, %b: tensor<4x8x8xf16>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op element type mismatch: q has 'f32' but bias has 'f16'}}
  %0 = rpe.attention %q, %q, %q bias(%b : tensor<4x8x8xf16>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_key_lengths(%q: tensor<2x4x8x16xf32>, %l: tensor<3xi32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op batch size mismatch: q has 2 but key_lengths has 3}}
  %0 = rpe.attention %q, %q, %q key_lengths(%l : tensor<3xi32>) : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attn_key_lengths_type(%q: tensor<2x4x8x16xf32>, %l: tensor<2xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op operand #3 must be 1D tensor of 32-bit signless integer values}}
  %0 = rpe.attention %q, %q, %q key_lengths(%l : tensor<2xi64>) : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attn_rel_values_no_bucketing(%q: tensor<1x4x8x16xf32>, %e: tensor<9x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op rel_values requires a 'bucketing' attribute}}
  %0 = rpe.attention %q, %q, %q rel_values(%e : tensor<9x16xf32>) : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_rel_values_buckets(%q: tensor<1x4x8x16xf32>, %e: tensor<9x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op rel_values has 9 bucket rows but #rpe.clip<max_distance = 2> has 5 buckets}}
  %0 = rpe.attention %q, %q, %q rel_values(%e : tensor<9x16xf32>) by clip<max_distance = 2> : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_rel_values_dim(%q: tensor<1x4x8x16xf32>, %e: tensor<9x8xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op value dimension mismatch: v has 16 but rel_values has 8}}
  %0 = rpe.attention %q, %q, %q rel_values(%e : tensor<9x8xf32>) by clip<max_distance = 4> : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_rel_values_rank(%q: tensor<1x4x8x16xf32>, %e: tensor<9xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op expects rel_values of rank 2 (NB×Dv), got 'tensor<9xf32>'}}
  %0 = rpe.attention %q, %q, %q rel_values(%e : tensor<9xf32>) by clip<max_distance = 4> : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_window(%q: tensor<1x4x8x16xf32>, %e: tensor<9x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op Lq = 8 but #rpe.window2d<height = 2, width = 2> covers 4 tokens (height·width)}}
  %0 = rpe.attention %q, %q, %q rel_values(%e : tensor<9x16xf32>) by window2d<height = 2, width = 2> : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_scale(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op scale must be finite}}
  %0 = "rpe.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0x7FF0000000000000 : f64}> ({
  }) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// ODS checks optional operand groups (at most one value), not required
// ones: a malformed operandSegmentSizes in generic form (found by
// rpe-fuzz-pipeline) gets a diagnostic, not a read past the operands.
func.func @attn_segments(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op operand 'v' (operand group 2) needs exactly one value, but operandSegmentSizes gives it 0}}
  %0 = "rpe.attention"(%q, %q, %q) <{operandSegmentSizes = array<i32: 1, 1, 0, 1, 0, 0, 0>}> ({
  }) : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @relative_bias_segments(%off: index) -> tensor<4x3x3xf32> {
  // expected-error @+1 {{'rpe.relative_bias' op operand 'table' (operand group 0) needs exactly one value, but operandSegmentSizes gives it 0}}
  %0 = "rpe.relative_bias"(%off, %off) <{bucketing = #rpe.clip<max_distance = 2>, operandSegmentSizes = array<i32: 0, 1, 1>}> : (index, index) -> tensor<4x3x3xf32>
  return %0 : tensor<4x3x3xf32>
}

func.func @attn_region_args(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op expects the score_mod region to take (f32, index, index, index, index) = (score, b, h, i, j), got (f32, index)}}
  %0 = rpe.attention %q, %q, %q : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32> {
  ^bb0(%s: f32, %i: index):
    rpe.yield %s : f32
  }
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_region_yield(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.truncf %s : f32 to f16
    // expected-error @+1 {{'rpe.yield' op must yield exactly one f32 score, got (f16)}}
    rpe.yield %t : f16
  }
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_region_yield_two(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %0 = rpe.attention %q, %q, %q : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'rpe.yield' op must yield exactly one f32 score, got (f32, f32)}}
    rpe.yield %s, %s : f32, f32
  }
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @attn_region_blocks(%q: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{'rpe.attention' op region #0 ('score_mod') failed to verify constraint: region with at most 1 blocks}}
  %0 = rpe.attention %q, %q, %q : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    cf.br ^bb1
  ^bb1:
    rpe.yield %s : f32
  }
  return %0 : tensor<1x4x8x16xf32>
}

// -----

func.func @yield_outside(%s: f32) {
  // expected-error @+1 {{'rpe.yield' op expects parent op 'rpe.attention'}}
  rpe.yield %s : f32
}
