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

def RPEReadOnlyArgumentsPass
    : Pass<"rpe-read-only-arguments", "::mlir::ModuleOp"> {
  let summary = "Mark the tensor arguments of entry points not writable";
  let description = [{
    Sets `bufferization.writable = false` on every tensor argument of every
    public `func.func` with a body. Callers (the C header, `rpe.compile`)
    own the buffers they pass: after this pass, one-shot bufferization
    copies an argument instead of writing into it. Arguments that already
    carry the attribute keep it. Private functions are left alone (their
    callers are in the module).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def RPECheckLLVMTypesPass : Pass<"rpe-check-llvm-types", "::mlir::ModuleOp"> {
  let summary = "Reject the types that LLVM cannot compile";
  let description = [{
    MLIR's builtin types reach further than LLVM IR's: a zero-width integer
    (`i0`) and integers wider than LLVM's limit (2^23 bits) pass every
    lowering to the LLVM dialect unchanged and then crash LLVM's
    optimization or code generation; `tf32`, which has no LLVM type,
    crashes the GPU lowering (a workgroup buffer of it) or fails later. This pass reports the first op (or
    function signature, or block argument) whose types contain one, with
    its location, and fails.

    With `nvptx-device-code`, it also checks the LLVM-dialect bodies of
    `gpu.module` ops for what the NVPTX backend lacks: `f128` arithmetic
    (no instructions and no library to call: a fatal error without a
    location), `f80` altogether (its constants, parameters and selects
    crash the backend, and its loads and stores move 4 of its 10 bytes),
    integers over 128 bits (some widths crash its legalization) and
    conversions between floats and integers over 64 bits (library calls
    again). Loads, stores, selects and constants of `f128` compile and stay
    allowed.
  }];
  let options = [
    Option<"nvptxDeviceCode", "nvptx-device-code", "bool", /*default=*/"false",
           "Also reject what the NVPTX backend cannot compile in the "
           "LLVM-dialect bodies of gpu.module ops: f128 arithmetic, f80, "
           "integers over 128 bits, float conversions of those over 64">,
  ];
}

def RPEOwnedResultsPass : Pass<"rpe-owned-results", "::mlir::ModuleOp"> {
  let summary = "Give every memref result of an entry point a buffer of its "
                "own";
  let description = [{
    The C header (and the device-pointer entry points) tell callers that
    each memref result is theirs to free. After one-shot bufferization that
    does not hold where a public `func.func` returns one of its arguments
    (the caller's buffer), a constant global, or the same buffer twice
    (`return %r, %r`, or two views of one allocation): the caller would free
    a buffer twice or free its own input. This pass follows each returned
    memref of every public function with a body through view-like ops
    (`memref.subview`, `memref.cast`, reshapes) to its root, and where that
    root is a block argument, a `memref.get_global`, or the root of an
    earlier result of the same return, returns a fresh `memref.alloc` of the
    result type holding a copy (`memref.copy`) instead. Other roots (a
    buffer the function allocates, a call's or a region op's result) are
    left alone. Runs right after one-shot bufferization in both pipelines,
    before deallocation (which then frees what no result keeps) and before
    `rpe-gpu-offload` (which moves the copy to the device).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def RPEInternalizeFunctionsPass
    : Pass<"rpe-internalize-functions", "::mlir::ModuleOp"> {
  let summary = "Give private LLVM functions internal linkage";
  let description = [{
    Every private `llvm.func` with a body and `external` linkage (what
    `convert-func-to-llvm` makes of a private `func.func`) gets `internal`
    linkage, so that
    it stays inside the object file or shared library built from the module
    (outlined kernels, shape-check helpers) and cannot clash with a symbol
    of the program that loads it. Declarations, public functions and
    functions with another linkage are left alone. Runs at the end of `rpe-cpu-pipeline` and
    `rpe-nvptx-pipeline`.
  }];
}

def RPEApplyLoopAnnotationsPass
    : Pass<"rpe-apply-loop-annotations", "::mlir::ModuleOp"> {
  let summary = "Move llvm.loop_annotation from a latch branch's attributes "
                "into its loop_annotation property";
  let description = [{
    `scf-to-cf` moves the discardable attribute `llvm.loop_annotation` of a
    `scf.for` onto the loop's latch branch and `convert-cf-to-llvm` keeps it
    there as a discardable attribute of `llvm.br`, which the translation to
    LLVM IR ignores: only the branch's `loop_annotation` property becomes
    `!llvm.loop` metadata. This pass moves the attribute of every `llvm.br`
    and `llvm.cond_br` into the property (one already set is kept). A value
    that is not an `#llvm.loop_annotation` is an error. Runs after the
    conversion to the LLVM dialect in `rpe-cpu-pipeline`, so that the
    annotations of `rpe-vectorize-attention`'s loops reach LLVM.
  }];
}

def RPENormalizeAttentionPass : Pass<"rpe-normalize-attention"> {
  let summary = "Rewrite front-end attention IR into the 4-D form "
                "rpe-fuse-attention raises";
  let description = [{
    Front ends (torch-mlir's FX importer, linalg-on-tensors) write attention
    as `linalg.batch_matmul` on batch·heads-collapsed tensors between
    `tensor.collapse_shape`/`expand_shape` and `linalg.transpose`. With
    upstream patterns, this pass generalizes `batch_matmul` and
    `transpose`, folds the reshapes into the generics by expansion (the
    contractions run over (b, h, i, j) again), and fuses generics that only
    copy their input (permutations, broadcasts) into the reductions that
    read them. The softmax pieces and scalings stay separate ops, so
    `rpe-fuse-attention` can match them. Unused generics whose bodies are
    pure but for `cf.assert` (bounds checks of a gather whose result nobody
    reads) are erased. The CPU pipeline runs it first.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
  ];
}

def RPELegalizeMathPass : Pass<"rpe-legalize-math", "::mlir::ModuleOp"> {
  let summary = "Rewrite math ops that convert-math-to-llvm cannot lower";
  let description = [{
    Front ends emit math ops that `convert-math-to-llvm` has no lowering for
    (exact GELU is `math.erf`). This pass rewrites them:

    - `math.erf`, `math.erfc` on f32 (scalars and vectors): upstream's
      polynomial approximations, which stay vectorizable. Measured against
      Python's double-precision `math` over [-6, 6]: erf within 2.2e-7
      absolute, erfc within 1e-6 relative where erfc > 1e-30
      (python/tests/test_math_lowering.py).
    - `math.fpowi` on vectors (LLVM's powi takes a scalar exponent):
      upstream's expansion, multiplications for a constant exponent, else
      `sitofp` and `math.powf`; scalar `fpowi` keeps its intrinsic.
    - `math.isinf`, `math.isnormal`: comparisons of |x|;
      `math.clampf`: max then min (upstream's expansion in MLIR 22 swaps
      them).
    - `math.erf`/`math.erfc` of other types, `math.asinh`, `math.acosh`,
      `math.atanh`, `math.cbrt`: libm calls (upstream MathToLibm patterns,
      vectors unrolled). Only these ops: the others keep their LLVM
      intrinsics.

    The CPU pipeline runs it before the vector and math lowerings. A module
    pass: libm declarations are added to the module.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect", "::mlir::vector::VectorDialect",
  ];
}

def RPEApproximateMathPass : Pass<"rpe-approximate-math"> {
  let summary = "f32 math.exp and math.tanh in linalg op bodies as "
                "vectorizable polynomials";
  let description = [{
    Replaces each `math.exp` and `math.tanh` on f32 (a scalar or a vector
    of f32) that sits directly in the body of a linalg op by upstream's
    polynomial approximations (`populateMathPolynomialApproximationPatterns`):
    range reduction or clamping, polynomials, and for exp the exponent
    built with integer ops, all of which LLVM's loop vectorizer takes.
    Lowered as they are, they are a libm `expf` / `tanhf` call per element,
    and a loop with a call in it stays scalar: SiLU and sigmoid
    (`1 / (1 + exp(-x))`), GELU's tanh form and decomposed softmaxes ran
    one element at a time. Measured against float64 (on 1.75 and 2 million
    points, python/tests/test_math_lowering.py; NumPy's own f32 functions
    in parentheses):
    - exp: within 8.3e-8 relative on [-87, 88] (2.0e-7), with and without
      FMA; 3.2e-7 from 88 up to the largest finite result (88.72), where
      the exponent is clamped. Results below about -87.34, where exp(x)
      falls below the smallest normal f32, are 0 (libm returns subnormals
      down to -103.9); exp(+inf) = +inf, exp(-inf) = 0, NaN stays NaN.
    - tanh: within 2.8e-7 relative on [-10, 10] with FMA, 4e-7 without
      (1.1e-7); ±1 for |x| ≥ 7.99 with FMA, ±0.9999998 without it; tanh(±0)
      = ±0 and NaN stays NaN.

    Only linalg bodies: these ops elsewhere (scalar code, the regions of
    rpe ops such as a `score_mod`, vector code of rpe's kernels) keep libm,
    and so do all other math ops (`log` above all: T5's bucket logarithms
    must match HF's bit for bit). The CPU pipeline runs the pass on the
    linalg ops on tensors, after the attention kernels are built (their
    own exp is rpe's polynomial already); `rpe-cpu-pipeline{
    approximate-math=0}` keeps libm. With `fma=false` (targets without
    FMA, where a scalar `llvm.fma` is a libm call) the polynomials' FMAs
    are a multiply and an add (the body's own `math.fma` ops stay).
  }];
  let options = [
    Option<"fma", "fma", "bool", /*default=*/"true",
           "The target has FMA instructions">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
  let statistics = [
    Statistic<"numApproximated", "num-approximated",
              "Number of math ops replaced by polynomials">,
  ];
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
    Producers with other uses are left alone. (d) Moves element-wise code
    that produces the bias or what score_mod reads — a front end's bucket
    arithmetic, table gathers, index generators, masks, broadcasts, reshapes
    and transposes — into score_mod, so that no Lq×Lk tensor is built from
    smaller inputs; the kernels tabulate its Toeplitz part per diagonal. An
    additive mask `select(j > i, M, 0)` with M = -inf or ≤ -FLT_MAX becomes
    `causal` (no q_offset or key_lengths), and sign tests of positions in
    score_mod fold. (e) When the lengths are static (and q_offset absent or
    constant), index code in score_mod that reads only the positions and
    constants is evaluated at every position of the domain (once per
    diagonal when it reads only j − i); where it equals an rpe bucketing
    scheme everywhere (`window2d`, `clip`, `t5`, `log`, with parameters from
    the table's rows and the code's constants) it becomes `rpe.bucket`
    with that scheme, and bounds checks (`cf.assert`) there that hold at
    every position go: transformers' T5 buckets and Swin's constant
    relative_position_index read as what they are; the bucket may be any
    index of the gather (DeBERTa's projections at [b·h, i, bucket]). (a)
    also takes a masked fill `select(mask, c, s)` / `select(mask, s, c)`
    (c constant) and any element-wise function of the score alone (arith
    and math ops on it and constants: Gemma 2's soft-cap c·tanh(s/c)) into
    score_mod, exactly and in the front end's order, and a constant factor
    of q or k into `scale`. (f) transformers' RoPE, `x·cos(emb) +
    rotate_half(x)·sin(emb)` with emb = cat(p·inv_freq, p·inv_freq) and a
    constant inv_freq equal to θ^(-2t/D) (to two ulps) for one θ, becomes
    `rpe.rotary %x, %positions {theta = θ}`; an inv_freq that is those
    frequencies under transformers' "linear" or "llama3" scaling (to four
    ulps) adds the op's `scaling`, and `cat(rotary(x[..., :R]), x[..., R:])`
    becomes `rpe.rotary %x {rotary_dim = R}`.
  }];
  let options = [
    Option<"foldOps", "fold-ops", "int64_t", /*default=*/"512",
           "Most ops that (d) copies into score_mod for one read of a "
           "producer; 0 turns (d) off">,
    Option<"bucketMaxPairs", "bucket-max-pairs", "int64_t",
           /*default=*/"65536",
           "(e): most position pairs at which index code is evaluated one by "
           "one (0: none)">,
    Option<"bucketMaxDiagonals", "bucket-max-diagonals", "int64_t",
           /*default=*/"1048576",
           "(e): most diagonals at which code reading only j - i is "
           "evaluated (0: none)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::rpe::RPEDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def RPEOutlineKernelsPass : Pass<"rpe-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Move each rpe.attention, and linalg ops that repeat, into "
                "private functions shared by identical ones";
  let description = [{
    Replaces every `rpe.attention` and `rpe.rotary` in a function, and
    every structured linalg op on tensors (but `linalg.fill`) that occurs at
    least `min-repeats` times, by a `func.call` of a private function
    (`__rpe_attention*`, `__rpe_rotary*`, `__rpe_kernel*`) that holds it. The arguments are
    the op's operands and the values its regions read from above, except
    scalar constants (copied in); an init that is a `tensor.empty`, or a
    `linalg.fill` of one with a scalar constant, is built inside (a fill
    that several ops share is rebuilt in each: it costs less than the op). Ops that are the
    same up to their arguments — the layers of a model — call one function,
    so the attention kernel that `rpe-vectorize-attention` or
    `rpe-tile-attention` builds, and the loops of the projections, norms and
    MLPs, are lowered and compiled by LLVM once instead of once per layer:
    compile time grows with the distinct layers, not the depth. The CPU
    pipeline runs it before the kernels, with `min-repeats=1`
    (`outline-min-repeats`): every linalg op moves out, so the entry
    functions are loop-free glue. A loop over (batch, head) that
    `rpe-split-attention-heads` built (an `scf.for` or `scf.forall` with
    the unit attribute `rpe.split_heads`) moves out as a whole
    (`__rpe_attention_heads*`), the ops in it staying inside: their slices
    of q, k, v are then read in place, not copied at a function boundary.
  }];
  let options = [
    Option<"minRepeats", "min-repeats", "int64_t", /*default=*/"2",
           "Occurrences from which a linalg op is outlined (0: attention "
           "only)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def RPEEarlyDeallocationPass
    : Pass<"rpe-early-deallocation", "::mlir::ModuleOp"> {
  let summary = "Free buffers after their last use instead of at the end of "
                "the block";
  let description = [{
    Ownership-based deallocation frees a block's buffers in one
    `bufferization.dealloc` at its end. In a model's entry function (loop-
    free glue of kernel calls once `rpe-outline-kernels` ran) that keeps
    every intermediate buffer of every layer alive until the function
    returns: memory grows with the depth, and so do the live ranges LLVM's
    register allocator sees. This pass takes out of such a dealloc every
    buffer that (1) it frees unconditionally (condition `true`), (2) is a
    `memref.alloc` of the same block or the result of a `func.call` whose
    callee returns only its own `memref.alloc`s, and (3) has no alias —
    through view-like ops, `memref.extract_strided_metadata`, calls of such
    callees, or ops without memref results — that is retained, returned,
    or used by an op it cannot see through; it frees the buffer with
    `memref.dealloc` right after the last use of any of its aliases in the
    block. Anything else stays in the dealloc. Runs after
    `ownership-based-buffer-deallocation`, before its lowering.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def RPESimplifyDeallocationsPass
    : Pass<"rpe-simplify-deallocations", "::mlir::func::FuncOp"> {
  let summary = "Upstream buffer-deallocation-simplification, on functions "
                "whose deallocations stay small";
  let description = [{
    Runs `buffer-deallocation-simplification` on a function unless one of
    its `bufferization.dealloc` ops releases more than `max-memrefs`
    memrefs. Ownership-based deallocation frees a function's buffers at the
    end of its block, so a deep model's entry function ends in one dealloc
    of every intermediate buffer; the simplification's alias queries over it
    grow with the cube of the depth (5 s for a 24-layer T5). Unsimplified,
    such a dealloc lowers to a helper that compares the pointers at run
    time: O(memrefs · retained) comparisons, negligible next to the model.
  }];
  let options = [
    Option<"maxMemrefs", "max-memrefs", "int64_t", /*default=*/"64",
           "Most memrefs of one dealloc op for which the function is "
           "simplified">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def RPEInterchangeReductionsPass : Pass<"rpe-interchange-reductions"> {
  let summary = "Put a contraction's reduction loop outside its innermost "
                "parallel loop";
  let description = [{
    A linalg op on tensors whose innermost loop is its only reduction and
    whose next loop is parallel and indexes the last (contiguous) dimension
    of every operand that uses it — a matmul `C[i, j] += A[i, k]·B[k, j]`,
    batched or written as a generic — is generalized and interchanged to
    (…, k, j): `convert-linalg-to-loops` then yields an innermost axpy over
    contiguous rows, which LLVM's loop vectorizer turns into vector FMAs,
    instead of a serial float reduction along strided memory, which it
    cannot vectorize without reassociating. Each output element still sums
    over k in the same order: the result is bit for bit the same. Row
    reductions (softmax sums, norms), whose inputs would become strided, are
    left alone. The CPU pipeline runs it on the projections and MLPs of a
    model (the attention kernels are vector code already).

    With `reductions-innermost`, the other way round: every linalg op on
    tensors with a parallel loop after a reduction loop is generalized and
    interchanged so that its parallel loops come first and its reductions
    last, each kind in its order (the same sums, bit for bit).
    `convert-linalg-to-parallel-loops` then gives one `scf.parallel` over
    every output element with the reductions inside, which rpe-gpu-offload
    maps to one thread per element; the NVPTX pipeline runs it so. Without
    it, a contraction in the axpy order (…, k, j), as the lowering of
    `rpe.disentangled_bias` writes its projections, ran the loops from k on
    serially in each thread.
  }];
  let options = [
    Option<"reductionsInnermost", "reductions-innermost", "bool",
           /*default=*/"false",
           "Put every reduction loop inside every parallel loop (GPU) "
           "instead of a contraction's reduction outside its innermost "
           "parallel loop (CPU)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def RPERegisterTileReductionsPass : Pass<"rpe-register-tile-reductions"> {
  let summary = "A block of outputs per iteration of a parallel loop over a "
                "reduction (a GPU thread's register tile)";
  let description = [{
    An `scf.parallel` whose body is a reduction loop between loads and
    stores — what `convert-linalg-to-parallel-loops` and
    rpe-promote-accumulators make of a contraction, one output element per
    iteration — computes a `rows` × `columns` block of its two innermost
    dimensions per iteration instead: one reduction loop carries every
    output of the block, rows consecutive and columns ceil(N / columns)
    apart (so that iterations next to each other along the innermost
    dimension, a warp's threads after rpe-gpu-offload, still read
    consecutive columns). A load of the loop that does not depend on the
    column index is then shared by a row of the block and one that does not
    depend on the row index by a column (CSE merges the copies): rows +
    columns loads per rows × columns multiply-adds instead of two each.

    Only a parallel loop whose two innermost dimensions run from 0 by 1, with
    no `scf.reduce` results, whose body is pure ops and loads, one `scf.for`
    with loop-carried values (bounds defined outside, a body of pure ops and
    loads) and then pure ops and stores, and whose loop reads something
    along the rows only and something along the columns only. Rows and
    columns past the end are read at the last one (clamped) and store
    nothing: the ops after the loop run under `scf.if` for each output but
    those of the block's first row and first column. The loop it makes
    carries `rpe.register_tiled` and is not tiled again.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"4",
           "Rows of the block (the second innermost dimension), 1..16">,
    Option<"columns", "columns", "int64_t", /*default=*/"4",
           "Columns of the block (the innermost dimension), 1..16">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def RPEPromoteAccumulatorsPass : Pass<"rpe-promote-accumulators"> {
  let summary = "Carry a loop's accumulator in a register instead of memory";
  let description = [{
    In an `scf.for` whose body loads one element of a buffer and later
    stores to the same element (both at indices defined outside the loop) —
    the reduction loop that `convert-linalg-to-parallel-loops` emits for a
    contraction, `C[i, j] = C[i, j] + A[i, k]·B[k, j]` — the element
    becomes a loop-carried value: loaded once before the loop, stored once
    after it. A loop whose trip count is not a static, positive constant
    first goes inside `scf.if (lb < ub)`, so that the load and store happen
    only where the loop would have made them.
    Only when nothing else in the loop may touch that buffer: it must be a
    fresh allocation (`memref.alloc`/`alloca`, through view-like ops), and
    every other buffer the loop reads or writes must be another allocation
    or an argument of the enclosing function; an op with unknown memory
    effects leaves the loop alone. The sums are the same, bit for bit.

    LLVM does not do this itself on the GPU: the kernel's buffers arrive as
    separate pointers that it cannot prove disjoint, so it keeps one global
    store per iteration (64 per output element for DeBERTa's c2p and p2c
    projections at D = 64). The NVPTX pipeline runs it on the parallel loops
    before rpe-gpu-offload.
  }];
  let statistics = [
    Statistic<"numPromoted", "num-promoted",
              "Number of accumulators carried in registers">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def RPEVectorizeContractionsPass : Pass<"rpe-vectorize-contractions"> {
  let summary = "Register-blocked vector kernels for matmul-like linalg ops "
                "on buffers";
  let description = [{
    Rewrites a linalg op on buffers that is a float contraction with one
    row (m), one column (n) and one reduction (k) dimension plus any batch
    dimensions — `C[.., i, j] += A[.., i, k] · B[.., k, j]` as a
    `linalg.matmul`, `linalg.batch_matmul` or a generic with a `mulf` /
    `addf` body, in any loop order — whose column dimension is the last,
    unit-stride dimension of B and C, into a register-blocked kernel:
    `tile-m` rows × `tile-n` vectors of `vector-width` lanes of C stay in
    registers while k runs (a broadcast of A times a row vector of B, one
    `vector.fma` each), blocked over `block-k` values of k and `block-n`
    columns so that the block of B stays in cache. Rows that do not fill a
    `tile-m` block run one at a time; columns that do not fill a vector
    block use masked loads and stores. Each output element still sums over
    k in order (as an FMA chain), so no reduction is reassociated. The CPU
    pipeline runs it on the projections, MLPs and position tables that are
    not part of an attention kernel (the attention kernels are vector code
    already). Ops of any other shape (A and B both reduced along their
    last dimension, integer or mixed types) are left to the loops. When
    the op right before is a `linalg.fill` of C with a scalar and k is not
    statically 0, the accumulators of the first k block start from that
    scalar instead of loading C, and the fill goes (with a dynamic k it
    stays only for the calls where k is 0): C is written once instead of
    three times (fill, load, store). When C has at least
    `pack-min-rows` rows (decided at run time when they are dynamic), each
    cache block of B is first copied into a buffer allocated once per op,
    whose rows are the block's rounded up to whole vectors plus one vector:
    the register blocks read B's block again and again, and rows a power
    of two apart would share a few L1 sets. The sums are the same.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16: AVX-512, 8: AVX2); f64 uses half">,
    Option<"tileM", "tile-m", "int64_t", /*default=*/"6",
           "Rows of C per register block (1..16)">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"2",
           "Vectors of C per row of a register block (1..16)">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"256",
           "Values of k per cache block">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"512",
           "Columns of C per cache block (0: no column blocking)">,
    Option<"packMinRows", "pack-min-rows", "int64_t", /*default=*/"64",
           "Copy each cache block of B into a buffer whose rows are a "
           "vector longer than the block's, read by every register block, "
           "when C has at least this many rows (checked at run time when "
           "dynamic); 0: never">,
    Option<"fma", "fma", "bool", /*default=*/"true",
           "Use vector.fma (false: mulf + addf, for targets without FMA)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
  ];
  let statistics = [
    Statistic<"numVectorized", "num-vectorized",
              "Number of contractions lowered to the register-blocked kernel">,
  ];
}

def RPEVectorizeTransposesPass : Pass<"rpe-vectorize-transposes"> {
  let summary = "Register-block transposes for element-wise linalg ops on "
                "buffers whose input and output run along different "
                "dimensions";
  let description = [{
    Rewrites a linalg op on buffers with one input and one output, only
    parallel loops, an identity output map and a permutation as input map
    under which the input's last (unit-stride) dimension is not the
    output's — `out[.., c, .., a] = f(in[.., a, .., c])` as a
    `linalg.transpose` or a generic whose body is element-wise in the input
    (`arith` / `math` ops that are pure and speculatable, values from
    outside, not the output's value) — into loops over W × W blocks of
    (a, c): W vector loads along c, a transpose in registers (log2 W rounds
    of W two-input shuffles), the body on vectors, W vector stores along a.
    W is `vector-width` (f32 lanes; for 64-bit elements, half as many). The
    blocks at the ends of a and c that do not fill W run masked: rows past
    the end read the last row and are not stored, lanes past the end are
    neither read nor stored. `convert-linalg-to-loops` would instead read
    or write one strided scalar per element (the CPU pipeline's position
    tables for the gather trick are transposed in every call).
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16: AVX-512, 8: AVX2), a power of two "
           "in 2..64">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
  ];
  let statistics = [
    Statistic<"numVectorized", "num-vectorized",
              "Number of transposes lowered to register blocks">,
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
    masked rows give 0. Toeplitz terms of `score_mod` — values that depend
    on the positions only through `i - j` (a Toeplitz `rpe.bucket(%i, %j)`
    or `arith.subi` of them), e.g. a T5 / clip / log table lookup, an ALiBi
    term, their sums, a Shaw / DeBERTa gather index — are tabulated once per
    (head, diagonal) in a table of Lq + Lk - 1 entries per head, so the
    inner loop computes no bucket (and no logarithm) and reads one value.
    The result is target-neutral IR (linalg, scf, tensor, arith, math) for
    the CPU and GPU pipelines.
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
    Statistic<"numToeplitz", "num-toeplitz-terms",
              "Toeplitz score_mod terms tabulated along the diagonal">,
  ];
}

def RPEGPUAttentionPass : Pass<"rpe-gpu-attention"> {
  let summary = "Lower rpe.attention to a SIMT FlashAttention kernel in "
                "gpu.launch";
  let description = [{
    Rewrites every `rpe.attention` into a `gpu.launch` over (query block,
    head, batch) with `block-rows` threads per block, one per query row,
    writing a `memref.alloc`ed result (returned through
    `bufferization.to_tensor restrict writable`). Per key tile of `tile-k`
    keys, the block stages the keys and values (as f32) in workgroup
    memory; each thread computes its row's scores from its scaled query row
    held in registers, adds the bias, inlines `score_mod` (Toeplitz terms
    tabulated per (head, diagonal) first, as on the CPU), masks keys past
    the block's end, causal and `key_lengths`, and updates its running max,
    sum and output row (registers) with the online softmax, `rel_values`
    included. Rows that see no key give 0. Nothing of size Lq×Lk exists.
    The key, value and probability tiles, 4 · tile-k · (D + Dv +
    block-rows) bytes (`max-head-dim` for dynamic D, Dv), must fit in the
    48 KiB of static workgroup memory a block gets; an attention that
    needs more and that no tensor-core kernel takes is an error. Options
    that no such tile could fit (tile-k, max-head-dim, mma-tile-k or
    mma-block-rows above 49152) are an error before anything runs.

    With `tensor-cores` (the default), f16 attention with static head
    dimensions D (a multiple of 16) and Dv (a multiple of 8) and without
    `rel_values` becomes the tensor-core kernel instead: `mma-threads`
    threads per block of `mma-block-rows` rows; per tile of `mma-tile-k`
    keys, Q·Kᵀ into a workgroup f32 score tile, one thread per row for the
    scale, bias, score_mod, masks and online softmax (P as f16, the f32
    output tile rescaled), then O += P·V; both matmuls are warp-level
    `vector.contract`s on 16×16 / 8×16 slices of workgroup memory in nests
    marked `rpe.mma`, which rpe-gpu-tensor-cores turns into `mma.sync`.
    Warp w computes the 16-row slices w, w + warps, ...

    With `mma-registers` as well, f16 / bf16 attention with D and Dv at most
    128 becomes the register-resident (FlashAttention-2) kernel instead:
    min(mma-threads / 32, mma-block-rows / 16) warps, each owning
    `mma-block-rows / warps` query rows; Q's fragments read once; per key
    tile, K and V staged in workgroup memory, then `nvvm.mma.sync` on
    fragments held in registers (SSA values), the online softmax on the
    accumulator fragments with quad `gpu.shuffle xor` reductions, and P fed
    from the score accumulators into P·V (key tiles capped at 32 when D or
    Dv exceeds 64). With `mma-threads=1` one thread per block emulates the
    32 lanes from the same fragment layout (private memory per lane, loops
    for mma.sync and the shuffles).

    With static head dimensions (at most `max-head-dim`, else an error) the
    loops over them are unrolled and the rows stay in registers. Dynamic
    head dimensions keep the rows in per-thread private memory of
    `max-head-dim` floats (slower), and the kernel is preceded by a
    `cf.assert` that the sizes fit. Operands are read with
    `tensor.extract` inside the kernel, so the module must bufferize into
    memory the device can read (rpe-gpu-offload).
  }];
  let options = [
    Option<"blockRows", "block-rows", "int64_t", /*default=*/"128",
           "Query rows (threads) per thread block">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"8",
           "Keys per workgroup-memory tile">,
    Option<"maxHeadDim", "max-head-dim", "int64_t", /*default=*/"256",
           "Largest static head dimension accepted">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "f16 attention with static head dimensions (D a multiple of 16, "
           "Dv of 8, no rel_values) as the tensor-core kernel">,
    Option<"mmaThreads", "mma-threads", "int64_t", /*default=*/"256",
           "Threads per tensor-core block: a multiple of 32, or 1 (one "
           "thread does every warp's work: host emulation)">,
    Option<"mmaBlockRows", "mma-block-rows", "int64_t", /*default=*/"64",
           "Query rows per tensor-core block (a multiple of 16; halved "
           "while its workgroup memory exceeds 48 KiB)">,
    Option<"mmaTileK", "mma-tile-k", "int64_t", /*default=*/"32",
           "Keys per tile of the tensor-core kernel (a multiple of 16; "
           "halved, once the block is down to 16 rows, while its workgroup "
           "memory exceeds 48 KiB)">,
    Option<"mmaRegisters", "mma-registers", "bool", /*default=*/"false",
           "The tensor-core kernel in the FlashAttention-2 form for D, Dv "
           "<= 128: scores, softmax and output in mma.sync fragments "
           "(registers), each warp owning 16 * mma-block-rows / (16 * "
           "warps) query rows">,
    Option<"mmaStageViews", "mma-stage-views", "bool", /*default=*/"true",
           "With mma-registers: copy a full K / V tile through one strided "
           "view per thread and column, unclamped (fewer instructions per "
           "copy; 0: every tile's keys clamped)">,
    Option<"mmaLazyRescale", "mma-lazy-rescale", "bool", /*default=*/"false",
           "With mma-registers: rescale the output accumulators only when "
           "some row of the warp saw its maximum grow (one warp vote per "
           "tile in place of the multiplies; more registers)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect", "::mlir::affine::AffineDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Attention ops made GPU kernels">,
  ];
}

def RPEGPUTensorCoresPass : Pass<"rpe-gpu-tensor-cores"> {
  let summary = "Turn rpe-gpu-attention's tensor-core nests into "
                "nvgpu.mma.sync";
  let description = [{
    Every op marked `rpe.mma` (a nest of `vector.transfer_read`,
    `vector.contract` on 16×16 · 8×16 f16 slices with f32 accumulation, and
    `vector.transfer_write`, inside a `gpu.launch`) goes through upstream's
    vector-to-nvgpu conversion on its own: workgroup reads become
    `nvgpu.ldmatrix` (transposed where the operand is [k][n]), the contracts
    `nvgpu.mma.sync` (m16n8k16), the accumulator reads and writes per-lane
    loads and stores. Upstream's `convert-vector-to-gpu` cannot be run on
    the whole kernel: it also tries to convert the scalar arithmetic of the
    kernel (MLIR 22). A nest that keeps a `vector.contract` is an error.
    The nests assume warp-uniform control flow and 32-lane warps, which
    rpe-gpu-attention's kernel guarantees; run this pass only for NVIDIA
    GPUs (the host emulation runs the vector form).
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
  ];
}

def RPEGPUOffloadPass : Pass<"rpe-gpu-offload", "::mlir::ModuleOp"> {
  let summary = "Move a bufferized module's memory work to the GPU";
  let description = [{
    Runs after bufferization and `convert-linalg-to-parallel-loops`, on a
    module whose public functions take device memory. In every function:

    - each host `scf.parallel` (a linalg op's parallel loops: projections,
      diagonal tables, element-wise code) becomes a `gpu.launch` with one
      thread per iteration, linearized with the innermost dimension fastest,
      `block-size` threads per block; its sequential loops (reductions) run
      inside the thread;
    - a host `scf.for` nest that touches memory and launches and calls
      nothing (a linalg op without parallel dimensions) runs in a
      single-thread launch;
    - `memref.copy` becomes a launch like a parallel loop;
    - `memref.alloc` / `memref.dealloc` become `gpu.alloc` / `gpu.dealloc`;
    - `memref.get_global` constants that kernels read are copied into
      device memory (allocated and freed per call).

    With `deallocate`, every device buffer a function allocates (or gets
    as a fresh buffer from a call) and does not return is freed at the end
    of the block that made it: launches are synchronous, so that is after
    its last use. Upstream's ownership-based deallocation cannot be used
    here: it rejects `gpu.barrier` and `gpu.launch_func` (unknown memory
    effects).

    Every launch is marked for the device module `@rpe_kernels`, so that
    `gpu-kernel-outlining` puts all kernels into one `gpu.module` (one PTX
    or cubin per compiled module).

    Empty iteration spaces launch nothing. Host code that would still load
    or store device memory, a kernel that would read host stack memory, and
    parallel loops with reductions are errors.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the launches made from loops (1..1024)">,
    Option<"deallocate", "deallocate", "bool", /*default=*/"true",
           "Free the device buffers a function does not return">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
  ];
}

def RPEGPUAlignWorkgroupPass : Pass<"rpe-gpu-align-workgroup"> {
  let summary = "Align the workgroup buffers of outlined GPU kernels";
  let description = [{
    Gives every workgroup attribution of every `gpu.func` the `llvm.align`
    attribute `alignment` (bytes; an alignment already there that is larger
    stays), which the lowering to NVVM puts on the buffer's global. Without
    it a buffer is aligned to its element type only (an `i8` byte buffer to
    1), while the attention kernels read their tiles with `ldmatrix` (16-byte
    rows) and 32-bit fragment loads and write them with 16-byte stores: they
    would be misaligned if the device placed the buffers so.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16",
           "Bytes (a power of two)">,
  ];
}

def RPEExpandArithDivisionsPass : Pass<"rpe-expand-arith-divisions"> {
  let summary = "Expand arith's ceil / floor divisions (and scaling casts) "
                "for the LLVM lowering, keeping the float min / max ops";
  let description = [{
    `arith-expand` without its float min / max expansions: `ceildivsi`,
    `ceildivui`, `floordivsi`, `scaling_extf` and `scaling_truncf`, which
    `convert-arith-to-llvm` has no lowering for, become plain arith ops.
    `maximumf`, `minimumf`, `maxnumf` and `minnumf` stay: they lower to the
    LLVM intrinsics, which NVPTX selects as one instruction (`max.NaN.f32`
    from sm_80 on), where `arith-expand` makes each a compare, a NaN test and
    two selects (the GPU attention kernels take a maximum per score).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def RPEGPULaunchToLoopsPass : Pass<"rpe-gpu-launch-to-loops"> {
  let summary = "Run gpu.launch kernels with one-thread blocks as host loops";
  let description = [{
    Replaces every synchronous `gpu.launch` whose blocks have one thread
    by a loop nest over its grid (z, y, x) that runs the kernel body with
    thread ids 0 and block sizes 1; workgroup attributions become one host
    buffer reused by every block (each block's code only reads what it
    wrote, after its barriers), private attributions host stack buffers;
    `gpu.barrier` goes (one thread has nothing to wait for); `gpu.alloc`,
    `gpu.dealloc` and `gpu.memcpy` become their memref counterparts.

    The kernel code is not changed, so this runs on the CPU exactly what
    `rpe-nvptx-pipeline` would run on the GPU with `block-rows=1
    block-size=1`: the `nvptx-emulated` target of rpe-compile and
    `rpe.compile` uses it to test the GPU kernels without a GPU. Launches
    with larger blocks or async tokens are errors.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def RPESplitAttentionHeadsPass : Pass<"rpe-split-attention-heads"> {
  let summary = "Run attentions with per-head gather tables one (batch, "
                "head) at a time";
  let description = [{
    An `rpe.attention` whose `score_mod` reads tables indexed by batch and
    head, `tensor.extract %T[%b, %h, ...]` (or `[0, %h, ...]` for a table
    with one batch) with `%T` computed by a structured op in the same
    block — the Shaw and DeBERTa gather trick's `q·embᵀ`, `q·pos_kᵀ`,
    `k·pos_qᵀ`, B×H×L×NB tensors — becomes a loop over (batch, head),
    marked `rpe.split_heads`: each iteration slices q, k, v (and
    key_lengths), computes the tables' slices for that (batch, head) only
    (the producers tiled into the loop through TilingInterface), runs the
    attention on them and inserts its output. By default an `scf.for`
    (the threads work inside one head and share its tables), and tables
    read at the query position (`%T[.., .., %i, ...]`) are computed per
    block of `query-block` query rows, the attention running on the block
    at `q_offset` = its first row (not for an attention with a q_offset).
    An `scf.forall` instead, each thread with its own head and its blocks
    of `parallel-query-block` rows, with `parallel-heads=1`, or with
    `num-threads` = T >= 2 when the attention has query blocks (no
    q_offset: a thread would otherwise hold its head's whole tables;
    `parallel-query-block` > 0): one parallel region per call instead of a
    few per head (the loops inside run on the head's thread,
    rpe-serialize-nested-foralls): DeBERTa at L = 128 and 192 on 2 threads
    in 0.75× and 0.66× the time of the heads one after another. When the
    (batch, head) pairs may not split evenly among the T threads (H, or a
    static B·H, not a multiple of T), each thread takes B·H / T pairs
    whole and the same number of parts of the B·H mod T pairs left over,
    whose query rows go in T / gcd(B·H, T) parts of a multiple of
    `part-rows-multiple` rows (computed at run time for a dynamic batch;
    the iterations are ordered for the static schedule's contiguous
    chunks): DeBERTa with H = 3 on 2 threads at L = 128 to 256 in 0.90×
    the time of the heads one after another, 1.01–1.02× at 1024 and 2048
    (blocks of 1024 rows, as for an even split). A causal attention's
    parts are cut where their work is equal rather than their rows (row i
    sees min(i + 1, Lk) keys: the first part of two ends near Lq / √2).
    With query blocks, a table read at the key
    position and a bucket of (i, j) that saturates beyond a distance M
    (`%T[.., .., %j, rpe.bucket %i, %j]` with clip, t5 or log buckets: p2c)
    is computed per block for the keys [row0 - M + 1, row0 + rows + M - 1)
    only (`key-band`); the keys before and after them read the table's
    column of the saturated bucket of their side, computed once per head
    (`score_mod` selects between the three). DeBERTa at L = 8192, H = 8:
    4 MiB of c2p and 6 MiB of p2c per block of 2048 rows instead of 256
    MiB of tables, read right after they are written. With query blocks, a
    table read at the bucket of (i, j) of a Toeplitz bucketing that is
    monotonic in i - j and saturates (clip, log), and made from a
    `linalg.fill` (the projections), has only the columns between the
    buckets of the block's smallest and largest i - j computed
    (`bucket-columns`), in place in a tensor of the table's width whose
    other columns are not written (no read uses them): DeBERTa's log<256, 512> buckets
    at L = 256 need 385 of the 512 columns, at L = 128 255. With
    `bucket-column-rows` = R > 0 the range is that of each group of R
    table rows (a c2p row sees the distances i - j of its query against
    every key, a p2c row those of its key against the block's queries:
    a window of Lk or of the block's rows), the groups in an `scf.forall`
    that writes each group's rows of the tensor in place: at L = 128 a
    row needs 128 of the 255 columns. When such a table's producer reads
    an operand along the table's heads and columns (rpe-fuse-attention's
    per-head position table transposed to H×D×NB), made by a linalg op
    that nothing else uses, each iteration builds the operand for its head
    only, and only the columns between the buckets of the whole call's
    smallest and largest i - j, into a one-head buffer whose other
    columns are not written (at L = 128 256 of DeBERTa's 512). Keys the
    attention masks need no column: a causal attention sees only the pairs
    with i - j >= 0 (its ranges are clamped at distance 0: about half the
    columns), and one with key_lengths only keys below key_lengths[b]
    (the ranges end at that key). The kernel still reads such columns for
    masked keys of its tiles, whose scores the mask then replaces (a
    select).
    Other uses of `%b`, `%h` in `score_mod` see the global indices. Attentions
    with a dense `bias` operand, or whose tables are read otherwise, are
    left alone, and so are tables narrower than `min-table-columns` (their
    innermost size, static): Shaw's clipped buckets (33 columns) cost less
    whole than the loop's per-head overhead. The CPU pipeline runs it
    before outlining; the GPU pipeline does not (one launch covers every
    head there).
  }];
  let options = [
    Option<"minTableColumns", "min-table-columns", "int64_t",
           /*default=*/"128",
           "Split only when every table has at least this many columns "
           "(static innermost size)">,
    Option<"parallelHeads", "parallel-heads", "bool", /*default=*/"false",
           "An scf.forall over (batch, head) (each thread its own head and "
           "tables) instead of an scf.for (the threads share one head)">,
    Option<"numThreads", "num-threads", "int64_t", /*default=*/"0",
           "With at least 2: an scf.forall over (batch, head) for "
           "attentions with query blocks (no q_offset, parallel-query-block "
           "> 0), each pair's rows in parts when the pairs may not split "
           "evenly among this many threads">,
    Option<"queryBlock", "query-block", "int64_t", /*default=*/"2048",
           "With an scf.for over heads: tables read at the query position "
           "are computed per block of this many query rows (0: per head)">,
    Option<"parallelQueryBlock", "parallel-query-block", "int64_t",
           /*default=*/"1024",
           "query-block for an scf.forall over heads (each thread holds its "
           "block's tables)">,
    Option<"partRowsMultiple", "part-rows-multiple", "int64_t",
           /*default=*/"16",
           "With num-threads and (batch, head) pairs that do not split "
           "evenly: each pair's query rows go in parts of a multiple of this "
           "many rows">,
    Option<"keyBand", "key-band", "bool", /*default=*/"true",
           "With query blocks: tables read at the key position through a "
           "Toeplitz bucket that saturates are computed per block for the "
           "keys whose buckets its rows tell apart, plus the table's two "
           "saturated columns per head">,
    Option<"bucketColumns", "bucket-columns", "bool", /*default=*/"true",
           "With query blocks: tables read at a monotonic Toeplitz bucket "
           "of (i, j) (clip, log) and made from a fill are computed for "
           "the columns between the buckets of the block's smallest and "
           "largest i - j only">,
    Option<"bucketColumnRows", "bucket-column-rows", "int64_t",
           /*default=*/"24",
           "With bucket-columns: the columns are those of each group of this "
           "many table rows (query rows for tables read at the query, keys "
           "for those read at the key) rather than of the whole block (0)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
  ];
}

def RPEVectorizeAttentionPass : Pass<"rpe-vectorize-attention"> {
  let summary = "Lower rpe.attention to a vector-level FlashAttention kernel";
  let description = [{
    Rewrites every `rpe.attention` whose `score_mod` holds only scalar ops
    into a FlashAttention-2 kernel written with the `vector` dialect on
    buffers (`bufferization.to_buffer` of the operands, a `memref.alloc`ed
    result): `scf.forall` over (batch, head, query tile) and, per tile,
    `scf.for` over key tiles with an online softmax.

    Vectors run along query rows (`vector-width` lanes, `tile-q / width`
    vectors per tile). Scores come from register blocks of `key-block` keys
    × the tile's row vectors (`vector.fma` of a broadcast key element and a
    row of the packed, pre-scaled Qᵀ over the head dimension); the output
    from blocks of `value-block` value rows × row vectors. The softmax
    reductions run along keys, i.e. across vectors: max, `exp` and sums are
    element-wise. `exp` is a vector polynomial for the arguments the online
    softmax has, x - max <= 0: 0 below -64 (exp(-64) = 1.6e-28 is below
    2^-24 of any row sum; the flush also keeps denormals out of the P·V
    FMAs), else a Cody-Waite range reduction and a degree-6 polynomial
    within 1.05 ulp of exp (`upstream-exp`: upstream's math.exp polynomial,
    made for the whole f32 range, 60 % more vector ops). Key tiles and value
    rows that do not fill a block run one key / one row at a time (static
    main loops); a tile with fewer rows runs a specialisation with fewer vectors
    (`scf.index_switch`), so short queries (decode) compute no padding.
    Plain attention whose query heads sharing a kv head fit one tile
    together (`Lq · H/Hkv <= tile-q`, checked at run time) packs them into
    one tile per (batch, kv head): K and V are read once per kv head.

    `score_mod` is evaluated on vectors of query rows: element-wise arith and
    math ops become vector ops, Toeplitz terms read contiguous vectors of
    diagonal tables built once (as in rpe-tile-attention, padded by tile-q
    entries so that no read needs a mask; a per-head table reads its buckets
    from a table computed once per diagonal), values that depend only on the
    head are computed once per tile, other tensor reads become masked
    gathers, anything else runs per lane. With `permute-reads`, a read of
    one table row at bucket columns of a diagonal table (a key's row of a
    gather-trick table: DeBERTa's p2c) loads the W columns from the lower end
    lane's bucket and permutes them (one `vpermps` on x86) when every lane's
    column falls among them; the gather otherwise. Which, and where the W
    columns start, depends only on the diagonal of the vector's first lane:
    it is computed once per diagonal before the kernel (an i32 per
    diagonal), so that a read is a load of that, a branch, the buckets minus
    the start and the permute. A read
    of a table row per query row at the buckets of (row, key) (DeBERTa's
    c2p: a gather across rows per key) is done that way per row, W keys at
    a time, in the key tiles that are not uniform: the W×W blocks are
    transposed (log2 W rounds of shuffles) into a TK × TQ scratch buffer
    from which each key reads one vector. `rel_values` with a Toeplitz bucketing reads a
    transposed diagonal of the table (Dv × (Lq + Lk - 1 + tile-q)).
    Causal keys are masked per vector with a lane comparison; tiles past
    the diagonal and keys past `key_lengths[b]` are never visited. Causal
    query tiles are visited in zig-zag order so that contiguous shares of
    the parallel loop balance. Nothing of size Lq×Lk is created.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16: AVX-512, 8: AVX2)">,
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"0",
           "Query rows per tile, a multiple of vector-width (0: 4 vectors "
           "with 16 lanes, else 3)">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"64",
           "Keys per tile of the online softmax">,
    Option<"keyBlock", "key-block", "int64_t", /*default=*/"4",
           "Keys per register block of the score contraction">,
    Option<"valueBlock", "value-block", "int64_t", /*default=*/"4",
           "Value rows per register block of the output contraction">,
    Option<"fma", "fma", "bool", /*default=*/"true",
           "Use vector.fma (false: mulf + addf, for targets without FMA)">,
    Option<"prefetch", "prefetch", "bool", /*default=*/"true",
           "Prefetch the next key tile's K and V rows in tiles that read "
           "them once (grouped decode tiles, tiles with fewer row vectors "
           "than a full one)">,
    Option<"decodeRows", "decode-rows", "int64_t", /*default=*/"8",
           "Plain attention with at most this many query rows per kv head "
           "(Lq x group) runs the decode kernel: vectors along the head "
           "dimension and along keys, K and V read row by row (0: never; "
           "at most 16)">,
    Option<"permuteReads", "permute-reads", "bool", /*default=*/"false",
           "Read a table row at bucket columns that lie within one vector's "
           "width of each other (checked at run time) with a vector load and "
           "a permute of its lanes (one vpermps on x86: AVX-512 at "
           "vector-width 16, AVX2 at 8) instead of a gather; per query row "
           "and W keys at a time, transposed, for a row per query row">,
    Option<"rowReadPrefetch", "row-read-prefetch", "int64_t", /*default=*/"2",
           "With permute-reads: the per-row reads (a row per query row) "
           "prefetch their row this many key vectors ahead (columns +- this "
           "x vector-width); 0: none">,
    Option<"windowReadPrefetch", "window-read-prefetch", "int64_t",
           /*default=*/"4",
           "With permute-reads: a read of a key's row at bucket columns "
           "prefetches the row this many keys on (columns +- as many); 0: "
           "none">,
    Option<"llvmUnroll", "llvm-unroll", "bool", /*default=*/"false",
           "Let LLVM unroll the kernel's loops (false: each scf.for of the "
           "kernel carries llvm.loop_annotation<unroll disable>)">,
    Option<"upstreamExp", "upstream-exp", "bool", /*default=*/"false",
           "Evaluate the online softmax's exp with upstream's math.exp "
           "polynomial (for the whole f32 range) instead of rpe's (range "
           "reduction and a degree-6 polynomial for the arguments in "
           "[-64, 0] that the kernel evaluates: within 1.05 ulp of exp)">,
    Option<"maxStackKiB", "max-stack-kib", "int64_t", /*default=*/"2048",
           "Most stack scratch (KiB per thread) the kernels of one attention "
           "may take: larger tiles are an error at the op (libomp's threads "
           "have 4 MiB of stack by default)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
  let statistics = [
    Statistic<"numVectorized", "num-vectorized",
              "Number of attention ops lowered to the vector kernel">,
  ];
}

def RPEParallelizeLinalgPass : Pass<"rpe-parallelize-linalg"> {
  let summary = "Splits linalg ops on tensors into one scf.forall tile per thread";
  let description = [{
    Every linalg op with tensor semantics that is not already inside an
    `scf.forall` is tiled (`scf::tileUsingSCF`, `scf.forall` loops) along its
    first parallel loop whose size is not statically 1, into `num-threads`
    tiles, so that the CPU pipeline runs it on OpenMP threads: the
    gather-trick projections and diagonal tables in front of an attention
    kernel, rpe ops lowered to linalg, the unfused reference path, linalg
    code of the user. Ops whose iteration count is static and below
    `min-iterations` stay whole (a fork costs more than they do). An op
    whose init is a `linalg.fill` fills its own tile in its loop, right
    before the tiled op (the loop's output is what the fill filled), so
    that `rpe-vectorize-contractions` can start from the fill's value; the
    fill itself goes when nothing else reads it.
  }];
  let options = [
    Option<"numThreads", "num-threads", "int64_t", /*default=*/"2",
           "Tiles per op (values below 2 leave the IR unchanged)">,
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Smallest static iteration count worth splitting">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numParallelized", "num-parallelized",
              "Number of linalg ops split into per-thread tiles">,
  ];
}

def RPEHoistForallAllocasPass : Pass<"rpe-hoist-forall-allocas"> {
  let summary = "Stack scratch of scf.forall loops that will run sequentially";
  let description = [{
    For result-less `scf.forall` loops that are about to be lowered to
    sequential `scf.for` loops (`scf-forall-to-for`): an `scf.forall` is an
    automatic allocation scope, an `scf.for` is not, so every iteration's
    `memref.alloca` would stay on the stack until the function returns (a
    `memref.alloca_scope` cannot stay inside an `scf.for` body either: it
    lowers to several blocks). Allocas whose sizes are defined outside the
    loop are hoisted in front of it (the sequential iterations share them),
    and in front of the loops around it up to the function or a forall that
    stays parallel: `scf.for` is marked an allocation scope, but its
    lowering frees no stack per iteration (a kernel in a loop over 512
    heads overflowed the stack). The same holds for the `scf.for` loops in
    the body: their allocas are taken too (not those of stack scopes or
    `scf.parallel` loops inside, nor of nested foralls, taken on their
    own). Scratch sized by a loop around it becomes a `memref.alloc` freed
    after the loop; scratch sized in the iteration one allocated in front
    of the outermost op of the body that does not define its sizes and
    freed after it (or at the end of its block). Do not run it on loops
    that will run in parallel.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def RPESerializeNestedForallsPass : Pass<"rpe-serialize-nested-foralls"> {
  let summary = "scf.forall loops inside another one as scf.for loops";
  let description = [{
    A result-less `scf.forall` nested in another `scf.forall` runs on the
    thread of the outer loop's iteration: the CPU pipeline maps each forall
    to an OpenMP parallel region, and OpenMP runs a region inside an active
    one with a team of one thread by default, still paying for the nested
    region each time. This pass lowers such loops to `scf.for` nests
    (upstream `scf::forallToForLoop`), their stack scratch prepared as
    `rpe-hoist-forall-allocas` does. A loop of rpe-split-attention-heads'
    `parallel-heads` holds the per-group loops of its tables and the
    attention kernel's loop over query tiles: one parallel region per call
    instead of one per head and loop. The CPU pipeline runs it before the
    OpenMP conversion.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numSerialized", "num-serialized",
              "Number of nested scf.forall loops lowered to scf.for">,
  ];
}

def RPEExpandStridedCopiesPass : Pass<"rpe-expand-strided-copies"> {
  let summary = "Copies between non-contiguous buffers as linalg.copy loops";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` to `llvm.memcpy` when
    both buffers are contiguous (identity layout, or a static row-major
    shape) and otherwise to a call of `memrefCopy` from the MLIR C runner
    utilities, which copies one element at a time through a call to
    `memcpy` (about 1 GB/s). This pass rewrites the latter kind — copies
    of slices that bufferization makes, such as a head's rows of q, k, v or
    an output inserted into its place. When the innermost dimension of
    both buffers is static and of unit stride (rows of at most
    `row-chunk-bytes` bytes, or up to `max-row-chunks` chunks of that many
    bytes), they become an `scf.for` nest over the rows with a
    `vector.load` and `vector.store` per row or chunk:
    LLVM unrolls a short static inner loop fully and, unable to prove that
    the buffers do not overlap, leaves its loads and stores scalar. Other
    copies become `linalg.copy`, whose loops (after
    `convert-linalg-to-loops`) LLVM vectorizes; copies that become
    `llvm.memcpy` and those of rank 0 stay.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"rowChunkBytes", "row-chunk-bytes", "int64_t", /*default=*/"512",
           "The most bytes of a row one vector load and store copy">,
    Option<"maxRowChunks", "max-row-chunks", "int64_t", /*default=*/"8",
           "The most chunks of a row copied with vectors (each one "
           "load and store in the loop's body); longer rows, and all rows "
           "with 0, become linalg.copy">,
  ];
}

def RPEUnshareFillsPass : Pass<"rpe-unshare-fills"> {
  let summary = "One linalg.fill per destination-style op that fills it";
  let description = [{
    When several destination-style ops on tensors take the same
    `linalg.fill` result as their init (CSE merges identical fills, such as
    the zero inits of the two gather-trick tables of a DeBERTa head), one-shot
    bufferization writes the fill into one buffer and copies it for each
    other op: a copy of constant data as large as the result. This pass
    gives every such use but the first a clone of the fill (and of the
    `tensor.empty` it fills), so that each op fills a buffer of its own.
    The CPU pipeline runs it right before bufferization.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def RPEInsertShapeChecksPass
    : Pass<"rpe-insert-shape-checks", "::mlir::ModuleOp"> {
  let summary = "Run-time checks of the argument sizes of every entry point";
  let description = [{
    For every public function `@F` with a body, adds a public function
    `@F_check` with `@F`'s arguments and four `i64` results
    `(code, a, b, c)`: `code` is 0 when every size constraint of the ops in
    `@F` holds for these arguments, else the 1-based number of the first one
    that fails, with `a`, `b`, `c` the sizes (or index, value, bound) in its
    message. The messages are printf formats (`%lld` per value, in order) in
    the `rpe.shape_check_messages` attribute of `@F_check`; `@F` gets
    `rpe.shape_check = @F_check`. `@F_check` reads only sizes and the values
    of `key_lengths`, so a caller can run it before `@F` and write nothing on
    failure (rpe-compile's header and `rpe.compile` do).

    The constraints come from the ops (`ShapeConstrainedOpInterface`: head
    dimensions of q and k, key lengths of k and v, bias sizes, bucket rows of
    tables, window sizes, GQA divisibility, `key_lengths` in [0, Lk], ...)
    and from the indexing maps of linalg ops (every loop has one size).
    Sizes of intermediate values are traced back to the arguments through
    `ReifyRankedShapedTypeOpInterface`; a constraint whose sizes depend on
    computed data is not checked (counted in `num-unchecked`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numChecks", "num-checks", "Constraints checked at run time">,
    Statistic<"numUnchecked", "num-unchecked",
              "Constraints whose sizes depend on computed data">,
  ];
}

#endif // RPE_DIALECT_RPE_TRANSFORMS_PASSES_TD
