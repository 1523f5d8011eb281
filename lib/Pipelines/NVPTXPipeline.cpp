//===- NVPTXPipeline.cpp - rpe-nvptx-pipeline -------------------*- C++ -*-===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Pipelines/Pipelines.h"

#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::rpe::buildNVPTXPipeline(OpPassManager &pm,
                                   const NVPTXPipelineOptions &options) {
  if (options.shapeChecks)
    pm.addPass(createRPEInsertShapeChecksPass());
  buildGPUKernelPasses(pm, options);
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  // Outlining, NVVM, host code calling mgpu*, device code to PTX/cubin.
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void mlir::rpe::buildGPUKernelPasses(OpPassManager &pm,
                                     const NVPTXPipelineOptions &options) {
  addFusionPasses(pm);
  // Attention: one SIMT kernel per op, nothing Lq×Lk.
  RPEGPUAttentionPassOptions attention;
  attention.blockRows = options.blockRows;
  attention.tileK = options.tileK;
  pm.addPass(createRPEGPUAttentionPass(attention));
  addToLinalgPasses(pm);
  if (options.emitCInterface)
    pm.addPass(createRPEEmitCInterfacePass());
  addBufferizePass(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Every other linalg op: parallel loops, then one thread per iteration.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  RPEGPUOffloadPassOptions offload;
  offload.blockSize = options.blockSize;
  offload.deallocate = options.deallocate;
  pm.addPass(createRPEGPUOffloadPass(offload));
}
