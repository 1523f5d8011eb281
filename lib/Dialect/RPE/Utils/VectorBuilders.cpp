//===- VectorBuilders.cpp - register-level vector pieces --------*- C++ -*-===//

#include "rpe/Dialect/RPE/Utils/VectorBuilders.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

SmallVector<Value> mlir::rpe::buildRegisterTranspose(OpBuilder &b, Location loc,
                                                     ArrayRef<Value> rowsIn) {
  int64_t w = static_cast<int64_t>(rowsIn.size());
  assert(llvm::isPowerOf2_64(w) && "transpose of a non-power-of-two block");
  SmallVector<Value> rows(rowsIn);
  for (int64_t s = w / 2; s >= 1; s /= 2) {
    SmallVector<int64_t> upper, lower;
    for (int64_t c = 0; c < w; ++c) {
      upper.push_back((c & s) == 0 ? c : w + c - s);
      lower.push_back((c & s) == 0 ? c + s : w + c);
    }
    for (int64_t r = 0; r < w; ++r) {
      if (r & s)
        continue;
      Value x = rows[r], y = rows[r + s];
      rows[r] = vector::ShuffleOp::create(b, loc, x, y, upper);
      rows[r + s] = vector::ShuffleOp::create(b, loc, x, y, lower);
    }
  }
  return rows;
}

bool mlir::rpe::isVectorMemoryElement(Type type) {
  return type.isIntOrFloat() && type.getIntOrFloatBitWidth() >= 8 &&
         llvm::isPowerOf2_32(type.getIntOrFloatBitWidth());
}
