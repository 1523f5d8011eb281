//===- ApproximateMath.cpp - vectorizable exp and tanh in linalg bodies ---===//
//
// f32 `math.exp` and `math.tanh` in the body of a linalg op -> upstream's
// polynomial approximations. Lowered as they are, each is a libm call per
// element, and LLVM's loop vectorizer leaves a loop with a call in it
// scalar.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEAPPROXIMATEMATHPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

struct RPEApproximateMathPass
    : rpe::impl::RPEApproximateMathPassBase<RPEApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops = collect();
    if (ops.empty())
      return;
    // The linalg ops whose bodies change, and their own FMAs, which stay
    // FMAs whatever the target.
    llvm::SetVector<Operation *> bodies;
    for (Operation *op : ops)
      bodies.insert(op->getParentOp());
    llvm::SmallPtrSet<Operation *, 8> userFMAs;
    for (Operation *body : bodies)
      body->walk([&](math::FmaOp f) { userFMAs.insert(f); });
    RewritePatternSet patterns(&getContext());
    rpe::populateRPEApproximateMathPatterns(patterns);
    // Only these ops: the ones outside linalg bodies stay.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
    numApproximated += ops.size() - collect().size();
    if (fma)
      return;
    // Without FMA hardware, a scalar llvm.fma is a libm call per element:
    // the polynomials' FMAs become a multiply and an add.
    SmallVector<math::FmaOp> fmas;
    for (Operation *body : bodies)
      body->walk([&](math::FmaOp f) {
        if (!userFMAs.contains(f))
          fmas.push_back(f);
      });
    IRRewriter rewriter(&getContext());
    rpe::splitFMAs(rewriter, fmas);
  }

  /// The f32 exps and tanhs directly in linalg op bodies.
  SmallVector<Operation *> collect() {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::ExpOp, math::TanhOp>(op) &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
          isa_and_nonnull<linalg::LinalgOp>(op->getParentOp()))
        ops.push_back(op);
    });
    return ops;
  }
};

} // namespace

void mlir::rpe::splitFMAs(RewriterBase &rewriter, ArrayRef<math::FmaOp> fmas) {
  OpBuilder::InsertionGuard guard(rewriter);
  for (math::FmaOp f : fmas) {
    rewriter.setInsertionPoint(f);
    Value product =
        arith::MulFOp::create(rewriter, f.getLoc(), f.getA(), f.getB());
    rewriter.replaceOpWithNewOp<arith::AddFOp>(f, product, f.getC());
  }
}

void mlir::rpe::populateRPEApproximateMathPatterns(
    RewritePatternSet &patterns) {
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    return name == math::ExpOp::getOperationName() ||
           name == math::TanhOp::getOperationName();
  });
}
