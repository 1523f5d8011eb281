//===- my-opt.cpp - an mlir-opt of another project, with rpe in it --------===//
//
// Like MLIR's examples/standalone: the upstream dialects, extensions and
// passes, plus the rpe dialect, its passes and its pipelines.
//
//===----------------------------------------------------------------------===//

#include "rpe/Conversion/Passes.h"
#include "rpe/Dialect/RPE/IR/RPEDialect.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Pipelines/Pipelines.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::rpe::RPEDialect>();
  mlir::registerAllPasses();
  mlir::rpe::registerRPEPasses();
  mlir::rpe::registerRPEConversionPasses();
  mlir::rpe::registerPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "my-opt: a consumer of rpe\n", registry));
}
