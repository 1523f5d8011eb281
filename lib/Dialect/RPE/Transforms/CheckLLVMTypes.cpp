//===- CheckLLVMTypes.cpp - reject the types LLVM cannot compile ----------===//
//
// Zero-width integers and integers wider than LLVM IR allows pass the
// lowerings to the LLVM dialect unchanged and crash LLVM afterwards (tf32
// crashes the GPU lowering); the
// NVPTX backend has no f80, no f128 arithmetic, and integers over 128 bits
// (over 64 in conversions to and from floats) only in part. An error with a
// location instead.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Utils/TypeUtils.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/DerivedTypes.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPECHECKLLVMTYPESPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

/// The first integer type in `type` that LLVM IR has no equivalent for.
static IntegerType findUnsupportedInteger(Type type) {
  return rpe::findNestedType<IntegerType>(type, [](IntegerType integer) {
    unsigned width = integer.getWidth();
    return width == 0 || width > llvm::IntegerType::MAX_INT_BITS;
  });
}

/// The types an op carries, its signature first (in its attributes, for a
/// function), then its operands', results' and block arguments'.
static void forEachType(Operation *op, function_ref<bool(Type)> check) {
  bool stop = false;
  op->getAttrDictionary().walk([&](TypeAttr attr) {
    if (!stop && !check(attr.getValue()))
      stop = true;
  });
  if (stop)
    return;
  for (Type type : op->getOperandTypes())
    if (!check(type))
      return;
  for (Type type : op->getResultTypes())
    if (!check(type))
      return;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Type type : block.getArgumentTypes())
        if (!check(type))
          return;
}

/// Whether the NVPTX backend compiles `op` on values of `type` (f80 or
/// f128): f128 as two 64-bit halves wherever it is only moved; f80 nowhere
/// (a constant, a kernel parameter or a select crash its instruction
/// selection, and a load or store moves 4 of its 10 bytes).
static bool compilesOnNVPTX(Operation *op, FloatType type) {
  if (isa<Float80Type>(type))
    return false;
  return isa<LLVM::LoadOp, LLVM::StoreOp, LLVM::GEPOp, LLVM::InsertValueOp,
             LLVM::ExtractValueOp, LLVM::BitcastOp, LLVM::SelectOp,
             LLVM::ConstantOp, LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp,
             LLVM::ExtractElementOp, LLVM::InsertElementOp,
             LLVM::ShuffleVectorOp, LLVM::BrOp, LLVM::CondBrOp, LLVM::ReturnOp,
             LLVM::LLVMFuncOp>(op);
}

/// An error about `op` at its location, or where that is unknown (the body
/// of a named linalg op) at its closest ancestor's.
static InFlightDiagnostic emitErrorAtKnownLocation(Operation *op) {
  Location loc = op->getLoc();
  for (Operation *parent = op->getParentOp(); isa<UnknownLoc>(loc) && parent;
       parent = parent->getParentOp())
    loc = parent->getLoc();
  return emitError(loc) << "'" << op->getName() << "' op ";
}

/// Reports the first type of `op` that LLVM (with `nvptxDeviceCode`, in a
/// gpu.module: the NVPTX backend) cannot compile.
static LogicalResult checkOp(Operation *op, bool nvptxDeviceCode) {
  bool found = false;
  forEachType(op, [&](Type type) {
    IntegerType integer = findUnsupportedInteger(type);
    bool tf32 = static_cast<bool>(rpe::findNestedType<FloatType>(
        type, [](FloatType f) { return isa<FloatTF32Type>(f); }));
    if (!integer && !tf32)
      return true;
    InFlightDiagnostic diag = emitErrorAtKnownLocation(op)
                              << "uses the type " << type
                              << ", and LLVM IR has no ";
    if (!integer)
      diag << "tf32 type (use f32)";
    else if (integer.getWidth() == 0)
      diag << "zero-width integers (i0)";
    else
      diag << "integers wider than "
           << static_cast<unsigned>(llvm::IntegerType::MAX_INT_BITS)
           << " bits (" << integer << ")";
    found = true;
    return false;
  });
  if (found || !nvptxDeviceCode || !op->getParentOfType<gpu::GPUModuleOp>())
    return failure(found);
  // Integers over 128 bits: some widths crash the backend's legalization
  // (i129 and i385 additions), conversions of those over 64 bits to or
  // from floats are library calls it does not have.
  bool conversion =
      isa<LLVM::SIToFPOp, LLVM::UIToFPOp, LLVM::FPToSIOp, LLVM::FPToUIOp>(op);
  forEachType(op, [&](Type type) {
    unsigned maxBits = conversion ? 64 : 128;
    IntegerType wide =
        rpe::findNestedType<IntegerType>(type, [&](IntegerType integer) {
          return integer.getWidth() > maxBits;
        });
    if (!wide)
      return true;
    InFlightDiagnostic diag = emitErrorAtKnownLocation(op);
    if (conversion)
      diag << "converts between " << wide
           << " and a float in GPU code: the NVPTX backend has no such "
              "conversion for integers over 64 bits";
    else
      diag << "uses " << wide
           << " in GPU code: the NVPTX backend handles integers of up to 128 "
              "bits";
    diag << "; the CPU target compiles it";
    found = true;
    return false;
  });
  if (found)
    return failure();
  forEachType(op, [&](Type type) {
    FloatType wide = rpe::findNestedType<FloatType>(
        type, [](FloatType f) { return isa<Float80Type, Float128Type>(f); });
    if (!wide || compilesOnNVPTX(op, wide))
      return true;
    InFlightDiagnostic diag = emitErrorAtKnownLocation(op);
    if (isa<Float80Type>(wide))
      diag << "uses 'f80' in GPU code: the NVPTX backend has no 80-bit floats";
    else
      diag << "computes with 'f128' in GPU code: the NVPTX backend has no "
              "f128 arithmetic, it only moves such values";
    diag << "; the CPU target compiles it";
    found = true;
    return false;
  });
  return failure(found);
}

namespace {
struct RPECheckLLVMTypesPass
    : rpe::impl::RPECheckLLVMTypesPassBase<RPECheckLLVMTypesPass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result =
        getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
          return failed(checkOp(op, nvptxDeviceCode)) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
