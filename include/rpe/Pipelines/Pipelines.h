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
                     "of vector-width lanes)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> keyBlock{
      *this, "key-block",
      llvm::cl::desc("Keys per register block of the vector kernel (0: per "
                     "vector width)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> valueBlock{
      *this, "value-block",
      llvm::cl::desc("Value rows per register block of the vector kernel (0: "
                     "per vector width)"),
      llvm::cl::init(0)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Run the parallel loops (attention query tiles) on this "
                     "many OpenMP threads; 0 keeps them sequential (no "
                     "OpenMP runtime needed)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Give public functions _mlir_ciface_ wrappers"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> deallocate{
      *this, "deallocate",
      llvm::cl::desc("Insert buffer deallocation (ownership-based)"),
      llvm::cl::init(true)};
};

/// f32 lanes per vector register of a CPU ("native": the host, "generic" or
/// an LLVM CPU name): 16 with AVX-512, 8 with AVX, 4 otherwise; and whether
/// it has FMA. An unknown name gets the baseline (4 lanes, no FMA).
struct CPUVectorInfo {
  int64_t width = 4;
  bool fma = false;
};
CPUVectorInfo getCPUVectorInfo(StringRef cpu);

/// The vector kernel's parameters from the pipeline options: those left at
/// 0 from target-cpu (width, FMA) and per width (tile, register blocks).
VectorizeAttentionOptions
resolveVectorizeOptions(const CPUPipelineOptions &options);

/// rpe -> (fuse + tile attention) -> linalg -> one-shot bufferization ->
/// loops -> LLVM dialect. The result is runnable by mlir-runner and
/// translatable to LLVM IR.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `rpe-cpu-pipeline`.
void registerPipelines();

} // namespace rpe
} // namespace mlir

#endif // RPE_PIPELINES_PIPELINES_H
