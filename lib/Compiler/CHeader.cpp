//===- CHeader.cpp - C declarations of compiled entry points ----*- C++ -*-===//
//
// Mirrors the C wrapper ABI of convert-func-to-llvm for functions marked
// llvm.emit_c_interface: memref arguments are passed as pointers to
// descriptors; a single memref result, or several results, are written
// through a pointer passed first; a single scalar result is returned.
//
//===----------------------------------------------------------------------===//

#include "rpe/Compiler/Compiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

/// C spelling of a scalar element type, or "" if there is none.
std::string scalarCType(Type type) {
  if (type.isIndex())
    return "intptr_t";
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  if (type.isF16() || type.isBF16())
    return "uint16_t";
  if (type.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(type))
    if (i.getWidth() == 8 || i.getWidth() == 16 || i.getWidth() == 32 ||
        i.getWidth() == 64)
      return (Twine(i.isUnsigned() ? "uint" : "int") + Twine(i.getWidth()) +
              "_t")
          .str();
  return "";
}

std::string elementTag(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

struct HeaderWriter {
  HeaderWriter(raw_ostream &os, bool device) : os(os), device(device) {}

  raw_ostream &os;
  /// --target=nvptx: memrefs are in device memory; the header adds the
  /// stream and host-memory variants of every entry point.
  bool device = false;
  /// Type definitions in order of first use, each once.
  std::vector<std::pair<std::string, std::string>> descriptors;
  llvm::StringSet<> defined;

  void define(const std::string &name, const std::string &def) {
    if (defined.insert(name).second)
      descriptors.push_back({name, def});
  }
  std::string body;

  /// Name of the descriptor struct for `type`, declared on first use.
  std::string descriptor(ShapedType type) {
    std::string elt = scalarCType(type.getElementType());
    std::string name = "rpe_memref_" + elementTag(type.getElementType()) + "_" +
                       std::to_string(type.getRank()) + "d";
    std::string def;
    llvm::raw_string_ostream d(def);
    d << "#ifndef RPE_MEMREF_DESCRIPTOR_" << elementTag(type.getElementType())
      << "_" << type.getRank() << "D\n#define RPE_MEMREF_DESCRIPTOR_"
      << elementTag(type.getElementType()) << "_" << type.getRank()
      << "D\ntypedef struct {\n  " << elt << " *allocated;\n  " << elt
      << " *aligned;\n  int64_t offset;\n";
    if (type.getRank() > 0)
      d << "  int64_t sizes[" << type.getRank() << "];\n  int64_t strides["
        << type.getRank() << "];\n";
    d << "} " << name << ";\n#endif\n";
    if (device) {
      std::string guard = "RPE_MEMREF_DEVICE_HELPERS_" +
                          elementTag(type.getElementType()) + "_" +
                          std::to_string(type.getRank()) + "D";
      d << "#ifndef " << guard << "\n#define " << guard << "\n";
      writeDeviceHelpers(d, name, elt, type.getRank());
      d << "#endif\n";
    }
    define(name, def);
    return name;
  }

  /// <name>_span, _to_device and _to_host for the descriptor `name`.
  static void writeDeviceHelpers(raw_ostream &d, StringRef name, StringRef elt,
                                 int64_t rank) {
    d << "/// Bytes from the first element of *m to its last (strides >= "
         "0), 0 if empty.\n";
    d << "static inline size_t " << name << "_span(const " << name
      << " *m) {\n  size_t extent = 1;\n";
    if (rank > 0)
      d << "  for (int d = 0; d < " << rank
        << "; ++d) {\n    if (m->sizes[d] <= 0 || m->strides[d] < 0)\n"
           "      return 0;\n    extent += (size_t)(m->sizes[d] - 1) * "
           "(size_t)m->strides[d];\n  }\n";
    d << "  return extent * sizeof(" << elt << ");\n}\n";
    d << "/// Replaces the host memref *m by a device copy of its data (*dev: "
         "the\n/// memory to free, NULL if empty); 0, or -1 if a CUDA call "
         "failed.\n";
    d << "static inline int " << name << "_to_device(" << name
      << " *m, void **dev) {\n  size_t bytes = " << name
      << "_span(m);\n  *dev = NULL;\n  if (bytes) {\n"
         "    *dev = mgpuMemAlloc(bytes, NULL, false);\n"
         "    if (!*dev)\n      return -1;\n"
         "    mgpuMemcpy(*dev, (void *)(m->aligned + m->offset), bytes, "
         "NULL);\n    mgpuStreamSynchronize(NULL);\n  }\n"
         "  m->allocated = m->aligned = ("
      << elt << " *)*dev;\n  m->offset = 0;\n"
      << "  return rpeCudaGetLastError()[0] ? -1 : 0;\n}\n";
    d << "/// Replaces the device memref *m (a result) by a host copy in "
         "memory from\n/// malloc and frees its device memory; 0, or -1.\n";
    d << "static inline int " << name << "_to_host(" << name
      << " *m) {\n  size_t bytes = " << name
      << "_span(m);\n  void *host = malloc(bytes ? bytes : 1);\n"
         "  if (!host)\n    return -1;\n  if (bytes) {\n"
         "    mgpuMemcpy(host, (void *)(m->aligned + m->offset), bytes, "
         "NULL);\n    mgpuStreamSynchronize(NULL);\n  }\n"
         "  mgpuMemFree(m->allocated, NULL);\n  m->allocated = m->aligned = ("
      << elt << " *)host;\n  m->offset = 0;\n"
      << "  return rpeCudaGetLastError()[0] ? -1 : 0;\n}\n";
  }

  /// C type of a value of `type` as passed to or returned from a wrapper.
  FailureOr<std::string> cType(Type type, Location loc) {
    if (auto shaped = dyn_cast<ShapedType>(type)) {
      if (!isa<RankedTensorType, MemRefType>(type) ||
          scalarCType(shaped.getElementType()).empty())
        return emitError(loc) << "no C equivalent for " << type;
      return descriptor(shaped);
    }
    std::string s = scalarCType(type);
    if (s.empty())
      return emitError(loc) << "no C equivalent for " << type;
    return s;
  }

  /// Checked wrappers (rpe-insert-shape-checks), after every declaration.
  std::string wrappers;

  LogicalResult declare(func::FuncOp func) {
    Location loc = func.getLoc();
    // MLIR allows any symbol name (@"my-fn"); C declarations need an
    // identifier after the prefixes (_mlir_ciface_, rpe_).
    StringRef symbol = func.getSymName();
    if (!llvm::all_of(symbol,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return emitError(loc)
             << "function name '" << symbol
             << "' is not a C identifier: the C header cannot declare it "
                "(rename the function, or compile without a header)";
    FunctionType type = func.getFunctionType();
    SmallVector<std::string> params;
    std::string ret = "void";
    // Names passed through by the checked wrapper.
    SmallVector<std::string> resultParams, argParams, argNames;
    if (type.getNumResults() == 1 && !isa<ShapedType>(type.getResult(0))) {
      FailureOr<std::string> r = cType(type.getResult(0), loc);
      if (failed(r))
        return failure();
      ret = *r;
    } else if (type.getNumResults() == 1) {
      FailureOr<std::string> r = cType(type.getResult(0), loc);
      if (failed(r))
        return failure();
      params.push_back(*r + " *result");
      resultParams.push_back(params.back());
    } else if (type.getNumResults() > 1) {
      std::string name = "rpe_" + func.getSymName().str() + "_results";
      std::string def;
      llvm::raw_string_ostream d(def);
      d << "typedef struct {\n";
      for (auto [i, result] : llvm::enumerate(type.getResults())) {
        FailureOr<std::string> r = cType(result, loc);
        if (failed(r))
          return failure();
        d << "  " << *r << " r" << i << ";\n";
      }
      d << "} " << name << ";\n";
      define(name, def);
      params.push_back(name + " *results");
      resultParams.push_back(params.back());
    }
    for (auto [i, input] : llvm::enumerate(type.getInputs())) {
      FailureOr<std::string> t = cType(input, loc);
      if (failed(t))
        return failure();
      params.push_back(*t + (isa<ShapedType>(input) ? " *" : " ") + "arg" +
                       std::to_string(i));
      argParams.push_back(params.back());
      argNames.push_back("arg" + std::to_string(i));
    }
    llvm::raw_string_ostream b(body);
    b << "/// " << func.getSymName() << type << "\n";
    b << ret << " _mlir_ciface_" << func.getSymName() << "(";
    llvm::interleaveComma(params, b);
    if (params.empty())
      b << "void";
    b << ");\n\n";
    bool checked = false;
    if (auto check =
            func->getAttrOfType<FlatSymbolRefAttr>("rpe.shape_check")) {
      if (failed(wrap(func, check.getValue(), ret, resultParams, argParams,
                      argNames)))
        return failure();
      checked = true;
    }
    // Not for the shape checks themselves: each checked entry point runs
    // its own.
    if (device && !func->hasAttr("rpe.shape_check_messages"))
      wrapDevice(func, checked, ret, resultParams, argParams, argNames);
    return success();
  }

  /// The parameters of an entry point that returns a status: the results
  /// (a scalar one through a pointer), the arguments, the error buffer.
  static SmallVector<std::string>
  statusParams(StringRef ret, ArrayRef<std::string> resultParams,
               ArrayRef<std::string> argParams) {
    SmallVector<std::string> params(resultParams.begin(), resultParams.end());
    if (ret != "void")
      params.push_back(ret.str() + " *result");
    params.append(argParams.begin(), argParams.end());
    params.push_back("char *error, size_t error_size");
    return params;
  }

  /// rpe_<F>_on_stream and rpe_<F>_host (device modules).
  void wrapDevice(func::FuncOp func, bool checked, StringRef ret,
                  ArrayRef<std::string> resultParams,
                  ArrayRef<std::string> argParams,
                  ArrayRef<std::string> argNames) {
    std::string name = func.getSymName().str();
    FunctionType type = func.getFunctionType();
    bool scalarResult = ret != "void";
    SmallVector<std::string> params =
        statusParams(ret, resultParams, argParams);
    std::string resultName;
    if (!resultParams.empty())
      resultName = StringRef(resultParams.front()).rsplit('*').second.str();
    else if (scalarResult)
      resultName = "result";
    std::string args = llvm::join(argNames, ", ");

    llvm::raw_string_ostream w(wrappers);
    w << "/// " << name
      << " on `stream` (a CUstream of the device's primary context, or "
         "NULL:\n/// a stream per launch): memref arguments and results in "
         "device memory\n/// (release a result with "
         "mgpuMemFree(desc.allocated, NULL)). Returns 0,\n/// ";
    if (checked)
      w << "a shape check's status (rpe_" << name << "_check), ";
    w << "or -1 when a CUDA call failed (message in `error`).\n";
    w << "static inline int rpe_" << name << "_on_stream(void *stream, "
      << llvm::join(params, ", ") << ") {\n";
    w << "  void *previous = rpeCudaGetStream();\n  int status = 0;\n"
         "  rpeCudaSetStream(stream);\n  ";
    if (checked) {
      SmallVector<std::string> callArgs;
      if (!resultName.empty())
        callArgs.push_back(resultName);
      callArgs.append(argNames.begin(), argNames.end());
      callArgs.push_back("error");
      callArgs.push_back("error_size");
      w << "status = rpe_" << name << "(" << llvm::join(callArgs, ", ")
        << ");\n";
    } else {
      SmallVector<std::string> callArgs;
      if (!resultParams.empty())
        callArgs.push_back(resultName);
      callArgs.append(argNames.begin(), argNames.end());
      if (scalarResult)
        w << "*result = ";
      w << "_mlir_ciface_" << name << "(" << llvm::join(callArgs, ", ")
        << ");\n";
    }
    w << "  rpeCudaSetStream(previous);\n"
         "  return rpe_cuda_status(status, error, error_size);\n}\n\n";

    // The host-memory variant: device copies of the memref arguments, the
    // call, the memref results copied back.
    SmallVector<std::pair<std::string, std::string>> memrefArgs, memrefResults;
    for (auto [i, input] : llvm::enumerate(type.getInputs()))
      if (auto shaped = dyn_cast<ShapedType>(input))
        memrefArgs.push_back({descriptor(shaped), argNames[i]});
    for (auto [i, result] : llvm::enumerate(type.getResults())) {
      auto shaped = dyn_cast<ShapedType>(result);
      if (!shaped)
        continue;
      memrefResults.push_back(
          {descriptor(shaped),
           type.getNumResults() == 1
               ? resultName
               : "&" + resultName + "->r" + std::to_string(i)});
    }
    if (memrefArgs.empty() && memrefResults.empty())
      return;
    w << "/// " << name
      << " on host memory: copies the memref arguments to the device, runs "
         "rpe_"
      << name
      << "_on_stream(NULL, ...), copies the memref results back into "
         "memory\n/// from malloc (release with free(desc.allocated)) and "
         "frees the device memory.\n/// Returns as rpe_"
      << name << "_on_stream.\n";
    w << "static inline int rpe_" << name << "_host("
      << llvm::join(params, ", ") << ") {\n";
    w << "  int status = 0;\n";
    SmallVector<std::string> callArgs;
    if (!resultName.empty())
      callArgs.push_back(resultName);
    for (auto [i, input] : llvm::enumerate(type.getInputs())) {
      if (!isa<ShapedType>(input)) {
        callArgs.push_back(argNames[i]);
        continue;
      }
      callArgs.push_back("&d_" + argNames[i]);
    }
    for (auto &[desc, arg] : memrefArgs)
      w << "  " << desc << " d_" << arg << " = *" << arg << ";\n  void *dev_"
        << arg << " = NULL;\n";
    for (auto &[desc, arg] : memrefArgs)
      w << "  if (status == 0 && " << desc << "_to_device(&d_" << arg
        << ", &dev_" << arg << ") != 0)\n    status = -1;\n";
    callArgs.push_back("error");
    callArgs.push_back("error_size");
    w << "  if (status == 0)\n    status = rpe_" << name << "_on_stream(NULL, "
      << llvm::join(callArgs, ", ") << ");\n";
    // Results may alias an argument's device copy: free each once.
    for (auto [i, r] : llvm::enumerate(memrefResults))
      w << "  void *res" << i << " = status == 0 ? (void *)(" << r.second
        << ")->allocated : NULL;\n";
    for (auto [i, r] : llvm::enumerate(memrefResults))
      w << "  if (status == 0 && " << r.first << "_to_host(" << r.second
        << ") != 0)\n    status = -1;\n";
    // The error reported (and cleared) first, so that the frees run.
    w << "  status = rpe_cuda_status(status, error, error_size);\n";
    for (auto &[desc, arg] : memrefArgs) {
      w << "  if (dev_" << arg;
      for (size_t i = 0; i < memrefResults.size(); ++i)
        w << " && dev_" << arg << " != res" << i;
      w << ")\n    mgpuMemFree(dev_" << arg << ", NULL);\n";
    }
    w << "  return status;\n}\n\n";
  }

  /// rpe_<F>_check and rpe_<F>: the entry point with its argument sizes
  /// checked first (nothing is written on failure).
  LogicalResult wrap(func::FuncOp func, StringRef checkName, StringRef ret,
                     ArrayRef<std::string> resultParams,
                     ArrayRef<std::string> argParams,
                     ArrayRef<std::string> argNames) {
    auto check = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        func, StringAttr::get(func.getContext(), checkName));
    auto messages =
        check ? check->getAttrOfType<ArrayAttr>("rpe.shape_check_messages")
              : ArrayAttr();
    if (!messages)
      return func.emitError() << "@" << checkName
                              << " is not a shape check made by "
                                 "rpe-insert-shape-checks";
    std::string name = func.getSymName().str();
    std::string checkStr = checkName.str();
    llvm::raw_string_ostream w(wrappers);
    w << "/// The printf formats of rpe_" << name
      << "_check's messages (then NULL).\n";
    w << "static const char *const rpe_" << name << "_check_messages[] = {\n";
    for (Attribute m : messages)
      w << "    " << cString(cast<StringAttr>(m).getValue()) << ",\n";
    w << "    NULL};\n\n";
    std::string errorParams = "char *error, size_t error_size";
    std::string args = llvm::join(argNames, ", ");
    w << "/// Checks the argument sizes of " << name
      << ": 0 when they agree with what its ops\n/// need; else the (1-based) "
         "number of the first failed constraint, its\n/// message written to "
         "`error` (at most error_size bytes) unless NULL.\n";
    w << "static inline int rpe_" << name << "_check(";
    for (const std::string &p : argParams)
      w << p << ", ";
    w << errorParams << ") {\n";
    w << "  rpe_" << checkStr << "_results r;\n";
    w << "  _mlir_ciface_" << checkStr << "(&r" << (args.empty() ? "" : ", ")
      << args << ");\n";
    w << "  if (r.r0 == 0)\n    return 0;\n";
    w << "  if (error && error_size)\n    snprintf(error, error_size, rpe_"
      << name
      << "_check_messages[r.r0 - 1],\n             (long long)r.r1, "
         "(long long)r.r2, (long long)r.r3);\n";
    w << "  return (int)r.r0;\n}\n\n";
    // The checked entry point.
    SmallVector<std::string> params =
        statusParams(ret, resultParams, argParams);
    bool scalarResult = ret != "void";
    w << "/// " << name << " with its argument sizes checked first "
      << "(rpe_" << name << "_check):\n/// returns 0, or its nonzero status "
      << "with nothing written to the results.\n";
    w << "static inline int rpe_" << name << "(" << llvm::join(params, ", ")
      << ") {\n";
    w << "  int status = rpe_" << name << "_check(" << args
      << (args.empty() ? "" : ", ") << "error, error_size);\n";
    w << "  if (status != 0)\n    return status;\n  ";
    SmallVector<std::string> callArgs;
    if (!resultParams.empty())
      callArgs.push_back(
          StringRef(resultParams.front()).rsplit('*').second.str());
    callArgs.append(argNames.begin(), argNames.end());
    if (scalarResult)
      w << "*result = ";
    w << "_mlir_ciface_" << name << "(" << llvm::join(callArgs, ", ")
      << ");\n  return 0;\n}\n\n";
    return success();
  }

  /// `s` as a C string literal.
  static std::string cString(StringRef s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\')
        out += '\\', out += c;
      else if (c == '\n')
        out += "\\n";
      else if (c < 0x20)
        out += {'\\', static_cast<char>('0' + (c >> 6)),
                static_cast<char>('0' + ((c >> 3) & 7)),
                static_cast<char>('0' + (c & 7))};
      else
        out += c;
    }
    return out + "\"";
  }
};

} // namespace

LogicalResult mlir::rpe::writeCHeader(ModuleOp module, StringRef guard,
                                      raw_ostream &os, bool device) {
  HeaderWriter writer(os, device);
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      if (failed(writer.declare(func)))
        return failure();
  os << "/* Generated by rpe-compile: C entry points of the compiled module.\n";
  if (device)
    os << " * The module runs on an NVIDIA GPU: _mlir_ciface_* and rpe_<F> "
          "take and\n * return memrefs in device memory (results from "
          "mgpuMemAlloc: release\n * them with mgpuMemFree(desc.allocated, "
          "NULL)); rpe_<F>_on_stream runs\n * on a stream of the caller, "
          "rpe_<F>_host on host memory. Link with\n * "
          "librpe_cuda_runtime.so. */\n";
  else
    os << " * Memref results are allocated with malloc by the library; "
          "release\n * them with free(desc.allocated). */\n";
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  os << "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
        "#include <stdio.h>\n";
  if (device)
    os << "#include <stdlib.h>\n";
  os << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  if (device)
    os << "#ifndef RPE_CUDA_RUNTIME_DECLARED\n"
          "#define RPE_CUDA_RUNTIME_DECLARED\n"
          "/* librpe_cuda_runtime.so */\n"
          "void *mgpuMemAlloc(uint64_t bytes, void *stream, bool "
          "host_shared);\n"
          "void mgpuMemFree(void *ptr, void *stream);\n"
          "void mgpuMemcpy(void *dst, void *src, size_t bytes, void "
          "*stream);\n"
          "void mgpuStreamSynchronize(void *stream);\n"
          "const char *rpeCudaGetLastError(void);\n"
          "void rpeCudaClearError(void);\n"
          "void rpeCudaSetStream(void *stream);\n"
          "void *rpeCudaGetStream(void);\n\n"
          "/// `status`, or -1 (the runtime's message in `error`, then "
          "cleared) when\n/// a CUDA call failed.\n"
          "static inline int rpe_cuda_status(int status, char *error, "
          "size_t error_size) {\n"
          "  const char *cuda = rpeCudaGetLastError();\n"
          "  if (!cuda || !cuda[0])\n    return status;\n"
          "  if (error && error_size)\n"
          "    snprintf(error, error_size, \"%s\", cuda);\n"
          "  rpeCudaClearError();\n  return -1;\n}\n#endif\n\n";
  for (auto &[name, def] : writer.descriptors)
    os << def << "\n";
  os << writer.body;
  os << writer.wrappers;
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return success();
}
