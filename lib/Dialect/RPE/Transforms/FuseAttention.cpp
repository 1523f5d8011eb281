//===- FuseAttention.cpp - fuse RPE terms into rpe.attention --------------===//
//
// (b) Bias producers become code in the attention's score_mod region:
//   relative_bias     s += table[bucket(i, j), h]
//   alibi             s += slope_h·(j - i) or -slope_h·|i - j|
//   shaw_logits       s += QE[b, h, row, bucket(row, j)],  QE = q·embᵀ
//   disentangled_bias s += QPk[b, h, row, δ] + KPq[b, h, j, δ]
// where QE, QPk (B×H×Lq×NB) and KPq (B×H×Lk×NB) are the gather trick's
// projections: O(L·NB), never Lq×Lk.
// (a) and (c) live in FuseAttentionRaising.cpp.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEFUSEATTENTIONPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// The bias terms of an attention: leaves of an arith.addf tree.
struct BiasTerms {
  SmallVector<Operation *> producers; // rpe ops to fuse
  SmallVector<Value> dense;           // anything else: stays a bias tensor
};

bool isFusableProducer(Operation *op) {
  return isa_and_present<RelativeBiasOp, AlibiOp, ShawLogitsOp,
                         DisentangledBiasOp>(op);
}

/// Splits `bias` into fusable producers and other (dense) summands. Only
/// values with a single use are looked through: a producer used elsewhere is
/// needed in full anyway.
void collectTerms(Value bias, BiasTerms &terms) {
  Operation *def = bias.getDefiningOp();
  if (def && bias.hasOneUse()) {
    if (auto add = dyn_cast<arith::AddFOp>(def)) {
      collectTerms(add.getLhs(), terms);
      collectTerms(add.getRhs(), terms);
      return;
    }
    if (isFusableProducer(def)) {
      terms.producers.push_back(def);
      return;
    }
  }
  terms.dense.push_back(bias);
}

/// Index of a bias dimension: 0 where the producer's static size is 1 (a
/// broadcast), else the loop index.
Value broadcastIndex(OpBuilder &b, Location loc, RankedTensorType type,
                     int64_t dim, Value index) {
  return type.getDimSize(dim) == 1 ? indexConst(b, loc, 0) : index;
}

/// The element-wise producer of a position table (DeBERTa's scaling by
/// 1/sqrt(3D)), when the transpose before the projection can run its body
/// instead of reading its result: a `linalg.generic` with one input, only
/// parallel loops and identity maps, no index ops, that does not read its
/// output.
linalg::GenericOp elementwiseProducer(Value table) {
  auto producer = table.getDefiningOp<linalg::GenericOp>();
  if (!producer || producer.getNumDpsInputs() != 1 ||
      producer.getNumDpsInits() != 1 || producer.hasIndexSemantics() ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      !llvm::all_of(producer.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !producer.getBlock()->getArgument(1).use_empty() ||
      !isa<RankedTensorType>(producer.getDpsInputs()[0].getType()))
    return nullptr;
  for (Operation &op : producer.getBlock()->without_terminator())
    if (op.getNumRegions() != 0)
      return nullptr;
  return producer;
}

/// Builds the gather-trick projection out[b, h, r, n] = Σ_d x[b, h, r, d] ·
/// table[h?, n, d] (table is NB×D or H×NB×D), in f32. The table is first
/// transposed to (H?×)D×NB, and the loops run (b, h, r, d, n): the innermost
/// loop is an axpy along buckets (out[.., r, :] += x[.., r, d]·tableᵀ[d, :]),
/// contiguous in both operands, which the loop vectorizer turns into vector
/// FMAs — a reduction along d innermost would need a horizontal sum per
/// output element (DeBERTa's projections ran at ~3% of the FMA peak). An
/// element-wise producer of the table runs inside the transpose (one pass
/// over the table instead of two; the producer goes once the bias does).
Value buildProjection(OpBuilder &b, Location loc, Value x, Value table) {
  MLIRContext *ctx = b.getContext();
  auto tableType = cast<RankedTensorType>(table.getType());
  bool perHead = tableType.getRank() == 3;
  int64_t nDim = perHead ? 1 : 0;
  OpFoldResult numBuckets = dimOf(b, loc, table, nDim);
  OpFoldResult depth = dimOf(b, loc, table, nDim + 1);
  SmallVector<OpFoldResult> tSizes = {depth, numBuckets};
  if (perHead)
    tSizes.insert(tSizes.begin(), dimOf(b, loc, table, 0));
  int64_t tRank = tableType.getRank();
  SmallVector<AffineExpr> ids, swapped;
  for (int64_t d = 0; d < tRank; ++d)
    ids.push_back(getAffineDimExpr(d, ctx));
  swapped = ids;
  std::swap(swapped[tRank - 2], swapped[tRank - 1]);
  SmallVector<utils::IteratorType> tIts(tRank, kPar);
  linalg::GenericOp producer = elementwiseProducer(table);
  Value transposed = generic(
      b, loc, producer ? producer.getDpsInputs()[0] : table,
      {dimsMap(ctx, tRank, swapped)},
      emptyTensor(b, loc, tSizes, b.getF32Type()), dimsMap(ctx, tRank, ids),
      tIts, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value element = args[0];
        if (producer) {
          Block &body = *producer.getBlock();
          IRMapping map;
          map.map(body.getArgument(0), element);
          for (Operation &op : body.without_terminator())
            nb.clone(op, map);
          element = map.lookupOrDefault(body.getTerminator()->getOperand(0));
        }
        yieldValue(nb, nl, castFloat(nb, nl, element, nb.getF32Type()));
      });

  SmallVector<OpFoldResult> sizes = {dimOf(b, loc, x, 0), dimOf(b, loc, x, 1),
                                     dimOf(b, loc, x, 2), numBuckets};
  AffineExpr b0, h, r, d, n;
  bindDims(ctx, b0, h, r, d, n);
  SmallVector<AffineExpr> tableExprs = perHead
                                           ? SmallVector<AffineExpr>{h, d, n}
                                           : SmallVector<AffineExpr>{d, n};
  return generic(
      b, loc, {x, transposed},
      {dimsMap(ctx, 5, {b0, h, r, d}), dimsMap(ctx, 5, tableExprs)},
      filledF32(b, loc, sizes, 0.0), dimsMap(ctx, 5, {b0, h, r, n}),
      {kPar, kPar, kPar, kRed, kPar},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Type f32 = nb.getF32Type();
        // contract: a multiply-add may become an FMA (O(L·NB·D) projection).
        auto fm = arith::FastMathFlagsAttr::get(
            nb.getContext(),
            arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
        Value p = arith::MulFOp::create(nb, nl, castFloat(nb, nl, args[0], f32),
                                        args[1], fm);
        yieldValue(nb, nl, arith::AddFOp::create(nb, nl, args[2], p, fm));
      });
}

/// Everything a term needs, prepared before the attention op.
struct PreparedTerm {
  Operation *producer;
  Value slopes;        // alibi: f64 H-vector of slopes
  Value projection;    // shaw_logits: QE; disentangled: QPk (c2p)
  Value keyProjection; // disentangled: KPq (p2c)
};

PreparedTerm prepare(OpBuilder &b, AttentionOp attention, Operation *producer) {
  Location loc = producer->getLoc();
  PreparedTerm term{producer, {}, {}, {}};
  if (auto alibi = dyn_cast<AlibiOp>(producer)) {
    term.slopes = buildAlibiSlopes(b, loc, alibi);
  } else if (auto shaw = dyn_cast<ShawLogitsOp>(producer)) {
    term.projection = buildProjection(b, loc, shaw.getQ(), shaw.getEmb());
  } else if (auto deberta = dyn_cast<DisentangledBiasOp>(producer)) {
    if (deberta.getC2p())
      term.projection =
          buildProjection(b, loc, deberta.getQ(), deberta.getPosK());
    if (deberta.getP2c())
      term.keyProjection =
          buildProjection(b, loc, deberta.getK(), deberta.getPosQ());
  }
  return term;
}

/// Emits the value (f32) of `term` at (b, h, i = query position, j) inside
/// the score_mod block; `row` is i - q_offset of the attention.
Value emitTerm(OpBuilder &b, Location loc, const PreparedTerm &term,
               Value attnOffset, Value bIdx, Value h, Value qPos, Value row,
               Value j) {
  Type f32 = b.getF32Type();
  Operation *producer = term.producer;
  auto type = cast<RankedTensorType>(producer->getResult(0).getType());
  int64_t rank = type.getRank();
  // Indices into the producer's result: (h, row, j) or (b, h, row, j), with
  // static broadcast dims pinned to 0.
  Value hIdx = broadcastIndex(b, loc, type, rank - 3, h);
  Value rowIdx = broadcastIndex(b, loc, type, rank - 2, row);
  Value keyIdx = broadcastIndex(b, loc, type, rank - 1, j);
  Value batchIdx = rank == 4 ? broadcastIndex(b, loc, type, 0, bIdx) : Value();

  // The producer's query position: the attention's %i when both use the
  // same offset and the row is not broadcast, else row + its own offset.
  auto positionFor = [&](Value offset) -> Value {
    if (offset == attnOffset && rowIdx == row)
      return qPos;
    return buildQueryPosition(b, loc, rowIdx, offset);
  };

  if (auto rb = dyn_cast<RelativeBiasOp>(producer)) {
    Value pos = positionFor(rb.getQOffset());
    Value bucket = BucketOp::create(b, loc, pos, keyIdx, rb.getBucketing());
    Value v = tensor::ExtractOp::create(b, loc, rb.getTable(),
                                        ValueRange{bucket, hIdx});
    return castFloat(b, loc, v, f32);
  }
  if (auto alibi = dyn_cast<AlibiOp>(producer)) {
    Value pos = positionFor(alibi.getQOffset());
    Value slope = tensor::ExtractOp::create(b, loc, term.slopes, hIdx);
    Value v = buildAlibiBias(b, loc, slope, pos, keyIdx, alibi.getSymmetric());
    // Round through the producer's element type, as the bias tensor would.
    return castFloat(b, loc, castFloat(b, loc, v, type.getElementType()), f32);
  }
  if (auto shaw = dyn_cast<ShawLogitsOp>(producer)) {
    Value bucket =
        BucketOp::create(b, loc, rowIdx, keyIdx, shaw.getBucketing());
    Value v = tensor::ExtractOp::create(
        b, loc, term.projection, ValueRange{batchIdx, hIdx, rowIdx, bucket});
    return castFloat(b, loc, castFloat(b, loc, v, type.getElementType()), f32);
  }
  auto deberta = cast<DisentangledBiasOp>(producer);
  Value bucket =
      BucketOp::create(b, loc, rowIdx, keyIdx, deberta.getBucketing());
  Value sum;
  if (term.projection)
    sum = tensor::ExtractOp::create(b, loc, term.projection,
                                    ValueRange{batchIdx, hIdx, rowIdx, bucket});
  if (term.keyProjection) {
    Value p2c = tensor::ExtractOp::create(
        b, loc, term.keyProjection, ValueRange{batchIdx, hIdx, keyIdx, bucket});
    sum = sum ? arith::AddFOp::create(b, loc, sum, p2c).getResult() : p2c;
  }
  return castFloat(b, loc, castFloat(b, loc, sum, type.getElementType()), f32);
}

struct FoldBiasProducers : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Value bias = op.getBias();
    if (!bias)
      return rewriter.notifyMatchFailure(op, "no bias");
    BiasTerms terms;
    collectTerms(bias, terms);
    if (terms.producers.empty())
      return rewriter.notifyMatchFailure(op, "no fusable bias producer");
    // Checked before anything is built: a pattern that changes the IR and
    // then fails is applied again by the greedy driver, without end.
    if (llvm::any_of(terms.dense, [&](Value dense) {
          return dense.getType() != bias.getType();
        }))
      return rewriter.notifyMatchFailure(op, "remaining bias changes type");
    Location loc = op.getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    SmallVector<PreparedTerm> prepared;
    for (Operation *producer : terms.producers)
      prepared.push_back(prepare(rewriter, op, producer));

    // Dense summands that remain: their sum stays the bias operand.
    Value rest;
    for (Value dense : terms.dense)
      rest = rest
                 ? arith::AddFOp::create(rewriter, loc, rest, dense).getResult()
                 : dense;

    // New score_mod: s' = s + Σ terms, then the old region's body. Built
    // through the rewriter so that the pattern driver sees every change.
    Type f32 = rewriter.getF32Type(), idx = rewriter.getIndexType();
    Region &region = op.getScoreMod();
    Block *old = region.empty() ? nullptr : &region.front();
    SmallVector<Location> locs(5, loc);
    Block *block = rewriter.createBlock(&region, region.begin(),
                                        {f32, idx, idx, idx, idx}, locs);
    Value s = block->getArgument(0), bIdx = block->getArgument(1),
          h = block->getArgument(2), qPos = block->getArgument(3),
          j = block->getArgument(4);
    Value attnOffset = op.getQOffset();
    Value row =
        attnOffset
            ? arith::SubIOp::create(rewriter, loc, qPos, attnOffset).getResult()
            : qPos;
    for (const PreparedTerm &term : prepared)
      s = arith::AddFOp::create(
          rewriter, loc, s,
          emitTerm(rewriter, loc, term, attnOffset, bIdx, h, qPos, row, j));
    if (old) {
      IRMapping mapping;
      mapping.map(old->getArgument(0), s);
      for (unsigned a = 1; a < 5; ++a)
        mapping.map(old->getArgument(a), block->getArgument(a));
      for (Operation &inner : old->without_terminator())
        rewriter.clone(inner, mapping);
      s = mapping.lookupOrDefault(
          cast<YieldOp>(old->getTerminator()).getValues().front());
      rewriter.eraseBlock(old);
    }
    YieldOp::create(rewriter, loc, ValueRange{s});
    rewriter.modifyOpInPlace(op, [&] {
      if (rest)
        op.getBiasMutable().assign(rest);
      else
        op.getBiasMutable().clear();
    });
    return success();
  }
};

struct RPEFuseAttentionPass
    : rpe::CheckedOptionsPass<
          rpe::impl::RPEFuseAttentionPassBase<RPEFuseAttentionPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    if (foldOps < 0)
      return error("rpe-fuse-attention: fold-ops must not be negative, got " +
                   Twine(static_cast<int64_t>(foldOps)));
    if (bucketMaxPairs < 0 || bucketMaxDiagonals < 0)
      return error("rpe-fuse-attention: bucket-max-pairs and "
                   "bucket-max-diagonals must not be negative, got " +
                   Twine(static_cast<int64_t>(bucketMaxPairs)) + " and " +
                   Twine(static_cast<int64_t>(bucketMaxDiagonals)));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    // First of the fused pipelines' rpe passes: offsets that cannot
    // overflow the kernels' position arithmetic.
    clampQueryOffsets(getOperation());
    RewritePatternSet patterns(&getContext());
    populateRPEFuseAttentionPatterns(
        patterns, foldOps,
        RaiseBucketsLimits{bucketMaxPairs, bucketMaxDiagonals});
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPEFuseAttentionPatterns(
    RewritePatternSet &patterns, int64_t maxFoldOps,
    RaiseBucketsLimits bucketLimits) {
  patterns.add<FoldBiasProducers>(patterns.getContext());
  populateRPERaiseAttentionPatterns(patterns);
  if (maxFoldOps > 0)
    populateRPEFoldScoreProducersPatterns(patterns, maxFoldOps);
  populateRPERaiseBucketsPatterns(patterns, bucketLimits);
  populateRPERaiseRotaryPatterns(patterns);
}
