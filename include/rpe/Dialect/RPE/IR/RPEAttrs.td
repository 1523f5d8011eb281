//===- RPEAttrs.td - rpe attributes ------------------------*- tablegen -*-===//

#ifndef RPE_DIALECT_RPE_IR_RPEATTRS_TD
#define RPE_DIALECT_RPE_IR_RPEATTRS_TD

include "rpe/Dialect/RPE/IR/RPEBase.td"
include "rpe/Dialect/RPE/IR/RPEInterfaces.td"

class RPE_BucketingAttr<string name, string attrMnemonic>
    : AttrDef<RPE_Dialect, name, [RPE_BucketingAttrInterface]> {
  let mnemonic = attrMnemonic;
  code bucketingMethods = [{
    int64_t bucket(int64_t i, int64_t j) const;
    ::mlir::Value buildBucket(::mlir::OpBuilder &builder, ::mlir::Location loc,
                              ::mlir::Value i, ::mlir::Value j) const;
    bool isToeplitz() const;
  }];
  let extraClassDeclaration = bucketingMethods # [{
    int64_t getNumBuckets() const;
  }];
  let genVerifyDecl = 1;
  let assemblyFormat = "`<` struct(params) `>`";
}

def RPE_ClipBucketingAttr : RPE_BucketingAttr<"ClipBucketing", "clip"> {
  let summary = "Clipped relative distance (Shaw et al., the seed's scheme)";
  let description = [{
    `b = clamp(i - j, -K, K) + K` with `K = max_distance`;
    `numBuckets = 2K + 1`. Requires `0 <= K <= 2^30`.

    ```mlir
    #rpe.clip<max_distance = 4>
    ```
  }];
  let parameters = (ins "int64_t":$max_distance);
}

def RPE_T5BucketingAttr : RPE_BucketingAttr<"T5Bucketing", "t5"> {
  let summary = "T5 log-spaced relative buckets (Hugging Face T5 exactly)";
  let description = [{
    With `n = j - i`: bidirectional: `N' = N/2`, `o = N'·[n > 0]`, `a = |n|`;
    unidirectional: `N' = N`, `o = 0`, `a = max(-n, 0)`. `e = N'/2`;
    `b = o + (a < e ? a : min(N'-1, e + trunc(f32(ln(a/e)) / f32(ln(M/e))·(N'-e))))`,
    computed in f32 as Hugging Face does. `numBuckets = N`.
    Requires `N >= 2` (`N >= 4` when bidirectional), `M > e`, `N, M <= 2^30`.

    ```mlir
    #rpe.t5<num_buckets = 32, max_distance = 128, bidirectional = true>
    ```
  }];
  let parameters = (ins "int64_t":$num_buckets, "int64_t":$max_distance,
                        "bool":$bidirectional);
  // The `num_buckets` parameter getter is the interface's getNumBuckets().
  let extraClassDeclaration = bucketingMethods;
}

def RPE_LogBucketingAttr : RPE_BucketingAttr<"LogBucketing", "log"> {
  let summary = "DeBERTa-v2 log-bucketed relative positions";
  let description = [{
    `r = i - j`, `c = P/2` (`P = position_buckets`, `M =
    max_relative_positions`). With `P > 0`:
    `lb(r) = r` if `|r| <= c`, else
    `sign(r)·(c + ceil(f32(ln(|r|/c)) / f32(ln((M-1)/c))·(c-1)))` (f32, in
    Hugging Face's order of operations); with `P = 0`, `lb(r) = r` (HF skips
    log bucketing). Span `S = P > 0 ? P : M`;
    `b = clamp(lb(r) + S, 0, 2S-1)`, `numBuckets = 2S`.
    Requires `P = 0` or `P >= 2` with `M > P/2 + 1`; `M >= 1`; `P, M <= 2^30`.

    ```mlir
    #rpe.log<position_buckets = 256, max_relative_positions = 512>
    ```
  }];
  let parameters = (ins "int64_t":$position_buckets,
                        "int64_t":$max_relative_positions);
}

def RPE_Window2DBucketingAttr : RPE_BucketingAttr<"Window2DBucketing",
                                                  "window2d"> {
  let summary = "Swin 2-D window relative position index";
  let description = [{
    Token `t` sits at `(t floordiv Ww, t mod Ww)`;
    `b = (dh + Wh-1)·(2Ww-1) + (dw + Ww-1)` with `dh = hi - hj`,
    `dw = wi - wj`, each clamped to the window (`|dh| <= Wh-1`,
    `|dw| <= Ww-1`, which only matters for positions outside the window).
    `numBuckets = (2Wh-1)(2Ww-1)`. Ops using it need `L = Wh·Ww`.

    ```mlir
    #rpe.window2d<height = 7, width = 7>
    ```
  }];
  let parameters = (ins "int64_t":$height, "int64_t":$width);
  let extraClassDeclaration = bucketingMethods # [{
    int64_t getNumBuckets() const;
    /// `t + (t floordiv Ww)·(Ww - 1)`: token t's offset in rows of
    /// `2Ww - 1`, so that `planeOffset(i) - planeOffset(j) = dh·(2Ww - 1) +
    /// dw` (unclamped) and the bucket is a function of that difference
    /// alone (buildBucketFromPlaneDifference): the window's 2-D analogue of
    /// the diagonal `i - j`.
    ::mlir::Value buildPlaneOffset(::mlir::OpBuilder &builder,
                                   ::mlir::Location loc, ::mlir::Value t) const;
    /// The bucket of a pair whose plane offsets differ by `v`.
    ::mlir::Value buildBucketFromPlaneDifference(::mlir::OpBuilder &builder,
                                                 ::mlir::Location loc,
                                                 ::mlir::Value v) const;
  }];
}

//===----------------------------------------------------------------------===//
// RoPE frequency scaling (rpe.rotary's `scaling`), with the parameter names
// of transformers' `rope_parameters`.
//===----------------------------------------------------------------------===//

/// An f64 value printed like float attributes (exact round trip).
def RPE_DoubleParameter : APFloatParameter<"an f64 value"> {
  let parser = "::mlir::rpe::parseDoubleParameter($_parser)";
  let printer = "$_printer.printFloat($_self)";
}

class RPE_RopeScalingAttr<string name, string attrMnemonic>
    : AttrDef<RPE_Dialect, name> {
  let mnemonic = attrMnemonic;
  let genVerifyDecl = 1;
  let assemblyFormat = "`<` struct(params) `>`";
}

def RPE_RopeLinearAttr : RPE_RopeScalingAttr<"RopeLinear", "rope_linear"> {
  let summary = "Linear RoPE scaling (position interpolation)";
  let description = [{
    `ω'_t = ω_t / factor` (transformers `rope_type = "linear"`). Requires a
    finite `factor > 0`.

    ```mlir
    #rpe.rope_linear<factor = 4.0>
    ```
  }];
  let parameters = (ins RPE_DoubleParameter:$factor);
}

def RPE_RopeLlama3Attr : RPE_RopeScalingAttr<"RopeLlama3", "rope_llama3"> {
  let summary = "Llama 3.1 RoPE scaling";
  let description = [{
    With `λ_t = 2π/ω_t`, `O = original_max_position`: `ω'_t = ω_t / factor`
    where `λ_t > O / low_freq_factor`, `ω_t` where
    `λ_t < O / high_freq_factor`, and in between
    `(1 - s)·ω_t / factor + s·ω_t` with
    `s = (O/λ_t - low_freq_factor) / (high_freq_factor - low_freq_factor)`
    (transformers `rope_type = "llama3"`). Requires finite `factor > 0`,
    `0 < low_freq_factor < high_freq_factor`, `original_max_position > 0`.

    ```mlir
    #rpe.rope_llama3<factor = 8.0, low_freq_factor = 1.0,
                     high_freq_factor = 4.0, original_max_position = 8192>
    ```
  }];
  let parameters = (ins RPE_DoubleParameter:$factor, RPE_DoubleParameter:$low_freq_factor,
                        RPE_DoubleParameter:$high_freq_factor,
                        "int64_t":$original_max_position);
}

def RPE_RopeYarnAttr : RPE_RopeScalingAttr<"RopeYarn", "rope_yarn"> {
  let summary = "YaRN RoPE scaling, with its attention factor";
  let description = [{
    With `R` the rotary dimension, `O = original_max_position` and
    `c(n) = R·ln(O / (2πn)) / (2 ln θ)`: `lo = max(floor(c(beta_fast)), 0)`,
    `hi = min(ceil(c(beta_slow)), R - 1)` (`hi += 0.001` if equal),
    `r_t = clamp((t - lo) / (hi - lo), 0, 1)`,
    `ω'_t = r_t·ω_t / factor + (1 - r_t)·ω_t`; the rotated dimensions are
    multiplied by the attention factor `0.1·ln(factor) + 1` (1 when
    `factor <= 1`), as transformers multiplies cos and sin
    (`rope_type = "yarn"`, `truncate = true`, no `mscale`). Requires
    finite `factor > 0`, `original_max_position > 0`,
    `beta_fast > beta_slow > 0`.

    ```mlir
    #rpe.rope_yarn<factor = 4.0, original_max_position = 4096,
                   beta_fast = 32.0, beta_slow = 1.0>
    ```
  }];
  let parameters = (ins RPE_DoubleParameter:$factor, "int64_t":$original_max_position,
                        RPE_DoubleParameter:$beta_fast, RPE_DoubleParameter:$beta_slow);
  let extraClassDeclaration = [{
    /// The factor applied to the rotated dimensions.
    double getAttentionFactor() const;
  }];
}

def RPE_RopeDynamicAttr : RPE_RopeScalingAttr<"RopeDynamic", "rope_dynamic"> {
  let summary = "Dynamic NTK-aware RoPE scaling";
  let description = [{
    Depends on the run-time positions: with `S = max(max(positions) + 1, O)`,
    `O = original_max_position`, the base becomes
    `θ' = θ·(factor·S/O - (factor - 1))^(R/(R-2))` and `ω_t = θ'^(-2t/R)`
    (transformers `rope_type = "dynamic"`, as a fresh module computes it
    for these positions; transformers' module also keeps the largest length
    it has seen across calls, which a pure op cannot). Requires finite
    `factor > 0` and `original_max_position > 0`.

    ```mlir
    #rpe.rope_dynamic<factor = 2.0, original_max_position = 2048>
    ```
  }];
  let parameters = (ins RPE_DoubleParameter:$factor, "int64_t":$original_max_position);
}

def RPE_RopeScalingAttr : AnyAttrOf<[RPE_RopeLinearAttr, RPE_RopeLlama3Attr,
                                     RPE_RopeYarnAttr, RPE_RopeDynamicAttr]>;

#endif // RPE_DIALECT_RPE_IR_RPEATTRS_TD
