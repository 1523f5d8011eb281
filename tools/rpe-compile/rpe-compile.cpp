//===- rpe-compile.cpp - ahead-of-time compiler for rpe modules -*- C++ -*-===//
//
//   rpe-compile in.mlir --target=cpu --emit=mlir|llvm|asm|obj|shared -o OUT
//               [--header OUT.h] [-O0..-O3] [--mcpu=native|NAME]
//   rpe-compile in.mlir --target=nvptx --chip=sm_80|sm_90|...
//               --emit=ptx|cubin|fatbin|mlir|llvm|asm|obj|shared -o OUT
//
//===----------------------------------------------------------------------===//

#include "rpe/Compiler/Compiler.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

namespace cl = llvm::cl;

static cl::OptionCategory category("rpe-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu, nvptx, or nvptx-emulated (the GPU kernels, "
                    "one thread per block, as CPU loops: for tests)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("What to emit: mlir, llvm, asm, obj or shared; with "
                  "--target=nvptx also the device code alone: ptx, cubin "
                  "or fatbin"),
         cl::init("obj"), cl::cat(category));
static cl::opt<std::string>
    chip("chip", cl::desc("GPU architecture for --target=nvptx"),
         cl::init("sm_80"), cl::cat(category));
static cl::opt<std::string> header("header",
                                   cl::desc("Also write a C header here"),
                                   cl::value_desc("file"), cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("Optimization level 0..3"),
                                  cl::Prefix, cl::init(2), cl::cat(category));
static cl::opt<unsigned>
    numThreads("num-threads",
               cl::desc("OpenMP threads for attention, at most 1024 (0: "
                        "sequential; otherwise the object needs libomp)"),
               cl::init(0), cl::cat(category));
static cl::opt<bool> reference("reference",
                               cl::desc("Unfused reference lowering of "
                                        "attention (materializes Lq×Lk)"),
                               cl::init(false), cl::cat(category));
static cl::opt<int64_t> tileQ("tile-q",
                              cl::desc("Attention query tile (--target=cpu)"),
                              cl::init(64), cl::cat(category));
static cl::opt<int64_t> tileK("tile-k",
                              cl::desc("Attention key tile (--target=cpu)"),
                              cl::init(64), cl::cat(category));
static cl::opt<bool> tensorCores(
    "tensor-cores",
    cl::desc("nvptx targets: f16 attention on tensor cores (mma.sync); "
             "--tensor-cores=false keeps the SIMT kernel"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> gpuKernelOptions(
    "gpu-kernel-options",
    cl::desc("--target=nvptx: the GPU kernels' shapes, as rpe-nvptx-pipeline "
             "options (block-rows, tile-k, mma-threads, mma-block-rows, "
             "mma-tile-k, mma-registers, mma-stage-views, mma-lazy-rescale, "
             "block-size, thread-tile-rows, thread-tile-columns), e.g. "
             "\"mma-threads=256\""),
    cl::init(""), cl::cat(category));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass of the pipeline (default: the "
             "input and the lowered result only)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> cpu("mcpu",
                                cl::desc("CPU: generic, native or a name"),
                                cl::init("generic"), cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  rpe::addVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv,
                              "rpe-compile: ahead-of-time compiler for rpe\n");

  DialectRegistry registry;
  rpe::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  Location cliLoc = FileLineColLoc::get(&context, "rpe-compile", 0, 0);

  rpe::CompileOptions options;
  options.target = target;
  options.chip = chip;
  options.optLevel = optLevel;
  options.cpu = cpu;
  options.numThreads = numThreads;
  options.reference = reference;
  options.tileQ = tileQ;
  options.tileK = tileK;
  options.tensorCores = tensorCores;
  options.gpuKernelOptions = gpuKernelOptions;
  options.verifyEach = verifyEach;
  std::optional<rpe::EmitKind> kind = rpe::parseEmitKind(emit);
  if (!kind) {
    emitError(cliLoc) << "unknown --emit=" << emit
                      << " (expected mlir, llvm, asm, obj, shared, ptx, cubin "
                         "or fatbin)";
    return 1;
  }
  options.emit = *kind;
  if (failed(rpe::checkOptions(options, cliLoc)))
    return 1;
  // The GPU kernel has tiles of its own (--gpu-kernel-options).
  if (options.target == "nvptx" &&
      (tileQ.getNumOccurrences() || tileK.getNumOccurrences())) {
    emitError(cliLoc) << "--tile-q and --tile-k are for --target=cpu; the "
                         "GPU kernel's tiles are --gpu-kernel-options "
                         "(e.g. \"mma-tile-k=16\")";
    return 1;
  }
  // Like opt with bitcode: binary output does not go to a terminal.
  bool binary = options.emit == rpe::EmitKind::Object ||
                options.emit == rpe::EmitKind::Cubin ||
                options.emit == rpe::EmitKind::Fatbin;
  if (binary && outputFile == "-" &&
      llvm::sys::Process::StandardOutIsDisplayed()) {
    emitError(cliLoc) << "not writing --emit=" << emit
                      << " (binary) to the terminal: use -o FILE (or -o - "
                         "with stdout redirected)";
    return 1;
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &error);
  if (!input) {
    emitError(cliLoc) << error;
    return 1;
  }
  if (failed(rpe::rejectKnownParserCrashes(
          input->getBuffer(), input->getBufferIdentifier(), &context)))
    return 1;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module || failed(rpe::prepareInputModule(*module)))
    return 1;

  // The header is generated before lowering and written after the
  // artifact: a failing compilation leaves neither behind.
  std::string headerText;
  if (!header.empty()) {
    std::string guard = "RPE_" + llvm::sys::path::stem(header).upper() + "_H";
    for (char &c : guard)
      if (!llvm::isAlnum(c))
        c = '_';
    llvm::raw_string_ostream os(headerText);
    if (failed(
            rpe::writeCHeader(*module, guard, os, options.target == "nvptx")))
      return 1;
  }

  if (failed(rpe::lowerToLLVMDialect(*module, options)) ||
      failed(rpe::emitArtifact(*module, options, outputFile)))
    return 1;
  if (!header.empty() &&
      failed(rpe::writeTextAtomically(header, headerText, cliLoc)))
    return 1;
  return 0;
}
