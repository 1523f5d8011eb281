//===- fuzz_capi.cpp - libFuzzer target: the C API on arbitrary text ------===//
//
// rpeDescribeModule and rpeCompile (to MLIR, so that no time goes into LLVM
// code generation) on the bytes as they are; failures must come back as
// diagnostics.
//
//===----------------------------------------------------------------------===//

#include "rpe-c/Compiler.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace {
RpeContext *context;
unsigned uses;
std::string outputPath;
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  outputPath = "/tmp/rpe-fuzz-capi-" + std::to_string(getpid()) + ".mlir";
  // The contexts the C API creates run passes on one thread: a thread pool
  // per compilation costs more than the compilation of a small input.
  mlir::registerMLIRContextCLOptions();
  const char *args[] = {"rpe-fuzz-capi", "--mlir-disable-threading"};
  llvm::cl::ParseCommandLineOptions(2, args);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context now and then: random inputs intern attributes.
  if (!context || ++uses > 2000) {
    if (context)
      rpeContextDestroy(context);
    context = rpeContextCreate();
    uses = 0;
  }
  const char *text = reinterpret_cast<const char *>(data);
  char *json = nullptr, *diagnostics = nullptr;
  rpeDescribeModule(context, text, size, "fuzz", &json, &diagnostics);
  rpeFreeString(json);
  rpeFreeString(diagnostics);
  RpeCompileOptions options;
  rpeCompileOptionsInit(&options);
  options.emit = "mlir";
  diagnostics = nullptr;
  rpeCompile(context, text, size, "fuzz", &options, outputPath.c_str(), nullptr,
             &diagnostics);
  rpeFreeString(diagnostics);
  std::remove(outputPath.c_str());
  return 0;
}
