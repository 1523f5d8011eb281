//===- Pipelines.h - rpe pass pipelines -------------------------*- C++ -*-===//

#ifndef RPE_PIPELINES_PIPELINES_H
#define RPE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace rpe {

/// Options of `rpe-cpu-pipeline`.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Give public functions _mlir_ciface_ wrappers"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> deallocate{
      *this, "deallocate",
      llvm::cl::desc("Insert buffer deallocation (ownership-based)"),
      llvm::cl::init(true)};
};

/// rpe -> linalg -> one-shot bufferization -> loops -> LLVM dialect. The
/// result is runnable by mlir-runner and translatable to LLVM IR.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `rpe-cpu-pipeline`.
void registerPipelines();

} // namespace rpe
} // namespace mlir

#endif // RPE_PIPELINES_PIPELINES_H
