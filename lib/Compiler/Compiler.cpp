//===- Compiler.cpp - ahead-of-time compilation of rpe modules --*- C++ -*-===//

#include "rpe/Compiler/Compiler.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Utils/TypeUtils.h"
#include "rpe/InitAll.h"
#include "rpe/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <dlfcn.h>
#include <memory>
#include <utility>

using namespace mlir;
using namespace mlir::rpe;

const char *mlir::rpe::getVersionString() {
  return "rpe " RPE_VERSION " (LLVM " LLVM_VERSION_STRING ")";
}

void mlir::rpe::addVersionPrinter() {
  llvm::cl::AddExtraVersionPrinter(
      [](raw_ostream &os) { os << getVersionString() << '\n'; });
}

std::optional<EmitKind> mlir::rpe::parseEmitKind(StringRef name) {
  return llvm::StringSwitch<std::optional<EmitKind>>(name)
      .Case("mlir", EmitKind::MLIR)
      .Case("llvm", EmitKind::LLVM)
      .Case("asm", EmitKind::Asm)
      .Case("obj", EmitKind::Object)
      .Case("shared", EmitKind::Shared)
      .Case("ptx", EmitKind::PTX)
      .Case("cubin", EmitKind::Cubin)
      .Case("fatbin", EmitKind::Fatbin)
      .Default(std::nullopt);
}

void mlir::rpe::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

/// Sets the GPU kernels' shapes of `pipeline` from
/// `options.gpuKernelOptions` and checks the result; errors at `loc`.
static LogicalResult applyGPUKernelOptions(const CompileOptions &options,
                                           NVPTXPipelineOptions &pipeline,
                                           Location loc) {
  StringRef text = options.gpuKernelOptions;
  if (!text.empty()) {
    NVPTXPipelineOptions parsed;
    std::string message;
    llvm::raw_string_ostream os(message);
    if (failed(parsed.parseFromString(text, os)))
      return emitError(loc) << "invalid GPU kernel options '" << text
                            << "': " << StringRef(message).trim();
    // The target, format and levels have options of their own.
    StringRef other;
    auto setHere = [&](const auto &option) {
      if (other.empty() && option.hasValue())
        other = option.ArgStr;
    };
    setHere(parsed.chip);
    setHere(parsed.features);
    setHere(parsed.format);
    setHere(parsed.optLevel);
    setHere(parsed.cudaPath);
    setHere(parsed.tensorCores);
    setHere(parsed.emitCInterface);
    setHere(parsed.deallocate);
    setHere(parsed.shapeChecks);
    if (!other.empty())
      return emitError(loc)
             << "GPU kernel options set block-rows, tile-k, mma-threads, "
                "mma-block-rows, mma-tile-k, mma-registers, mma-stage-views, "
                "mma-lazy-rescale, block-size, thread-tile-rows and "
                "thread-tile-columns only, got '"
             << other << "'";
    pipeline.blockRows = parsed.blockRows;
    pipeline.tileK = parsed.tileK;
    pipeline.mmaThreads = parsed.mmaThreads;
    pipeline.mmaBlockRows = parsed.mmaBlockRows;
    pipeline.mmaTileK = parsed.mmaTileK;
    pipeline.mmaRegisters = parsed.mmaRegisters;
    pipeline.mmaStageViews = parsed.mmaStageViews;
    pipeline.mmaLazyRescale = parsed.mmaLazyRescale;
    pipeline.blockSize = parsed.blockSize;
    pipeline.threadTileRows = parsed.threadTileRows;
    pipeline.threadTileColumns = parsed.threadTileColumns;
  }
  return verifyNVPTXPipelineOptions(
      pipeline, [&](const Twine &message) { return emitError(loc, message); });
}

LogicalResult mlir::rpe::checkOptions(const CompileOptions &options,
                                      Location loc) {
  if (options.target != "cpu" && options.target != "nvptx" &&
      options.target != "nvptx-emulated")
    return emitError(loc) << "unknown target '" << options.target
                          << "' (expected 'cpu', 'nvptx' or 'nvptx-emulated')";
  bool deviceCode = options.emit == EmitKind::PTX ||
                    options.emit == EmitKind::Cubin ||
                    options.emit == EmitKind::Fatbin;
  if (deviceCode && options.target != "nvptx")
    return emitError(loc) << "--emit=ptx, cubin and fatbin need "
                             "--target=nvptx";
  if (options.target == "nvptx") {
    StringRef chip = options.chip;
    if (!isKnownChip(chip))
      return emitError(loc)
             << "unknown --chip=" << chip
             << " (expected sm_70 or later, e.g. sm_80, sm_90, sm_90a)";
    if (options.reference)
      return emitError(loc) << "--reference is not available for "
                               "--target=nvptx";
    NVPTXPipelineOptions pipeline;
    pipeline.chip = options.chip;
    if (failed(applyGPUKernelOptions(options, pipeline, loc)))
      return failure();
  } else if (options.target == "nvptx-emulated") {
    NVPTXPipelineOptions pipeline;
    if (failed(applyGPUKernelOptions(options, pipeline, loc)))
      return failure();
  } else if (!options.gpuKernelOptions.empty()) {
    return emitError(loc) << "GPU kernel options need --target=nvptx or "
                             "nvptx-emulated";
  }
  if (options.optLevel > 3)
    return emitError(loc) << "optimization level must be 0..3, got "
                          << options.optLevel;
  if (options.numThreads > kMaxCPUThreads)
    return emitError(loc) << "--num-threads must be at most " << kMaxCPUThreads
                          << ", got " << options.numThreads;
  if (options.tileQ <= 0 || options.tileK <= 0)
    return emitError(loc) << "attention tile sizes must be positive, got "
                          << options.tileQ << " and " << options.tileK;
  return success();
}

/// Whether `c` continues an MLIR bare identifier.
static bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// Position of the next token at or after `p`: skips what MLIR's lexer
/// skips (whitespace, NUL bytes inside the buffer, `//` comments).
static size_t skipTrivia(StringRef text, size_t p) {
  while (p < text.size()) {
    char c = text[p];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0') {
      ++p;
    } else if (text.substr(p).starts_with("//")) {
      // MLIR's lexer ends a comment at '\r' too: what follows is code.
      p = text.find_first_of("\n\r", p);
      if (p == StringRef::npos)
        return text.size();
    } else {
      break;
    }
  }
  return p;
}

/// Whether the decimal digits `digits` (of a negative number if `negative`)
/// are an int64: the parser's DenseI64ArrayAttr fails on larger ones too.
static bool fitsInt64(StringRef digits, bool negative) {
  digits = digits.ltrim('0');
  StringRef limit = negative ? "9223372036854775808" : "9223372036854775807";
  return digits.size() < limit.size() ||
         (digits.size() == limit.size() && digits <= limit);
}

/// The end of the string literal starting at `p` (a `"`), escapes skipped:
/// the position after its closing quote (the text's end if unterminated).
static size_t skipString(StringRef text, size_t p) {
  for (++p; p < text.size() && text[p] != '"'; ++p)
    if (text[p] == '\\')
      ++p;
  return std::min(p + 1, text.size());
}

/// Whether a well-formed `[` list `]` of what `element` reads starts at `p`:
/// `element(q)` is the position after the element at q (q inside the text),
/// or npos when none starts there.
static bool isList(StringRef text, size_t p,
                   function_ref<size_t(size_t)> element) {
  size_t n = text.size();
  if (p >= n || text[p] != '[')
    return false;
  p = skipTrivia(text, p + 1);
  if (p < n && text[p] == ']')
    return true;
  while (p < n) {
    p = element(p);
    if (p == StringRef::npos)
      return false;
    p = skipTrivia(text, p);
    if (p < n && text[p] == ']')
      return true;
    if (p >= n || text[p] != ',')
      return false;
    p = skipTrivia(text, p + 1);
  }
  return false;
}

/// Whether a well-formed `[` integer list `]` starts at `p` (MLIR's
/// DenseI64ArrayAttr syntax): `[]`, `[1]`, `[0, -2, 3]`, each an int64.
static bool isIntegerList(StringRef text, size_t p) {
  return isList(text, p, [&](size_t q) -> size_t {
    size_t n = text.size();
    bool negative = text[q] == '-';
    if (negative)
      q = skipTrivia(text, q + 1);
    size_t digits = q;
    while (q < n && llvm::isDigit(text[q]))
      ++q;
    if (q == digits || (q < n && isIdentifierChar(text[q])) ||
        !fitsInt64(text.slice(digits, q), negative))
      return StringRef::npos;
    return q;
  });
}

/// Whether a `[` list of string literals `]` starts at `p`: `[]`,
/// `["parallel", "reduction"]`.
static bool isStringList(StringRef text, size_t p) {
  return isList(text, p, [&](size_t q) {
    return text[q] == '"' ? skipString(text, q) : StringRef::npos;
  });
}

/// The deepest bracket nesting rejectKnownParserCrashes lets through. MLIR
/// 22's parser recurses per level: on an 8 MiB stack it overflowed at 2100
/// nested regions in generic form (two brackets each), 6300 dictionaries,
/// 6800 arrays or parentheses, 16000 nested types (rpe-opt, release and
/// ASan builds alike).
static constexpr unsigned kMaxNestingDepth = 1000;

LogicalResult mlir::rpe::rejectKnownParserCrashes(StringRef text,
                                                  StringRef bufferName,
                                                  MLIRContext *context) {
  auto errorAt = [&](size_t start) {
    StringRef before = text.take_front(start);
    unsigned line = before.count('\n') + 1;
    size_t lineStart = before.rfind('\n');
    unsigned column =
        start - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
    return emitError(FileLineColLoc::get(context, bufferName, line, column));
  };
  // Token by token (string literals and comments skipped): `array` `<`
  // `index`, whatever trivia separates them; and the first `permutation` /
  // `dimensions` after `linalg.transpose` / `broadcast` / `reduce` in
  // custom form, which must be `= [` integers `]`; the properties of a
  // custom-form linalg op, which must be a dictionary.
  bool expectArray = false;
  // Brackets open at p: `->` and `>=` close nothing (a stray closer only
  // lowers the count, never below 0).
  unsigned depth = 0;
  size_t n = text.size();
  // The head of a custom-form linalg op (from its name to `ins`, `outs`, an
  // operand, a `:` or a closing bracket), at this depth: there
  // parseCommonStructuredOpParts takes `<` properties `>` and casts them to
  // a dictionary unchecked. `atOpName`: the previous token is the op's name.
  constexpr unsigned kNoHead = ~0u;
  unsigned headDepth = kNoHead;
  StringRef headOp;
  bool atOpName = false;
  // Attribute aliases defined so far (a use must follow the definition):
  // whether each names a dictionary.
  llvm::StringMap<bool> dictionaryAliases;
  // The alias whose definition is being read (until its brackets close),
  // the aliases whose dictionary has an `iterator_types` entry that is not
  // a list of strings, and whether each array alias is a list of strings.
  StringRef aliasDefinition;
  llvm::StringSet<> badIteratorAliases;
  llvm::StringMap<bool> stringListAliases;
  // The name of the alias used at q (a `#`).
  auto aliasAt = [&](size_t q) {
    size_t end = q + 1;
    while (end < n && isIdentifierChar(text[end]))
      ++end;
    return text.slice(q + 1, end);
  };
  // Whether the attribute at q is a dictionary: `{`, or an alias of one.
  auto isDictionary = [&](size_t q) {
    if (q < n && text[q] == '{')
      return true;
    if (q >= n || text[q] != '#')
      return false;
    return dictionaryAliases.lookup(aliasAt(q));
  };
  for (size_t p = skipTrivia(text, 0); p < n; p = skipTrivia(text, p)) {
    char c = text[p];
    if (c == '"') { // a string literal, with escapes
      atOpName = false;
      p = skipString(text, p);
      continue;
    }
    if (!isIdentifierChar(c)) {
      StringRef rest = text.substr(p);
      if (rest.starts_with("->") || rest.starts_with(">=")) {
        p += 2;
        continue;
      }
      bool afterOpName = std::exchange(atOpName, false);
      if (depth == headDepth) {
        if (c == '<' && (afterOpName || !isIdentifierChar(text[p - 1]))) {
          if (!isDictionary(skipTrivia(text, p + 1)))
            return errorAt(p)
                   << "expected a dictionary of properties ('<{...}>') here: "
                      "MLIR 22's parser of custom-form linalg ops crashes on "
                      "any other attribute";
          headDepth = kNoHead;
        } else if (c == '%' || c == '^' || c == ':' || c == ')' || c == ']' ||
                   c == '}' || c == '>') {
          headDepth = kNoHead;
        }
      }
      if (c == '(' || c == '[' || c == '{' || c == '<') {
        if (++depth > kMaxNestingDepth)
          return errorAt(p) << "brackets nested more than " << kMaxNestingDepth
                            << " deep: MLIR 22's parser recurses per level and "
                               "would overflow the stack";
      } else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0) {
        if (--depth == 0)
          aliasDefinition = StringRef();
      }
      ++p;
      continue;
    }
    size_t start = p;
    while (p < n && isIdentifierChar(text[p]))
      ++p;
    StringRef word = text.slice(start, p);
    char before = start > 0 ? text[start - 1] : ' ';
    atOpName = false;
    if (before == '#' && depth == 0) { // an alias definition?
      size_t q = skipTrivia(text, p);
      if (q < n && text[q] == '=' && !text.substr(q).starts_with("==")) {
        size_t value = skipTrivia(text, q + 1);
        dictionaryAliases[word] = isDictionary(value);
        if (value < n && text[value] == '[')
          stringListAliases[word] = isStringList(text, value);
        if (value < n && text[value] == '#') { // an alias of an alias
          StringRef other = aliasAt(value);
          if (auto it = stringListAliases.find(other);
              it != stringListAliases.end())
            stringListAliases[word] = it->second;
          if (badIteratorAliases.contains(other))
            badIteratorAliases.insert(word);
        }
        aliasDefinition = word;
      }
    }
    // linalg.generic's custom parser reads `iterator_types` as strings
    // (getAsValueRange<StringAttr>, unchecked casts): any other element
    // crashes it. Its trait dictionary is the head's first attribute,
    // written out or an alias.
    bool inGenericHead = headOp == "linalg.generic" && headDepth != kNoHead;
    if (word == "iterator_types" && before != '#' &&
        (inGenericHead || !aliasDefinition.empty())) {
      size_t q = skipTrivia(text, p);
      if (q < n && text[q] == '=' && !text.substr(q).starts_with("==")) {
        // Anything but an array (written out or an alias) is an error the
        // parser reports.
        size_t value = skipTrivia(text, q + 1);
        bool strings =
            value >= n || text[value] != '[' || isStringList(text, value);
        if (value < n && text[value] == '#') {
          auto alias = stringListAliases.find(aliasAt(value));
          strings = alias == stringListAliases.end() || alias->second;
        }
        if (!strings && inGenericHead)
          return errorAt(start)
                 << "expected 'iterator_types = [' strings ']' in a "
                    "custom-form linalg.generic (MLIR 22's parser crashes on "
                    "any other element)";
        if (!strings)
          badIteratorAliases.insert(aliasDefinition);
      }
    }
    if (before == '#' && inGenericHead && depth == headDepth &&
        badIteratorAliases.contains(word))
      return errorAt(start - 1)
             << "expected 'iterator_types = [' strings ']' in the trait #"
             << word
             << " of a custom-form linalg.generic (MLIR 22's parser crashes "
                "on any other element)";
    if (depth == headDepth && (word == "ins" || word == "outs"))
      headDepth = kNoHead;
    if (word.starts_with("linalg.") && before != '#' && before != '!') {
      headDepth = depth;
      headOp = word;
      atOpName = true;
    }
    if (word == "linalg.transpose" || word == "linalg.broadcast" ||
        word == "linalg.reduce") {
      expectArray = true;
      continue;
    }
    if (expectArray && (word == "permutation" || word == "dimensions")) {
      expectArray = false;
      size_t q = skipTrivia(text, p);
      if (q < n && text[q] == '=' &&
          isIntegerList(text, skipTrivia(text, q + 1)))
        continue;
      return errorAt(start)
             << "expected '" << word
             << " = [' 64-bit integers ']' (MLIR 22's parser crashes on a "
                "malformed one)";
    }
    if (word != "array")
      continue;
    size_t q = skipTrivia(text, p);
    if (q >= n || text[q] != '<')
      continue;
    q = skipTrivia(text, q + 1);
    if (!text.substr(q).starts_with("index") ||
        (q + 5 < n && isIdentifierChar(text[q + 5])))
      continue;
    return errorAt(start)
           << "dense arrays of 'index' (array<index...>) are not supported: "
              "MLIR 22's parser crashes on them; use i64";
  }
  return success();
}

LogicalResult mlir::rpe::prepareInputModule(ModuleOp module) {
  WalkResult walk = module.getBody()->walk([](ModuleOp nested) {
    nested.emitError()
        << "nested modules are not supported: rpe compiles the functions of "
           "the top-level module";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  PassManager pm(module->getContext());
  pm.addPass(createRPEInsertShapeChecksPass());
  return pm.run(module);
}

/// A float type in the types of `op` that the LLVM dialect has no
/// equivalent for (the 8-, 6- and 4-bit formats), or null.
static FloatType findNonLLVMFloat(Operation *op) {
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (FloatType f = rpe::findNestedType<FloatType>(type, [](FloatType f) {
          return !LLVM::isCompatibleFloatingPointType(f);
        }))
      return f;
  return {};
}

/// Anything but the LLVM dialect (and what `alsoTranslates` accepts) left
/// after a pipeline is an op it cannot lower: an error naming `target`, and
/// the element type that kept it, if that is one LLVM lacks.
static LogicalResult
checkLowered(ModuleOp module, StringRef target,
             function_ref<bool(Operation *)> alsoTranslates) {
  WalkResult walk = module.walk([&](Operation *op) {
    if (isa<ModuleOp>(op) || isa<LLVM::LLVMDialect>(op->getDialect()) ||
        alsoTranslates(op))
      return WalkResult::advance();
    InFlightDiagnostic diag = op->emitError()
                              << "cannot lower '" << op->getName()
                              << "' to the LLVM dialect for " << target;
    // (tf32 is rpe-check-llvm-types' error, before the pipeline.)
    if (FloatType f = findNonLLVMFloat(op))
      diag << ": LLVM has no " << f
           << " arithmetic or conversions: only loads, stores and copies of "
              "it compile";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// Without verification after every pass, the lowered module is verified
/// once before it is translated.
static LogicalResult verifyLowered(ModuleOp module,
                                   const CompileOptions &options) {
  return success(options.verifyEach || succeeded(verify(module)));
}

/// rpe-nvptx-pipeline with the device code in the format `options.emit`
/// asks for. gpu-module-to-binary can report an error (a missing libdevice)
/// and still succeed: any error diagnostic fails the compilation.
static LogicalResult lowerForNVPTX(ModuleOp module,
                                   const CompileOptions &options) {
  MLIRContext *ctx = module->getContext();
  PassManager pm(ctx);
  NVPTXPipelineOptions pipeline;
  pipeline.chip = options.chip;
  pipeline.optLevel = options.optLevel;
  pipeline.format = options.emit == EmitKind::PTX     ? "isa"
                    : options.emit == EmitKind::Cubin ? "bin"
                                                      : "fatbin";
  pipeline.tensorCores = options.tensorCores;
  if (failed(applyGPUKernelOptions(options, pipeline, module.getLoc())))
    return failure();
  buildNVPTXPipeline(pm, pipeline);
  pm.enableVerifier(options.verifyEach);
  bool sawError = false;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        sawError = true;
      return failure(); // and on to the outer handler
    });
    result = pm.run(module);
  }
  if (failed(result) || sawError || failed(verifyLowered(module, options)))
    return failure();
  // gpu.launch_func becomes mgpu* calls in the translation to LLVM IR.
  if (failed(checkLowered(module, "NVPTX", [](Operation *op) {
        return isa<gpu::BinaryOp, gpu::LaunchFuncOp>(op);
      })))
    return failure();
  // PTX is assembled later (by the driver or the user's ptxas): catch the
  // math functions that libdevice should have provided now.
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      StringRef code = object.getObject().getValue();
      SmallVector<StringRef> lines;
      code.split(lines, '\n');
      bool unresolved = llvm::any_of(lines, [](StringRef line) {
        return line.starts_with(".extern .func") && line.contains("__nv_");
      });
      if (object.getFormat() == gpu::CompilationTarget::Assembly && unresolved)
        return emitError(module.getLoc())
               << "the device code calls libdevice functions that were not "
                  "linked: no nvvm/libdevice/libdevice.10.bc under the CUDA "
                  "toolkit '"
               << resolveCUDAPath("") << "' (set CUDA_ROOT)";
    }
  return success();
}

LogicalResult mlir::rpe::lowerToLLVMDialect(ModuleOp module,
                                            const CompileOptions &options) {
  if (options.target == "nvptx")
    return lowerForNVPTX(module, options);
  PassManager pm(module->getContext());
  CPUPipelineOptions pipeline;
  // The attention kernel's vectors match the target CPU's registers.
  pipeline.targetCPU = options.cpu;
  pipeline.numThreads = options.numThreads;
  pipeline.reference = options.reference;
  pipeline.tileQ = options.tileQ;
  pipeline.tileK = options.tileK;
  // The GPU kernels, one thread per block, run as loops on the CPU.
  pipeline.gpuEmulation = options.target == "nvptx-emulated";
  pipeline.gpuTensorCores = options.tensorCores;
  if (pipeline.gpuEmulation) {
    // The kernels' shapes; the emulation runs one thread per block whatever
    // the thread counts say.
    NVPTXPipelineOptions gpu;
    if (failed(applyGPUKernelOptions(options, gpu, module.getLoc())))
      return failure();
    pipeline.gpuTileK = gpu.tileK;
    pipeline.gpuMmaBlockRows = gpu.mmaBlockRows;
    pipeline.gpuMmaTileK = gpu.mmaTileK;
    pipeline.gpuMmaRegisters = gpu.mmaRegisters;
    pipeline.gpuMmaStageViews = gpu.mmaStageViews;
    pipeline.gpuMmaLazyRescale = gpu.mmaLazyRescale;
    pipeline.gpuThreadTileRows = gpu.threadTileRows;
    pipeline.gpuThreadTileColumns = gpu.threadTileColumns;
  }
  // A shared library links librpe_cpu_runtime.a: its buffers come from the
  // allocation cache. Objects and IR call malloc/free, which need nothing.
  pipeline.cacheAllocations = options.emit == EmitKind::Shared;
  buildCPUPipeline(pm, pipeline);
  pm.enableVerifier(options.verifyEach);
  if (failed(pm.run(module)) || failed(verifyLowered(module, options)))
    return failure();
  // OpenMP ops (num-threads > 0) translate to LLVM IR as they are.
  return checkLowered(module, "the CPU", [](Operation *op) {
    return isa<omp::OpenMPDialect>(op->getDialect());
  });
}

namespace {

/// The host or named CPU and its features.
struct CPUSpec {
  std::string name;
  std::string features;
};

CPUSpec resolveCPU(StringRef cpu) {
  if (cpu != "native")
    return {cpu.str(), ""};
  llvm::SubtargetFeatures features;
  for (auto &f : llvm::sys::getHostCPUFeatures())
    features.AddFeature(f.first(), f.second);
  return {llvm::sys::getHostCPUName().str(), features.getString()};
}

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CompileOptions &options, Location loc) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << "no LLVM target for " << triple.str() << ": " << error;
    return nullptr;
  }
  CPUSpec cpu = resolveCPU(options.cpu);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (cpu.name != "generic" &&
      (!subtarget || !subtarget->isCPUStringValid(cpu.name))) {
    emitError(loc) << "unknown CPU '" << options.cpu << "' for "
                   << triple.str();
    return nullptr;
  }
  llvm::CodeGenOptLevel level = llvm::CodeGenOpt::getLevel(options.optLevel)
                                    .value_or(llvm::CodeGenOptLevel::Default);
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu.name, cpu.features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!tm)
    emitError(loc) << "cannot create a target machine for " << triple.str();
  return tm;
}

/// Finds the C compiler driver used to link shared libraries.
std::optional<std::string> findLinkerDriver() {
  for (StringRef name : {"cc", "gcc", "clang", "clang-22"})
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  return std::nullopt;
}

/// Flushes `out` and keeps it, or reports the write error (a full disk, a
/// closed pipe) at `loc` and discards it. The stream's error is cleared
/// either way: with an error left in it, its destructor aborts the process.
LogicalResult keepOutput(llvm::ToolOutputFile &out, StringRef path,
                         Location loc) {
  out.os().flush();
  if (std::error_code ec = out.os().error()) {
    out.os().clear_error();
    return emitError(loc) << "cannot write '"
                          << (path == "-" ? "<stdout>" : path)
                          << "': " << ec.message();
  }
  out.keep();
  return success();
}

/// A new file in the system's temporary directory (`prefix`-XXXXXX.`suffix`)
/// in `path`, or an error at `loc`.
LogicalResult createTemporary(StringRef prefix, StringRef suffix,
                              SmallVectorImpl<char> &path, Location loc) {
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
    return emitError(loc) << "cannot create a temporary file: "
                          << ec.message();
  return success();
}

/// Writes the contents of the file `from` into the existing special file `to`
/// (a device or a FIFO), which is opened and written, not replaced.
LogicalResult copyInto(StringRef from, StringRef to, Location loc) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(from, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "cannot read '" << from
                          << "': " << buffer.getError().message();
  std::error_code ec;
  llvm::raw_fd_ostream os(to, ec, llvm::sys::fs::OF_None);
  if (ec)
    return emitError(loc) << "cannot write '" << to << "': " << ec.message();
  os << (*buffer)->getBuffer();
  os.close();
  if ((ec = os.error())) {
    os.clear_error();
    return emitError(loc) << "cannot write '" << to << "': " << ec.message();
  }
  return success();
}

/// LLVM's default -O`optLevel` pipeline for `tm`, as upstream's
/// makeOptimizingTransformer builds it, with LLVM's loop unrolling off for
/// the GPU emulation: its kernels are one thread's loops over the 32 lanes of
/// every warp operation, which LLVM would unroll (with AVX-512 tuning that
/// took 32 of the 44 s of optimization for one D = 128 kernel) for no gain
/// in a test.
LogicalResult optimizeModule(llvm::Module &module, llvm::TargetMachine *tm,
                             unsigned optLevel, bool unrollLoops,
                             Location loc) {
  const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  if (optLevel >= std::size(levels))
    return emitError(loc) << "optimization level must be 0..3, got "
                          << optLevel;
  const llvm::OptimizationLevel &level = levels[optLevel];
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = unrollLoops;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
  return success();
}

LogicalResult emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm,
                              llvm::CodeGenFileType kind, StringRef path,
                              Location loc) {
  std::error_code ec;
  auto out = std::make_unique<llvm::ToolOutputFile>(
      path, ec,
      kind == llvm::CodeGenFileType::ObjectFile ? llvm::sys::fs::OF_None
                                                : llvm::sys::fs::OF_Text);
  if (ec)
    return emitError(loc) << "cannot open '" << path << "': " << ec.message();
  // Objects are written with seeks: to a pipe through a buffer (as llc).
  llvm::raw_pwrite_stream *os = &out->os();
  std::unique_ptr<llvm::buffer_ostream> buffered;
  if (!out->os().supportsSeeking()) {
    buffered = std::make_unique<llvm::buffer_ostream>(*os);
    os = buffered.get();
  }
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, *os, nullptr, kind))
    return emitError(loc) << "the target cannot emit this file type";
  pm.run(module);
  buffered.reset();
  return keepOutput(*out, path, loc);
}

/// The directory of rpe's runtime library `fileName` (librpe_cuda_runtime.so,
/// librpe_cpu_runtime.a): next to the shared library that holds this code
/// (librpe-c.so, in an install tree or the Python package), in the lib/
/// beside the executable's bin/ (rpe-compile), in the install prefix, else in
/// the build tree.
std::string findRuntimeLibraryDir(StringRef fileName) {
  SmallVector<std::string> candidates;
  auto addBinaryDir = [&](StringRef binary) {
    SmallString<256> dir(binary);
    llvm::sys::path::remove_filename(dir);
    candidates.push_back(dir.str().str());
    llvm::sys::path::append(dir, "..", "lib");
    candidates.push_back(dir.str().str());
  };
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&findRuntimeLibraryDir), &info) &&
      info.dli_fname && llvm::sys::path::is_absolute(info.dli_fname))
    addBinaryDir(info.dli_fname);
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  if (!exe.empty())
    addBinaryDir(exe);
  candidates.push_back(RPE_INSTALL_LIBRARY_DIR);
  candidates.push_back(RPE_RUNTIME_LIBRARY_DIR);
  for (const std::string &dir : candidates) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, fileName);
    if (llvm::sys::fs::exists(path)) {
      SmallString<256> real;
      if (!llvm::sys::fs::real_path(dir, real))
        return real.str().str();
      return dir;
    }
  }
  return RPE_RUNTIME_LIBRARY_DIR;
}

LogicalResult linkShared(StringRef objectPath, StringRef outputPath,
                         bool needsRunnerUtils, bool needsOpenMP,
                         bool needsCPURuntime, bool needsCudaRuntime,
                         Location loc) {
  std::optional<std::string> driver = findLinkerDriver();
  if (!driver)
    return emitError(loc) << "--emit=shared needs a C compiler driver (cc, "
                             "gcc or clang) on PATH to link";
  // -Bsymbolic: the library's calls to its own functions bind to them, so
  // that a function named like a symbol the process already has (`erf` in
  // libm) is not interposed by it.
  SmallVector<std::string> args = {*driver, "-shared",        "-Wl,-Bsymbolic",
                                   "-o",    outputPath.str(), objectPath.str(),
                                   "-lm"};
  if (needsRunnerUtils || needsOpenMP) {
    std::string libDir = RPE_LLVM_LIBRARY_DIR;
    args.push_back("-L" + libDir);
    args.push_back("-Wl,-rpath," + libDir);
    if (needsRunnerUtils)
      args.push_back("-lmlir_c_runner_utils");
    if (needsOpenMP)
      args.push_back("-lomp");
  }
  if (needsCPURuntime) {
    // The allocation cache, linked in: the library needs nothing more.
    SmallString<256> archive(findRuntimeLibraryDir("librpe_cpu_runtime.a"));
    llvm::sys::path::append(archive, "librpe_cpu_runtime.a");
    if (!llvm::sys::fs::exists(archive))
      return emitError(loc) << "rpe's CPU runtime '" << archive
                            << "' is missing (the build or install of rpe is "
                               "incomplete)";
    args.push_back(archive.str().str());
  }
  if (needsCudaRuntime) {
    std::string libDir = findRuntimeLibraryDir("librpe_cuda_runtime.so");
    args.push_back("-L" + libDir);
    args.push_back("-Wl,-rpath," + libDir);
    args.push_back("-lrpe_cuda_runtime");
  }
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*driver, argRefs, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0)
    return emitError(loc) << "linking '" << outputPath << "' with " << *driver
                          << " failed (exit " << rc << ")"
                          << (message.empty() ? "" : ": ") << message;
  return success();
}

} // namespace

LogicalResult
mlir::rpe::writeAtomically(StringRef path, Location loc,
                           function_ref<LogicalResult(StringRef)> write) {
  if (path == "-")
    return write(path);
  // A device, a FIFO or another special file (/dev/null, /dev/stdout) is
  // written through, never replaced by a regular file (as root, renaming
  // onto /dev/null would do that): the output goes to a temporary file,
  // which is then copied into it.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      !llvm::sys::fs::is_regular_file(status) &&
      !llvm::sys::fs::is_directory(status)) {
    SmallString<256> tmp;
    if (failed(createTemporary("rpe-output", "", tmp, loc)))
      return failure();
    llvm::FileRemover remover(tmp);
    if (failed(write(tmp)))
      return failure();
    return copyInto(tmp, path, loc);
  }
  SmallString<256> tmp;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tmp))
    return emitError(loc) << "cannot write '" << path << "': " << ec.message();
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover remover(tmp);
  if (failed(write(tmp)))
    return failure();
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return emitError(loc) << "cannot write '" << path << "': " << ec.message();
  remover.releaseFile();
  return success();
}

LogicalResult mlir::rpe::writeTextAtomically(StringRef path, StringRef text,
                                             Location loc) {
  return writeAtomically(path, loc, [&](StringRef tmp) -> LogicalResult {
    std::error_code ec;
    llvm::ToolOutputFile out(tmp, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return emitError(loc) << "cannot open '" << tmp << "': " << ec.message();
    out.os() << text;
    return keepOutput(out, path, loc);
  });
}

static LogicalResult emitArtifactTo(ModuleOp module,
                                    const CompileOptions &options,
                                    StringRef outputPath);

/// Writes the device code (PTX, cubin or fatbin) of the module's one
/// gpu.binary to `outputPath`.
static LogicalResult writeDeviceCode(ModuleOp module, StringRef outputPath) {
  Location loc = module.getLoc();
  SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
  if (binaries.empty())
    return emitError(loc) << "the module has no GPU kernels: no device code "
                             "to emit";
  if (binaries.size() != 1 || binaries.front().getObjects().size() != 1)
    return emitError(loc) << "expected one device binary with one object";
  auto object = cast<gpu::ObjectAttr>(binaries.front().getObjects()[0]);
  StringRef payload = object.getObject().getValue();
  std::error_code ec;
  llvm::ToolOutputFile out(outputPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return emitError(loc) << "cannot open '" << outputPath
                          << "': " << ec.message();
  out.os() << payload;
  return keepOutput(out, outputPath, loc);
}

LogicalResult mlir::rpe::emitArtifact(ModuleOp module,
                                      const CompileOptions &options,
                                      StringRef finalPath) {
  Location loc = module.getLoc();
  return writeAtomically(finalPath, loc, [&](StringRef outputPath) {
    return emitArtifactTo(module, options, outputPath);
  });
}

/// emitArtifact into `outputPath` (a temporary file, or "-").
static LogicalResult emitArtifactTo(ModuleOp module,
                                    const CompileOptions &options,
                                    StringRef outputPath) {
  Location loc = module.getLoc();
  if (options.emit == EmitKind::MLIR) {
    std::error_code ec;
    llvm::ToolOutputFile out(outputPath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return emitError(loc)
             << "cannot open '" << outputPath << "': " << ec.message();
    // As rpe-opt prints it: `rpe-opt -rpe-cpu-pipeline` gives the same file.
    module.print(out.os());
    out.os() << '\n';
    return keepOutput(out, outputPath, loc);
  }

  if (options.emit == EmitKind::PTX || options.emit == EmitKind::Cubin ||
      options.emit == EmitKind::Fatbin)
    return writeDeviceCode(module, outputPath);

  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, loc);
  if (!tm)
    return failure();
  // The target's data layout from the start: the translation folds the
  // allocation sizes (a GEP of N elements from null) with the module's
  // layout, and the default one sizes i65..i96 in 9..12 bytes where x86
  // strides 16 (a heap overflow).
  module->setAttr(
      LLVM::LLVMDialect::getDataLayoutAttrName(),
      StringAttr::get(module->getContext(),
                      tm->createDataLayout().getStringRepresentation()));
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "rpe");
  if (!llvmModule)
    return emitError(loc) << "translation to LLVM IR failed";
  llvmModule->setTargetTriple(tm->getTargetTriple());
  llvmModule->setDataLayout(tm->createDataLayout());
  if (failed(optimizeModule(*llvmModule, tm.get(), options.optLevel,
                            /*unrollLoops=*/options.target != "nvptx-emulated",
                            loc)))
    return failure();

  switch (options.emit) {
  case EmitKind::LLVM: {
    std::error_code ec;
    llvm::ToolOutputFile out(outputPath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return emitError(loc)
             << "cannot open '" << outputPath << "': " << ec.message();
    llvmModule->print(out.os(), nullptr);
    return keepOutput(out, outputPath, loc);
  }
  case EmitKind::Asm:
    return emitMachineCode(
        *llvmModule, *tm, llvm::CodeGenFileType::AssemblyFile, outputPath, loc);
  case EmitKind::Object:
    return emitMachineCode(*llvmModule, *tm, llvm::CodeGenFileType::ObjectFile,
                           outputPath, loc);
  case EmitKind::Shared: {
    if (outputPath == "-")
      return emitError(loc) << "--emit=shared needs an output file (-o)";
    SmallString<128> objectPath;
    if (failed(createTemporary("rpe-compile", "o", objectPath, loc)))
      return failure();
    llvm::FileRemover remover(objectPath);
    bool needsRunnerUtils = llvmModule->getFunction("memrefCopy") != nullptr;
    bool needsOpenMP = llvmModule->getFunction("__kmpc_fork_call") != nullptr;
    if (failed(emitMachineCode(*llvmModule, *tm,
                               llvm::CodeGenFileType::ObjectFile, objectPath,
                               loc)))
      return failure();
    bool needsCudaRuntime =
        llvmModule->getFunction("mgpuModuleLoad") != nullptr ||
        llvmModule->getFunction("mgpuModuleLoadJIT") != nullptr;
    bool needsCPURuntime =
        llvmModule->getFunction("_mlir_memref_to_llvm_alloc") != nullptr ||
        llvmModule->getFunction("_mlir_memref_to_llvm_aligned_alloc") !=
            nullptr ||
        llvmModule->getFunction("_mlir_memref_to_llvm_free") != nullptr;
    return linkShared(objectPath, outputPath, needsRunnerUtils, needsOpenMP,
                      needsCPURuntime, needsCudaRuntime, loc);
  }
  case EmitKind::MLIR:
  case EmitKind::PTX:
  case EmitKind::Cubin:
  case EmitKind::Fatbin:
    break;
  }
  llvm_unreachable("unhandled emit kind");
}
