//===- BufferUtils.cpp - questions about memref buffers -------------------===//

#include "rpe/Dialect/RPE/Utils/BufferUtils.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

using namespace mlir;

Value mlir::rpe::bufferRoot(Value v) {
  if (auto memref = dyn_cast<MemrefValue>(v))
    return memref::skipViewLikeOps(memref);
  return v;
}
