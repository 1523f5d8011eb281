//===- GPUAlignWorkgroup.cpp - align the workgroup buffers of GPU kernels -===//
//
// Sets `llvm.align` on the workgroup attributions of outlined GPU functions:
// the GPU-to-NVVM lowering aligns each buffer's global to it (and otherwise
// only to the element type).
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/Support/MathExtras.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEGPUALIGNWORKGROUPPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
struct RPEGPUAlignWorkgroupPass
    : rpe::CheckedOptionsPass<
          rpe::impl::RPEGPUAlignWorkgroupPassBase<RPEGPUAlignWorkgroupPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    int64_t bytes = alignment;
    if (bytes <= 0 || !llvm::isPowerOf2_64(bytes))
      return error("rpe-gpu-align-workgroup: alignment must be a power of "
                   "two, got " +
                   Twine(bytes));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    StringAttr name =
        StringAttr::get(ctx, LLVM::LLVMDialect::getAlignAttrName());
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i) {
        auto current = dyn_cast_or_null<IntegerAttr>(
            func.getWorkgroupAttributionAttr(i, name));
        if (current && current.getInt() >= alignment)
          continue;
        func.setWorkgroupAttributionAttr(
            i, name, IntegerAttr::get(IntegerType::get(ctx, 64), alignment));
      }
    });
  }
};
} // namespace
