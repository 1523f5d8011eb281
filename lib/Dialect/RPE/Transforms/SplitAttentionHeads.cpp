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
#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/ElementBuilders.h"
#include "rpe/Dialect/RPE/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>

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

/// bucket-columns computes whole cache lines of a table's rows: groups of
/// this many bytes of columns (16 f32).
constexpr int64_t kColumnAlignBytes = 64;

/// Columns [start, start + size) of a table's last dimension.
struct ColumnRange {
  Value start, size;
};

/// `source[offsets..., 0...]` with sizes 1 for the leading offsets and the
/// full extent beyond; with `row0`, `rows` rows from it in the dimension
/// after the leading ones; with `column`, that one column of the last
/// dimension; with `columns`, those columns of it.
Value sliceLeading(OpBuilder &b, Location loc, Value source,
                   ArrayRef<Value> offsets, Value row0 = Value(),
                   Value rows = Value(),
                   std::optional<int64_t> column = std::nullopt,
                   std::optional<ColumnRange> columns = std::nullopt) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t lead = static_cast<int64_t>(offsets.size());
  SmallVector<OpFoldResult> offs, sizes, strides;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    strides.push_back(b.getIndexAttr(1));
    if (d < lead) {
      offs.push_back(offsets[d]);
      sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    if (d == lead && row0) {
      offs.push_back(row0);
      sizes.push_back(rows);
      continue;
    }
    if (d == type.getRank() - 1 && column) {
      offs.push_back(b.getIndexAttr(*column));
      sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    if (d == type.getRank() - 1 && columns) {
      offs.push_back(columns->start);
      sizes.push_back(columns->size);
      continue;
    }
    offs.push_back(b.getIndexAttr(0));
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, source, d).getResult());
    else
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  }
  return tensor::ExtractSliceOp::create(b, loc, source, offs, sizes, strides);
}

/// The tables of `tables` that `score_mod` reads at the query position
/// (`%T[.., .., %i, ...]`): computed per block of query rows.
SetVector<Value> rowTables(AttentionOp op, const SetVector<Value> &tables) {
  SetVector<Value> rows;
  Block &block = op.getScoreMod().front();
  Value iArg = block.getArgument(3);
  for (Value t : tables) {
    bool allRows = llvm::all_of(t.getUsers(), [&](Operation *user) {
      return cast<tensor::ExtractOp>(user).getIndices()[2] == iArg;
    });
    if (allRows)
      rows.insert(t);
  }
  return rows;
}

/// For a Toeplitz bucketing that saturates: the distance M from which the
/// bucket of i - j is constant, with its two values (i - j >= M, i - j <=
/// -M). Clip, T5 and Log buckets are monotonic in the distance on each side
/// and clamped: M is found by a scan up to 2^16.
struct Saturation {
  int64_t distance, after, before;
};
std::optional<Saturation> saturation(BucketingAttrInterface bucketing) {
  if (!isa<ClipBucketingAttr, T5BucketingAttr, LogBucketingAttr>(bucketing))
    return std::nullopt;
  constexpr int64_t kLimit = int64_t(1) << 16;
  Saturation s{0, bucketing.bucket(kLimit, 0), bucketing.bucket(0, kLimit)};
  if (s.after != bucketing.bucket(kLimit << 8, 0) ||
      s.before != bucketing.bucket(0, kLimit << 8))
    return std::nullopt;
  for (int64_t d = kLimit - 1; d >= 0; --d)
    if (bucketing.bucket(d, 0) != s.after ||
        bucketing.bucket(0, d) != s.before) {
      s.distance = d + 1;
      break;
    }
  // A bucket that is the same everywhere gains nothing from a band.
  if (s.distance < 1 || s.distance >= kLimit / 2)
    return std::nullopt;
  return s;
}

/// The tables of `tables` that `score_mod` reads at the key position and a
/// bucket of (i, j) that saturates (`%T[.., .., %j, rpe.bucket %i, %j]`,
/// p2c): per block of query rows, only the keys whose buckets the block's
/// rows tell apart need their rows; the others read one of two columns.
DenseMap<Value, Saturation> keyBandTables(AttentionOp op,
                                          const SetVector<Value> &tables) {
  DenseMap<Value, Saturation> bands;
  Block &block = op.getScoreMod().front();
  Value iArg = block.getArgument(3), jArg = block.getArgument(4);
  for (Value t : tables) {
    std::optional<Saturation> common;
    bool fits = true;
    for (Operation *user : t.getUsers()) {
      ValueRange idx = cast<tensor::ExtractOp>(user).getIndices();
      auto bucket = idx.back().getDefiningOp<BucketOp>();
      std::optional<Saturation> s;
      if (idx.size() == 4 && idx[2] == jArg && bucket &&
          bucket.getI() == iArg && bucket.getJ() == jArg &&
          bucket.getBucketing().isToeplitz())
        s = saturation(bucket.getBucketing());
      if (!s || (common &&
                 (common->distance != s->distance ||
                  common->after != s->after || common->before != s->before))) {
        fits = false;
        break;
      }
      common = s;
    }
    auto type = cast<RankedTensorType>(t.getType());
    if (fits && common && type.getRank() == 4 &&
        common->after < type.getShape().back() &&
        common->before < type.getShape().back() && common->after >= 0 &&
        common->before >= 0)
      bands[t] = *common;
  }
  return bands;
}

/// A table whose columns a block of query rows reads only in part: every
/// read's last index is `rpe.bucket %i, %j` of one Toeplitz bucketing
/// that saturates and is monotonic in i - j (clip, log: the rows of a
/// block and the keys read the columns between the buckets of their
/// smallest and largest i - j), and the producer starts from a constant
/// (`linalg.fill` of an empty tensor: the projections).
struct ColumnTable {
  BucketingAttrInterface bucketing;
  Value fillValue;
  /// The table's columns, and the columns of a kColumnAlignBytes line.
  int64_t width, lineColumns;
};
std::optional<ColumnTable> columnTable(AttentionOp op, Value table) {
  Block &block = op.getScoreMod().front();
  Value iArg = block.getArgument(3), jArg = block.getArgument(4);
  BucketingAttrInterface common;
  for (Operation *user : table.getUsers()) {
    auto read = dyn_cast<tensor::ExtractOp>(user);
    auto bucket =
        read ? read.getIndices().back().getDefiningOp<BucketOp>() : nullptr;
    if (!bucket || bucket.getI() != iArg || bucket.getJ() != jArg ||
        (common && bucket.getBucketing() != common))
      return std::nullopt;
    common = bucket.getBucketing();
  }
  // (b, h, row, bucket): the tile is 1 × 1 × rows × columns.
  auto type = cast<RankedTensorType>(table.getType());
  if (!common || !common.isToeplitz() || type.getRank() != 4 ||
      type.isDynamicDim(3) || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  std::optional<Saturation> s = saturation(common);
  if (!s)
    return std::nullopt;
  // Monotonic over [-M, M] (constant beyond).
  auto at = [&](int64_t d) {
    return d >= 0 ? common.bucket(d, 0) : common.bucket(0, -d);
  };
  bool up = true, down = true;
  for (int64_t d = -s->distance, prev = at(d); d < s->distance; ++d) {
    int64_t next = at(d + 1);
    up &= next >= prev;
    down &= next <= prev;
    prev = next;
  }
  auto producer = table.getDefiningOp<DestinationStyleOpInterface>();
  auto fill = producer && producer.getNumDpsInits() == 1
                  ? producer.getDpsInits()[0].getDefiningOp<linalg::FillOp>()
                  : nullptr;
  if ((!up && !down) || !fill ||
      !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return std::nullopt;
  int64_t lineColumns = std::max<int64_t>(1, kColumnAlignBytes * 8 /
                                                 type.getElementTypeBitWidth());
  return ColumnTable{common, fill.getInputs()[0], type.getDimSize(3),
                     lineColumns};
}

/// The columns a column table's reads need for query rows [qFirst, qLast]
/// and keys [kFirst, kLast]: between the buckets of the smallest i - j
/// (qFirst - kLast) and the largest (qLast - kFirst), widened to whole
/// cache lines (kColumnAlignBytes): the projection's vectors stay aligned
/// and full (with columns [1, 511] of 512, DeBERTa's at L >= 512, they
/// were all split loads: 2-3 % slower). Keys the attention masks need no
/// column; the kernel still reads one for masked keys of its tiles and
/// key vectors, whose scores the mask then replaces (a select) whatever
/// they read:
/// - keys after `lastVisibleKey` (max(key_lengths[b] - 1, 0), when the
///   attention has key_lengths): kLast is at most that; when no key is
///   left (kFirst > kLast) the range is that of the one pair (qFirst,
///   kLast), which the range of the rows and keys [0, kLast] holds;
/// - with `causal` (an attention without q_offset, so that i is the row)
///   only the pairs i - j >= 0 are seen: both distances are clamped at 0,
///   which leaves out the columns of the keys after a row (about half the
///   table).
/// The widening and the clamps are monotonic, so the range of a set of
/// rows and keys holds the range of any part of it.
ColumnRange bucketRange(OpBuilder &b, Location loc, const ColumnTable &ct,
                        Value qFirst, Value qLast, Value kFirst, Value kLast,
                        bool causal, Value lastVisibleKey) {
  if (lastVisibleKey) {
    kLast = arith::MinSIOp::create(b, loc, kLast, lastVisibleKey);
    // Keys from 0 always keep key 0 (lastVisibleKey >= 0).
    if (!isZeroInteger(kFirst)) {
      Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                         kFirst, kLast);
      qLast = arith::SelectOp::create(b, loc, none, qFirst, qLast);
      kFirst = arith::SelectOp::create(b, loc, none, kLast, kFirst);
    }
  }
  if (causal) {
    qFirst = arith::MaxSIOp::create(b, loc, qFirst, kLast);
    qLast = arith::MaxSIOp::create(b, loc, qLast, kFirst);
  }
  Value first = ct.bucketing.buildBucket(b, loc, qFirst, kLast);
  Value last = ct.bucketing.buildBucket(b, loc, qLast, kFirst);
  Value lo = arith::MinSIOp::create(b, loc, first, last);
  Value hi = arith::MaxSIOp::create(b, loc, first, last);
  Value align = indexConst(b, loc, ct.lineColumns);
  lo = arith::SubIOp::create(b, loc, lo,
                             arith::RemUIOp::create(b, loc, lo, align));
  Value end = arith::MulIOp::create(
      b, loc,
      arith::CeilDivUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, hi, indexConst(b, loc, 1)),
          align),
      align);
  end = arith::MinUIOp::create(b, loc, end, indexConst(b, loc, ct.width));
  return {lo, arith::SubIOp::create(b, loc, end, lo)};
}

/// Restricts what the tiles of a column table in `loop` read of the
/// table's position operand (the per-head position table transposed to
/// H×D×NB by rpe-fuse-attention's projections, indexed by the table's head
/// and column) to head `h`'s columns in `range`, the columns of the whole
/// call: each iteration of `loop` tiles the operand's producer to head `h`
/// and those columns of a buffer of one head, which the iteration's tiles
/// then read (the whole operand is no longer built; at L = 128 DeBERTa's
/// 512 buckets need 256, and one head's columns are read from cache right
/// after they are written). The columns outside `range` are not written:
/// every tile reads inside it (bucketRange of a part of the call's rows and
/// keys), and a key band's edge column outside it is never selected (its
/// keys would saturate to an extreme bucket, which is in `range`). An
/// operand read otherwise stays as it is.
void restrictColumnOperands(RewriterBase &rewriter, Location loc, Value table,
                            ColumnRange range, Value h, Operation *loop) {
  auto producer = table.getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getNumResults() != 1)
    return;
  // (b, h, row, column).
  ArrayRef<AffineExpr> outExprs =
      producer.getMatchingIndexingMap(producer.getDpsInitOperand(0))
          .getResults();
  auto headDim = dyn_cast<AffineDimExpr>(outExprs[1]);
  auto columnDim = dyn_cast<AffineDimExpr>(outExprs.back());
  if (!headDim || !columnDim)
    return;
  int64_t width = cast<RankedTensorType>(table.getType()).getShape().back();
  for (OpOperand *input : producer.getDpsInputOperands()) {
    Value operand = input->get();
    ArrayRef<AffineExpr> exprs =
        producer.getMatchingIndexingMap(input).getResults();
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    auto source = operand.getDefiningOp<linalg::LinalgOp>();
    // (head, ..., column): the head and column dimensions, no other use
    // of the two loops.
    auto readsHeadOrColumn = [&](AffineExpr e) {
      return e.isFunctionOfDim(headDim.getPosition()) ||
             e.isFunctionOfDim(columnDim.getPosition());
    };
    if (!type || type.getRank() < 2 || type.getShape().back() != width ||
        exprs.front() != headDim || exprs.back() != columnDim ||
        llvm::count_if(exprs, readsHeadOrColumn) != 2 || !source ||
        source->getNumResults() != 1 || source.getNumDpsInits() != 1)
      continue;
    // Read in `loop` by slices of head h only (the table's tiles), and
    // outside it by the table's producer only.
    SmallVector<tensor::ExtractSliceOp> slices;
    bool onlyHeadSlices = true;
    for (Operation *user : operand.getUsers()) {
      if (user == producer)
        continue;
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      onlyHeadSlices &=
          slice && loop->isProperAncestor(slice) &&
          isEqualConstantIntOrValue(slice.getMixedOffsets()[0], h) &&
          isOneInteger(slice.getMixedSizes()[0]);
      if (slice)
        slices.push_back(slice);
    }
    if (!onlyHeadSlices || slices.empty())
      continue;
    // Head h's columns of a one-head buffer.
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = 1;
    SmallVector<Value> dynamic;
    for (int64_t d = 1; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamic.push_back(tensor::DimOp::create(rewriter, loc, operand, d));
    // An allocation, not a tensor.empty (see tileColumns).
    Value full = bufferization::AllocTensorOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
        dynamic);
    auto slice = cast<tensor::ExtractSliceOp>(
        sliceLeading(rewriter, loc, operand, {h}, Value(), Value(),
                     std::nullopt, range)
            .getDefiningOp());
    FailureOr<TilingResult> tiled =
        tensor::replaceExtractSliceWithTiledProducer(rewriter, slice,
                                                     cast<OpResult>(operand));
    auto tiledOp =
        succeeded(tiled) && tiled->tiledValues.size() == 1
            ? tiled->tiledValues.front().getDefiningOp<linalg::LinalgOp>()
            : nullptr;
    rewriter.eraseOp(slice);
    if (!tiledOp || tiledOp.getNumDpsInits() != 1) {
      // Not expected for a linalg op; the tiles keep reading the operand.
      if (tiledOp)
        rewriter.eraseOp(tiledOp);
      rewriter.eraseOp(full.getDefiningOp());
      continue;
    }
    // The tile writes its columns of `full` in place.
    rewriter.setInsertionPoint(tiledOp);
    auto init = cast<tensor::ExtractSliceOp>(
        sliceLeading(rewriter, loc, full, {indexConst(rewriter, loc, 0)},
                     Value(), Value(), std::nullopt, range)
            .getDefiningOp());
    rewriter.modifyOpInPlace(
        tiledOp, [&] { tiledOp.getDpsInitsMutable()[0].assign(init); });
    rewriter.setInsertionPointAfter(tiledOp);
    Value head = tensor::InsertSliceOp::create(
        rewriter, loc, tiledOp->getResult(0), full, init.getMixedOffsets(),
        init.getMixedSizes(), init.getMixedStrides());
    for (tensor::ExtractSliceOp old : slices) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(old);
      SmallVector<OpFoldResult> offsets = old.getMixedOffsets();
      offsets[0] = rewriter.getIndexAttr(0);
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          old, old.getType(), head, offsets, old.getMixedSizes(),
          old.getMixedStrides());
    }
  }
}

/// `table`'s slice for (b0, h) (and rows [row0, row0 + rows) with `row0`),
/// computed by its producer tiled to it; failure if the producer does not
/// tile to one value (not expected after headTables' checks).
FailureOr<Value> tileTable(RewriterBase &rewriter, Location loc, Value table,
                           Value b, Value h, Value row0 = Value(),
                           Value rows = Value(),
                           std::optional<int64_t> column = std::nullopt,
                           std::optional<ColumnRange> columns = std::nullopt) {
  auto type = cast<RankedTensorType>(table.getType());
  Value b0 = type.getDimSize(0) == 1 ? indexConst(rewriter, loc, 0) : b;
  auto slice = cast<tensor::ExtractSliceOp>(
      sliceLeading(rewriter, loc, table, {b0, h}, row0, rows, column, columns)
          .getDefiningOp());
  FailureOr<TilingResult> tiled = tensor::replaceExtractSliceWithTiledProducer(
      rewriter, slice, cast<OpResult>(table));
  if (failed(tiled) || tiled->tiledValues.size() != 1)
    return failure();
  Value tile = tiled->tiledValues.front();
  rewriter.replaceOp(slice, tile);
  return tile;
}

struct SplitAttentionHeads : OpRewritePattern<AttentionOp> {
  SplitAttentionHeads(MLIRContext *ctx,
                      const SplitAttentionHeadsOptions &options)
      : OpRewritePattern(ctx), options(options) {}
  SplitAttentionHeadsOptions options;

  /// Whether `op`'s (batch, head) pairs split evenly among `num-threads`
  /// threads for any batch: H, or a static B·H, a multiple of it.
  bool evenSplit(AttentionOp op) const {
    auto qType = cast<RankedTensorType>(op.getQ().getType());
    int64_t threads = options.numThreads;
    int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
    if (threads < 2 || ShapedType::isDynamic(heads))
      return false;
    return heads % threads == 0 ||
           (!ShapedType::isDynamic(batch) && batch * heads % threads == 0);
  }

  /// Whether `op`'s (batch, head) pairs go to the threads: with
  /// `parallel-heads`, or with `num-threads` >= 2 when each thread's tables
  /// are those of a block of query rows (`blocks`; no q_offset: a thread
  /// would hold its head's whole tables) and the pairs split evenly, or
  /// may be cut into parts of rows (headParts).
  bool parallelHeads(AttentionOp op, bool blocks) const {
    if (options.parallelHeads)
      return true;
    if (options.numThreads < 2 || op.getQOffset() ||
        options.parallelQueryBlock <= 0)
      return false;
    return evenSplit(op) || blocks;
  }

  /// How the B·H (batch, head) pairs go to T = `num-threads` threads when
  /// they may not split evenly: n = B·H = whole·T + r; each thread takes
  /// `whole` pairs whole and `share` parts of the r others, whose query
  /// rows are cut into `parts` = T / gcd(n, T) parts (share = r / gcd(n,
  /// T)). Only the r pairs left over compute their tables once per part.
  struct HeadParts {
    Value threads, parts, whole, share;
  };

  /// gcd(n, T) is the largest divisor of T that divides n: a select per
  /// divisor (constants for a static n).
  std::optional<HeadParts> headParts(PatternRewriter &rewriter, Location loc,
                                     AttentionOp op, Value pairs) const {
    int64_t threads = options.numThreads;
    if (threads < 2 || evenSplit(op))
      return std::nullopt;
    Value t = indexConst(rewriter, loc, threads);
    Value gcd;
    if (std::optional<int64_t> n = getConstantIntValue(pairs)) {
      gcd = indexConst(rewriter, loc, std::gcd(*n, threads));
    } else {
      gcd = indexConst(rewriter, loc, 1);
      Value zero = indexConst(rewriter, loc, 0);
      for (int64_t d = 2; d <= threads; ++d) {
        if (threads % d)
          continue;
        Value divides = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(rewriter, loc, pairs,
                                   indexConst(rewriter, loc, d)),
            zero);
        gcd = arith::SelectOp::create(rewriter, loc, divides,
                                      indexConst(rewriter, loc, d), gcd);
      }
    }
    HeadParts split;
    split.threads = t;
    split.parts = arith::DivUIOp::create(rewriter, loc, t, gcd);
    split.whole = arith::DivUIOp::create(rewriter, loc, pairs, t);
    split.share = arith::DivUIOp::create(
        rewriter, loc, arith::RemUIOp::create(rewriter, loc, pairs, t), gcd);
    return split;
  }

  /// The work of a causal attention's pair in rows, for cutting it into
  /// parts of equal work: row i (no q_offset) sees min(i + 1, Lk) keys, so
  /// the first r rows cost about W(r) = r^2 / 2 up to r = Lk (`knee` =
  /// W(Lk)) and W(Lk) + (r - Lk) Lk after it; `total` = W(Lq). Built once,
  /// in front of the loop over the pairs.
  struct CausalWork {
    Value lk, knee, total;
  };

  static Value toF64(OpBuilder &b, Location loc, Value index) {
    return castIndexToFloat(b, loc, index, b.getF64Type());
  }

  static CausalWork causalWork(OpBuilder &b, Location loc,
                               const AttentionSizes &dims) {
    CausalWork work;
    Value lq = toF64(b, loc, dims.lq);
    work.lk = toF64(b, loc, dims.lk);
    Value half = f64Const(b, loc, 0.5);
    Value square = arith::MulFOp::create(b, loc, lq, lq);
    Value triangle = arith::MulFOp::create(b, loc, half, square);
    Value lkSquare = arith::MulFOp::create(b, loc, work.lk, work.lk);
    work.knee = arith::MulFOp::create(b, loc, half, lkSquare);
    Value pastKnee = arith::SubFOp::create(b, loc, lq, work.lk);
    Value rectangle = arith::MulFOp::create(b, loc, pastKnee, work.lk);
    Value kneeAndRectangle =
        arith::AddFOp::create(b, loc, work.knee, rectangle);
    Value lqWithinLk =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, lq, work.lk);
    work.total =
        arith::SelectOp::create(b, loc, lqWithinLk, triangle, kneeAndRectangle);
    return work;
  }

  /// Rows [start, end) of part `part` of `parts` of a causal attention's
  /// pair, cut where the work is equal: part p ends at the r with W(r) =
  /// W(Lq) (p + 1) / parts, rounded to a multiple of `part-rows-multiple`
  /// rows (at most Lq; the last part ends at Lq). Rows cut elsewhere would
  /// give the same result, only unequal times.
  std::pair<Value, Value> causalPartRows(OpBuilder &b, Location loc,
                                         const AttentionSizes &dims,
                                         const CausalWork &work, Value part,
                                         Value parts) const {
    Value partsF = toF64(b, loc, parts);
    Value multiple = indexConst(b, loc, options.partRowsMultiple);
    Value multipleF =
        f64Const(b, loc, static_cast<double>(options.partRowsMultiple));
    // The end of part p: W^-1(W(Lq) p / parts), a multiple of the rows.
    auto end = [&](Value p) -> Value {
      Value pF = toF64(b, loc, p);
      Value scaled = arith::MulFOp::create(b, loc, work.total, pF);
      Value share = arith::DivFOp::create(b, loc, scaled, partsF);
      Value twice = arith::AddFOp::create(b, loc, share, share);
      Value beforeKnee = math::SqrtOp::create(b, loc, twice);
      Value beyond = arith::SubFOp::create(b, loc, share, work.knee);
      Value rows = arith::DivFOp::create(b, loc, beyond, work.lk);
      Value afterKnee = arith::AddFOp::create(b, loc, work.lk, rows);
      Value withinKnee = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OLE, share, work.knee);
      Value r =
          arith::SelectOp::create(b, loc, withinKnee, beforeKnee, afterKnee);
      Value inMultiples = arith::DivFOp::create(b, loc, r, multipleF);
      Value rounded = math::RoundOp::create(b, loc, inMultiples);
      Value count = arith::FPToUIOp::create(b, loc, b.getI64Type(), rounded);
      Value countIndex =
          arith::IndexCastUIOp::create(b, loc, b.getIndexType(), count);
      Value bound = arith::MulIOp::create(b, loc, countIndex, multiple);
      return arith::MinUIOp::create(b, loc, bound, dims.lq);
    };
    Value start = end(part);
    Value next = arith::AddIOp::create(b, loc, part, indexConst(b, loc, 1));
    Value last =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next, parts);
    Value stop = end(next);
    Value endRow = arith::SelectOp::create(b, loc, last, dims.lq, stop);
    return {start, endRow};
  }

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
          return ShapedType::isDynamic(columns) ||
                 columns < options.minTableColumns;
        }))
      return rewriter.notifyMatchFailure(op, "tables too narrow to split");

    Location loc = op.getLoc();
    // The op before the ones this rewrite builds in front of `op`.
    Operation *before = op->getPrevNode();
    AttentionSizes dims = getAttentionSizes(rewriter, op);
    RankedTensorType resultType = op.getResult().getType();
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(),
                                         dims.resultDynamicSizes);
    Value count = arith::MulIOp::create(rewriter, loc, dims.batch, dims.heads);
    Value zero = indexConst(rewriter, loc, 0);
    Value one = indexConst(rewriter, loc, 1);
    // The last query and key (0 when there are none).
    auto lastOrZero = [&](Value n) -> Value {
      return arith::MaxSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, n, one), zero);
    };
    Value lastQuery = lastOrZero(dims.lq), lastKey = lastOrZero(dims.lk);

    // Tables read at the query position, per block of query rows, and
    // key-band tables (computed per block for a band of keys).
    SetVector<Value> blockTables;
    DenseMap<Value, Saturation> bandTables;
    if (!op.getQOffset()) {
      blockTables = rowTables(op, tables);
      if (options.keyBand)
        bandTables = keyBandTables(op, tables);
    }
    bool blocked = !blockTables.empty() || !bandTables.empty();

    // Parallel over heads (each thread its head's block tables; one
    // parallel region per call, the loops inside on the head's thread), or
    // one head after another with the threads inside the head (one head's
    // tables in memory, shared by the threads; a few parallel regions per
    // head).
    bool parallel = parallelHeads(op, blocked);
    int64_t queryBlock =
        parallel ? options.parallelQueryBlock : options.queryBlock;
    if (queryBlock <= 0) {
      blockTables.clear();
      bandTables.clear();
      blocked = false;
    }
    // Pairs that may not split evenly among the threads: some pairs' query
    // rows in parts (HeadParts), one iteration each.
    std::optional<HeadParts> split;
    std::optional<CausalWork> work;
    if (parallel && blocked)
      split = headParts(rewriter, loc, op, count);
    if (split && op.getCausal())
      work = causalWork(rewriter, loc, dims);
    // Per thread: its whole pairs, then its parts.
    Value chunk;
    Operation *loop;
    Value bh, acc;
    if (parallel) {
      Value iterations = count;
      if (split) {
        chunk =
            arith::AddIOp::create(rewriter, loc, split->whole, split->share);
        iterations =
            arith::MulIOp::create(rewriter, loc, split->threads, chunk);
      }
      auto forall = scf::ForallOp::create(rewriter, loc,
                                          ArrayRef<OpFoldResult>{iterations},
                                          ValueRange{init}, std::nullopt);
      loop = forall;
      bh = forall.getInductionVar(0);
      acc = forall.getRegionIterArgs().front();
    } else {
      auto forOp =
          scf::ForOp::create(rewriter, loc, zero, count,
                             indexConst(rewriter, loc, 1), ValueRange{init});
      loop = forOp;
      bh = forOp.getInductionVar();
      acc = forOp.getRegionIterArgs().front();
    }
    loop->setAttr(kSplitHeadsLoopAttrName, rewriter.getUnitAttr());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&loop->getRegion(0).front());
    // The iteration's rows: [rowStart, rowEnd), all of them for a whole
    // pair, else one of `parts` parts of the same multiple of
    // `part-rows-multiple` rows. Thread t's iterations (the static
    // schedule's contiguous chunks) are its whole pairs t·whole + j, then
    // the parts t·share + j - whole of the pairs left over.
    Value rowStart = zero, rowEnd = dims.lq;
    if (split) {
      Value t = arith::DivUIOp::create(rewriter, loc, bh, chunk);
      Value j = arith::RemUIOp::create(rewriter, loc, bh, chunk);
      Value isWhole = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, j, split->whole);
      Value wholePair = arith::AddIOp::create(
          rewriter, loc, arith::MulIOp::create(rewriter, loc, t, split->whole),
          j);
      // (One op per statement: the order of arguments' evaluation, and so
      // of the ops, differs between compilers.)
      Value firstPart = arith::MulIOp::create(rewriter, loc, t, split->share);
      Value partOfThread =
          arith::SubIOp::create(rewriter, loc, j, split->whole);
      Value k = arith::AddIOp::create(rewriter, loc, firstPart, partOfThread);
      Value wholePairs =
          arith::MulIOp::create(rewriter, loc, split->threads, split->whole);
      Value leftOver = arith::DivUIOp::create(rewriter, loc, k, split->parts);
      Value partPair =
          arith::AddIOp::create(rewriter, loc, wholePairs, leftOver);
      bh = arith::SelectOp::create(rewriter, loc, isWhole, wholePair, partPair);
      Value parts =
          arith::SelectOp::create(rewriter, loc, isWhole, one, split->parts);
      Value part = arith::SelectOp::create(
          rewriter, loc, isWhole, zero,
          arith::RemUIOp::create(rewriter, loc, k, split->parts));
      if (work) {
        std::tie(rowStart, rowEnd) =
            causalPartRows(rewriter, loc, dims, *work, part, parts);
      } else {
        Value multiple = indexConst(rewriter, loc, options.partRowsMultiple);
        Value partRows = arith::MulIOp::create(
            rewriter, loc,
            arith::CeilDivUIOp::create(
                rewriter, loc,
                arith::CeilDivUIOp::create(rewriter, loc, dims.lq, parts),
                multiple),
            multiple);
        rowStart = arith::MinUIOp::create(
            rewriter, loc, arith::MulIOp::create(rewriter, loc, part, partRows),
            dims.lq);
        rowEnd = arith::MinUIOp::create(
            rewriter, loc,
            arith::AddIOp::create(rewriter, loc, rowStart, partRows), dims.lq);
      }
    }
    Value b = arith::DivUIOp::create(rewriter, loc, bh, dims.heads);
    Value h = arith::RemUIOp::create(rewriter, loc, bh, dims.heads);
    Value hk = arith::DivUIOp::create(rewriter, loc, h, dims.group);

    IRMapping map;
    map.map(op.getQ(), sliceLeading(rewriter, loc, op.getQ(), {b, h}));
    map.map(op.getK(), sliceLeading(rewriter, loc, op.getK(), {b, hk}));
    map.map(op.getV(), sliceLeading(rewriter, loc, op.getV(), {b, hk}));
    // The last key that key_lengths[b] lets a row see (0 when it is 0: any
    // range will do then, and ranges stay nested when key 0 is in the
    // whole call's).
    Value lastVisibleKey;
    if (Value lengths = op.getKeyLengths()) {
      map.map(lengths, sliceLeading(rewriter, loc, lengths, {b}));
      Value length =
          tensor::ExtractOp::create(rewriter, loc, lengths, ValueRange{b});
      lastVisibleKey = lastOrZero(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getIndexType(), length));
    }
    // Before any tiling adds other uses of the tables.
    DenseMap<Value, ColumnTable> columnTables;
    if (options.bucketColumns)
      for (Value table : tables)
        if (blockTables.contains(table) || bandTables.count(table))
          if (std::optional<ColumnTable> ct = columnTable(op, table))
            columnTables[table] = *ct;
    // Each other table's slice for (b, h), computed by its producer tiled
    // to it; a key-band table's two saturated columns.
    DenseSet<Value> tiledTables;
    // `table`'s tile (see tileTable), recorded in tiledTables; null if the
    // producer does not tile, after which the pattern gives up.
    auto tile = [&](Value table, Value row0 = Value(), Value rows = Value(),
                    std::optional<int64_t> column = std::nullopt) -> Value {
      FailureOr<Value> t =
          tileTable(rewriter, loc, table, b, h, row0, rows, column);
      if (failed(t))
        return Value();
      tiledTables.insert(*t);
      return *t;
    };
    // The rows [row0, row0 + rows) of a column table (columnTable) in a
    // tensor of the table's width: per group of `bucketColumnRows` rows
    // (all rows at 0), only the columns `rangeOf(first row, rows)` are
    // computed, in place. The other columns are left as they are: no read
    // of the table uses them (a row window may load some of them into
    // lanes it then drops), and filling them was a memset larger than the
    // table's computed part (DeBERTa 1.04–1.07× slower at L ≤ 512).
    using RangeFn = function_ref<ColumnRange(Value, Value)>;
    auto tileColumns = [&](Value table, const ColumnTable &ct, Value row0,
                           Value rows, RangeFn rangeOf) -> Value {
      auto tableType = cast<RankedTensorType>(table.getType());
      int64_t rank = tableType.getRank();
      int64_t width = tableType.getShape().back();
      SmallVector<int64_t> shape(rank, 1);
      std::optional<int64_t> staticRows = getConstantIntValue(rows);
      shape[rank - 2] = staticRows ? *staticRows : ShapedType::kDynamic;
      shape[rank - 1] = width;
      SmallVector<Value> dynamic;
      if (!staticRows)
        dynamic.push_back(rows);
      // An allocation, not a tensor.empty: a slice of that would fold into
      // an empty tensor of its own, and the columns become a copy.
      Value full = bufferization::AllocTensorOp::create(
          rewriter, loc,
          RankedTensorType::get(shape, tableType.getElementType()), dynamic);
      // Rows [r, r + n) of the table, rows [s, s + n) of `dest`: the
      // columns `range` computed and written into dest by `insert`.
      using InsertFn = function_ref<Value(Value, Value, ArrayRef<OpFoldResult>,
                                          ArrayRef<OpFoldResult>)>;
      auto computeRows = [&](Value dest, Value r, OpFoldResult s, Value n,
                             ColumnRange range, InsertFn insert) -> Value {
        FailureOr<Value> t =
            tileTable(rewriter, loc, table, b, h, r, n, std::nullopt, range);
        if (failed(t))
          return Value();
        auto tiledOp = t->getDefiningOp<DestinationStyleOpInterface>();
        if (!tiledOp || tiledOp.getNumDpsInits() != 1)
          return Value();
        auto tileType = cast<RankedTensorType>(t->getType());
        // Built before the tiled op (its init).
        rewriter.setInsertionPoint(tiledOp);
        SmallVector<OpFoldResult> offs(rank, rewriter.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes(rank, rewriter.getIndexAttr(1));
        SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
        offs[rank - 2] = s;
        sizes[rank - 2] = n;
        offs[rank - 1] = range.start;
        sizes[rank - 1] = range.size;
        // The range's own fill comes right before the tile
        // (rpe-vectorize-contractions then starts from the value instead
        // of filling).
        Value init = tensor::ExtractSliceOp::create(rewriter, loc, tileType,
                                                    dest, offs, sizes, strides);
        Value filled = linalg::FillOp::create(rewriter, loc, ct.fillValue, init)
                           .getResult(0);
        rewriter.modifyOpInPlace(
            tiledOp, [&] { tiledOp.getDpsInitsMutable()[0].assign(filled); });
        rewriter.setInsertionPointAfter(tiledOp);
        return insert(*t, dest, offs, sizes);
      };
      auto unitStrides = [&](size_t n) {
        return SmallVector<OpFoldResult>(n, rewriter.getIndexAttr(1));
      };
      auto insertSlice = [&](Value source, Value dest,
                             ArrayRef<OpFoldResult> offs,
                             ArrayRef<OpFoldResult> sizes) -> Value {
        return tensor::InsertSliceOp::create(rewriter, loc, source, dest, offs,
                                             sizes, unitStrides(offs.size()));
      };
      if (options.bucketColumnRows <= 0) {
        full = computeRows(full, row0, rewriter.getIndexAttr(0), rows,
                           rangeOf(row0, rows), insertSlice);
      } else {
        // The groups in parallel: one parallel region per table and block
        // (not one per group), each group's range written in place.
        OpFoldResult step = rewriter.getIndexAttr(options.bucketColumnRows);
        auto groups = scf::ForallOp::create(
            rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{rows}, ArrayRef<OpFoldResult>{step},
            ValueRange{full}, std::nullopt);
        OpBuilder::InsertionGuard groupGuard(rewriter);
        rewriter.setInsertionPointToStart(groups.getBody());
        Value s = groups.getInductionVar(0);
        Value n = arith::MinSIOp::create(
            rewriter, loc, indexConst(rewriter, loc, options.bucketColumnRows),
            arith::SubIOp::create(rewriter, loc, rows, s));
        Value r = arith::AddIOp::create(rewriter, loc, row0, s);
        auto parallelInsert = [&](Value source, Value dest,
                                  ArrayRef<OpFoldResult> offs,
                                  ArrayRef<OpFoldResult> sizes) -> Value {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToEnd(groups.getTerminator().getBody());
          tensor::ParallelInsertSliceOp::create(rewriter, loc, source, dest,
                                                offs, sizes,
                                                unitStrides(offs.size()));
          return dest;
        };
        if (!computeRows(groups.getRegionIterArgs().front(), r, s, n,
                         rangeOf(r, n), parallelInsert))
          return Value();
        full = groups.getResult(0);
      }
      if (full)
        tiledTables.insert(full);
      return full;
    };
    auto giveUp = [&] {
      // Leave the IR as it was: the loop and what was built in front of
      // it (sizes, counts), last first. Otherwise the greedy driver would
      // see a change and try again, up to its limit.
      rewriter.eraseOp(loop);
      while (op->getPrevNode() != before)
        rewriter.eraseOp(op->getPrevNode());
      return rewriter.notifyMatchFailure(op, "cannot tile a table producer");
    };
    // Per key-band table: the columns read before (i - j >= M) and after
    // (i - j <= -M) the band.
    DenseMap<Value, std::pair<Value, Value>> edgeTiles;
    for (Value table : tables) {
      if (blockTables.contains(table))
        continue;
      if (auto band = bandTables.find(table); band != bandTables.end()) {
        Value before = tile(table, Value(), Value(), band->second.after);
        Value after = before
                          ? tile(table, Value(), Value(), band->second.before)
                          : Value();
        if (!after)
          return giveUp();
        edgeTiles[table] = {before, after};
        continue;
      }
      Value headTile = tile(table);
      if (!headTile)
        return giveUp();
      map.map(table, headTile);
    }

    // Blocks of query rows: q's rows and the row tables' rows of the block,
    // the attention at q_offset = the block's first row.
    scf::ForOp blockLoop;
    Value row0;
    DenseSet<Value> rowTiles;
    // Per key-band tile: its first key, its number of keys and the table's
    // two edge columns.
    struct BandTile {
      Value start, length, before, after;
    };
    DenseMap<Value, BandTile> bandTiles;
    if (!blockTables.empty() || !bandTables.empty()) {
      Value step = indexConst(rewriter, loc, queryBlock);
      // In a forall the blocks write the head's slice of its output (or
      // the part's rows of it), inserted whole at the end; in a for the
      // output itself.
      Value blockAcc = acc;
      if (isa<scf::ForallOp>(loop))
        blockAcc = split ? sliceLeading(rewriter, loc, acc, {b, h}, rowStart,
                                        arith::SubIOp::create(rewriter, loc,
                                                              rowEnd, rowStart))
                         : sliceLeading(rewriter, loc, acc, {b, h});
      blockLoop = scf::ForOp::create(rewriter, loc, rowStart, rowEnd, step,
                                     ValueRange{blockAcc});
      rewriter.setInsertionPointToStart(blockLoop.getBody());
      row0 = blockLoop.getInductionVar();
      Value rows = arith::MinSIOp::create(
          rewriter, loc, step,
          arith::SubIOp::create(rewriter, loc, rowEnd, row0));
      map.map(op.getQ(),
              sliceLeading(rewriter, loc, op.getQ(), {b, h}, row0, rows));
      // The last of n positions from `first`.
      auto lastOf = [&](Value first, Value n) -> Value {
        return arith::SubIOp::create(
            rewriter, loc, arith::AddIOp::create(rewriter, loc, first, n), one);
      };
      Value lastRow = lastOf(row0, rows);
      auto columnTableOf = [&](Value table) -> std::optional<ColumnTable> {
        auto it = columnTables.find(table);
        if (it == columnTables.end())
          return std::nullopt;
        return it->second;
      };
      for (Value table : blockTables) {
        std::optional<ColumnTable> ct = columnTableOf(table);
        // Query rows [r, r + n), every key.
        auto rowRange = [&](Value r, Value n) {
          return bucketRange(rewriter, loc, *ct, r, lastOf(r, n), zero, lastKey,
                             op.getCausal(), lastVisibleKey);
        };
        Value rowTile = ct ? tileColumns(table, *ct, row0, rows, rowRange)
                           : tile(table, row0, rows);
        if (!rowTile)
          return giveUp();
        map.map(table, rowTile);
        rowTiles.insert(rowTile);
      }
      // Key-band tables: the keys j with -M < i - j < M for a row i of the
      // block, [row0 - M + 1, row0 + rows + M - 1), within a band of
      // min(query-block + 2M - 2, Lk) keys that starts there, or earlier to
      // end at Lk: every block's band has the same size, so that the
      // allocation of one block's is reused by the next.
      for (auto &[table, band] : bandTables) {
        Value m1 = indexConst(rewriter, loc, band.distance - 1);
        Value lk = dims.lk;
        Value length = arith::MinSIOp::create(
            rewriter, loc,
            indexConst(rewriter, loc, queryBlock + 2 * (band.distance - 1)),
            lk);
        Value from = arith::SubIOp::create(rewriter, loc, row0, m1);
        Value lastStart = arith::SubIOp::create(rewriter, loc, lk, length);
        Value start = arith::MaxSIOp::create(
            rewriter, loc,
            arith::MinSIOp::create(rewriter, loc, from, lastStart), zero);
        std::optional<ColumnTable> ct = columnTableOf(table);
        // The block's query rows, keys [k, k + n).
        auto keyRange = [&](Value k, Value n) {
          return bucketRange(rewriter, loc, *ct, row0, lastRow, k, lastOf(k, n),
                             op.getCausal(), lastVisibleKey);
        };
        Value bandTile = ct ? tileColumns(table, *ct, start, length, keyRange)
                            : tile(table, start, length);
        if (!bandTile)
          return giveUp();
        map.map(table, bandTile);
        auto [before, after] = edgeTiles.lookup(table);
        bandTiles[bandTile] = {start, length, before, after};
      }
    }

    auto attention = cast<AttentionOp>(rewriter.clone(*op, map));
    SmallVector<int64_t> shape(resultType.getShape());
    shape[0] = shape[1] = 1;
    if (row0) {
      shape[2] = ShapedType::kDynamic;
      attention.getQOffsetMutable().assign(row0);
    }
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

    // Key-band reads: %T[.., .., %j, %bk] -> the band's row %j - start when
    // %j is in the band, else the edge column of its side.
    SmallVector<tensor::ExtractOp> bandReads;
    block.walk([&](tensor::ExtractOp e) {
      if (bandTiles.count(e.getTensor()))
        bandReads.push_back(e);
    });
    for (tensor::ExtractOp read : bandReads) {
      BandTile band = bandTiles.lookup(read.getTensor());
      rewriter.setInsertionPoint(read);
      Location rl = read.getLoc();
      ValueRange idx = read.getIndices();
      Value j = idx[2];
      Value local = arith::SubIOp::create(rewriter, rl, j, band.start);
      Value inBand = arith::CmpIOp::create(
          rewriter, rl, arith::CmpIPredicate::ult, local, band.length);
      Value row = arith::SelectOp::create(rewriter, rl, inBand, local, zero);
      Value before = arith::CmpIOp::create(
          rewriter, rl, arith::CmpIPredicate::slt, j, band.start);
      Value c0 = indexConst(rewriter, rl, 0);
      Value edgeBefore = tensor::ExtractOp::create(
          rewriter, rl, band.before, ValueRange{idx[0], idx[1], j, c0});
      Value edgeAfter = tensor::ExtractOp::create(
          rewriter, rl, band.after, ValueRange{idx[0], idx[1], j, c0});
      Value edge =
          arith::SelectOp::create(rewriter, rl, before, edgeBefore, edgeAfter);
      rewriter.modifyOpInPlace(
          read, [&] { read.getIndicesMutable()[2].assign(row); });
      rewriter.setInsertionPointAfter(read);
      Value value =
          arith::SelectOp::create(rewriter, rl, inBand, read.getResult(), edge);
      rewriter.replaceAllUsesExcept(read.getResult(), value,
                                    value.getDefiningOp());
    }

    if (row0) {
      // The block's tables start at row row0: %i (the query position, the
      // same as before with q_offset = row0) reads row %i - row0.
      Value iArg = block.getArgument(3);
      rewriter.setInsertionPointToStart(&block);
      auto local = arith::SubIOp::create(rewriter, loc, iArg, row0);
      rewriter.replaceUsesWithIf(iArg, local, [&](OpOperand &use) {
        auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
        // Operand 3: the third index (after the tensor).
        return extract && rowTiles.contains(extract.getTensor()) &&
               use.getOperandNumber() == 3;
      });
    }

    rewriter.setInsertionPointAfter(attention);
    SmallVector<OpFoldResult> offs = {
        b, h, row0 ? OpFoldResult(row0) : rewriter.getIndexAttr(0),
        rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                       rewriter.getIndexAttr(1)};
    for (int64_t d : {2, 3})
      sizes.push_back(
          cast<RankedTensorType>(attention.getResult().getType())
                  .isDynamicDim(d)
              ? OpFoldResult(tensor::DimOp::create(rewriter, loc,
                                                   attention.getResult(), d)
                                 .getResult())
              : rewriter.getIndexAttr(resultType.getDimSize(d)));
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    if (auto forall = dyn_cast<scf::ForallOp>(loop)) {
      Value result = attention.getResult();
      if (blockLoop) {
        // The block into the head's slice (or the part's), that into the
        // output.
        offs[0] = offs[1] = rewriter.getIndexAttr(0);
        if (split)
          offs[2] =
              arith::SubIOp::create(rewriter, loc, row0, rowStart).getResult();
        Value inserted = tensor::InsertSliceOp::create(
            rewriter, loc, result, blockLoop.getRegionIterArgs().front(), offs,
            sizes, strides);
        scf::YieldOp::create(rewriter, loc, inserted);
        result = blockLoop.getResult(0);
        rewriter.setInsertionPointAfter(blockLoop);
        offs = {b, h, split ? OpFoldResult(rowStart) : rewriter.getIndexAttr(0),
                rewriter.getIndexAttr(0)};
        sizes = tensor::getMixedSizes(rewriter, loc, result);
      }
      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(rewriter, loc, result, acc, offs,
                                            sizes, strides);
    } else {
      Value dest = blockLoop ? blockLoop.getRegionIterArgs().front() : acc;
      Value inserted = tensor::InsertSliceOp::create(
          rewriter, loc, attention.getResult(), dest, offs, sizes, strides);
      scf::YieldOp::create(rewriter, loc, inserted);
      if (blockLoop) {
        rewriter.setInsertionPointAfter(blockLoop);
        scf::YieldOp::create(rewriter, loc, blockLoop.getResult(0));
      }
    }
    // The tables' position operands, per head and restricted to the
    // columns of the whole call (of the part's rows).
    if (!columnTables.empty()) {
      rewriter.setInsertionPointAfter(
          lastVisibleKey ? lastVisibleKey.getDefiningOp() : hk.getDefiningOp());
      Value firstQuery = zero;
      if (split) {
        // An empty part (rowStart = Lq) reads no table: any range will do.
        firstQuery = arith::MinSIOp::create(rewriter, loc, rowStart, lastQuery);
        lastQuery = arith::MaxSIOp::create(
            rewriter, loc, arith::SubIOp::create(rewriter, loc, rowEnd, one),
            firstQuery);
      }
      for (Value table : tables)
        if (auto it = columnTables.find(table); it != columnTables.end())
          restrictColumnOperands(
              rewriter, loc, table,
              bucketRange(rewriter, loc, it->second, firstQuery, lastQuery,
                          zero, lastKey, op.getCausal(), lastVisibleKey),
              h, loop);
    }
    rewriter.replaceOp(op, loop->getResult(0));
    return success();
  }
};

/// extract_slice(fill(%cst, empty)) -> fill(%cst, extract_slice(empty)),
/// whatever else uses the fill (upstream's swap wants one use): a table's
/// zero init shared by its per-block band and its edge columns.
struct SliceOfEmptyFill : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto fill = slice.getSource().getDefiningOp<linalg::FillOp>();
    if (!fill || !fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>())
      return failure();
    auto init = tensor::ExtractSliceOp::create(
        rewriter, slice.getLoc(), slice.getType(), fill.getOutputs().front(),
        slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(slice, fill.getInputs(),
                                                ValueRange{init.getResult()});
    return success();
  }
};

struct RPESplitAttentionHeadsPass
    : rpe::CheckedOptionsPass<rpe::impl::RPESplitAttentionHeadsPassBase<
          RPESplitAttentionHeadsPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    for (auto [name, value] :
         {std::pair<StringRef, int64_t>("query-block", queryBlock),
          {"parallel-query-block", parallelQueryBlock},
          {"bucket-column-rows", bucketColumnRows},
          {"num-threads", numThreads}})
      if (value < 0)
        return error("rpe-split-attention-heads: " + name +
                     " must not be negative, got " + Twine(value));
    // The threads' work split builds a select per divisor of num-threads.
    if (numThreads > kMaxCPUThreads)
      return error("rpe-split-attention-heads: num-threads must be at most " +
                   Twine(kMaxCPUThreads) + ", got " + Twine(numThreads));
    if (partRowsMultiple <= 0)
      return error("rpe-split-attention-heads: part-rows-multiple must be "
                   "positive, got " +
                   Twine(partRowsMultiple));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    SplitAttentionHeadsOptions options;
    options.minTableColumns = minTableColumns;
    options.parallelHeads = parallelHeads;
    options.numThreads = numThreads;
    options.queryBlock = queryBlock;
    options.parallelQueryBlock = parallelQueryBlock;
    options.partRowsMultiple = partRowsMultiple;
    options.keyBand = keyBand;
    options.bucketColumns = bucketColumns;
    options.bucketColumnRows = bucketColumnRows;
    populateRPESplitAttentionHeadsPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // The whole tables are dead once the sizes of their slices no longer
    // read them; a slice of a fill of an empty tensor becomes a fill of an
    // empty slice, so that nothing of the whole table is left.
    RewritePatternSet cleanup(ctx);
    tensor::DimOp::getCanonicalizationPatterns(cleanup, ctx);
    cleanup.add<SliceOfEmptyFill>(ctx);
    tensor::populateFoldTensorEmptyPatterns(cleanup);
    if (failed(applyPatternsGreedily(getOperation(), std::move(cleanup))))
      signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPESplitAttentionHeadsPatterns(
    RewritePatternSet &patterns, const SplitAttentionHeadsOptions &options) {
  patterns.add<SplitAttentionHeads>(patterns.getContext(), options);
}
