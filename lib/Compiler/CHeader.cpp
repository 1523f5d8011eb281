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
  raw_ostream &os;
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
    define(name, def);
    return name;
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

  LogicalResult declare(func::FuncOp func) {
    Location loc = func.getLoc();
    FunctionType type = func.getFunctionType();
    SmallVector<std::string> params;
    std::string ret = "void";
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
    }
    for (auto [i, input] : llvm::enumerate(type.getInputs())) {
      FailureOr<std::string> t = cType(input, loc);
      if (failed(t))
        return failure();
      params.push_back(*t + (isa<ShapedType>(input) ? " *" : " ") + "arg" +
                       std::to_string(i));
    }
    llvm::raw_string_ostream b(body);
    b << "/// " << func.getSymName() << type << "\n";
    b << ret << " _mlir_ciface_" << func.getSymName() << "(";
    llvm::interleaveComma(params, b);
    if (params.empty())
      b << "void";
    b << ");\n\n";
    return success();
  }
};

} // namespace

LogicalResult mlir::rpe::writeCHeader(ModuleOp module, StringRef guard,
                                      raw_ostream &os) {
  HeaderWriter writer{os, {}, {}, {}};
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      if (failed(writer.declare(func)))
        return failure();
  os << "/* Generated by rpe-compile: C entry points of the compiled module.\n"
        " * Memref results are allocated with malloc by the library; release\n"
        " * them with free(desc.allocated). */\n";
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  os << "#include <stdbool.h>\n#include <stdint.h>\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (auto &[name, def] : writer.descriptors)
    os << def << "\n";
  os << writer.body;
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return success();
}
