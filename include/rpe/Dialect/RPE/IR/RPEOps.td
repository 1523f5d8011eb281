//===- RPEOps.td - rpe operations --------------------------*- tablegen -*-===//
//
// Exact semantics of every op: docs/Semantics.md.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_IR_RPEOPS_TD
#define RPE_DIALECT_RPE_IR_RPEOPS_TD

include "rpe/Dialect/RPE/IR/RPEBase.td"
include "rpe/Dialect/RPE/IR/RPEAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def RPE_BucketingAttr : Attr<
    CPred<"::llvm::isa<::mlir::rpe::BucketingAttrInterface>($_self)">,
    "bucketing scheme attribute"> {
  let storageType = "::mlir::rpe::BucketingAttrInterface";
  let returnType = "::mlir::rpe::BucketingAttrInterface";
  let convertFromStorage = "$_self";
}

//===----------------------------------------------------------------------===//
// rpe.bucket
//===----------------------------------------------------------------------===//

def RPE_BucketOp : RPE_Op<"bucket", [Pure]> {
  let summary = "Bucket of a (query, key) position pair";
  let description = [{
    Returns `bucketing.bucket(i, j)`: `i` is the query position, `j` the key
    position. Folds when both positions are constants.

    ```mlir
    %b = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
    ```
  }];
  let arguments = (ins Index:$i, Index:$j, RPE_BucketingAttr:$bucketing);
  let results = (outs Index:$result);
  let assemblyFormat = "$i `,` $j `by` custom<Bucketing>($bucketing) attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// rpe.relative_bias
//===----------------------------------------------------------------------===//

def RPE_RelativeBiasOp : RPE_Op<"relative_bias", [
    DeclareOpInterfaceMethods<RPE_ShapeConstrainedOpInterface>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    Pure, AttrSizedOperandSegments]> {
  let summary = "Scalar relative-position bias looked up from a table";
  let description = [{
    `table : NB×H` → `H×Lq×Lk`, `out[h, i, j] = table[bucket(i + q_offset, j), h]`
    (the seed's `RelativePositionBias`, T5, Swin). `dynamic_sizes` holds one
    index per `?` of the result type, in order, as for `tensor.empty`.

    ```mlir
    %bias = rpe.relative_bias %table offset %off sizes(%lq, %lk)
        by clip<max_distance = 4> : tensor<9x8xf32> -> tensor<8x?x?xf32>
    ```
  }];
  let arguments = (ins RPE_FloatTensor:$table, Optional<Index>:$q_offset,
                       Variadic<Index>:$dynamic_sizes,
                       RPE_BucketingAttr:$bucketing);
  let results = (outs RPE_FloatTensor:$result);
  let assemblyFormat = [{
    $table (`offset` $q_offset^)? (`sizes` `(` $dynamic_sizes^ `)`)?
    `by` custom<Bucketing>($bucketing) attr-dict `:` type($table) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// rpe.alibi
//===----------------------------------------------------------------------===//

def RPE_AlibiOp : RPE_Op<"alibi", [
    DeclareOpInterfaceMethods<RPE_ShapeConstrainedOpInterface>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    Pure, AttrSizedOperandSegments]> {
  let summary = "ALiBi linear distance bias";
  let description = [{
    → `H×Lq×Lk`: `out[h, i, j] = -m_h·|i' - j|` with `symmetric`, else
    `m_h·(j - i')` (the directional form used with `causal`), where
    `i' = i + q_offset`. `slopes` gives `m_h` (one per head); by default
    `m_h = 2^(-8(h+1)/H)` for H a power of two, otherwise the slopes of the
    largest power of two `n < H` followed by every other slope of the
    `2n`-head sequence.

    ```mlir
    %b = rpe.alibi sizes(%l, %l) symmetric : tensor<8x?x?xf32>
    %c = rpe.alibi slopes [0.5, 0.25] : tensor<2x16x16xf32>
    ```
  }];
  let arguments = (ins Optional<Index>:$q_offset, Variadic<Index>:$dynamic_sizes,
                       OptionalAttr<DenseF64ArrayAttr>:$slopes,
                       UnitAttr:$symmetric);
  let results = (outs RPE_FloatTensor:$result);
  let assemblyFormat = [{
    (`offset` $q_offset^)? (`sizes` `(` $dynamic_sizes^ `)`)?
    (`slopes` $slopes^)? (`symmetric` $symmetric^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Default ALiBi slopes for `numHeads` heads.
    static ::llvm::SmallVector<double> getDefaultSlopes(int64_t numHeads);
  }];
}

//===----------------------------------------------------------------------===//
// rpe.rotary
//===----------------------------------------------------------------------===//

def RPE_RotaryOp : RPE_Op<"rotary", [
    DeclareOpInterfaceMethods<RPE_ShapeConstrainedOpInterface>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "Rotary position embedding (RoPE)";
  let description = [{
    `x : …×L×D`, `positions : L` or `B×L` integers (B is x's leading dim).
    `ω_t = theta^(-2t/R)`, `t < R/2`, `R = rotary_dim` (default D, even,
    `<= D`), `φ = p·ω_t`. Half layout (LLaMA/NeoX): pairs `(t, t + R/2)`;
    `interleaved` (GPT-J): pairs `(2t, 2t+1)`;
    `y_a = x_a cos φ - x_b sin φ`, `y_b = x_b cos φ + x_a sin φ`; dims `>= R`
    pass through. `scaling` changes the frequencies ω (and, for YaRN,
    scales the rotated dimensions): `#rpe.rope_linear`, `#rpe.rope_llama3`,
    `#rpe.rope_yarn`, `#rpe.rope_dynamic` (which depends on the largest
    position), with transformers' `rope_parameters` names and formulas.

    ```mlir
    %y = rpe.rotary %x, %pos {theta = 5.0e+05 : f64, rotary_dim = 32 : i64}
        : tensor<1x8x?x64xf32>, tensor<?xi64>
    %z = rpe.rotary %x, %pos {theta = 5.0e+05 : f64,
                              scaling = #rpe.rope_linear<factor = 4.0>}
        : tensor<1x8x?x64xf32>, tensor<?xi64>
    ```
  }];
  let arguments = (ins RPE_FloatTensor:$x, RPE_IntTensor:$positions,
                       DefaultValuedAttr<F64Attr, "10000.0">:$theta,
                       OptionalAttr<I64Attr>:$rotary_dim,
                       UnitAttr:$interleaved,
                       OptionalAttr<RPE_RopeScalingAttr>:$scaling);
  let results = (outs RPE_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $positions attr-dict `:` type($x) `,` type($positions)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// Rotary dimension R: `rotary_dim` or, by default, D (ShapedType::kDynamic
    /// when D is dynamic and no rotary_dim is given).
    int64_t getEffectiveRotaryDim();
  }];
}

//===----------------------------------------------------------------------===//
// rpe.shaw_logits / rpe.shaw_values
//===----------------------------------------------------------------------===//

def RPE_ShawLogitsOp : RPE_Op<"shaw_logits", [
    DeclareOpInterfaceMethods<RPE_ShapeConstrainedOpInterface>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    Pure]> {
  let summary = "Shaw et al. key-side relative logits q·a^K";
  let description = [{
    `q : B×H×Lq×D`, `emb : NB×D` → `B×H×Lq×Lk`:
    `out[b,h,i,j] = Σ_d q[b,h,i,d]·emb[bucket(i,j), d]`. `key_length` gives
    Lk and is present exactly when Lk is dynamic.

    ```mlir
    %l = rpe.shaw_logits %q, %emb key_length %lk by clip<max_distance = 4>
        : tensor<1x2x?x16xf32>, tensor<9x16xf32> -> tensor<1x2x?x?xf32>
    ```
  }];
  let arguments = (ins RPE_FloatTensor:$q, RPE_FloatTensor:$emb,
                       Optional<Index>:$key_length,
                       RPE_BucketingAttr:$bucketing);
  let results = (outs RPE_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $emb (`key_length` $key_length^)? `by` custom<Bucketing>($bucketing) attr-dict
    `:` type($q) `,` type($emb) `->` type($result)
  }];
  let hasVerifier = 1;
}

def RPE_ShawValuesOp : RPE_Op<"shaw_values", [
    DeclareOpInterfaceMethods<RPE_ShapeConstrainedOpInterface>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    Pure]> {
  let summary = "Shaw et al. value-side relative term Σ_j p_ij·a^V";
  let description = [{
    `p : B×H×Lq×Lk`, `emb : NB×D` → `B×H×Lq×D`:
    `out[b,h,i,:] = Σ_j p[b,h,i,j]·emb[bucket(i,j), :]`.

    ```mlir
    %o = rpe.shaw_values %p, %emb by clip<max_distance = 4>
        : tensor<1x2x8x8xf32>, tensor<9x16xf32> -> tensor<1x2x8x16xf32>
    ```
  }];
  let arguments = (ins RPE_FloatTensor:$p, RPE_FloatTensor:$emb,
                       RPE_BucketingAttr:$bucketing);
  let results = (outs RPE_FloatTensor:$result);
  let assemblyFormat = [{
    $p `,` $emb `by` custom<Bucketing>($bucketing) attr-dict
    `:` type($p) `,` type($emb) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rpe.disentangled_bias
//===----------------------------------------------------------------------===//

def RPE_DisentangledBiasOp : RPE_Op<"disentangled_bias", [
    DeclareOpInterfaceMethods<RPE_ShapeConstrainedOpInterface>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    Pure]> {
  let summary = "DeBERTa content-to-position and position-to-content terms";
  let description = [{
    `q : B×H×Lq×D`, `k : B×H×Lk×D`, `pos_q, pos_k : H×NB×D` → `B×H×Lq×Lk`:
    the sum of the enabled terms `c2p[i,j] = q_i·pos_k[δ(i,j)]` and
    `p2c[i,j] = k_j·pos_q[δ(i,j)]`, `δ = bucket`. No scaling inside the op.
    At least one of `c2p`, `p2c` is set.

    ```mlir
    %d = rpe.disentangled_bias %q, %k, %pq, %pk
        by log<position_buckets = 256, max_relative_positions = 512> c2p p2c
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<12x512x64xf32>,
          tensor<12x512x64xf32> -> tensor<1x12x?x?xf32>
    ```
  }];
  let arguments = (ins RPE_FloatTensor:$q, RPE_FloatTensor:$k,
                       RPE_FloatTensor:$pos_q, RPE_FloatTensor:$pos_k,
                       RPE_BucketingAttr:$bucketing, UnitAttr:$c2p,
                       UnitAttr:$p2c);
  let results = (outs RPE_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $pos_q `,` $pos_k `by` custom<Bucketing>($bucketing) (`c2p` $c2p^)?
    (`p2c` $p2c^)? attr-dict `:` type($q) `,` type($k) `,` type($pos_q) `,`
    type($pos_k) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// rpe.attention
//===----------------------------------------------------------------------===//

def RPE_AttentionOp : RPE_Op<"attention", [
    DeclareOpInterfaceMethods<RPE_ShapeConstrainedOpInterface>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    RecursiveMemoryEffects, RecursivelySpeculatable,
    AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention with relative position terms";
  let description = [{
    `q : B×H×Lq×D`, `k : B×Hkv×Lk×D`, `v : B×Hkv×Lk×Dv` (`H % Hkv == 0`,
    grouped-query heads: query head `h` reads key/value head `h / (H/Hkv)`).
    `s_ij = scale·q_i·k_j (+ bias)`; `bias` is `H×Lq×Lk` or `B×H×Lq×Lk`
    (a static size 1 broadcasts). Then the `score_mod` region
    `^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index)` if present
    (`%i` is the query position `row + q_offset`, `%j` the key position).
    Masked entries (`causal`: `j > i + q_offset`; `window = W`, 1 <= W <=
    2^62: `j <= i + q_offset - W`, i.e. a query sees at most the W positions
    up to its own; `lookahead = A`, 1 <= A <= 2^61, without `causal`:
    `j > i + q_offset + A`, i.e. a query sees at most A positions past its
    own; `j >= key_lengths[b]`) are `-inf`; `p = softmax_j(s)`;
    `out_i = Σ_j p_ij·v_j (+ Σ_j p_ij·rel_values[bucket(i + q_offset, j)])`.
    A fully masked row yields 0. Default `scale = 1/sqrt(max(D, 1))` (with
    D = 0 the scores are empty sums, 0).

    ```mlir
    %o = rpe.attention %q, %k, %v bias(%b : tensor<8x?x?xf32>) causal scale = 1.0
        : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
        -> tensor<1x8x?x64xf32>
    ```

    `causal window = 4096` is Mistral's and Gemma 2's sliding-window
    attention: the kernels skip the key tiles outside the band.
    `window = W + 1 lookahead = W` is ModernBERT's bidirectional local
    attention `|i - j| <= W` (`causal` is `lookahead = 0`, spelled
    `causal`).
  }];
  let arguments = (ins RPE_FloatTensor:$q, RPE_FloatTensor:$k,
                       RPE_FloatTensor:$v,
                       Optional<RPE_FloatTensor>:$bias,
                       Optional<1DTensorOf<[I32]>>:$key_lengths,
                       Optional<Index>:$q_offset,
                       Optional<RPE_FloatTensor>:$rel_values,
                       OptionalAttr<F64Attr>:$scale,
                       UnitAttr:$causal,
                       OptionalAttr<RPE_BucketingAttr>:$bucketing,
                       OptionalAttr<ConfinedAttr<I64Attr,
                           [IntMinValue<1>,
                            IntMaxValue<4611686018427387904>]>>:$window,
                       OptionalAttr<ConfinedAttr<I64Attr,
                           [IntMinValue<1>,
                            IntMaxValue<2305843009213693952>]>>:$lookahead);
  let results = (outs RPE_FloatTensor:$result);
  let regions = (region MaxSizedRegion<1>:$score_mod);
  let assemblyFormat = [{
    $q `,` $k `,` $v
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    (`q_offset` `(` $q_offset^ `)`)?
    (`rel_values` `(` $rel_values^ `:` type($rel_values) `)`)?
    (`by` custom<Bucketing>($bucketing)^)? (`causal` $causal^)?
    (`window` `=` $window^)? (`lookahead` `=` $lookahead^)? (`scale` `=` $scale^)? attr-dict-with-keyword `:` type($q) `,` type($k) `,` type($v) `->`
    type($result) ($score_mod^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// The softmax scale: `scale`, else 1/sqrt(max(D, 1)) when D is static, else
    /// std::nullopt (the lowering computes it at run time).
    std::optional<double> getStaticScale();
    /// How far past its own position a query sees: 0 with `causal`, the
    /// `lookahead`, std::nullopt when no key is masked for being ahead.
    /// Keys with `j > i + q_offset + reach` are masked.
    std::optional<int64_t> getKeyReach() {
      if (getCausal())
        return 0;
      if (std::optional<uint64_t> a = getLookahead())
        return static_cast<int64_t>(*a);
      return std::nullopt;
    }
  }];
}

def RPE_YieldOp : RPE_Op<"yield", [Pure, ReturnLike, Terminator,
                                   HasParent<"AttentionOp">]> {
  let summary = "Terminates an rpe.attention score_mod region";
  let description = [{
    Yields the modified score (one `f32`).

    ```mlir
    rpe.yield %s : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // RPE_DIALECT_RPE_IR_RPEOPS_TD
