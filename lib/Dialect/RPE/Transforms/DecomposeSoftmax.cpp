//===- DecomposeSoftmax.cpp - decompose linalg.softmax ----------*- C++ -*-===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEDECOMPOSESOFTMAXPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {
struct RPEDecomposeSoftmaxPass
    : rpe::impl::RPEDecomposeSoftmaxPassBase<RPEDecomposeSoftmaxPass> {
  void runOnOperation() override {
    SmallVector<linalg::SoftmaxOp> ops;
    getOperation()->walk([&](linalg::SoftmaxOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::SoftmaxOp op : ops) {
      // The verifier takes any element type; the decomposition builds
      // float ops (and crashed on integers).
      Type element = op.getInputOperandType().getElementType();
      if (!isa<FloatType>(element)) {
        op.emitOpError() << "has " << element
                         << " elements: a softmax needs floating-point ones";
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
      if (failed(results)) {
        op.emitError() << "cannot decompose linalg.softmax";
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *results);
    }
  }
};
} // namespace
