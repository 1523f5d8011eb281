//===- Transforms.h - rpe rewrite patterns ----------------------*- C++ -*-===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_TRANSFORMS_H
#define RPE_DIALECT_RPE_TRANSFORMS_TRANSFORMS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>

namespace mlir {
class RewritePatternSet;
class RewriterBase;
namespace linalg {
class LinalgOp;
} // namespace linalg
namespace math {
class FmaOp;
} // namespace math
namespace scf {
class ForallOp;
} // namespace scf

namespace rpe {
class AttentionOp;

/// Most OpenMP threads `num-threads` may ask for (rpe-cpu-pipeline,
/// rpe-split-attention-heads, rpe-compile, rpe.compile): libomp aborts the
/// process when it cannot start a team, so an absurd count is refused when
/// compiling.
constexpr unsigned kMaxCPUThreads = 1024;

struct TileAttentionOptions {
  int64_t tileQ = 64;
  int64_t tileK = 64;
};

/// Patterns rewriting rpe.attention into the tiled online-softmax kernel.
void populateRPETileAttentionPatterns(RewritePatternSet &patterns,
                                      const TileAttentionOptions &options);

/// Parameters of the SIMT GPU attention kernel (rpe-gpu-attention).
struct GPUAttentionOptions {
  /// Query rows (threads) per thread block.
  int64_t blockRows = 128;
  /// Keys per workgroup-memory tile (the score loop is unrolled over them).
  int64_t tileK = 8;
  /// Largest static head dimension (registers per thread grow with it).
  int64_t maxHeadDim = 256;
  /// f16 attention with static head dimensions (multiples of 16 and 8) as
  /// the tensor-core kernel: its q·kᵀ and p·v as warp-level
  /// vector.contract on workgroup memory, which rpe-gpu-tensor-cores turns
  /// into mma.sync.
  bool tensorCores = true;
  /// Threads per tensor-core block: a multiple of 32, or 1 (every warp's
  /// work done by one thread: the host emulation).
  int64_t mmaThreads = 128;
  /// Query rows per tensor-core block (a multiple of 16; halved while the
  /// workgroup buffers exceed 48 KiB) and keys per tile (a multiple of 16).
  int64_t mmaBlockRows = 64;
  int64_t mmaTileK = 32;
  /// The tensor-core kernel in the FlashAttention-2 form (D, Dv ≤ 128): the
  /// scores, the softmax and the output in mma.sync fragments (registers),
  /// warps owning query rows; off: S, P and O in workgroup memory.
  bool mmaRegisters = false;
  /// In the FlashAttention-2 form, stage a full K / V tile through one
  /// strided view per thread and column (unclamped 16-byte copies, the
  /// view's offset and stride computed once); off: every tile's keys
  /// clamped to the last.
  bool mmaStageViews = true;
  /// In the FlashAttention-2 form, multiply the output accumulators by the
  /// softmax correction only when some row of the warp saw its maximum
  /// grow (a warp vote); off: every tile.
  bool mmaLazyRescale = false;
};

/// Checks the options; reports the first problem through `error`.
LogicalResult
checkGPUAttentionOptions(const GPUAttentionOptions &options,
                         function_ref<LogicalResult(const Twine &)> error);

/// Patterns rewriting f16 rpe.attention with static head dimensions (D a
/// multiple of 16, Dv of 8, no rel_values) into a `gpu.launch` whose
/// matmuls are warp-level vector.contract on workgroup memory (tensor-core
/// form); with `options.tensorCores` off, none.
void populateRPEGPUAttentionTensorCorePatterns(
    RewritePatternSet &patterns, const GPUAttentionOptions &options);

/// Patterns rewriting f16 / bf16 rpe.attention with static head dimensions
/// (D a multiple of 16, Dv of 8, both at most 128, no rel_values) into the
/// register-resident tensor-core kernel (nvvm.mma.sync on fragments held in
/// private memory indexed by constants; with mma-threads 1, its emulation
/// by one thread per block); with `options.mmaRegisters` off, none.
void populateRPEGPUAttentionRegisterPatterns(
    RewritePatternSet &patterns, const GPUAttentionOptions &options);

/// Converts the tensor-core form's vector.transfer_read / contract /
/// transfer_write nests (marked `rpe.mma`) under `root` into nvgpu.ldmatrix /
/// nvgpu.mma.sync (upstream's vector-to-nvgpu conversion, one marked nest at
/// a time: run on the whole kernel it would also try the scalar arithmetic).
LogicalResult convertMarkedToTensorCores(RewriterBase &rewriter,
                                         Operation *root);

/// Patterns rewriting rpe.attention (static head dimensions) into a
/// `gpu.launch` SIMT kernel writing a `memref.alloc`ed result.
void populateRPEGPUAttentionPatterns(RewritePatternSet &patterns,
                                     const GPUAttentionOptions &options);

/// The vector kernel's default query rows per tile for `vectorWidth` f32
/// lanes: row vectors sized to the register file, 4 with 16 lanes (32
/// AVX-512 registers: 4 keys x 4 vectors of accumulators), 3 otherwise (16
/// registers: 4 keys x 3 vectors, 12 FMA chains). 0 for a width outside
/// [1, 64], which checkVectorizeAttentionOptions rejects (no overflow
/// before it can).
inline int64_t defaultVectorTileQ(int64_t vectorWidth) {
  if (vectorWidth < 1 || vectorWidth > 64)
    return 0;
  return (vectorWidth >= 16 ? 4 : 3) * vectorWidth;
}

/// Parameters of the vector-level attention kernel (rpe-vectorize-attention).
struct VectorizeAttentionOptions {
  /// f32 lanes per vector.
  int64_t vectorWidth = 16;
  /// Query rows per tile: a multiple of vectorWidth.
  int64_t tileQ = 64;
  /// Keys per online-softmax tile.
  int64_t tileK = 64;
  /// Register blocks: keys of the score contraction, value rows of the
  /// output contraction.
  int64_t keyBlock = 4;
  int64_t valueBlock = 4;
  /// vector.fma, or mulf + addf for targets without FMA.
  bool useFMA = true;
  /// Tiles that read each K and V row once (grouped decode tiles, short
  /// queries) prefetch the next key tile's rows.
  bool prefetch = true;
  /// Plain attention whose query rows of a kv head (Lq × group) number at
  /// most this runs the decode kernel: vectors along the head dimension and
  /// along keys, K and V read row by row (0: never; at most 16).
  int64_t decodeRows = 8;
  /// Reads of a table row at W bucket columns that lie within W consecutive
  /// elements (a key's row of a gather-trick table) become a vector load and
  /// a permute of its lanes, which LLVM turns into one `vpermps` on x86
  /// (AVX-512 for 16 lanes, AVX2 for 8); false: gathers. For targets with a
  /// variable permute only.
  bool permuteReads = false;
  /// With permuteReads: the per-row reads of a table at the buckets of
  /// (row, key) (DeBERTa's c2p) prefetch the lines of their row this many
  /// key vectors ahead (columns ± this · vectorWidth); 0: none.
  int64_t rowReadPrefetch = 2;
  /// With permuteReads: a read of a key's row at bucket columns (DeBERTa's
  /// p2c) prefetches the row this many keys on (columns ± as many); 0: none.
  int64_t windowReadPrefetch = 4;
  /// Whether LLVM may unroll the kernel's loops. false: every scf.for of the
  /// kernel carries `llvm.loop_annotation` with unroll disabled (the
  /// register blocks are unrolled already; rpe-apply-loop-annotations
  /// carries the annotation into LLVM IR).
  bool llvmUnroll = false;
  /// The online softmax's exp by upstream's math.exp polynomial (made for
  /// the whole f32 range) instead of rpe's for arguments in [-64, 0].
  bool upstreamExp = false;
  /// Most stack scratch, in KiB, that the kernels of one attention may take
  /// per thread (kernelStackBytes); a larger tile is an error, not a stack
  /// overflow at run time. libomp's threads have 4 MiB of stack by default.
  int64_t maxStackKiB = 2048;
};

/// Checks the options; reports the first problem through `error`.
LogicalResult checkVectorizeAttentionOptions(
    const VectorizeAttentionOptions &options,
    function_ref<LogicalResult(const Twine &)> error);

/// An upper bound of the stack scratch, in bytes, that the vector kernels
/// built for `op` allocate per thread (all of them, as if in one frame): the
/// main kernel's Qᵀ, Oᵀ, scores and per-row table reads (tile-k × tile-q
/// each), the decode kernels' rows, partial dot products and probabilities
/// (rows × tile-k × vector-width). A dynamic head dimension counts as 0.
uint64_t kernelStackBytes(AttentionOp op,
                          const VectorizeAttentionOptions &options);

/// Patterns of rpe-normalize-attention: front-end attention (batch_matmul
/// on collapsed batch·heads, transposes) into 4-D linalg generics.
void populateRPENormalizeAttentionPatterns(RewritePatternSet &patterns);

/// Options of rpe-split-attention-heads (see its pass options).
struct SplitAttentionHeadsOptions {
  int64_t minTableColumns = 128;
  bool parallelHeads = false;
  int64_t numThreads = 0;
  int64_t queryBlock = 2048;
  int64_t parallelQueryBlock = 1024;
  int64_t partRowsMultiple = 16;
  bool keyBand = true;
  bool bucketColumns = true;
  int64_t bucketColumnRows = 24;
};

/// rpe-split-attention-heads: attentions with per-(batch, head) gather
/// tables into a loop over (batch, head) with the tables' producers tiled
/// into it, when every table has at least `minTableColumns` (static)
/// columns.
void populateRPESplitAttentionHeadsPatterns(
    RewritePatternSet &patterns, const SplitAttentionHeadsOptions &options);

/// Patterns of rpe-legalize-math that rewrite math ops convert-math-to-llvm
/// cannot lower into ones it can (f32 erf/erfc polynomials, isinf,
/// isnormal, clampf); the pass sends what is left to libm.
void populateRPELegalizeMathPatterns(RewritePatternSet &patterns);

/// rpe-approximate-math's rewrites: f32 `math.exp` and `math.tanh` (scalar
/// or vector) as upstream's polynomial approximations. Callers pick the ops
/// (the pass: those in linalg op bodies).
void populateRPEApproximateMathPatterns(RewritePatternSet &patterns);

/// Replaces each of `fmas` by a multiply and an add: for targets without FMA
/// hardware, where `llvm.fma` is a libm call per element or lane.
void splitFMAs(RewriterBase &rewriter, ArrayRef<math::FmaOp> fmas);

/// rpe-expand-strided-copies: memref.copy that finalize-memref-to-llvm
/// would lower to an element-by-element memrefCopy call -> a loop of vector
/// loads and stores per row (rows of a static length, unit stride, at most
/// `maxRowChunks` chunks of `rowChunkBytes` bytes), else linalg.copy.
struct ExpandStridedCopiesOptions {
  int64_t rowChunkBytes = 512;
  int64_t maxRowChunks = 8;
};
void populateRPEExpandStridedCopiesPatterns(
    RewritePatternSet &patterns, const ExpandStridedCopiesOptions &options);

/// rpe-unshare-fills: a destination-style op on tensors whose init is a
/// linalg.fill that other such ops also fill into gets its own clone of it.
void populateRPEUnshareFillsPatterns(RewritePatternSet &patterns);

/// Patterns lowering rpe.attention to the vector-level kernel (on buffers).
void populateRPEVectorizeAttentionPatterns(
    RewritePatternSet &patterns, const VectorizeAttentionOptions &options);

/// Patterns raising unfused attention in linalg on tensors (q·kᵀ, scale,
/// bias, softmax, ·v, and + shaw_values of the same probabilities) to
/// rpe.attention.
void populateRPERaiseAttentionPatterns(RewritePatternSet &patterns);

/// Patterns folding bias producers (relative_bias, alibi, shaw_logits,
/// disentangled_bias and sums of them) into rpe.attention so that no Lq×Lk
/// bias is built, and raising unfused linalg attention to rpe.attention;
/// with `maxFoldOps` > 0 also populateRPEFoldScoreProducersPatterns.
/// How far populateRPERaiseBucketsPatterns evaluates index code: position
/// pairs one by one, or diagonals when the code reads only j − i.
struct RaiseBucketsLimits {
  int64_t maxPairs = int64_t(1) << 16;
  int64_t maxDiagonals = int64_t(1) << 20;
};

void populateRPEFuseAttentionPatterns(RewritePatternSet &patterns,
                                      int64_t maxFoldOps = 512,
                                      RaiseBucketsLimits bucketLimits = {});

/// Patterns replacing, in the score_mod of attentions with static lengths,
/// index code on the positions that equals an rpe bucketing scheme at every
/// position (front-end T5 bucket arithmetic, Swin's relative_position_index
/// gathered from a constant) by `rpe.bucket`, and dropping bounds checks
/// there that hold at every position. Part of rpe-fuse-attention.
void populateRPERaiseBucketsPatterns(RewritePatternSet &patterns,
                                     RaiseBucketsLimits limits = {});

/// Patterns replacing front-end RoPE (transformers' `x·cos(emb) +
/// rotate_half(x)·sin(emb)` with a constant inv_freq, as torch-mlir writes
/// it) by `rpe.rotary` when inv_freq is θ^(-2t/R) for one θ. Part of
/// rpe-fuse-attention.
void populateRPERaiseRotaryPatterns(RewritePatternSet &patterns);

/// Interchanges linalg contractions whose innermost loop is their reduction
/// so that the loop before it (parallel, contiguous in every operand) is
/// innermost: an axpy the loop vectorizer handles (rpe-interchange-
/// reductions). With `reductionsInnermost`, the other way: every linalg op
/// on tensors gets its parallel loops first and its reductions last (one
/// GPU thread per output element).
void populateRPEInterchangeReductionsPatterns(RewritePatternSet &patterns,
                                              bool reductionsInnermost = false);

/// Patterns turning a load and a store of one loop-invariant element of a
/// fresh allocation in an `scf.for` (no other access in the loop may alias
/// it) into a loop-carried value, the loop guarded by `lb < ub` unless it
/// has a static, positive trip count (rpe-promote-accumulators).
void populateRPEPromoteAccumulatorsPatterns(RewritePatternSet &patterns);

/// Patterns giving each iteration of an `scf.parallel` over a reduction
/// loop a `rows` × `columns` block of outputs of its two innermost
/// dimensions, one reduction loop carrying them all
/// (rpe-register-tile-reductions).
void populateRPERegisterTileReductionsPatterns(RewritePatternSet &patterns,
                                               int64_t rows, int64_t columns);

/// Checks a block size for rpe-register-tile-reductions (rows and columns
/// in 1..16), reporting "<owner>: <rowsName> and <columnsName> must be in
/// 1..16, got R and C" through `error` (which returns failure).
LogicalResult
checkRegisterTile(int64_t rows, int64_t columns, StringRef owner,
                  StringRef rowsName, StringRef columnsName,
                  function_ref<LogicalResult(const Twine &)> error);

/// Options of the register-blocked contraction kernel
/// (rpe-vectorize-contractions).
struct VectorizeContractionsOptions {
  /// f32 lanes per vector (f64: half as many).
  int64_t vectorWidth = 16;
  /// Register block: rows of C × vectors per row.
  int64_t tileM = 6;
  int64_t tileN = 2;
  /// Cache blocks: values of k, columns of C (0: all columns).
  int64_t blockK = 256;
  int64_t blockN = 512;
  /// Copy each cache block of B into a buffer of its own (rows a vector
  /// longer than the block's) when C has at least this many rows (checked
  /// at run time when they are dynamic); 0: never.
  int64_t packMinRows = 64;
  /// vector.fma, or mulf + addf for targets without FMA.
  bool useFMA = true;
};

/// Checks the options; reports the first problem through `error`.
LogicalResult checkVectorizeContractionsOptions(
    const VectorizeContractionsOptions &options,
    function_ref<LogicalResult(const Twine &)> error);

/// Rewrites float contractions on buffers (one m, n and k dimension, n the
/// last unit-stride dimension of B and C) into register-blocked vector
/// kernels (rpe-vectorize-contractions).
void populateRPEVectorizeContractionsPatterns(
    RewritePatternSet &patterns, const VectorizeContractionsOptions &options);

/// Rewrites element-wise linalg ops on buffers whose input's unit-stride
/// dimension is not the output's into loops over W × W register-block
/// transposes, W = `vectorWidth` f32 lanes (rpe-vectorize-transposes).
void populateRPEVectorizeTransposesPatterns(RewritePatternSet &patterns,
                                            int64_t vectorWidth);

/// Erases unused `linalg.generic`s whose bodies are free of memory effects
/// but for `cf.assert` (a front end's bounds checks of a gather nobody reads).
void populateRPEEraseUnusedChecksPatterns(RewritePatternSet &patterns);

/// Patterns moving element-wise code that produces an attention's bias or
/// what its score_mod reads (front-end bias and mask code: index generators,
/// bucket arithmetic, gathers, broadcasts, reshapes) into score_mod, at most
/// `maxOps` ops per read; recognising an additive causal mask as `causal`;
/// folding sign tests of positions in score_mod.
void populateRPEFoldScoreProducersPatterns(RewritePatternSet &patterns,
                                           int64_t maxOps);

/// The loop rpe-parallelize-linalg splits `op` along: its first parallel
/// loop whose size is not statically 1; none when `op` is not on tensors,
/// already inside an scf.forall, or has a static iteration count below
/// `minIterations`.
std::optional<unsigned> getParallelizableLoop(linalg::LinalgOp op,
                                              int64_t minIterations);

/// Tiles `op` along `loop` into `numThreads` tiles of an scf.forall (the
/// other loops untiled) and replaces it.
FailureOr<scf::ForallOp> parallelizeLinalgOp(RewriterBase &rewriter,
                                             linalg::LinalgOp op, unsigned loop,
                                             int64_t numThreads);

/// For result-less `loops` about to run sequentially (lowered to scf.for):
/// their bodies' stack scopes are inlined, the allocas of their own scope
/// whose sizes are defined outside the loop are hoisted in front of it, and
/// the others become a `memref.alloc` freed at the end of the iteration
/// (rpe-hoist-forall-allocas, rpe-serialize-nested-foralls). Inner loops
/// first: their hoisted allocas then belong to the loop around them.
void hoistForallAllocas(ArrayRef<scf::ForallOp> loops);

} // namespace rpe
} // namespace mlir

#endif // RPE_DIALECT_RPE_TRANSFORMS_TRANSFORMS_H
