//===- Passes.td - rpe dialect passes ----------------------*- tablegen -*-===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_PASSES_TD
#define RPE_DIALECT_RPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RPEEmitCInterfacePass : Pass<"rpe-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Mark public functions with llvm.emit_c_interface";
  let description = [{
    Adds the `llvm.emit_c_interface` unit attribute to every public
    `func.func` with a body, so that `convert-func-to-llvm` emits a
    `_mlir_ciface_<name>` wrapper taking memref descriptors by pointer: the
    entry points that C, C++ and Python call.
  }];
}

def RPEDecomposeSoftmaxPass : Pass<"rpe-decompose-softmax"> {
  let summary = "Decompose linalg.softmax into max/sub+exp/sum/div generics";
  let description = [{
    `linalg.softmax` has no loop lowering; this pass applies its
    `AggregatedOpInterface` decomposition (what
    `transform.structured.decompose_interface` does) so that unfused
    attention written with it runs on the reference path. The CPU pipeline
    runs it after `rpe-fuse-attention` had the chance to raise the softmax.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
  ];
}

def RPEFuseAttentionPass : Pass<"rpe-fuse-attention"> {
  let summary = "Fuse relative position terms into rpe.attention";
  let description = [{
    (a) Raises unfused attention written in linalg on tensors — the q·kᵀ
    contraction, an optional scaling and bias addition, `linalg.softmax` or
    its decomposed max/sub/exp/sum/div form, and the product with v — to
    `rpe.attention`. (b) Folds the producers of an attention bias
    (`rpe.relative_bias`, `rpe.alibi`, `rpe.shaw_logits`,
    `rpe.disentangled_bias`, and `arith.addf` sums of them) into the
    attention's `score_mod` region, so that no Lq×Lk bias is built: table
    lookups through `rpe.bucket`, ALiBi slopes, and for the Shaw and DeBERTa
    terms the gather trick (`q·embᵀ`, `q·pos_kᵀ`, `k·pos_qᵀ` are Lq×NB or
    Lk×NB, then gathered by bucket). (c) Folds `rpe.shaw_values` of the
    attention probabilities added to the output into `rel_values`.
    `rpe.rotary` on q and k stays its own O(L·D) op (see docs/Decisions.md).
    Producers with other uses are left alone.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::rpe::RPEDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def RPETileAttentionPass : Pass<"rpe-tile-attention"> {
  let summary = "Tile rpe.attention into a FlashAttention-2 kernel on tensors";
  let description = [{
    Rewrites every `rpe.attention` into the FlashAttention-2 structure:
    `scf.forall` over (batch, head, query tile) and a sequential `scf.for`
    over key tiles with an online softmax (running max `m`, running sum `l`,
    accumulator rescaled by `exp(m_old - m_new)`). Scores, the bias, the
    inlined `score_mod` region, masks and `rel_values` are computed per
    tile: no tensor of size Lq×Lk is created. Causal tiles above the
    diagonal and keys beyond `key_lengths[b]` are never visited; fully
    masked rows give 0. Toeplitz bias lookups in `score_mod`
    (`tensor.extract %table[rpe.bucket(%i, %j), %h]` with a bucketing that
    depends on `i - j` only) are replaced by a per-head diagonal vector of
    length Lq + q_offset + Lk - 1 built once, so the inner loop computes no
    bucket (and no logarithm). The result is target-neutral IR (linalg, scf,
    tensor, arith, math) for the CPU and GPU pipelines.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"64",
           "Query rows per tile (parallel)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"64",
           "Keys per tile (sequential, online softmax)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Number of attention ops tiled">,
    Statistic<"numToeplitz", "num-toeplitz-lookups",
              "Toeplitz table lookups replaced by a diagonal vector">,
  ];
}

#endif // RPE_DIALECT_RPE_TRANSFORMS_PASSES_TD
