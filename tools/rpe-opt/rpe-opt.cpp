//===- rpe-opt.cpp - the rpe optimizer driver -------------------*- C++ -*-===//
//
// mlir-opt with the rpe dialect, rpe's passes and pipelines, and the upstream
// dialects and passes.
//
//===----------------------------------------------------------------------===//

#include "rpe/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::rpe::registerAllDialects(registry);
  mlir::rpe::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "rpe optimizer driver\n", registry));
}
