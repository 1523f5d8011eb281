//===- SplitAttentionHeads.cpp - attention per (batch, head) --------------===//
//
// rpe.attention whose score_mod gathers from per-(batch, head) tables (the
// Shaw / DeBERTa gather trick) -> scf.forall over (batch, head) with the
// tables' producers tiled into the loop, so that the tables exist for the
// heads in flight only.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/AttentionUtils.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPESPLITATTENTIONHEADSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// The per-(batch, head) tables `score_mod` of `op` reads: tensors made by
/// a structured op in `op`'s block, of rank >= 3, used only by reads in
/// `score_mod` of the form `tensor.extract %T[%b or 0, %h, ...]` (0 only
/// for a table with one batch). Empty when some table does not fit.
SetVector<Value> headTables(AttentionOp op) {
  SetVector<Value> tables;
  Region &region = op.getScoreMod();
  if (region.empty())
    return tables;
  Block &block = region.front();
  Value bArg = block.getArgument(1), hArg = block.getArgument(2);
  auto fits = [&](tensor::ExtractOp extract) {
    auto type = cast<RankedTensorType>(extract.getTensor().getType());
    ValueRange idx = extract.getIndices();
    return type.getRank() >= 3 && idx[1] == hArg &&
           (idx[0] == bArg ||
            (matchPattern(idx[0], m_Zero()) && type.getDimSize(0) == 1));
  };
  DenseSet<Value> rejected;
  for (Operation &inner : block) {
    auto extract = dyn_cast<tensor::ExtractOp>(inner);
    if (!extract)
      continue;
    Value t = extract.getTensor();
    auto producer = t.getDefiningOp<linalg::LinalgOp>();
    if (!producer || producer->getBlock() != op->getBlock() ||
        !isa<TilingInterface>(producer.getOperation()))
      continue;
    // Tiled to a slice of its result: one result whose indexing map is a
    // projected permutation (checked here: the rewrite must not fail
    // half-way).
    if (!fits(extract) || producer->getNumResults() != 1 ||
        !producer.hasPureTensorSemantics() ||
        !producer.getIndexingMapMatchingResult(cast<OpResult>(t))
             .isProjectedPermutation())
      rejected.insert(t);
    else
      tables.insert(t);
  }
  // A table read in another way in the region, or used outside the
  // attention (it would be computed whole anyway), stays whole.
  for (Value t : tables)
    for (OpOperand &use : t.getUses())
      if (!region.isAncestor(use.getOwner()->getParentRegion()) ||
          !isa<tensor::ExtractOp>(use.getOwner()))
        rejected.insert(t);
  if (llvm::any_of(tables, [&](Value t) { return rejected.contains(t); }))
    tables.clear();
  return tables;
}

/// `source[offsets..., 0...]` with sizes 1 for the leading offsets and the
/// full extent beyond.
Value sliceLeading(OpBuilder &b, Location loc, Value source,
                   ArrayRef<Value> offsets) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> offs, sizes, strides;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool lead = d < static_cast<int64_t>(offsets.size());
    offs.push_back(lead ? OpFoldResult(offsets[d]) : b.getIndexAttr(0));
    if (lead)
      sizes.push_back(b.getIndexAttr(1));
    else if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, source, d).getResult());
    else
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    strides.push_back(b.getIndexAttr(1));
  }
  return tensor::ExtractSliceOp::create(b, loc, source, offs, sizes, strides);
}

struct SplitAttentionHeads : OpRewritePattern<AttentionOp> {
  SplitAttentionHeads(MLIRContext *ctx, int64_t minTableColumns)
      : OpRewritePattern(ctx), minTableColumns(minTableColumns) {}
  int64_t minTableColumns;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    auto qType = cast<RankedTensorType>(op.getQ().getType());
    if (qType.getDimSize(0) == 1 && qType.getDimSize(1) == 1)
      return rewriter.notifyMatchFailure(op, "one (batch, head) already");
    if (op.getBias())
      return rewriter.notifyMatchFailure(op, "dense bias operand");
    SetVector<Value> tables = headTables(op);
    if (tables.empty())
      return rewriter.notifyMatchFailure(op, "no per-head gather tables");
    if (llvm::any_of(tables, [&](Value t) {
          int64_t columns =
              cast<RankedTensorType>(t.getType()).getShape().back();
          return ShapedType::isDynamic(columns) || columns < minTableColumns;
        }))
      return rewriter.notifyMatchFailure(op, "tables too narrow to split");

    Location loc = op.getLoc();
    AttentionSizes dims = getAttentionSizes(rewriter, op);
    RankedTensorType resultType = op.getResult().getType();
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(),
                                         dims.resultDynamicSizes);
    Value count = arith::MulIOp::create(rewriter, loc, dims.batch, dims.heads);
    Value zero = indexConst(rewriter, loc, 0);

    auto loop =
        scf::ForallOp::create(rewriter, loc, ArrayRef<OpFoldResult>{count},
                              ValueRange{init}, std::nullopt);
    loop->setAttr(kSplitHeadsLoopAttrName, rewriter.getUnitAttr());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    Value bh = loop.getInductionVar(0);
    Value b = arith::DivUIOp::create(rewriter, loc, bh, dims.heads);
    Value h = arith::RemUIOp::create(rewriter, loc, bh, dims.heads);
    Value hk = arith::DivUIOp::create(rewriter, loc, h, dims.group);

    IRMapping map;
    map.map(op.getQ(), sliceLeading(rewriter, loc, op.getQ(), {b, h}));
    map.map(op.getK(), sliceLeading(rewriter, loc, op.getK(), {b, hk}));
    map.map(op.getV(), sliceLeading(rewriter, loc, op.getV(), {b, hk}));
    if (Value lengths = op.getKeyLengths())
      map.map(lengths, sliceLeading(rewriter, loc, lengths, {b}));
    // Each table's slice for (b, h), computed by its producer tiled to it.
    DenseSet<Value> tiledTables;
    for (Value table : tables) {
      auto type = cast<RankedTensorType>(table.getType());
      Value b0 = type.getDimSize(0) == 1 ? zero : b;
      auto slice = cast<tensor::ExtractSliceOp>(
          sliceLeading(rewriter, loc, table, {b0, h}).getDefiningOp());
      FailureOr<TilingResult> tiled =
          tensor::replaceExtractSliceWithTiledProducer(rewriter, slice,
                                                       cast<OpResult>(table));
      if (failed(tiled) || tiled->tiledValues.size() != 1) {
        // Not expected after headTables' checks; leave the IR as it was.
        rewriter.eraseOp(loop);
        return rewriter.notifyMatchFailure(op, "cannot tile a table producer");
      }
      Value tile = tiled->tiledValues.front();
      rewriter.replaceOp(slice, tile);
      map.map(table, tile);
      tiledTables.insert(tile);
    }

    auto attention = cast<AttentionOp>(rewriter.clone(*op, map));
    SmallVector<int64_t> shape(resultType.getShape());
    shape[0] = shape[1] = 1;
    attention.getResult().setType(
        RankedTensorType::get(shape, resultType.getElementType()));
    // In the loop's attention b and h are 0: score_mod's other uses of them
    // (a per-head table of the model, a per-head slope) get the global
    // indices; the table reads keep them (the slices start at (b, h)).
    Block &block = attention.getScoreMod().front();
    rewriter.setInsertionPointToStart(&block);
    for (auto [arg, offset] : {std::pair(block.getArgument(1), b),
                               std::pair(block.getArgument(2), h)}) {
      auto global = arith::AddIOp::create(rewriter, loc, arg, offset);
      rewriter.replaceUsesWithIf(arg, global, [&](OpOperand &use) {
        if (use.getOwner() == global)
          return false;
        auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
        return !extract || !tiledTables.contains(extract.getTensor());
      });
    }

    rewriter.setInsertionPointAfter(attention);
    SmallVector<OpFoldResult> offs = {b, h, rewriter.getIndexAttr(0),
                                      rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                       rewriter.getIndexAttr(1)};
    for (int64_t d : {2, 3})
      sizes.push_back(
          resultType.isDynamicDim(d)
              ? OpFoldResult(tensor::DimOp::create(rewriter, loc,
                                                   attention.getResult(), d)
                                 .getResult())
              : rewriter.getIndexAttr(resultType.getDimSize(d)));
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    rewriter.setInsertionPointToStart(loop.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, attention.getResult(),
                                          loop.getRegionIterArgs().front(),
                                          offs, sizes, strides);
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct RPESplitAttentionHeadsPass
    : rpe::impl::RPESplitAttentionHeadsPassBase<RPESplitAttentionHeadsPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    populateRPESplitAttentionHeadsPatterns(patterns, minTableColumns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // The whole tables are dead once the sizes of their slices no longer
    // read them; a slice of a fill of an empty tensor becomes a fill of an
    // empty slice, so that nothing of the whole table is left.
    RewritePatternSet cleanup(ctx);
    tensor::DimOp::getCanonicalizationPatterns(cleanup, ctx);
    linalg::populateSwapExtractSliceWithFillPatterns(cleanup);
    tensor::populateFoldTensorEmptyPatterns(cleanup);
    if (failed(applyPatternsGreedily(getOperation(), std::move(cleanup))))
      signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPESplitAttentionHeadsPatterns(
    RewritePatternSet &patterns, int64_t minTableColumns) {
  patterns.add<SplitAttentionHeads>(patterns.getContext(), minTableColumns);
}
