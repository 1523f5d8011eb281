//===- LegalizeMath.cpp - math ops without an LLVM lowering ---------------===//
//
// `convert-math-to-llvm` has no lowering for some math ops that front ends
// emit (exact GELU is `math.erf`). This pass rewrites them into ops that do
// lower: f32 erf/erfc into upstream's vectorizable polynomial
// approximations, isinf/isnormal into comparisons, clampf into max/min, and
// fpowi on vectors into multiplications (constant exponent) or powf, and
// the rest (erf/erfc of other types, asinh, acosh, atanh, cbrt) into libm
// calls through upstream's MathToLibm patterns, restricted to these ops so
// that everything MathToLLVM handles keeps its LLVM intrinsic.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/APFloat.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPELEGALIZEMATHPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

/// A float constant of `type` (scalar or vector of floats).
Value floatConst(PatternRewriter &rewriter, Location loc, Type type,
                 const llvm::APFloat &value) {
  Type elem = getElementTypeOrSelf(type);
  TypedAttr attr = rewriter.getFloatAttr(elem, value);
  if (auto vec = dyn_cast<VectorType>(type))
    attr = DenseElementsAttr::get(vec, attr);
  return arith::ConstantOp::create(rewriter, loc, attr);
}

const llvm::fltSemantics &semanticsOf(Type type) {
  return cast<FloatType>(getElementTypeOrSelf(type)).getFloatSemantics();
}

/// isinf(x) = |x| == +inf; isnormal(x) = smallest normal <= |x| < +inf
/// (false for NaN: ordered comparisons).
template <typename ClassOp>
struct ExpandClassification : OpRewritePattern<ClassOp> {
  using OpRewritePattern<ClassOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ClassOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getOperand().getType();
    const llvm::fltSemantics &sem = semanticsOf(type);
    Value abs = math::AbsFOp::create(rewriter, loc, op.getOperand());
    Value inf = floatConst(rewriter, loc, type, llvm::APFloat::getInf(sem));
    if constexpr (std::is_same_v<ClassOp, math::IsInfOp>) {
      rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, arith::CmpFPredicate::OEQ,
                                                 abs, inf);
    } else {
      Value tiny = floatConst(rewriter, loc, type,
                              llvm::APFloat::getSmallestNormalized(sem));
      Value big = arith::CmpFOp::create(rewriter, loc,
                                        arith::CmpFPredicate::OGE, abs, tiny);
      Value finite = arith::CmpFOp::create(rewriter, loc,
                                           arith::CmpFPredicate::OLT, abs, inf);
      rewriter.replaceOpWithNewOp<arith::AndIOp>(op, big, finite);
    }
    return success();
  }
};

/// clampf(x, lo, hi) = min(max(x, lo), hi). (Upstream's "clampf" expansion
/// in MLIR 22 computes max(min(x, lo), hi), i.e. hi for every x.)
struct ExpandClampF : OpRewritePattern<math::ClampFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ClampFOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value low = arith::MaximumFOp::create(rewriter, loc, op.getValue(),
                                          op.getMin(), op.getFastmath());
    rewriter.replaceOpWithNewOp<arith::MinimumFOp>(op, low, op.getMax(),
                                                   op.getFastmath());
    return success();
  }
};

struct RPELegalizeMathPass
    : rpe::impl::RPELegalizeMathPassBase<RPELegalizeMathPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet expand(ctx);
    rpe::populateRPELegalizeMathPatterns(expand);
    if (failed(applyPatternsGreedily(getOperation(), std::move(expand))))
      return signalPassFailure();

    // math.fpowi on vectors (s^n in a vectorized score_mod): LLVM's powi
    // intrinsic takes a scalar exponent only, so convert-math-to-llvm would
    // emit an invalid one. Upstream's expansion, on these ops only:
    // multiplications for a constant exponent, else sitofp and powf.
    // Scalar fpowi keeps its intrinsic.
    SmallVector<Operation *> vectorPowi;
    getOperation().walk([&](math::FPowIOp op) {
      if (isa<VectorType>(op.getType()))
        vectorPowi.push_back(op);
    });
    if (!vectorPowi.empty()) {
      RewritePatternSet powi(ctx);
      math::populateExpansionPatterns(powi, {"fpowi"});
      // Every exponent expands (constant or not): no fpowi on vectors is
      // left, whether or not the driver reports convergence.
      (void)applyOpPatternsGreedily(vectorPowi, std::move(powi));
    }

    // What is left goes to libm (only these ops: the others keep their
    // LLVM lowering). A function of the module named like the libm function
    // (`@cbrt` next to a math.cbrt on f64) would be called instead of it.
    ModuleOp module = getOperation();
    WalkResult clash = module.walk([&](Operation *op) {
      if (!isa<math::ErfOp, math::ErfcOp, math::AsinhOp, math::AcoshOp,
               math::AtanhOp, math::CbrtOp>(op))
        return WalkResult::advance();
      Type elem = getElementTypeOrSelf(op->getResult(0).getType());
      std::string name = op->getName().stripDialect().str();
      if (elem.isF32())
        name += "f";
      else if (!elem.isF64())
        return WalkResult::advance();
      auto func = module.lookupSymbol<func::FuncOp>(name);
      if (!func || (func.isDeclaration() && func.isPrivate()))
        return WalkResult::advance();
      InFlightDiagnostic diag = op->emitError()
                                << "'" << op->getName()
                                << "' lowers to a call of libm's '" << name
                                << "', but the module defines a function of "
                                   "that name; rename it";
      diag.attachNote(func.getLoc()) << "defined here";
      return WalkResult::interrupt();
    });
    if (clash.wasInterrupted())
      return signalPassFailure();
    ConversionTarget target(*ctx);
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addIllegalOp<math::ErfOp, math::ErfcOp, math::AsinhOp, math::AcoshOp,
                        math::AtanhOp, math::CbrtOp>();
    RewritePatternSet libm(ctx);
    populateMathToLibmConversionPatterns(libm);
    if (failed(applyPartialConversion(module, target, std::move(libm))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPELegalizeMathPatterns(RewritePatternSet &patterns) {
  // f32 erf/erfc: polynomial approximations (the loops stay vectorizable).
  populatePolynomialApproximateErfPattern(patterns);
  populatePolynomialApproximateErfcPattern(patterns);
  patterns.add<ExpandClampF, ExpandClassification<math::IsInfOp>,
               ExpandClassification<math::IsNormalOp>>(patterns.getContext());
}
