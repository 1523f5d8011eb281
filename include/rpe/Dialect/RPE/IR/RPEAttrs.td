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
}

#endif // RPE_DIALECT_RPE_IR_RPEATTRS_TD
