//===- fuzz_pipeline.cpp - libFuzzer target: text through rpe's passes ----===//
//
// Bytes as MLIR text: parse (and verify), then on one copy canonicalize,
// rpe-fuse-attention, rpe-tile-attention and convert-rpe-to-linalg, on
// another the whole rpe-cpu-pipeline (shape checks, fusion, the vector
// kernel, lowering to the LLVM dialect), and on a third the whole
// rpe-nvptx-pipeline to PTX (format=isa: LLVM's NVPTX backend, no ptxas),
// with the register-resident tensor-core kernel for inputs of odd size and
// the default kernels otherwise. Diagnostics are expected and
// dropped; only a crash, a sanitizer report or a verifier failure inside a
// pass (reported as a pass failure, not a crash) is a finding.
//
//===----------------------------------------------------------------------===//

#include "rpe/Compiler/Compiler.h"
#include "rpe/InitAll.h"
#include "rpe/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

using namespace mlir;

namespace {
/// A context with every dialect loaded; replaced every 2000 inputs
/// ($RPE_FUZZ_CONTEXT_USES) so that the attributes and types interned by
/// random inputs do not pile up. A small period finds state that outlives
/// its context while the sanitizer still knows the freed memory.
std::unique_ptr<MLIRContext> context;
unsigned uses = 0;

unsigned contextUses() {
  static const unsigned n = [] {
    const char *env = std::getenv("RPE_FUZZ_CONTEXT_USES");
    int value = env ? std::atoi(env) : 0;
    return value > 0 ? static_cast<unsigned>(value) : 2000u;
  }();
  return n;
}

MLIRContext &getContext() {
  if (!context || ++uses > contextUses()) {
    DialectRegistry registry;
    rpe::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
    context->disableMultithreading();
    context->printOpOnDiagnostic(false);
    context->printStackTraceOnDiagnostic(false);
    uses = 0;
  }
  return *context;
}

void runPipeline(ModuleOp module, StringRef pipeline) {
  PassManager pm(module->getContext());
  if (failed(parsePassPipeline(pipeline, pm)))
    llvm::report_fatal_error("fuzz_pipeline: bad pipeline");
  (void)pm.run(module);
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  rpe::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = getContext();
  // RPE_FUZZ_VERBOSE=1 prints the diagnostics (to study a reproducer).
  static const bool verbose = std::getenv("RPE_FUZZ_VERBOSE") != nullptr;
  ScopedDiagnosticHandler drop(&ctx, [](Diagnostic &diag) {
    if (verbose)
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  StringRef text(reinterpret_cast<const char *>(data), size);
  // Known crashes of the upstream parser are rejected first, as rpe's tools
  // do.
  if (failed(rpe::rejectKnownParserCrashes(text, "fuzz", &ctx)))
    return 0;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&ctx));
  if (!module)
    return 0;
  OwningOpRef<ModuleOp> copy = module->clone();
  runPipeline(*copy, "builtin.module(canonicalize,rpe-fuse-attention,"
                     "rpe-tile-attention,convert-rpe-to-linalg)");
  OwningOpRef<ModuleOp> gpuCopy = module->clone();
  runPipeline(*module, "builtin.module(rpe-cpu-pipeline)");
  runPipeline(*gpuCopy, size % 2 ? "builtin.module(rpe-nvptx-pipeline{"
                                   "format=isa mma-registers=1})"
                                 : "builtin.module(rpe-nvptx-pipeline{"
                                   "format=isa})");
  return 0;
}
