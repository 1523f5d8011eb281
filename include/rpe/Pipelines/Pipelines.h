//===- Pipelines.h - rpe pass pipelines -------------------------*- C++ -*-===//

#ifndef RPE_PIPELINES_PIPELINES_H
#define RPE_PIPELINES_PIPELINES_H

#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace rpe {

/// Options of `rpe-cpu-pipeline`.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> shapeChecks{
      *this, "shape-checks",
      llvm::cl::desc("Add @F_check functions that check the argument sizes "
                     "of every public @F at run time "
                     "(rpe-insert-shape-checks)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> reference{
      *this, "reference",
      llvm::cl::desc("Use the unfused reference lowering of rpe.attention "
                     "(materializes Lq×Lk) instead of fuse + tile"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q", llvm::cl::desc("Query rows per attention tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> tileK{*this, "tile-k",
                                     llvm::cl::desc("Keys per attention tile"),
                                     llvm::cl::init(64)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Lower attention to the vector-level kernel "
                     "(rpe-vectorize-attention); false: the tiled linalg "
                     "kernel (rpe-tile-attention) only"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> targetCPU{
      *this, "target-cpu",
      llvm::cl::desc("CPU the vector kernel is shaped for: \"native\" (the "
                     "host), \"generic\" or an LLVM CPU name; gives the "
                     "vector width and whether FMAs are used"),
      llvm::cl::init("native")};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes per vector of the attention kernel; 0: from "
                     "target-cpu (16 with AVX-512, 8 with AVX, else 4)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> vectorTileQ{
      *this, "vector-tile-q",
      llvm::cl::desc("Query rows per tile of the vector kernel (0: 4 vectors "
                     "of vector-width lanes with 16 lanes, else 3)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> keyBlock{
      *this, "key-block",
      llvm::cl::desc("Keys per register block of the vector kernel (0: 4)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> valueBlock{
      *this, "value-block",
      llvm::cl::desc("Value rows per register block of the vector kernel (0: "
                     "4)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> decodeRows{
      *this, "decode-rows",
      llvm::cl::desc("Attention without score terms whose query rows per kv "
                     "head (Lq x group) number at most this runs the decode "
                     "kernel (vectors along the head dimension and keys; 0: "
                     "never, at most 16)"),
      llvm::cl::init(8)};
  PassOptions::Option<int64_t> matmulTileM{
      *this, "matmul-tile-m",
      llvm::cl::desc("Rows of C per register block of the contraction kernel "
                     "(rpe-vectorize-contractions), 1..16"),
      llvm::cl::init(6)};
  PassOptions::Option<int64_t> matmulTileN{
      *this, "matmul-tile-n",
      llvm::cl::desc("Vectors per row of a register block of the contraction "
                     "kernel, 1..16 (0: 4 with 16 lanes, else 2)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> matmulPackMinRows{
      *this, "matmul-pack-min-rows",
      llvm::cl::desc("The contraction kernel copies each cache block of B "
                     "into a buffer of its own when C has at least this "
                     "many rows (0: never)"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("rpe-approximate-math: f32 math.exp and math.tanh in "
                     "linalg op bodies (SiLU, sigmoid, GELU's tanh form, "
                     "softmax outside attention) as vectorizable "
                     "polynomials; off: a libm call per element"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> splitAttentionHeads{
      *this, "split-attention-heads",
      llvm::cl::desc("rpe-split-attention-heads: attentions with wide "
                     "per-head gather tables (DeBERTa) one (batch, head) "
                     "at a time, so that the tables take L×NB, not "
                     "B×H×L×NB"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> outlineMinRepeats{
      *this, "outline-min-repeats",
      llvm::cl::desc("rpe-outline-kernels: occurrences from which a linalg "
                     "op moves into a function shared by identical ones (1: "
                     "every op, so that the entry functions are loop-free "
                     "glue; 0: attention only)"),
      llvm::cl::init(1)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Run the parallel loops (attention query tiles) on this "
                     "many OpenMP threads (at most 1024); 0 keeps them "
                     "sequential (no OpenMP runtime needed)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Give public functions _mlir_ciface_ wrappers"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> deallocate{
      *this, "deallocate",
      llvm::cl::desc("Insert buffer deallocation (ownership-based)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> cacheAllocations{
      *this, "cache-allocations",
      llvm::cl::desc("Allocate and free buffers through "
                     "_mlir_memref_to_llvm_alloc/_free (use-generic-functions)"
                     ", which librpe_cpu_runtime.a implements with a cache of "
                     "large freed blocks; rpe-compile --emit=shared and "
                     "rpe.compile link it. Off: malloc/free"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> gpuEmulation{
      *this, "gpu-emulation",
      llvm::cl::desc("Build the kernels rpe-nvptx-pipeline builds, with one "
                     "thread per block, and run them as loops on the CPU "
                     "(rpe-gpu-launch-to-loops): tests the GPU code without "
                     "a GPU"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> gpuTensorCores{
      *this, "gpu-tensor-cores",
      llvm::cl::desc("With gpu-emulation: f16 attention as the tensor-core "
                     "kernel (its vector form, one thread per block)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> gpuTileK{
      *this, "gpu-tile-k",
      llvm::cl::desc("With gpu-emulation: keys per tile of the GPU attention "
                     "kernel"),
      llvm::cl::init(8)};
  PassOptions::Option<int64_t> gpuMmaBlockRows{
      *this, "gpu-mma-block-rows",
      llvm::cl::desc("With gpu-emulation: query rows per block of the "
                     "tensor-core kernel"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> gpuMmaTileK{
      *this, "gpu-mma-tile-k",
      llvm::cl::desc("With gpu-emulation: keys per tile of the tensor-core "
                     "kernel"),
      llvm::cl::init(32)};
  PassOptions::Option<bool> gpuMmaRegisters{
      *this, "gpu-mma-registers",
      llvm::cl::desc("With gpu-emulation: the register-resident "
                     "tensor-core kernel"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> gpuMmaStageViews{
      *this, "gpu-mma-stage-views",
      llvm::cl::desc("With gpu-emulation: the register-resident kernel "
                     "stages full K / V tiles through strided views"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> gpuMmaLazyRescale{
      *this, "gpu-mma-lazy-rescale",
      llvm::cl::desc("With gpu-emulation: the register-resident kernel "
                     "rescales its output only when a row's maximum grew"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> gpuThreadTileRows{
      *this, "gpu-thread-tile-rows",
      llvm::cl::desc("With gpu-emulation: rows of a contraction kernel "
                     "thread's block of outputs"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> gpuThreadTileColumns{
      *this, "gpu-thread-tile-columns",
      llvm::cl::desc("With gpu-emulation: columns of that block"),
      llvm::cl::init(4)};
};

/// Options of `rpe-nvptx-pipeline`.
struct NVPTXPipelineOptions : public PassPipelineOptions<NVPTXPipelineOptions> {
  PassOptions::Option<bool> shapeChecks{
      *this, "shape-checks",
      llvm::cl::desc("Add @F_check functions that check the argument sizes "
                     "of every public @F at run time "
                     "(rpe-insert-shape-checks)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture (sm_80, sm_90, ...)"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features, e.g. +ptx84 (the PTX ISA version); "
                     "empty: +ptx80 up to sm_90a, the oldest version that "
                     "knows the chip after it (upstream's default, +ptx60, "
                     "is too old for sm_80 and later)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Device code embedded in the module: isa (PTX, "
                     "JIT-compiled at load), bin (cubin) or fatbin"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("Device code optimization level"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit (ptxas, fatbinary, nvvm/libdevice); "
                     "empty: $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH or "
                     "/usr/local/cuda"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockRows{
      *this, "block-rows",
      llvm::cl::desc("Query rows (threads) per attention thread block"),
      llvm::cl::init(128)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k",
      llvm::cl::desc("Keys per workgroup-memory tile of the attention kernel"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("f16 attention (D a multiple of 16, Dv of 8) on tensor "
                     "cores (mma.sync m16n8k16, f32 accumulation); sm_80 "
                     "and later, earlier chips keep the SIMT kernel"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> mmaThreads{
      *this, "mma-threads",
      llvm::cl::desc("Threads per block of the tensor-core attention kernel "
                     "(a multiple of 32, at most 1024; 1 keeps its vector "
                     "form for the host emulation)"),
      llvm::cl::init(256)};
  PassOptions::Option<int64_t> mmaBlockRows{
      *this, "mma-block-rows",
      llvm::cl::desc("Query rows per block of the tensor-core attention "
                     "kernel (a multiple of 16)"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> mmaTileK{
      *this, "mma-tile-k",
      llvm::cl::desc("Keys per tile of the tensor-core attention kernel (a "
                     "multiple of 16)"),
      llvm::cl::init(32)};
  PassOptions::Option<bool> mmaRegisters{
      *this, "mma-registers",
      llvm::cl::desc("The tensor-core attention kernel in the "
                     "FlashAttention-2 form (D, Dv <= 128): scores, softmax "
                     "and output in mma.sync fragments (registers)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> mmaStageViews{
      *this, "mma-stage-views",
      llvm::cl::desc("With mma-registers: copy a full K / V tile through "
                     "one strided view per thread and column, unclamped"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> mmaLazyRescale{
      *this, "mma-lazy-rescale",
      llvm::cl::desc("With mma-registers: rescale the output accumulators "
                     "only when some row of the warp saw its maximum grow "
                     "(a warp vote per tile)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the kernels made from loops"),
      llvm::cl::init(256)};
  PassOptions::Option<int64_t> threadTileRows{
      *this, "thread-tile-rows",
      llvm::cl::desc("Rows of the block of outputs each thread of a "
                     "contraction kernel computes (rpe-register-tile-"
                     "reductions; 1 with thread-tile-columns=1: one output)"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> threadTileColumns{
      *this, "thread-tile-columns", llvm::cl::desc("Columns of that block"),
      llvm::cl::init(4)};
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Give public functions _mlir_ciface_ wrappers"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> deallocate{
      *this, "deallocate",
      llvm::cl::desc("Free the device buffers a function does not return "
                     "(rpe-gpu-offload)"),
      llvm::cl::init(true)};
};

/// f32 lanes per vector register of a CPU ("native": the host, "generic" or
/// an LLVM CPU name): 16 with AVX-512, 8 with AVX, 4 otherwise; and whether
/// it has FMA. An unknown name gets the baseline (4 lanes, no FMA).
struct CPUVectorInfo {
  int64_t width = 4;
  bool fma = false;
  bool avx2 = false;
};
CPUVectorInfo getCPUVectorInfo(StringRef cpu);

/// Whether `cpu` names a CPU of the host's LLVM target: "native", "generic"
/// or a name the target knows (x86-64-v3, skylake-avx512, znver4, ...).
bool isKnownCPU(StringRef cpu);

/// XY of an NVIDIA chip name "sm_XY", "sm_XYa" or "sm_XYf", or nullopt.
std::optional<unsigned> parseChipVersion(StringRef chip);

/// Whether `chip` names an NVIDIA chip rpe compiles for: sm_70 or later,
/// and known to LLVM's NVPTX backend.
bool isKnownChip(StringRef chip);

/// The oldest PTX ISA version (10 × major + minor) that LLVM 22's NVPTX
/// backend accepts for `chip` (an older one is a fatal error there), or
/// nullopt for a chip this table does not list.
std::optional<unsigned> getMinPTXVersion(StringRef chip);

/// The PTX features rpe-nvptx-pipeline gives `chip` when its `features`
/// option is empty: +ptx80 up to sm_90a, else "" (LLVM's default, the
/// oldest version that knows the chip).
std::string getDefaultPTXFeatures(StringRef chip);

/// Check what a pipeline string can get wrong and no pass would report (an
/// unknown target-cpu, chip or format) or would report only as a failure
/// of the whole module; the first problem goes to `errorHandler`.
/// `rpe-cpu-pipeline` and `rpe-nvptx-pipeline` run them on their parsed
/// options.
LogicalResult
verifyCPUPipelineOptions(const CPUPipelineOptions &options,
                         function_ref<LogicalResult(const Twine &)> error);
LogicalResult
verifyNVPTXPipelineOptions(const NVPTXPipelineOptions &options,
                           function_ref<LogicalResult(const Twine &)> error);

/// The vector kernel's parameters from the pipeline options: those left at
/// 0 from target-cpu (width, FMA) and per width (tile, register blocks).
VectorizeAttentionOptions
resolveVectorizeOptions(const CPUPipelineOptions &options);

/// rpe -> (fuse + tile attention) -> linalg -> one-shot bufferization ->
/// loops -> LLVM dialect. The result is runnable by mlir-runner and
/// translatable to LLVM IR.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// rpe -> fuse -> SIMT attention kernels (rpe-gpu-attention) -> linalg ->
/// one-shot bufferization -> parallel loops -> GPU launches
/// (rpe-gpu-offload) -> upstream's gpu-lower-to-nvvm-pipeline. Public
/// functions take device memory; the result calls the `mgpu*` runtime
/// functions (librpe_cuda_runtime) and embeds the device code.
void buildNVPTXPipeline(OpPassManager &pm, const NVPTXPipelineOptions &options);

/// Pieces shared by the CPU and GPU pipelines: front-end normalization,
/// attention fusion and outlining; the rest of rpe (and element-wise
/// tensor code) to linalg; one-shot bufferization with identity-layout
/// function boundaries. `splitHeads` (the CPU pipeline): attentions with
/// per-head gather tables run per (batch, head) (rpe-split-attention-heads,
/// the heads in parallel when they split evenly among `numThreads`, parts
/// of a head rounded to `partRowsMultiple` rows: the vector kernel's lanes;
/// 0 keeps the pass's default), before outlining.
void addFusionPasses(OpPassManager &pm, int64_t outlineMinRepeats,
                     bool splitHeads = false, int64_t numThreads = 0,
                     int64_t partRowsMultiple = 0);
void addToLinalgPasses(OpPassManager &pm);
void addBufferizePass(OpPassManager &pm);

/// The CPU pipeline's attention kernels (fuse, vectorize / tile), and its
/// lowering from there (linalg, bufferization, loops, OpenMP, LLVM).
void buildCPUKernelPasses(OpPassManager &pm, const CPUPipelineOptions &options);
void addCPULoweringPasses(OpPassManager &pm, const CPUPipelineOptions &options);

/// The GPU pipeline up to its gpu.launch kernels on buffers (before
/// outlining and NVVM): fuse, rpe-gpu-attention, linalg, bufferization,
/// parallel loops, rpe-gpu-offload.
void buildGPUKernelPasses(OpPassManager &pm,
                          const NVPTXPipelineOptions &options);

/// The CUDA toolkit directory: `path` if given, else $CUDA_ROOT, $CUDA_HOME,
/// $CUDA_PATH or /usr/local/cuda.
std::string resolveCUDAPath(StringRef path);

/// Upstream's buffer deallocation with rpe-simplify-deallocations in place of
/// its simplification (shared by the CPU and GPU pipelines).
void addDeallocationPasses(OpPassManager &pm);

/// Registers `rpe-cpu-pipeline` and `rpe-nvptx-pipeline`.
void registerPipelines();

} // namespace rpe
} // namespace mlir

#endif // RPE_PIPELINES_PIPELINES_H
