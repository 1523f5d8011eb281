//===- rpe-opt.cpp - the rpe optimizer driver -------------------*- C++ -*-===//
//
// mlir-opt with the rpe dialect, rpe's passes and pipelines, and the upstream
// dialects and passes.
//
//===----------------------------------------------------------------------===//

#include "rpe/Compiler/Compiler.h"
#include "rpe/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::rpe::registerAllDialects(registry);
  mlir::rpe::registerAllPasses();
  mlir::rpe::addVersionPrinter();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "rpe optimizer driver\n", registry);
  // Text the upstream parser crashes on gets an error instead (input files;
  // stdin goes to the parser as it is).
  if (input != "-") {
    std::string error;
    if (std::unique_ptr<llvm::MemoryBuffer> buffer =
            mlir::openInputFile(input, &error)) {
      mlir::MLIRContext context;
      llvm::SourceMgr sourceMgr;
      llvm::StringRef text = buffer->getBuffer();
      sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
      mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
      if (mlir::failed(
              mlir::rpe::rejectKnownParserCrashes(text, input, &context)))
        return EXIT_FAILURE;
    }
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
