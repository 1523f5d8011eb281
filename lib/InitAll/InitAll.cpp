//===- InitAll.cpp - register everything rpe provides -----------*- C++ -*-===//

#include "rpe/InitAll.h"
#include "rpe/Conversion/Passes.h"
#include "rpe/Dialect/RPE/IR/RPEDialect.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Pipelines/Pipelines.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::rpe::registerAllDialects(DialectRegistry &registry) {
  registry.insert<RPEDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates gpu.module to LLVM IR in the pass.
  mlir::registerAllToLLVMIRTranslations(registry);
}

void mlir::rpe::registerAllPasses() {
  mlir::registerAllPasses();
  registerRPEConversionPasses();
  registerRPEPasses();
  registerPipelines();
}
