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
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

/// Rejects `text` (named `name`) where MLIR 22's parser would crash on it,
/// with an error on stderr.
static mlir::LogicalResult checkInput(const llvm::MemoryBuffer &buffer,
                                      llvm::StringRef name) {
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef()),
      llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  return mlir::rpe::rejectKnownParserCrashes(buffer.getBuffer(), name,
                                             &context);
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::rpe::registerAllDialects(registry);
  mlir::rpe::registerAllPasses();
  mlir::rpe::addVersionPrinter();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "rpe optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // Text the upstream parser crashes on gets an error instead. An input file
  // is checked, then read again by MlirOptMain; stdin can be read once: it is
  // checked and handed over as a buffer (what MlirOptMain does with the
  // streams after reading them). --show-dialects and --list-passes read no
  // input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, output, registry));
  // (As MlirOptMain does: a terminal on stdin is likely a mistake.)
  if (input == "-" && llvm::sys::Process::FileDescriptorIsDisplayed(0))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      mlir::openInputFile(input, &error);
  if (!buffer) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(checkInput(*buffer, input == "-" ? "<stdin>" : input)))
    return EXIT_FAILURE;
  if (input != "-")
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, output, registry));
  std::unique_ptr<llvm::ToolOutputFile> outputFile =
      mlir::openOutputFile(output, &error);
  if (!outputFile) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  if (mlir::failed(mlir::MlirOptMain(outputFile->os(), std::move(buffer),
                                     registry, config)))
    return EXIT_FAILURE;
  outputFile->keep();
  return EXIT_SUCCESS;
}
