//===- VectorizeContractions.cpp - register-blocked matmul kernels --------===//
//
// C[.., i, j] += A[.., i, k] · B[.., k, j] on buffers -> loops over cache
// blocks of (j, k) and register blocks of tile-m rows × tile-n vectors of C,
// accumulated with vector FMAs of a broadcast A element and a row vector of
// B. Each C element still sums k in order. With enough rows, each cache
// block of B is first copied into a buffer whose rows are a vector longer
// than the block's: the register blocks read it again and again, and B's
// own rows, a power of two apart (512 floats), fall into a few L1 sets.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/BufferUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEVECTORIZECONTRACTIONSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// True if the body is `out + in0 * in1` (either operand order) in one float
/// type.
bool isMulAddBody(Block &body) {
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  auto add =
      dyn_cast_or_null<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || !yield || yield->getOperand(0) != add.getResult())
    return false;
  Value in0 = body.getArgument(0), in1 = body.getArgument(1),
        out = body.getArgument(2);
  bool mulArgs = (mul.getLhs() == in0 && mul.getRhs() == in1) ||
                 (mul.getLhs() == in1 && mul.getRhs() == in0);
  bool addArgs = (add.getLhs() == out && add.getRhs() == mul.getResult()) ||
                 (add.getRhs() == out && add.getLhs() == mul.getResult());
  return mulArgs && addArgs;
}

/// What the kernel needs of a matched contraction.
struct Contraction {
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  FloatType elem;
};

FailureOr<Contraction> matchContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() ||
      dims->k.size() != 1 ||
      dims->batch.size() + dims->m.size() + dims->n.size() + 1 !=
          static_cast<size_t>(op.getNumLoops()))
    return failure();
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return failure();
  if (!isMulAddBody(*op.getBlock()))
    return failure();
  auto elem = dyn_cast<FloatType>(getElementTypeOrSelf(op.getDpsInits()[0]));
  if (!elem || elem.getWidth() > 64)
    return failure();
  for (OpOperand &operand : op->getOpOperands())
    if (getElementTypeOrSelf(operand.get()) != elem)
      return failure();
  // Vectors run along n: the last, unit-stride dimension of B and C.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() < 2)
    return failure();
  unsigned n = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
  if (!llvm::is_contained(dims->n, n))
    return failure();
  for (OpOperand *operand :
       {op.getDpsInputOperand(1), op.getDpsInitOperand(0)}) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    if (!type || map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(n, op->getContext()) ||
        !type.isLastDimUnitStride())
      return failure();
  }
  // The register block's rows: the innermost row dimension of C (those only
  // in A and C). Other row and column dimensions (a B or an A broadcast over
  // them) and the batch dimensions are outer loops.
  std::optional<unsigned> m;
  for (AffineExpr e : outMap.getResults())
    if (llvm::is_contained(dims->m, cast<AffineDimExpr>(e).getPosition()))
      m = cast<AffineDimExpr>(e).getPosition();
  Contraction c{{}, *m, n, dims->k.front(), elem};
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
    if (d != c.m && d != c.n && d != c.k)
      c.batch.push_back(d);
  return c;
}

/// The `linalg.fill` right before `op` that fills its output buffer with a
/// scalar, when the kernel can start its accumulators from that scalar
/// instead: the first k block writes every element of C when k is positive.
/// A static positive k drops the fill; a dynamic one keeps it only for the
/// calls where k is 0.
linalg::FillOp initialFill(linalg::LinalgOp op, const Contraction &c) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getOutputs()[0] != op.getDpsInits()[0] ||
      fill.getInputs()[0].getType() != c.elem)
    return nullptr;
  int64_t k = op.getStaticLoopRanges()[c.k];
  if (!ShapedType::isDynamic(k) && k <= 0)
    return nullptr;
  // A or B in C's buffer would read the fill's value.
  Value out = bufferRoot(op.getDpsInits()[0]);
  if (llvm::any_of(op.getDpsInputs(),
                   [&](Value in) { return bufferRoot(in) == out; }))
    return nullptr;
  return fill;
}

/// Emits the kernel of one matched op before it.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, linalg::LinalgOp op, const Contraction &c,
                const VectorizeContractionsOptions &options,
                linalg::FillOp fill)
      : b(b), loc(op.getLoc()), op(op), c(c), options(options), fill(fill),
        initial(fill ? fill.getInputs()[0] : Value()) {
    int64_t lanes = options.vectorWidth * 32 / this->c.elem.getWidth();
    vecType = VectorType::get({std::max<int64_t>(lanes, 1)}, this->c.elem);
    maskType = VectorType::get(vecType.getShape(), b.getI1Type());
    width = vecType.getNumElements();
    a = op.getDpsInputOperand(0);
    bOperand = op.getDpsInputOperand(1);
    out = op.getDpsInitOperand(0);
    auto elemType =
        cast<MemRefType>(bOperand->get().getType()).getElementType();
    blockType = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic}, elemType,
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                               {ShapedType::kDynamic, 1}));
  }

  void build() {
    SmallVector<Range> ranges = op.createLoopRanges(b, loc);
    sizes = llvm::map_to_vector(ranges, [&](Range r) {
      return getValueOrCreateConstantIndexOp(b, loc, r.size);
    });
    dimValues.assign(op.getNumLoops(), Value());
    // A dynamic k of 0 runs no k block: then the fill still writes C.
    if (fill && ShapedType::isDynamic(op.getStaticLoopRanges()[c.k])) {
      Value noK = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        sizes[c.k], cst(0));
      auto ifOp = scf::IfOp::create(b, loc, noK, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      b.clone(*fill);
    }
    buildPackBuffer();
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned d : c.batch) {
      lbs.push_back(cst(0));
      ubs.push_back(sizes[d]);
      steps.push_back(cst(1));
    }
    scf::buildLoopNest(
        b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          for (auto [d, iv] : llvm::zip(c.batch, ivs))
            dimValues[d] = iv;
          buildBatch();
        });
    if (pack)
      memref::DeallocOp::create(b, loc, pack);
  }

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// The buffer B's cache blocks are copied into when C has at least
  /// `packMinRows` rows: min(block-k, k) rows of the block's columns rounded
  /// up to whole vectors, plus one vector (so that its rows are not a power
  /// of two apart). Not when B shares C's buffer (the kernel would read B
  /// before it writes C, not as it goes).
  void buildPackBuffer() {
    if (options.packMinRows <= 0 ||
        bufferRoot(bOperand->get()) == bufferRoot(out->get()))
      return;
    int64_t rows = op.getStaticLoopRanges()[c.m];
    if (!ShapedType::isDynamic(rows) && rows < options.packMinRows)
      return;
    Value nSize = sizes[c.n], kSize = sizes[c.k];
    // Dynamic rows: whether to pack is decided per call.
    if (ShapedType::isDynamic(rows))
      packing = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                      sizes[c.m], cst(options.packMinRows));
    Value columns =
        options.blockN > 0
            ? arith::MinUIOp::create(b, loc, nSize, cst(options.blockN))
                  .getResult()
            : nSize;
    Value vectors = arith::CeilDivUIOp::create(b, loc, columns, cst(width));
    // (One op-building call per argument list: the IR's order must not
    // depend on the order in which the C++ compiler evaluates arguments.)
    Value padded = arith::AddIOp::create(b, loc, vectors, cst(1));
    Value stride = arith::MulIOp::create(b, loc, padded, cst(width));
    Value kRows = arith::MinUIOp::create(b, loc, kSize, cst(options.blockK));
    // No rows when the call does not pack.
    Value allocRows =
        packing ? arith::SelectOp::create(b, loc, packing, kRows, cst(0))
                : kRows;
    auto type = MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                                blockType.getElementType());
    pack = memref::AllocOp::create(b, loc, type, ValueRange{allocRows, stride},
                                   b.getI64IntegerAttr(64));
  }

  /// B's cache block [pc, pcEnd) × [jc, jcEnd) as a 2-D view (k, n) that the
  /// kernel reads at (kv - pc, col - jc): B itself, or its copy in `pack`.
  Value blockOfB(Value jc, Value jcEnd, Value pc, Value pcEnd) {
    Value kLen = arith::SubIOp::create(b, loc, pcEnd, pc);
    Value nLen = arith::SubIOp::create(b, loc, jcEnd, jc);
    AffineMap map = op.getMatchingIndexingMap(bOperand);
    SmallVector<OpFoldResult> offsets, lengths,
        strides(map.getNumResults(), b.getIndexAttr(1));
    for (AffineExpr e : map.getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (d == c.k || d == c.n) {
        offsets.push_back(d == c.k ? pc : jc);
        lengths.push_back(d == c.k ? kLen : nLen);
      } else {
        offsets.push_back(dimValues[d]);
        lengths.push_back(b.getIndexAttr(1));
      }
    }
    auto source = cast<MemRefType>(bOperand->get().getType());
    MemRefType viewType = memref::SubViewOp::inferRankReducedResultType(
        {ShapedType::kDynamic, ShapedType::kDynamic}, source, offsets, lengths,
        strides);
    Value direct = memref::SubViewOp::create(b, loc, viewType, bOperand->get(),
                                             offsets, lengths, strides);
    direct = memref::CastOp::create(b, loc, blockType, direct);
    if (!pack)
      return direct;
    if (!packing)
      return copyBlock(direct, kLen, nLen);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{blockType}, packing,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, direct);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, copyBlock(direct, kLen, nLen));
    return ifOp.getResult(0);
  }

  /// Copies the block `direct` (kLen × nLen) into `pack`; returns the copy.
  Value copyBlock(Value direct, Value kLen, Value nLen) {
    SmallVector<OpFoldResult> zeros(2, b.getIndexAttr(0)),
        ones(2, b.getIndexAttr(1)), blockSizes{kLen, nLen};
    Value copy =
        memref::SubViewOp::create(b, loc, pack, zeros, blockSizes, ones);
    copy = memref::CastOp::create(b, loc, blockType, copy);
    Value zero = cst(0);
    Value one = cst(1);
    auto rowLoop = scf::ForOp::create(b, loc, zero, kLen, one);
    {
      OpBuilder::InsertionGuard rg(b);
      b.setInsertionPointToStart(rowLoop.getBody());
      Value kk = rowLoop.getInductionVar();
      Value step = cst(width);
      auto colLoop = scf::ForOp::create(b, loc, zero, nLen, step);
      b.setInsertionPointToStart(colLoop.getBody());
      Value col = colLoop.getInductionVar();
      Value left = arith::SubIOp::create(b, loc, nLen, col);
      Value mask = vector::CreateMaskOp::create(b, loc, maskType, left);
      Value value = loadVector(direct, {kk, col}, mask);
      vector::MaskedStoreOp::create(b, loc, copy, ValueRange{kk, col}, mask,
                                    value);
    }
    return copy;
  }

  /// for (jc, pc) cache blocks: full row blocks, then single rows.
  void buildBatch() {
    Value nSize = sizes[c.n], kSize = sizes[c.k], mSize = sizes[c.m];
    // Without column blocking, one block of all columns (at least a step of
    // one when there are none).
    Value nBlock = options.blockN > 0
                       ? cst(options.blockN)
                       : arith::MaxUIOp::create(b, loc, nSize, cst(1));
    auto jcLoop = scf::ForOp::create(b, loc, cst(0), nSize, nBlock);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(jcLoop.getBody());
    Value jc = jcLoop.getInductionVar();
    Value jcEnd = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, jc, nBlock), nSize);
    Value kStart = cst(0);
    Value kStep = cst(options.blockK);
    auto pcLoop = scf::ForOp::create(b, loc, kStart, kSize, kStep);
    b.setInsertionPointToStart(pcLoop.getBody());
    Value pc = pcLoop.getInductionVar();
    Value pcEnd = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, pc, cst(options.blockK)), kSize);
    blockB = blockOfB(jc, jcEnd, pc, pcEnd);
    blockCol = jc;
    // Full register blocks of columns end at fullEnd; the rest is masked.
    Value bw = cst(options.tileN * width);
    Value len = arith::SubIOp::create(b, loc, jcEnd, jc);
    Value fullEnd = arith::AddIOp::create(
        b, loc, jc,
        arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, len, bw),
                              bw));
    Value tm = cst(options.tileM);
    Value mFull = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, mSize, tm), tm);
    auto rowBlocks = scf::ForOp::create(b, loc, cst(0), mFull, tm);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(rowBlocks.getBody());
      buildRows(options.tileM, rowBlocks.getInductionVar(), jc, fullEnd, jcEnd,
                pc, pcEnd);
    }
    auto rows = scf::ForOp::create(b, loc, mFull, mSize, cst(1));
    b.setInsertionPointToStart(rows.getBody());
    buildRows(1, rows.getInductionVar(), jc, fullEnd, jcEnd, pc, pcEnd);
  }

  /// Register blocks of `rowCount` rows from `row`: full ones along
  /// [jc, fullEnd), then one masked block for [fullEnd, jcEnd). The rows' A
  /// values stay in cache across the blocks.
  void buildRows(int64_t rowCount, Value row, Value jc, Value fullEnd,
                 Value jcEnd, Value pc, Value pcEnd) {
    Value bw = cst(options.tileN * width);
    auto full = scf::ForOp::create(b, loc, jc, fullEnd, bw);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(full.getBody());
      buildTile(rowCount, row, full.getInductionVar(), /*remaining=*/nullptr,
                pc, pcEnd);
    }
    Value rest = arith::SubIOp::create(b, loc, jcEnd, fullEnd);
    Value any =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, rest, cst(0));
    auto edge = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(edge.thenBlock());
    buildTile(rowCount, row, fullEnd, rest, pc, pcEnd);
  }

  /// Indices of `operand` with m = row, n = col, k = kv.
  SmallVector<Value> indices(OpOperand *operand, Value row, Value col,
                             Value kv) {
    dimValues[c.m] = row;
    dimValues[c.n] = col;
    dimValues[c.k] = kv;
    AffineMap map = op.getMatchingIndexingMap(operand);
    return llvm::map_to_vector(map.getResults(), [&](AffineExpr e) {
      return dimValues[cast<AffineDimExpr>(e).getPosition()];
    });
  }

  Value loadVector(Value base, ValueRange idx, Value mask) {
    if (!mask)
      return vector::LoadOp::create(b, loc, vecType, base, idx);
    Value zero = arith::ConstantOp::create(
        b, loc, vecType,
        DenseElementsAttr::get(vecType, b.getFloatAttr(c.elem, 0.0)));
    return vector::MaskedLoadOp::create(b, loc, vecType, base, idx, mask, zero);
  }

  /// One register block: rowCount × tileN vectors of C at (row, col), k over
  /// [pc, pcEnd); `remaining` columns (masked) or full vectors.
  void buildTile(int64_t rowCount, Value row, Value col, Value remaining,
                 Value pc, Value pcEnd) {
    SmallVector<Value> cols, masks;
    for (int64_t v = 0; v < options.tileN; ++v) {
      cols.push_back(
          v == 0 ? col : arith::AddIOp::create(b, loc, col, cst(v * width)));
      Value mask;
      if (remaining) {
        Value left = arith::MaxSIOp::create(
            b, loc, arith::SubIOp::create(b, loc, remaining, cst(v * width)),
            cst(0));
        mask = vector::CreateMaskOp::create(b, loc, maskType, left);
      }
      masks.push_back(mask);
    }
    SmallVector<Value> rowsIdx;
    for (int64_t r = 0; r < rowCount; ++r)
      rowsIdx.push_back(r == 0 ? row
                               : arith::AddIOp::create(b, loc, row, cst(r)));
    SmallVector<Value> acc;
    auto loadAcc = [&] {
      SmallVector<Value> loaded;
      for (int64_t r = 0; r < rowCount; ++r)
        for (int64_t v = 0; v < options.tileN; ++v)
          loaded.push_back(loadVector(
              out->get(), indices(out, rowsIdx[r], cols[v], pc), masks[v]));
      return loaded;
    };
    if (!initial) {
      acc = loadAcc();
    } else {
      // C held the fill's value: the first k block starts from it, later
      // ones from what the blocks before stored.
      Value splat = vector::BroadcastOp::create(b, loc, vecType, initial);
      SmallVector<Value> splats(rowCount * options.tileN, splat);
      int64_t k = op.getStaticLoopRanges()[c.k];
      if (!ShapedType::isDynamic(k) && k <= options.blockK) {
        acc = splats;
      } else {
        Value first =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, pc, cst(0));
        SmallVector<Type> types(splats.size(), vecType);
        auto ifOp = scf::IfOp::create(b, loc, types, first,
                                      /*withElseRegion=*/true);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        scf::YieldOp::create(b, loc, splats);
        b.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(b, loc, loadAcc());
        acc.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      }
    }
    auto kLoop = scf::ForOp::create(b, loc, pc, pcEnd, cst(1), acc);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value kv = kLoop.getInductionVar();
      Value kInBlock = arith::SubIOp::create(b, loc, kv, pc);
      SmallVector<Value> bRow;
      for (int64_t v = 0; v < options.tileN; ++v) {
        Value colInBlock = arith::SubIOp::create(b, loc, cols[v], blockCol);
        bRow.push_back(loadVector(blockB, {kInBlock, colInBlock}, masks[v]));
      }
      SmallVector<Value> next;
      for (int64_t r = 0; r < rowCount; ++r) {
        Value scalar = memref::LoadOp::create(b, loc, a->get(),
                                              indices(a, rowsIdx[r], col, kv));
        Value splat = vector::BroadcastOp::create(b, loc, vecType, scalar);
        for (int64_t v = 0; v < options.tileN; ++v) {
          Value prev = kLoop.getRegionIterArg(r * options.tileN + v);
          next.push_back(
              options.useFMA
                  ? vector::FMAOp::create(b, loc, splat, bRow[v], prev)
                        .getResult()
                  : arith::AddFOp::create(
                        b, loc, prev,
                        arith::MulFOp::create(b, loc, splat, bRow[v]))
                        .getResult());
        }
      }
      scf::YieldOp::create(b, loc, next);
    }
    for (int64_t r = 0; r < rowCount; ++r)
      for (int64_t v = 0; v < options.tileN; ++v) {
        Value value = kLoop.getResult(r * options.tileN + v);
        SmallVector<Value> idx = indices(out, rowsIdx[r], cols[v], pc);
        if (masks[v])
          vector::MaskedStoreOp::create(b, loc, out->get(), idx, masks[v],
                                        value);
        else
          vector::StoreOp::create(b, loc, value, out->get(), idx);
      }
  }

  OpBuilder &b;
  Location loc;
  linalg::LinalgOp op;
  Contraction c;
  const VectorizeContractionsOptions &options;
  /// The fill of C the kernel replaces and the scalar it filled C with, or
  /// null: C is loaded.
  linalg::FillOp fill;
  Value initial;
  VectorType vecType, maskType;
  int64_t width;
  OpOperand *a, *bOperand, *out;
  /// The type of a cache block of B (blockOfB).
  MemRefType blockType;
  /// The packing buffer or null, and whether this call packs (an i1; null
  /// when the static row count decided).
  Value pack, packing;
  /// The current cache block of B and its first column.
  Value blockB, blockCol;
  SmallVector<Value> sizes;
  SmallVector<Value> dimValues;
};

struct VectorizeContraction : OpInterfaceRewritePattern<linalg::LinalgOp> {
  VectorizeContraction(MLIRContext *ctx, VectorizeContractionsOptions options)
      : OpInterfaceRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Contraction> c = matchContraction(op);
    if (failed(c))
      return rewriter.notifyMatchFailure(op, "not a vectorizable contraction");
    linalg::FillOp fill = initialFill(op, *c);
    rewriter.setInsertionPoint(op);
    KernelBuilder(rewriter, op, *c, options, fill).build();
    rewriter.eraseOp(op);
    if (fill)
      rewriter.eraseOp(fill);
    return success();
  }

  VectorizeContractionsOptions options;
};

struct RPEVectorizeContractionsPass
    : rpe::CheckedOptionsPass<rpe::impl::RPEVectorizeContractionsPassBase<
          RPEVectorizeContractionsPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  VectorizeContractionsOptions getOptions() const {
    VectorizeContractionsOptions options;
    options.vectorWidth = vectorWidth;
    options.tileM = tileM;
    options.tileN = tileN;
    options.blockK = blockK;
    options.blockN = blockN;
    options.packMinRows = packMinRows;
    options.useFMA = fma;
    return options;
  }

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    return checkVectorizeContractionsOptions(
        getOptions(), [&](const Twine &message) {
          return error("rpe-vectorize-contractions: " + message);
        });
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    VectorizeContractionsOptions options = getOptions();
    RewritePatternSet patterns(&getContext());
    populateRPEVectorizeContractionsPatterns(patterns, options);
    // Count the matches before the rewrite erases them.
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (succeeded(matchContraction(op)))
        ++numVectorized;
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::rpe::checkVectorizeContractionsOptions(
    const VectorizeContractionsOptions &o,
    function_ref<LogicalResult(const Twine &)> error) {
  // The register block is unrolled: tile-m × tile-n accumulators (32 vector
  // registers at most on x86), so the bounds keep a typo from building a
  // kernel that takes minutes to compile (tile-m = 100000 did).
  if (o.vectorWidth < 1 || o.vectorWidth > 64)
    return error("vector-width must be in [1, 64], got " +
                 Twine(o.vectorWidth));
  if (o.tileM < 1 || o.tileM > 16 || o.tileN < 1 || o.tileN > 16)
    return error("tile-m and tile-n must be in [1, 16], got " + Twine(o.tileM) +
                 " and " + Twine(o.tileN));
  if (o.blockK < 1)
    return error("block-k must be positive, got " + Twine(o.blockK));
  if (o.blockN < 0)
    return error("block-n must not be negative, got " + Twine(o.blockN));
  if (o.packMinRows < 0)
    return error("pack-min-rows must not be negative, got " +
                 Twine(o.packMinRows));
  return success();
}

void mlir::rpe::populateRPEVectorizeContractionsPatterns(
    RewritePatternSet &patterns, const VectorizeContractionsOptions &options) {
  patterns.add<VectorizeContraction>(patterns.getContext(), options);
}
