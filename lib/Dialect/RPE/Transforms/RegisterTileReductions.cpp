//===- RegisterTileReductions.cpp - a block of outputs per parallel iteration //
//
// scf.parallel (.., i, j) { c0 = ..; c = for k iter_args(c0) { .. A[i, k] ..
// B[k, j] .. }; C[i, j] = c } ->
// scf.parallel (.., it, jt) over ceil(M / R) × ceil(N / S) {
//   for each (r, s): c0[r][s] = .. at (i, j) = (it·R + r, jt + s·T) clamped
//   c = for k iter_args(c0[R·S]) { each (r, s): the body at (i, j) }
//   each (r, s): C[i, j] = c[r][s] }
// with T = ceil(N / S): one iteration (one GPU thread) computes an R × S
// block of outputs, rows consecutive and columns T apart, so that the
// iterations next to each other along j (a warp's threads) still read
// consecutive columns. Loads that do not depend on j (A) or on i (B) are
// then the same for a whole row or column of the block (CSE merges them):
// R + S loads per R·S multiply-adds instead of 2 each.
//
// Rows and columns past the end are clamped to the last one for the reads
// (such an output is computed again, from valid indices) and store
// nothing: the ops after the loop of every output but the block's first
// row and column run under `scf.if (inside)`.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/SliceUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEREGISTERTILEREDUCTIONSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// Marks a parallel loop this pattern made: it is not tiled again (by the
/// greedy driver, or by a second run of the pass).
constexpr StringLiteral kTiledAttr = "rpe.register_tiled";

/// Ops a tile may clone freely: pure ones without regions, and loads
/// (`allowLoads`) or stores (`allowStores`).
bool clonable(Operation &op, bool allowLoads, bool allowStores) {
  if (op.getNumRegions() != 0)
    return false;
  if (isa<memref::LoadOp>(op))
    return allowLoads;
  if (isa<memref::StoreOp>(op))
    return allowStores;
  return isPure(&op);
}

struct RegisterTileReduction : OpRewritePattern<scf::ParallelOp> {
  RegisterTileReduction(MLIRContext *ctx, int64_t rows, int64_t columns)
      : OpRewritePattern(ctx), rows(rows), columns(columns) {}

  LogicalResult matchAndRewrite(scf::ParallelOp par,
                                PatternRewriter &rewriter) const override {
    if (par->hasAttr(kTiledAttr))
      return rewriter.notifyMatchFailure(par, "already tiled");
    unsigned n = par.getNumLoops();
    if (n < 2 || par.getNumReductions() != 0)
      return rewriter.notifyMatchFailure(par, "not two dims without reduce");
    for (unsigned d : {n - 2, n - 1})
      if (!isConstantIntValue(par.getLowerBound()[d], 0) ||
          !isConstantIntValue(par.getStep()[d], 1))
        return rewriter.notifyMatchFailure(par, "not from 0 by 1");
    // The body: pure ops and loads, one reduction loop, pure ops and
    // stores.
    Block *body = par.getBody();
    scf::ForOp reduction;
    for (Operation &op : body->without_terminator()) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (reduction)
          return rewriter.notifyMatchFailure(par, "two loops");
        reduction = loop;
        continue;
      }
      if (!clonable(op, /*allowLoads=*/!reduction, /*allowStores=*/reduction))
        return rewriter.notifyMatchFailure(&op, "not a pure op, load or store");
    }
    if (!reduction || reduction.getNumRegionIterArgs() == 0)
      return rewriter.notifyMatchFailure(par, "no reduction loop");
    for (Value bound : {reduction.getLowerBound(), reduction.getUpperBound(),
                        reduction.getStep()})
      if (!par.isDefinedOutsideOfLoop(bound))
        return rewriter.notifyMatchFailure(reduction, "bounds vary");
    for (Operation &op : reduction.getBody()->without_terminator())
      if (!clonable(op, /*allowLoads=*/true, /*allowStores=*/false))
        return rewriter.notifyMatchFailure(&op, "not a pure op or a load");
    // A contraction: some load of the loop is the same along j, another
    // along i.
    BlockArgument iv = par.getBody()->getArgument(n - 2),
                  jv = par.getBody()->getArgument(n - 1);
    bool rowShared = false, columnShared = false;
    reduction.getBody()->walk([&](memref::LoadOp load) {
      bool onI = false, onJ = false;
      for (Value index : load.getIndices()) {
        onI |= dependsOn(index, iv);
        onJ |= dependsOn(index, jv);
      }
      rowShared |= onI && !onJ;
      columnShared |= onJ && !onI;
    });
    if (!rowShared || !columnShared)
      return rewriter.notifyMatchFailure(par, "no load shared by a block");

    Location loc = par.getLoc();
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
    };
    Value m = par.getUpperBound()[n - 2], nCols = par.getUpperBound()[n - 1];
    Value one = cst(1);
    Value rowTiles = arith::CeilDivUIOp::create(rewriter, loc, m, cst(rows));
    Value colStride =
        arith::CeilDivUIOp::create(rewriter, loc, nCols, cst(columns));
    Value lastRow = arith::SubIOp::create(rewriter, loc, m, one);
    Value lastCol = arith::SubIOp::create(rewriter, loc, nCols, one);
    SmallVector<Value> ubs(par.getUpperBound());
    ubs[n - 2] = rowTiles;
    ubs[n - 1] = colStride;
    auto tiled = scf::ParallelOp::create(rewriter, loc, par.getLowerBound(),
                                         ubs, par.getStep());
    for (NamedAttribute attr : par->getDiscardableAttrs())
      tiled->setDiscardableAttr(attr.getName(), attr.getValue());
    tiled->setDiscardableAttr(kTiledAttr, rewriter.getUnitAttr());

    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(tiled.getBody());
    SmallVector<Value> newIvs(tiled.getInductionVars());
    // One mapping per output of the block.
    SmallVector<IRMapping> maps(rows * columns);
    Value rowBase =
        arith::MulIOp::create(rewriter, loc, newIvs[n - 2], cst(rows));
    // Each output's row and column, clamped (for the reads), and whether it
    // is inside (only those store: a column past the end is another
    // iteration's).
    SmallVector<Value> rowIdx, colIdx, rowInside, colInside;
    for (int64_t r = 0; r < rows; ++r) {
      Value row = arith::AddIOp::create(rewriter, loc, rowBase, cst(r));
      rowIdx.push_back(arith::MinUIOp::create(rewriter, loc, row, lastRow));
      rowInside.push_back(arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, row, m));
    }
    for (int64_t c = 0; c < columns; ++c) {
      Value col = arith::AddIOp::create(
          rewriter, loc, newIvs[n - 1],
          arith::MulIOp::create(rewriter, loc, colStride, cst(c)));
      colIdx.push_back(arith::MinUIOp::create(rewriter, loc, col, lastCol));
      colInside.push_back(arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, col, nCols));
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < columns; ++c) {
        IRMapping &map = maps[r * columns + c];
        for (unsigned d = 0; d + 2 < n; ++d)
          map.map(par.getInductionVars()[d], newIvs[d]);
        map.map(iv, rowIdx[r]);
        map.map(jv, colIdx[c]);
      }
    // Before the loop, per output.
    for (IRMapping &map : maps)
      for (Operation &op : body->without_terminator()) {
        if (&op == reduction.getOperation())
          break;
        rewriter.clone(op, map);
      }
    // One loop carrying every output's values.
    SmallVector<Value> inits;
    for (IRMapping &map : maps)
      for (Value init : reduction.getInitArgs())
        inits.push_back(map.lookupOrDefault(init));
    unsigned carried = reduction.getNumRegionIterArgs();
    auto loop = scf::ForOp::create(
        rewriter, loc, reduction.getLowerBound(), reduction.getUpperBound(),
        reduction.getStep(), inits,
        [&](OpBuilder &b, Location, Value k, ValueRange acc) {
          SmallVector<Value> yields;
          for (auto [t, map] : llvm::enumerate(maps)) {
            IRMapping inner = map;
            inner.map(reduction.getInductionVar(), k);
            inner.map(reduction.getRegionIterArgs(),
                      acc.slice(t * carried, carried));
            for (Operation &op : reduction.getBody()->without_terminator())
              b.clone(op, inner);
            for (Value y : reduction.getBody()->getTerminator()->getOperands())
              yields.push_back(inner.lookupOrDefault(y));
          }
          scf::YieldOp::create(b, loc, yields);
        },
        reduction.getUnsignedCmp());
    for (NamedAttribute attr : reduction->getDiscardableAttrs())
      loop->setDiscardableAttr(attr.getName(), attr.getValue());
    // After the loop, per output inside the bounds (the first row and
    // column always are).
    for (auto [t, map] : llvm::enumerate(maps)) {
      map.map(reduction.getResults(),
              loop.getResults().slice(t * carried, carried));
      int64_t r = t / columns, c = t % columns;
      OpBuilder::InsertionGuard afterGuard(rewriter);
      if (r > 0 || c > 0) {
        Value inside = r == 0   ? colInside[c]
                       : c == 0 ? rowInside[r]
                                : arith::AndIOp::create(
                                      rewriter, loc, rowInside[r], colInside[c])
                                      .getResult();
        auto guardIf = scf::IfOp::create(rewriter, loc, inside,
                                         /*withElseRegion=*/false);
        rewriter.setInsertionPoint(guardIf.thenBlock()->getTerminator());
      }
      bool after = false;
      for (Operation &op : body->without_terminator()) {
        if (after)
          rewriter.clone(op, map);
        after |= &op == reduction.getOperation();
      }
    }
    rewriter.eraseOp(par);
    return success();
  }

  int64_t rows, columns;
};

struct RPERegisterTileReductionsPass
    : rpe::CheckedOptionsPass<rpe::impl::RPERegisterTileReductionsPassBase<
          RPERegisterTileReductionsPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    return checkRegisterTile(rows, columns, getArgument(), "rows", "columns",
                             error);
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    if (rows * columns == 1)
      return;
    RewritePatternSet patterns(&getContext());
    populateRPERegisterTileReductionsPatterns(patterns, rows, columns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPERegisterTileReductionsPatterns(
    RewritePatternSet &patterns, int64_t rows, int64_t columns) {
  patterns.add<RegisterTileReduction>(patterns.getContext(), rows, columns);
}

LogicalResult
mlir::rpe::checkRegisterTile(int64_t rows, int64_t columns, StringRef owner,
                             StringRef rowsName, StringRef columnsName,
                             function_ref<LogicalResult(const Twine &)> error) {
  if (rows >= 1 && rows <= 16 && columns >= 1 && columns <= 16)
    return success();
  return error(owner + ": " + rowsName + " and " + columnsName +
               " must be in 1..16, got " + Twine(rows) + " and " +
               Twine(columns));
}
