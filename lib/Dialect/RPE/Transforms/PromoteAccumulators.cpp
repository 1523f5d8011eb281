//===- PromoteAccumulators.cpp - loop-carried accumulators ----------------===//
//
// for k { c = C[i, j]; C[i, j] = c + A[i, k]·B[k, j] } with C a fresh
// allocation that nothing else in the loop may touch ->
// c0 = C[i, j]; c = for k iter_args(c = c0) { yield c + A[i, k]·B[k, j] };
// C[i, j] = c.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/BufferUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEPROMOTEACCUMULATORSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// Whether `v` is the result of an op that allocates it.
bool isAllocation(Value v) {
  auto effects = v.getDefiningOp<MemoryEffectOpInterface>();
  return effects && effects.getEffectOnValue<MemoryEffects::Allocate>(v);
}

/// Whether `v` is an argument of the function it is in.
bool isFunctionArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->isEntryBlock() &&
         isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

/// Whether buffer `other` (a root) is provably disjoint from the fresh
/// allocation `allocation`: another allocation, or a function argument
/// (which existed before `allocation` was made).
bool disjoint(Value allocation, Value other) {
  if (allocation == other)
    return false;
  return isAllocation(other) || isFunctionArgument(other);
}

/// Moves `loop` into the then-branch of an `scf.if` on "it runs at least
/// once"; the else-branch (if the loop has results) yields its initial
/// values.
void guardNonEmpty(scf::ForOp loop, RewriterBase &rewriter) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Value nonEmpty =
      arith::CmpIOp::create(rewriter, loc,
                            loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                                  : arith::CmpIPredicate::slt,
                            loop.getLowerBound(), loop.getUpperBound());
  auto guard = scf::IfOp::create(rewriter, loc, loop.getResultTypes(), nonEmpty,
                                 /*withElseRegion=*/loop.getNumResults() != 0);
  rewriter.replaceAllUsesWith(loop.getResults(), guard.getResults());
  // With results, the builder leaves both blocks empty.
  if (loop.getNumResults() == 0) {
    rewriter.moveOpBefore(loop, guard.thenBlock()->getTerminator());
    return;
  }
  rewriter.setInsertionPointToEnd(guard.thenBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, loop.getResults());
  rewriter.moveOpBefore(loop, yield);
  rewriter.setInsertionPointToEnd(guard.elseBlock());
  scf::YieldOp::create(rewriter, loc, loop.getInitArgs());
}

struct PromoteAccumulator : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::ForOp loop,
                                PatternRewriter &rewriter) const override {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (trips && trips->isZero())
      return rewriter.notifyMatchFailure(loop, "no iteration");

    // Every buffer the body may touch, with the ops that touch it (once a
    // candidate pair is found); failure where an op's effects are unknown.
    std::optional<SmallVector<std::pair<Operation *, Value>>> accesses;
    auto collectAccesses = [&]() -> LogicalResult {
      accesses.emplace();
      for (Operation &op : loop.getBody()->without_terminator()) {
        std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
            getEffectsRecursively(&op);
        if (!effects)
          return failure();
        for (const MemoryEffects::EffectInstance &effect : *effects) {
          if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(
                  effect.getEffect()))
            continue;
          Value buffer = effect.getValue();
          if (!buffer)
            return failure();
          accesses->push_back({&op, bufferRoot(buffer)});
        }
      }
      return success();
    };

    for (auto load : loop.getBody()->getOps<memref::LoadOp>()) {
      Value buffer = load.getMemRef();
      Value root = bufferRoot(buffer);
      if (!loop.isDefinedOutsideOfLoop(buffer) || !isAllocation(root) ||
          !llvm::all_of(load.getIndices(), [&](Value index) {
            return loop.isDefinedOutsideOfLoop(index);
          }))
        continue;
      memref::StoreOp store;
      for (Operation *op = load->getNextNode(); op && !store;
           op = op->getNextNode())
        if (auto s = dyn_cast<memref::StoreOp>(op);
            s && s.getMemRef() == buffer &&
            llvm::equal(s.getIndices(), load.getIndices()))
          store = s;
      if (!store)
        continue;
      if (!accesses && failed(collectAccesses()))
        return rewriter.notifyMatchFailure(
            loop, "an op's memory effects are unknown");
      // The pair alone touches the buffer; everything else is disjoint.
      if (!llvm::all_of(*accesses, [&](auto access) {
            auto [op, other] = access;
            if (op == load || op == store)
              return true;
            return disjoint(root, other);
          }))
        continue;

      SmallVector<Value> indices(load.getIndices());
      Location storeLoc = store.getLoc();
      // The load before the loop must be one the loop would have made: a
      // loop that may run no iteration goes inside `if (lb < ub)`.
      if (!trips)
        guardNonEmpty(loop, rewriter);
      rewriter.setInsertionPoint(loop);
      Value initial =
          memref::LoadOp::create(rewriter, load.getLoc(), buffer, indices);
      Value stored = store.getValueToStore();
      FailureOr<LoopLikeOpInterface> replaced =
          cast<LoopLikeOpInterface>(loop.getOperation())
              .replaceWithAdditionalYields(
                  rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
                  [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                    return SmallVector<Value>{stored};
                  });
      if (failed(replaced))
        return rewriter.notifyMatchFailure(loop, "cannot add a loop result");
      auto newLoop = cast<scf::ForOp>(replaced->getOperation());
      rewriter.replaceOp(load, newLoop.getRegionIterArgs().back());
      rewriter.eraseOp(store);
      rewriter.setInsertionPointAfter(newLoop);
      memref::StoreOp::create(rewriter, storeLoc, newLoop.getResults().back(),
                              buffer, indices);
      return success();
    }
    return rewriter.notifyMatchFailure(loop, "no accumulator to promote");
  }
};

struct RPEPromoteAccumulatorsPass
    : rpe::impl::RPEPromoteAccumulatorsPassBase<RPEPromoteAccumulatorsPass> {
  using RPEPromoteAccumulatorsPassBase::RPEPromoteAccumulatorsPassBase;

  void runOnOperation() override {
    // Each promotion adds one value to a loop's iter_args.
    auto carried = [&] {
      unsigned count = 0;
      getOperation()->walk(
          [&](scf::ForOp loop) { count += loop.getNumRegionIterArgs(); });
      return count;
    };
    unsigned before = carried();
    RewritePatternSet patterns(&getContext());
    populateRPEPromoteAccumulatorsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numPromoted += carried() - before;
  }
};

} // namespace

void mlir::rpe::populateRPEPromoteAccumulatorsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<PromoteAccumulator>(patterns.getContext());
}
