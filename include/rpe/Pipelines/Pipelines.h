//===- Pipelines.h - rpe pass pipelines -------------------------*- C++ -*-===//

#ifndef RPE_PIPELINES_PIPELINES_H
#define RPE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace rpe {

/// Options of `rpe-cpu-pipeline`.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> reference{
      *this, "reference",
      llvm::cl::desc("Use the unfused reference lowering of rpe.attention "
                     "(materializes Lq×Lk) instead of fuse + tile"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q", llvm::cl::desc("Query rows per attention tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> tileK{
      *this, "tile-k", llvm::cl::desc("Keys per attention tile"),
      llvm::cl::init(64)};
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

/// rpe -> (fuse + tile attention) -> linalg -> one-shot bufferization ->
/// loops -> LLVM dialect. The result is runnable by mlir-runner and
/// translatable to LLVM IR.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `rpe-cpu-pipeline`.
void registerPipelines();

} // namespace rpe
} // namespace mlir

#endif // RPE_PIPELINES_PIPELINES_H
