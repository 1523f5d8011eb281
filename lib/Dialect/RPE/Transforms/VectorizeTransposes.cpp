//===- VectorizeTransposes.cpp - register-block transposes ----------------===//
//
// out[.., c, .., a] = f(in[.., a, .., c]) on buffers, where c is the input's
// unit-stride dimension and a the output's -> loops over W × W blocks of
// (a, c): W vector loads along c, a transpose in registers, f on vectors,
// W vector stores along a. The ends of a and c run masked.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Dialect/RPE/Utils/BufferUtils.h"
#include "rpe/Dialect/RPE/Utils/VectorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEVECTORIZETRANSPOSESPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

/// What the rewrite needs of a matched transpose.
struct Transpose {
  /// Loop dimensions: `a` is the output's last (unit-stride) dimension, `c`
  /// the input's.
  unsigned a, c;
  /// Lanes of a vector (and rows of a block).
  int64_t lanes;
};

/// True if every op of `body` can run on vectors lane by lane: pure,
/// speculatable (lanes past the ends compute on values that are not
/// stored, so no integer division that could trap), element-wise mappable,
/// on scalars; and the output's value is not read.
bool isElementwiseBody(Block &body) {
  if (body.getNumArguments() != 2 || !body.getArgument(1).use_empty())
    return false;
  for (Operation &op : body.without_terminator()) {
    if (!OpTrait::hasElementwiseMappableTraits(&op) || !isPure(&op) ||
        !isSpeculatable(&op) || op.getNumRegions() != 0 ||
        op.getNumResults() != 1)
      return false;
    for (Type t :
         llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (!t.isIntOrFloat())
        return false;
  }
  return true;
}

FailureOr<Transpose> matchTranspose(Operation *operation, int64_t width) {
  auto op = dyn_cast<linalg::LinalgOp>(operation);
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.hasIndexSemantics() ||
      op.getNumLoops() < 2 || op.getNumParallelLoops() != op.getNumLoops())
    return failure();
  OpOperand *in = op.getDpsInputOperand(0), *out = op.getDpsInitOperand(0);
  auto inType = dyn_cast<MemRefType>(in->get().getType());
  auto outType = dyn_cast<MemRefType>(out->get().getType());
  if (!inType || !outType || !inType.isLastDimUnitStride() ||
      !outType.isLastDimUnitStride() ||
      !rpe::isVectorMemoryElement(inType.getElementType()) ||
      !rpe::isVectorMemoryElement(outType.getElementType()))
    return failure();
  AffineMap inMap = op.getMatchingIndexingMap(in);
  AffineMap outMap = op.getMatchingIndexingMap(out);
  if (!outMap.isIdentity() || !inMap.isPermutation())
    return failure();
  unsigned rank = op.getNumLoops();
  Transpose t{rank - 1, inMap.getDimPosition(rank - 1), width};
  if (t.a == t.c || !isElementwiseBody(*op.getBlock()))
    return failure();
  // A transpose in place would read what it has written.
  if (bufferRoot(in->get()) == bufferRoot(out->get()))
    return failure();
  unsigned bits = std::max(inType.getElementTypeBitWidth(),
                           outType.getElementTypeBitWidth());
  if (bits > 32)
    t.lanes = std::max<int64_t>(2, width * 32 / bits);
  return t;
}

/// Rewrites one matched transpose (see the file comment).
class TransposeBuilder {
public:
  TransposeBuilder(RewriterBase &b, linalg::LinalgOp op, const Transpose &t)
      : b(b), op(op), t(t), loc(op.getLoc()),
        in(op.getDpsInputOperand(0)->get()), out(op.getDpsInits()[0]),
        inMap(op.getMatchingIndexingMap(op.getDpsInputOperand(0))) {}

  void build() {
    unsigned rank = op.getNumLoops();
    for (unsigned d = 0; d < rank; ++d)
      sizes.push_back(b.createOrFold<memref::DimOp>(loc, out, d));
    Value w = cst(t.lanes);
    auto fullOf = [&](Value size) {
      return b.createOrFold<arith::SubIOp>(
          loc, size, b.createOrFold<arith::RemUIOp>(loc, size, w));
    };
    Value aFull = fullOf(sizes[t.a]), cFull = fullOf(sizes[t.c]);
    // The body's scalars from outside, broadcast once.
    Block &body = *op.getBlock();
    auto broadcastOnce = [&](Value v) {
      if (v.getParentBlock() == &body || broadcasts.count(v))
        return;
      auto type = VectorType::get({t.lanes}, v.getType());
      broadcasts[v] = vector::BroadcastOp::create(b, loc, type, v);
    };
    for (Operation &inner : body)
      llvm::for_each(inner.getOperands(), broadcastOnce);
    // The other dimensions, outermost first.
    SmallVector<Value> ivs(rank);
    buildOuterLoops(0, ivs, [&](SmallVector<Value> &ivs) {
      // Blocks that end past a (rows past the end) or past c (lanes past
      // the end) mask only that; the others mask nothing.
      auto blocksAlongC = [&](Value a0, bool rowsPastEnd) {
        forLoop(cst(0), cFull, w, [&](Value c0) {
          buildBlock(ivs, a0, c0, rowsPastEnd, /*lanesPastEnd=*/false);
        });
        ifLess(cFull, sizes[t.c], [&] {
          buildBlock(ivs, a0, cFull, rowsPastEnd, /*lanesPastEnd=*/true);
        });
      };
      forLoop(cst(0), aFull, w,
              [&](Value a0) { blocksAlongC(a0, /*rowsPastEnd=*/false); });
      ifLess(aFull, sizes[t.a],
             [&] { blocksAlongC(aFull, /*rowsPastEnd=*/true); });
    });
  }

private:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  void forLoop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  /// `then` where x < y: nothing where that folds to false, no branch
  /// where it folds to true.
  void ifLess(Value x, Value y, function_ref<void()> then) {
    Value cond =
        b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x, y);
    if (std::optional<int64_t> known = getConstantIntValue(cond)) {
      if (*known)
        then();
      return;
    }
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    then();
  }

  void buildOuterLoops(unsigned d, SmallVector<Value> &ivs,
                       function_ref<void(SmallVector<Value> &)> inner) {
    if (d == ivs.size())
      return inner(ivs);
    if (d == t.a || d == t.c)
      return buildOuterLoops(d + 1, ivs, inner);
    forLoop(cst(0), sizes[d], cst(1), [&](Value iv) {
      ivs[d] = iv;
      buildOuterLoops(d + 1, ivs, inner);
    });
  }

  /// The input's indices for loop indices `loopIdx`.
  SmallVector<Value> inputIndices(ArrayRef<Value> loopIdx) {
    SmallVector<Value> idx;
    for (unsigned r = 0, e = inMap.getNumResults(); r < e; ++r)
      idx.push_back(loopIdx[inMap.getDimPosition(r)]);
    return idx;
  }

  /// `[0, W)` < `bound - base` as a lane mask.
  Value laneMask(Value base, Value bound) {
    Value rest = b.createOrFold<arith::SubIOp>(loc, bound, base);
    auto maskType = VectorType::get({t.lanes}, b.getI1Type());
    return vector::CreateMaskOp::create(b, loc, maskType, ValueRange{rest});
  }

  /// The block (a0.., c0..). With `rowsPastEnd`, row a0 + l reads row
  /// min(a0 + l, end - 1) and the lanes past a's end are not stored; with
  /// `lanesPastEnd`, the lanes past c's end are not read and the columns
  /// past it not stored.
  void buildBlock(ArrayRef<Value> ivs, Value a0, Value c0, bool rowsPastEnd,
                  bool lanesPastEnd) {
    int64_t w = t.lanes;
    auto inVec = VectorType::get({w}, getElementTypeOrSelf(in));
    Value cMask, zero;
    if (lanesPastEnd) {
      cMask = laneMask(c0, sizes[t.c]);
      zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(inVec));
    }
    Value lastRow = rowsPastEnd
                        ? b.createOrFold<arith::SubIOp>(loc, sizes[t.a], cst(1))
                        : Value();
    SmallVector<Value> rows;
    for (int64_t l = 0; l < w; ++l) {
      SmallVector<Value> loopIdx(ivs);
      Value row = b.createOrFold<arith::AddIOp>(loc, a0, cst(l));
      if (rowsPastEnd)
        row = b.createOrFold<arith::MinUIOp>(loc, row, lastRow);
      loopIdx[t.a] = row;
      loopIdx[t.c] = c0;
      SmallVector<Value> idx = inputIndices(loopIdx);
      rows.push_back(
          lanesPastEnd
              ? vector::MaskedLoadOp::create(b, loc, inVec, in, idx, cMask,
                                             zero)
                    .getResult()
              : vector::LoadOp::create(b, loc, inVec, in, idx).getResult());
    }
    SmallVector<Value> columns = buildRegisterTranspose(b, loc, rows);
    Value aMask = rowsPastEnd ? laneMask(a0, sizes[t.a]) : Value();
    for (int64_t m = 0; m < w; ++m) {
      SmallVector<Value> idx(ivs);
      idx[t.a] = a0;
      idx[t.c] = b.createOrFold<arith::AddIOp>(loc, c0, cst(m));
      auto store = [&] {
        Value v = applyBody(columns[m]);
        if (aMask)
          vector::MaskedStoreOp::create(b, loc, out, idx, aMask, v);
        else
          vector::StoreOp::create(b, loc, v, out, idx);
      };
      // Column c0 exists (the block starts before c's end).
      if (lanesPastEnd && m > 0)
        ifLess(idx[t.c], sizes[t.c], store);
      else
        store();
    }
  }

  /// The op's body on a vector of input values.
  Value applyBody(Value input) {
    Block &body = *op.getBlock();
    IRMapping map;
    map.map(body.getArgument(0), input);
    auto vectorOf = [&](Value v) -> Value {
      if (Value mapped = map.lookupOrNull(v))
        return mapped;
      return broadcasts.lookup(v);
    };
    for (Operation &inner : body.without_terminator()) {
      OperationState state(loc, inner.getName());
      for (Value operand : inner.getOperands())
        state.addOperands(vectorOf(operand));
      state.addTypes(VectorType::get({t.lanes}, inner.getResult(0).getType()));
      state.addAttributes(inner.getAttrs());
      map.map(inner.getResult(0), b.create(state)->getResult(0));
    }
    return vectorOf(body.getTerminator()->getOperand(0));
  }

  RewriterBase &b;
  linalg::LinalgOp op;
  Transpose t;
  Location loc;
  Value in, out;
  AffineMap inMap;
  SmallVector<Value> sizes;
  DenseMap<Value, Value> broadcasts;
};

struct VectorizeTranspose : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  VectorizeTranspose(MLIRContext *ctx, int64_t vectorWidth)
      : OpInterfaceRewritePattern(ctx), vectorWidth(vectorWidth) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Transpose> t = matchTranspose(op, vectorWidth);
    if (failed(t))
      return rewriter.notifyMatchFailure(op, "not an element-wise transpose");
    rewriter.setInsertionPoint(op);
    TransposeBuilder(rewriter, op, *t).build();
    rewriter.eraseOp(op);
    return success();
  }

  int64_t vectorWidth;
};

struct RPEVectorizeTransposesPass
    : rpe::CheckedOptionsPass<rpe::impl::RPEVectorizeTransposesPassBase<
          RPEVectorizeTransposesPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    if (vectorWidth < 2 || vectorWidth > 64 ||
        !llvm::isPowerOf2_64(vectorWidth))
      return error("rpe-vectorize-transposes: vector-width must be a power of "
                   "two in 2..64, got " +
                   Twine(static_cast<int64_t>(vectorWidth)));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateRPEVectorizeTransposesPatterns(patterns, vectorWidth);
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (succeeded(matchTranspose(op, vectorWidth)))
        ++numVectorized;
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rpe::populateRPEVectorizeTransposesPatterns(
    RewritePatternSet &patterns, int64_t vectorWidth) {
  patterns.add<VectorizeTranspose>(patterns.getContext(), vectorWidth);
}
