//===- Compiler.cpp - C API of the rpe compiler -----------------*- C++ -*-===//

#include "rpe-c/Compiler.h"

#include "rpe/Compiler/Compiler.h"
#include "rpe/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir;

struct RpeContext {
  MLIRContext context;
  explicit RpeContext(const DialectRegistry &registry) : context(registry) {
    context.printOpOnDiagnostic(false);
  }
};

namespace {

char *copyString(StringRef s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

/// Collects the diagnostics emitted while alive, rendered with source lines.
struct DiagnosticCapture {
  llvm::SourceMgr sourceMgr;
  std::string text;
  llvm::raw_string_ostream os{text};
  SourceMgrDiagnosticHandler handler;

  DiagnosticCapture(MLIRContext *context, StringRef source, StringRef name)
      : handler(sourceMgr, context, os) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  }

  void release(char **out) {
    if (!out)
      return;
    *out = text.empty() ? nullptr : copyString(text);
  }
};

OwningOpRef<ModuleOp> parse(DiagnosticCapture &capture, MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      capture.sourceMgr.getMemoryBuffer(capture.sourceMgr.getMainFileID());
  if (failed(rpe::rejectKnownParserCrashes(
          buffer->getBuffer(), buffer->getBufferIdentifier(), context)))
    return nullptr;
  return parseSourceFile<ModuleOp>(capture.sourceMgr, ParserConfig(context));
}

llvm::json::Value describeType(Type type) {
  std::string str;
  llvm::raw_string_ostream os(str);
  if (auto shaped = dyn_cast<RankedTensorType>(type)) {
    os << shaped.getElementType();
    llvm::json::Array shape;
    for (int64_t d : shaped.getShape())
      shape.push_back(ShapedType::isDynamic(d) ? int64_t(-1) : d);
    return llvm::json::Object{
        {"kind", "tensor"}, {"element", str}, {"shape", std::move(shape)}};
  }
  os << type;
  return llvm::json::Object{{"kind", "scalar"}, {"type", str}};
}

} // namespace

extern "C" {

const char *rpeVersion(void) { return rpe::getVersionString(); }

void rpeRegisterAllPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] { rpe::registerAllPasses(); });
}

RpeContext *rpeContextCreate(void) {
  DialectRegistry registry;
  rpe::registerCompilerDialects(registry);
  return new RpeContext(registry);
}

void rpeContextDestroy(RpeContext *context) { delete context; }

void rpeCompileOptionsInit(RpeCompileOptions *options) {
  options->target = "cpu";
  options->emit = "shared";
  options->opt_level = 2;
  options->cpu = "generic";
  options->num_threads = 0;
  options->reference = 0;
  options->tile_q = 64;
  options->tile_k = 64;
  options->chip = "sm_80";
  options->tensor_cores = 1;
  options->verify_each = 0;
  options->gpu_kernel_options = nullptr;
}

int rpeCompile(RpeContext *context, const char *text, size_t length,
               const char *sourceName, const RpeCompileOptions *options,
               const char *outputPath, const char *headerPath,
               char **diagnostics) {
  MLIRContext *ctx = &context->context;
  DiagnosticCapture capture(ctx, StringRef(text, length),
                            sourceName ? sourceName : "<input>");
  auto fail = [&] {
    capture.release(diagnostics);
    return 1;
  };
  Location loc =
      FileLineColLoc::get(ctx, sourceName ? sourceName : "<input>", 0, 0);
  rpe::CompileOptions opts;
  opts.target = options->target ? options->target : "cpu";
  opts.cpu = options->cpu ? options->cpu : "generic";
  if (options->opt_level < 0 || options->opt_level > 3) {
    emitError(loc) << "optimization level must be 0..3, got "
                   << options->opt_level;
    return fail();
  }
  opts.optLevel = options->opt_level;
  if (options->num_threads < 0) {
    emitError(loc) << "num_threads must be >= 0, got " << options->num_threads;
    return fail();
  }
  opts.numThreads = options->num_threads;
  opts.reference = options->reference != 0;
  opts.tileQ = options->tile_q;
  opts.tileK = options->tile_k;
  opts.chip = options->chip ? options->chip : "sm_80";
  opts.tensorCores = options->tensor_cores != 0;
  opts.verifyEach = options->verify_each != 0;
  opts.gpuKernelOptions =
      options->gpu_kernel_options ? options->gpu_kernel_options : "";
  std::optional<rpe::EmitKind> kind =
      rpe::parseEmitKind(options->emit ? options->emit : "");
  if (!kind) {
    emitError(loc) << "unknown emit kind '"
                   << (options->emit ? options->emit : "") << "'";
    return fail();
  }
  opts.emit = *kind;
  if (!outputPath) {
    emitError(loc) << "no output path";
    return fail();
  }
  if (failed(rpe::checkOptions(opts, loc)))
    return fail();
  OwningOpRef<ModuleOp> module = parse(capture, ctx);
  if (!module || failed(rpe::prepareInputModule(*module)))
    return fail();
  // The header is generated before lowering and written after the artifact.
  std::string headerText;
  if (headerPath) {
    llvm::raw_string_ostream os(headerText);
    if (failed(rpe::writeCHeader(*module, "RPE_COMPILED_MODULE_H", os,
                                 opts.target == "nvptx")))
      return fail();
  }
  if (failed(rpe::lowerToLLVMDialect(*module, opts)) ||
      failed(rpe::emitArtifact(*module, opts, outputPath)))
    return fail();
  if (headerPath &&
      failed(rpe::writeTextAtomically(headerPath, headerText, loc)))
    return fail();
  capture.release(diagnostics);
  return 0;
}

int rpeDescribeModule(RpeContext *context, const char *text, size_t length,
                      const char *sourceName, char **json, char **diagnostics) {
  MLIRContext *ctx = &context->context;
  DiagnosticCapture capture(ctx, StringRef(text, length),
                            sourceName ? sourceName : "<input>");
  OwningOpRef<ModuleOp> module = parse(capture, ctx);
  if (!module || failed(rpe::prepareInputModule(*module))) {
    capture.release(diagnostics);
    return 1;
  }
  llvm::json::Array functions;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal() ||
        func->hasAttr("rpe.shape_check_messages"))
      continue;
    llvm::json::Array args, results;
    for (Type t : func.getArgumentTypes())
      args.push_back(describeType(t));
    for (Type t : func.getResultTypes())
      results.push_back(describeType(t));
    llvm::json::Object entry{{"name", func.getSymName()},
                             {"arguments", std::move(args)},
                             {"results", std::move(results)}};
    if (auto check = func->getAttrOfType<FlatSymbolRefAttr>("rpe.shape_check"))
      if (auto checkFunc = module->lookupSymbol<func::FuncOp>(check.getAttr()))
        if (auto messages = checkFunc->getAttrOfType<ArrayAttr>(
                "rpe.shape_check_messages")) {
          llvm::json::Array list;
          for (Attribute m : messages)
            list.push_back(cast<StringAttr>(m).getValue());
          entry["shape_check"] = llvm::json::Object{
              {"function", check.getValue()}, {"messages", std::move(list)}};
        }
    functions.push_back(std::move(entry));
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(
      llvm::json::Object{{"functions", std::move(functions)}});
  *json = copyString(out);
  capture.release(diagnostics);
  return 0;
}

void rpeFreeString(char *string) { std::free(string); }

} // extern "C"
