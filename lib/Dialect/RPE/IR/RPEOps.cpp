//===- RPEOps.cpp - rpe operations and verifiers ----------------*- C++ -*-===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rpe;

//===----------------------------------------------------------------------===//
// Verifier helpers
//===----------------------------------------------------------------------===//

namespace {
/// Shape checks shared by the op verifiers and getShapeConstraints. A check
/// on static sizes is verified; one that involves a dynamic size is recorded
/// (when `collected` is set) for rpe-insert-shape-checks.
struct ShapeChecker {
  Operation *op;
  SmallVectorImpl<ShapeConstraint> *collected = nullptr;

  static int64_t sizeOf(Value v, int64_t dim) {
    return cast<ShapedType>(v.getType()).getDimSize(dim);
  }
  void record(ShapeConstraint c) {
    if (collected)
      collected->push_back(std::move(c));
  }

  /// `name` (an operand or result) must have rank `rank`.
  LogicalResult rank(ShapedType type, StringRef name, int64_t rank,
                     StringRef layout) {
    if (type.getRank() != rank)
      return op->emitOpError() << "expects " << name << " of rank " << rank
                               << " (" << layout << "), got " << type;
    return success();
  }

  /// Dimension `bd` of `b` (called `bName`) equals dimension `ad` of `a`
  /// (`aName`): both are `what`.
  LogicalResult same(Value a, int64_t ad, Value b, int64_t bd, StringRef what,
                     StringRef aName, StringRef bName) {
    int64_t x = sizeOf(a, ad), y = sizeOf(b, bd);
    if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y)) {
      record({ShapeConstraint::Kind::Equal,
              {b, bd, bName.str()},
              {a, ad, aName.str()},
              0,
              what.str()});
      return success();
    }
    if (x == y)
      return success();
    return op->emitOpError() << what << " mismatch: " << aName << " has " << x
                             << " but " << bName << " has " << y;
  }

  LogicalResult elementTypes(ArrayRef<std::pair<StringRef, Type>> types) {
    Type first = cast<ShapedType>(types.front().second).getElementType();
    for (auto [name, type] : types.drop_front()) {
      Type elt = cast<ShapedType>(type).getElementType();
      if (elt != first)
        return op->emitOpError()
               << "element type mismatch: " << types.front().first << " has "
               << first << " but " << name << " has " << elt;
    }
    return success();
  }

  /// A sequence length must be within the supported range (static sizes
  /// only: a tensor that long does not fit in memory).
  LogicalResult seqLength(int64_t size, StringRef name) {
    if (!ShapedType::isDynamic(size) && size > kMaxSequenceLength)
      return op->emitOpError()
             << name << " = " << size << " exceeds the maximum sequence length "
             << kMaxSequenceLength;
    return success();
  }

  /// A table indexed by `bucketing` has `numBuckets` rows (dimension `dim`
  /// of `table`).
  LogicalResult buckets(BucketingAttrInterface bucketing, Value table,
                        int64_t dim, StringRef tableName) {
    int64_t rows = sizeOf(table, dim);
    std::string what;
    llvm::raw_string_ostream(what) << "buckets of " << bucketing;
    if (ShapedType::isDynamic(rows)) {
      record({ShapeConstraint::Kind::EqualConstant,
              {table, dim, tableName.str()},
              {},
              bucketing.getNumBuckets(),
              what});
      return success();
    }
    if (rows == bucketing.getNumBuckets())
      return success();
    return op->emitOpError()
           << tableName << " has " << rows << " bucket rows but " << bucketing
           << " has " << bucketing.getNumBuckets() << " buckets";
  }

  /// Window bucketing needs every sequence to fill the window exactly:
  /// dimension `lqDim` of `lqOf` (Lq) and `lkDim` of `lkOf` (Lk).
  LogicalResult window(BucketingAttrInterface bucketing, Value lqOf,
                       int64_t lqDim, Value lkOf, int64_t lkDim) {
    auto w = dyn_cast<Window2DBucketingAttr>(bucketing);
    if (!w)
      return success();
    int64_t tokens = w.getHeight() * w.getWidth();
    for (auto [of, dim, var] :
         {std::tuple<Value, int64_t, StringRef>{lqOf, lqDim, "Lq"},
          {lkOf, lkDim, "Lk"}}) {
      // Static sizes only: the bucketing is total (positions past the
      // window get buckets too), so other lengths stay in bounds.
      int64_t size = sizeOf(of, dim);
      if (!ShapedType::isDynamic(size) && size != tokens)
        return op->emitOpError()
               << var << " = " << size << " but " << bucketing << " covers "
               << tokens << " tokens (height·width)";
    }
    return success();
  }

  LogicalResult lengths(int64_t lq, int64_t lk) {
    return success(succeeded(seqLength(lq, "Lq")) &&
                   succeeded(seqLength(lk, "Lk")));
  }

  /// One index operand per dynamic result dimension, as tensor.empty.
  LogicalResult dynamicSizes(RankedTensorType result, size_t numSizes) {
    if (numSizes == static_cast<size_t>(result.getNumDynamicDims()))
      return success();
    return op->emitOpError()
           << "expects one dynamic size per '?' in the result type: "
           << result.getNumDynamicDims() << " expected, got " << numSizes;
  }
};

/// Result sizes of an op whose dynamic result sizes are index operands.
void reifyFromDynamicSizes(OpBuilder &b, RankedTensorType type,
                           ValueRange dynamicSizes,
                           ReifiedRankedShapedTypeDims &shapes) {
  shapes.push_back(getMixedValues(type.getShape(), dynamicSizes, b));
}

/// Result sizes taken from dimensions of operands: (value, dim) per result
/// dimension, or a static size where the type has one.
void reifyFromOperands(OpBuilder &b, Location loc, RankedTensorType type,
                       ArrayRef<std::pair<Value, int64_t>> from,
                       ReifiedRankedShapedTypeDims &shapes) {
  SmallVector<OpFoldResult> sizes;
  for (auto [d, src] : llvm::enumerate(from)) {
    if (!type.isDynamicDim(d))
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    else if (src.second < 0)
      sizes.push_back(src.first);
    else
      sizes.push_back(
          b.createOrFold<tensor::DimOp>(loc, src.first, src.second));
  }
  shapes.push_back(sizes);
}

/// A result dimension that is an operand's dimension (`dim` >= 0) or an
/// index operand (`dim` = -1); `what` names the size in diagnostics.
struct ResultSource {
  Value value;
  int64_t dim;
  const char *name;
  const char *what;
};
} // namespace

// Per op (below): its size rules and the sources of its result sizes.
static LogicalResult verifyShapes(RelativeBiasOp op, ShapeChecker &c);
static LogicalResult verifyShapes(AlibiOp op, ShapeChecker &c);
static LogicalResult verifyShapes(RotaryOp op, ShapeChecker &c);
static LogicalResult verifyShapes(ShawLogitsOp op, ShapeChecker &c);
static LogicalResult verifyShapes(ShawValuesOp op, ShapeChecker &c);
static LogicalResult verifyShapes(DisentangledBiasOp op, ShapeChecker &c);
static LogicalResult verifyShapes(AttentionOp op, ShapeChecker &c);
static SmallVector<ResultSource> resultSources(RotaryOp op);
static SmallVector<ResultSource> resultSources(ShawLogitsOp op);
static SmallVector<ResultSource> resultSources(ShawValuesOp op);
static SmallVector<ResultSource> resultSources(DisentangledBiasOp op);
static SmallVector<ResultSource> resultSources(AttentionOp op);

/// Where each result dimension comes from (none: the op's dynamic sizes).
static SmallVector<ResultSource> resultSources(Operation *) { return {}; }

/// ODS checks that an optional operand group of an op with
/// operandSegmentSizes holds at most one value, but not that a required one
/// holds exactly one: in generic form, `array<i32: 2, 1, 0, ...>` would
/// leave `v` without a value and its accessor reading past the operands.
/// `names`: the op's leading required operands.
template <typename OpT>
static LogicalResult verifyRequiredOperands(OpT op, ArrayRef<StringRef> names) {
  ArrayRef<int32_t> sizes = op.getProperties().getOperandSegmentSizes();
  for (auto [i, name] : llvm::enumerate(names))
    if (sizes[i] != 1)
      return op.emitOpError()
             << "operand '" << name << "' (operand group " << i
             << ") needs exactly one value, but operandSegmentSizes gives it "
             << sizes[i];
  return success();
}

/// verify(): the op's size rules, then its result's static sizes against
/// their sources.
template <typename OpT> static LogicalResult verifyOp(OpT op) {
  ShapeChecker c{op};
  if (failed(verifyShapes(op, c)))
    return failure();
  for (auto [d, src] : llvm::enumerate(resultSources(op)))
    if (src.dim >= 0 && failed(c.same(src.value, src.dim, op.getResult(), d,
                                      src.what, src.name, "result")))
      return failure();
  return success();
}

/// getShapeConstraints(): the same rules, recorded where a size is dynamic.
template <typename OpT>
static void collectShapeConstraints(OpT op,
                                    SmallVectorImpl<ShapeConstraint> &out) {
  ShapeChecker c{op, &out};
  (void)verifyShapes(op, c);
}

/// reifyResultShapes() from resultSources().
template <typename OpT>
static LogicalResult reifyFromSources(OpT op, OpBuilder &b,
                                      ReifiedRankedShapedTypeDims &shapes) {
  SmallVector<std::pair<Value, int64_t>> from;
  for (const ResultSource &src : resultSources(op))
    from.push_back({src.value, src.dim});
  reifyFromOperands(b, op.getLoc(), op.getResult().getType(), from, shapes);
  return success();
}

/// "f32, index" (diagnostics quote types streamed one by one).
static std::string typesToString(TypeRange types) {
  std::string str;
  llvm::raw_string_ostream os(str);
  llvm::interleaveComma(types, os);
  return str;
}

//===----------------------------------------------------------------------===//
// Custom directive: the bucketing attribute
//===----------------------------------------------------------------------===//

static ParseResult parseBucketing(OpAsmParser &parser,
                                  BucketingAttrInterface &bucketing) {
  return parseBucketingAttr(parser, bucketing);
}

static void printBucketing(OpAsmPrinter &printer, Operation *,
                           BucketingAttrInterface bucketing) {
  printBucketingAttr(printer, bucketing);
}

//===----------------------------------------------------------------------===//
// BucketOp
//===----------------------------------------------------------------------===//

OpFoldResult BucketOp::fold(FoldAdaptor adaptor) {
  auto i = dyn_cast_if_present<IntegerAttr>(adaptor.getI());
  auto j = dyn_cast_if_present<IntegerAttr>(adaptor.getJ());
  if (!i || !j)
    return {};
  int64_t b = getBucketing().bucket(i.getInt(), j.getInt());
  return IntegerAttr::get(IndexType::get(getContext()), b);
}

//===----------------------------------------------------------------------===//
// RelativeBiasOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyShapes(RelativeBiasOp op, ShapeChecker &c) {
  auto table = op.getTable().getType();
  auto result = op.getResult().getType();
  if ((failed(c.rank(table, "table", 2, "NB×H")) ||
       failed(c.rank(result, "result", 3, "H×Lq×Lk"))))
    return failure();
  Value t = op.getTable(), r = op.getResult();
  return success(
      !(failed(c.elementTypes({{"table", table}, {"result", result}})) ||
        failed(c.buckets(op.getBucketing(), t, 0, "table")) ||
        failed(c.dynamicSizes(result, op.getDynamicSizes().size())) ||
        failed(c.same(t, 1, r, 0, "head count", "table", "result")) ||
        failed(c.lengths(result.getDimSize(1), result.getDimSize(2))) ||
        failed(c.window(op.getBucketing(), r, 1, r, 2))));
}

LogicalResult RelativeBiasOp::verify() {
  if (failed(verifyRequiredOperands(*this, {"table"})))
    return failure();
  return verifyOp(*this);
}

void RelativeBiasOp::getShapeConstraints(
    SmallVectorImpl<ShapeConstraint> &constraints) {
  collectShapeConstraints(*this, constraints);
}

LogicalResult
RelativeBiasOp::reifyResultShapes(OpBuilder &b,
                                  ReifiedRankedShapedTypeDims &shapes) {
  reifyFromDynamicSizes(b, getResult().getType(), getDynamicSizes(), shapes);
  return success();
}

//===----------------------------------------------------------------------===//
// AlibiOp
//===----------------------------------------------------------------------===//

SmallVector<double> AlibiOp::getDefaultSlopes(int64_t numHeads) {
  SmallVector<double> slopes;
  auto powerOfTwoSlopes = [](int64_t n) {
    SmallVector<double> s;
    for (int64_t h = 0; h < n; ++h)
      s.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / n));
    return s;
  };
  if (numHeads <= 0)
    return slopes;
  int64_t n = llvm::bit_floor(static_cast<uint64_t>(numHeads));
  slopes = powerOfTwoSlopes(n);
  if (n == numHeads)
    return slopes;
  SmallVector<double> extra = powerOfTwoSlopes(2 * n);
  for (int64_t k = 0; static_cast<int64_t>(slopes.size()) < numHeads; ++k)
    slopes.push_back(extra[2 * k]);
  return slopes;
}

static LogicalResult verifyShapes(AlibiOp op, ShapeChecker &c) {
  auto result = op.getResult().getType();
  if (failed(c.rank(result, "result", 3, "H×Lq×Lk")))
    return failure();
  if ((failed(c.dynamicSizes(result, op.getDynamicSizes().size())) ||
       failed(c.lengths(result.getDimSize(1), result.getDimSize(2)))))
    return failure();
  if (std::optional<ArrayRef<double>> slopes = op.getSlopes()) {
    auto count = static_cast<int64_t>(slopes->size());
    if (result.isDynamicDim(0))
      c.record({ShapeConstraint::Kind::EqualConstant,
                {op.getResult(), 0, "result"},
                {},
                count,
                "slopes"});
    else if (count != result.getDimSize(0))
      return op.emitOpError() << "has " << slopes->size() << " slopes but "
                              << result.getDimSize(0) << " heads";
    for (double s : *slopes)
      if (!std::isfinite(s))
        return op.emitOpError() << "slopes must be finite, got " << s;
  }
  return success();
}

LogicalResult AlibiOp::verify() { return verifyOp(*this); }

void AlibiOp::getShapeConstraints(
    SmallVectorImpl<ShapeConstraint> &constraints) {
  collectShapeConstraints(*this, constraints);
}

LogicalResult AlibiOp::reifyResultShapes(OpBuilder &b,
                                         ReifiedRankedShapedTypeDims &shapes) {
  reifyFromDynamicSizes(b, getResult().getType(), getDynamicSizes(), shapes);
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryOp
//===----------------------------------------------------------------------===//

int64_t RotaryOp::getEffectiveRotaryDim() {
  if (std::optional<int64_t> r = getRotaryDim())
    return *r;
  auto x = getX().getType();
  return x.getDimSize(x.getRank() - 1);
}

static LogicalResult verifyShapes(RotaryOp op, ShapeChecker &c) {
  auto x = op.getX().getType();
  auto pos = op.getPositions().getType();
  if (x.getRank() < 2)
    return op.emitOpError() << "expects x of rank >= 2 (…×L×D), got " << x;
  int64_t rank = x.getRank();
  int64_t length = x.getDimSize(rank - 2), dim = x.getDimSize(rank - 1);
  if (pos.getRank() != 1 && pos.getRank() != 2)
    return op.emitOpError()
           << "expects positions of rank 1 (L) or 2 (B×L), got " << pos;
  if (pos.getRank() == 2 && rank < 3)
    return op.emitOpError()
           << "positions of shape B×L need x of rank >= 3, got " << x;
  Value xv = op.getX(), pv = op.getPositions();
  if ((failed(c.same(xv, rank - 2, pv, pos.getRank() - 1, "sequence length",
                     "x", "positions")) ||
       failed(pos.getRank() == 2
                  ? c.same(xv, 0, pv, 0, "batch size", "x", "positions")
                  : success()) ||
       failed(c.seqLength(length, "L"))))
    return failure();
  double theta = op.getTheta().convertToDouble();
  if (!std::isfinite(theta) || theta <= 0.0)
    return op.emitOpError()
           << "theta must be finite and positive, got " << theta;
  if (std::optional<int64_t> r = op.getRotaryDim()) {
    if (*r < 0 || *r % 2 != 0)
      return op.emitOpError()
             << "rotary_dim must be even and non-negative, got " << *r;
    if (!ShapedType::isDynamic(dim) && *r > dim)
      return op.emitOpError() << "rotary_dim = " << *r
                              << " exceeds the head dimension D = " << dim;
    if (ShapedType::isDynamic(dim))
      c.record({ShapeConstraint::Kind::AtLeast,
                {xv, rank - 1, "x"},
                {},
                *r,
                "rotary_dim"});
  } else if (!ShapedType::isDynamic(dim) && dim % 2 != 0) {
    return op.emitOpError()
           << "rotary_dim defaults to D = " << dim << ", which must be even";
  } else if (ShapedType::isDynamic(dim)) {
    c.record({ShapeConstraint::Kind::MultipleOfConstant,
              {xv, rank - 1, "x"},
              {},
              2,
              "rotary_dim (defaults to the head dimension)"});
  }
  return success();
}

static SmallVector<ResultSource> resultSources(RotaryOp op) {
  SmallVector<ResultSource> sources;
  for (int64_t d = 0; d < op.getX().getType().getRank(); ++d)
    sources.push_back({op.getX(), d, "x", "size"});
  return sources;
}

LogicalResult RotaryOp::verify() { return verifyOp(*this); }

void RotaryOp::getShapeConstraints(
    SmallVectorImpl<ShapeConstraint> &constraints) {
  collectShapeConstraints(*this, constraints);
}

LogicalResult RotaryOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &shapes) {
  return reifyFromSources(*this, b, shapes);
}

OpFoldResult RotaryOp::fold(FoldAdaptor) {
  if (getEffectiveRotaryDim() == 0)
    return getX();
  return {};
}

//===----------------------------------------------------------------------===//
// ShawLogitsOp / ShawValuesOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyShapes(ShawLogitsOp op, ShapeChecker &c) {
  auto q = op.getQ().getType();
  auto emb = op.getEmb().getType();
  auto result = op.getResult().getType();
  if ((failed(c.rank(q, "q", 4, "B×H×Lq×D")) ||
       failed(c.rank(emb, "emb", 2, "NB×D")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×Lk"))))
    return failure();
  if (result.isDynamicDim(3) != static_cast<bool>(op.getKeyLength()))
    return op.emitOpError() << "expects a key_length operand exactly when Lk "
                               "is dynamic in the result type";
  Value qv = op.getQ(), ev = op.getEmb(), r = op.getResult();
  return success(
      !(failed(c.elementTypes({{"q", q}, {"emb", emb}, {"result", result}})) ||
        failed(c.buckets(op.getBucketing(), ev, 0, "emb")) ||
        failed(c.same(qv, 3, ev, 1, "head dimension", "q", "emb")) ||
        failed(c.lengths(q.getDimSize(2), result.getDimSize(3))) ||
        failed(c.window(op.getBucketing(), qv, 2, r, 3))));
}

static SmallVector<ResultSource> resultSources(ShawLogitsOp op) {
  Value q = op.getQ();
  return {{q, 0, "q", "batch size"},
          {q, 1, "q", "head count"},
          {q, 2, "q", "query length"},
          {op.getKeyLength(), -1, "key_length", "key length"}};
}

LogicalResult ShawLogitsOp::verify() { return verifyOp(*this); }

void ShawLogitsOp::getShapeConstraints(
    SmallVectorImpl<ShapeConstraint> &constraints) {
  collectShapeConstraints(*this, constraints);
}

LogicalResult
ShawLogitsOp::reifyResultShapes(OpBuilder &b,
                                ReifiedRankedShapedTypeDims &shapes) {
  return reifyFromSources(*this, b, shapes);
}

static LogicalResult verifyShapes(ShawValuesOp op, ShapeChecker &c) {
  auto p = op.getP().getType();
  auto emb = op.getEmb().getType();
  auto result = op.getResult().getType();
  if ((failed(c.rank(p, "p", 4, "B×H×Lq×Lk")) ||
       failed(c.rank(emb, "emb", 2, "NB×D")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×D"))))
    return failure();
  Value pv = op.getP(), ev = op.getEmb();
  return success(
      !(failed(c.elementTypes({{"p", p}, {"emb", emb}, {"result", result}})) ||
        failed(c.buckets(op.getBucketing(), ev, 0, "emb")) ||
        failed(c.lengths(p.getDimSize(2), p.getDimSize(3))) ||
        failed(c.window(op.getBucketing(), pv, 2, pv, 3))));
}

static SmallVector<ResultSource> resultSources(ShawValuesOp op) {
  Value p = op.getP();
  return {{p, 0, "p", "batch size"},
          {p, 1, "p", "head count"},
          {p, 2, "p", "query length"},
          {op.getEmb(), 1, "emb", "head dimension"}};
}

LogicalResult ShawValuesOp::verify() { return verifyOp(*this); }

void ShawValuesOp::getShapeConstraints(
    SmallVectorImpl<ShapeConstraint> &constraints) {
  collectShapeConstraints(*this, constraints);
}

LogicalResult
ShawValuesOp::reifyResultShapes(OpBuilder &b,
                                ReifiedRankedShapedTypeDims &shapes) {
  return reifyFromSources(*this, b, shapes);
}

//===----------------------------------------------------------------------===//
// DisentangledBiasOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyShapes(DisentangledBiasOp op, ShapeChecker &c) {
  auto q = op.getQ().getType(), k = op.getK().getType();
  auto posQ = op.getPosQ().getType(), posK = op.getPosK().getType();
  auto result = op.getResult().getType();
  if ((failed(c.rank(q, "q", 4, "B×H×Lq×D")) ||
       failed(c.rank(k, "k", 4, "B×H×Lk×D")) ||
       failed(c.rank(posQ, "pos_q", 3, "H×NB×D")) ||
       failed(c.rank(posK, "pos_k", 3, "H×NB×D")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×Lk"))))
    return failure();
  if (!op.getC2p() && !op.getP2c())
    return op.emitOpError() << "needs at least one of 'c2p' and 'p2c'";
  Value qv = op.getQ(), kv = op.getK();
  if ((failed(c.elementTypes({{"q", q},
                              {"k", k},
                              {"pos_q", posQ},
                              {"pos_k", posK},
                              {"result", result}})) ||
       failed(c.same(qv, 0, kv, 0, "batch size", "q", "k")) ||
       failed(c.same(qv, 1, kv, 1, "head count", "q", "k")) ||
       failed(c.same(qv, 3, kv, 3, "head dimension", "q", "k"))))
    return failure();
  for (auto [pos, name] : {std::pair<Value, StringRef>{op.getPosQ(), "pos_q"},
                           std::pair<Value, StringRef>{op.getPosK(), "pos_k"}})
    if ((failed(c.same(qv, 1, pos, 0, "head count", "q", name)) ||
         failed(c.buckets(op.getBucketing(), pos, 1, name)) ||
         failed(c.same(qv, 3, pos, 2, "head dimension", "q", name))))
      return failure();
  return success(!(failed(c.lengths(q.getDimSize(2), k.getDimSize(2))) ||
                   failed(c.window(op.getBucketing(), qv, 2, kv, 2))));
}

static SmallVector<ResultSource> resultSources(DisentangledBiasOp op) {
  Value q = op.getQ();
  return {{q, 0, "q", "batch size"},
          {q, 1, "q", "head count"},
          {q, 2, "q", "query length"},
          {op.getK(), 2, "k", "key length"}};
}

LogicalResult DisentangledBiasOp::verify() { return verifyOp(*this); }

void DisentangledBiasOp::getShapeConstraints(
    SmallVectorImpl<ShapeConstraint> &constraints) {
  collectShapeConstraints(*this, constraints);
}

LogicalResult
DisentangledBiasOp::reifyResultShapes(OpBuilder &b,
                                      ReifiedRankedShapedTypeDims &shapes) {
  return reifyFromSources(*this, b, shapes);
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

std::optional<double> AttentionOp::getStaticScale() {
  if (std::optional<APFloat> s = getScale())
    return s->convertToDouble();
  int64_t d = getQ().getType().getDimSize(3);
  if (ShapedType::isDynamic(d))
    return std::nullopt;
  // D = 0: the scores are empty sums (0) whatever the scale; 1 keeps them
  // 0 instead of inf · 0.
  return 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(d, 1)));
}

static LogicalResult verifyShapes(AttentionOp op, ShapeChecker &c) {
  auto q = op.getQ().getType(), k = op.getK().getType(),
       v = op.getV().getType();
  auto result = op.getResult().getType();
  if ((failed(c.rank(q, "q", 4, "B×H×Lq×D")) ||
       failed(c.rank(k, "k", 4, "B×Hkv×Lk×D")) ||
       failed(c.rank(v, "v", 4, "B×Hkv×Lk×Dv")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×Dv"))))
    return failure();
  Value qv = op.getQ(), kv = op.getK(), vv = op.getV();
  int64_t heads = q.getDimSize(1), kvHeads = k.getDimSize(1);
  if ((failed(c.elementTypes(
           {{"q", q}, {"k", k}, {"v", v}, {"result", result}})) ||
       failed(c.same(qv, 0, kv, 0, "batch size", "q", "k")) ||
       failed(c.same(qv, 0, vv, 0, "batch size", "q", "v")) ||
       failed(c.same(kv, 1, vv, 1, "key/value head count", "k", "v")) ||
       failed(c.same(kv, 2, vv, 2, "key length", "k", "v")) ||
       failed(c.same(qv, 3, kv, 3, "head dimension", "q", "k")) ||
       failed(c.lengths(q.getDimSize(2), k.getDimSize(2)))))
    return failure();
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads))
    c.record({ShapeConstraint::Kind::MultipleOf,
              {qv, 1, "q"},
              {kv, 1, "k"},
              0,
              "query head count (grouped-query attention)"});
  else if (kvHeads == 0)
    return op.emitOpError() << "key/value head count must be positive (the "
                               "query heads form groups of H / Hkv), got 0";
  else if (heads % kvHeads != 0)
    return op.emitOpError()
           << "query head count " << heads
           << " is not a multiple of the key/value head count " << kvHeads;

  if (Value bias = op.getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 3 && b.getRank() != 4)
      return op.emitOpError() << "expects bias of rank 3 (H×Lq×Lk) or 4 "
                                 "(B×H×Lq×Lk), got "
                              << b;
    if (failed(c.elementTypes({{"q", q}, {"bias", b}})))
      return failure();
    // Trailing dims of the bias against B×H×Lq×Lk; a static 1 broadcasts.
    std::pair<Value, int64_t> full[] = {{qv, 0}, {qv, 1}, {qv, 2}, {kv, 2}};
    const char *names[] = {"batch size", "head count", "query length",
                           "key length"};
    const char *fullNames[] = {"q", "q", "q", "k"};
    for (int64_t d = 0; d < b.getRank(); ++d) {
      int64_t fd = 4 - b.getRank() + d;
      if (b.getDimSize(d) == 1)
        continue;
      if (failed(c.same(full[fd].first, full[fd].second, bias, d, names[fd],
                        fullNames[fd], "bias")))
        return failure();
    }
  }
  if (Value lengths = op.getKeyLengths()) {
    if (failed(c.same(qv, 0, lengths, 0, "batch size", "q", "key_lengths")))
      return failure();
    c.record({ShapeConstraint::Kind::ValuesInRange,
              {lengths, -1, "key_lengths"},
              {kv, 2, "k"},
              0,
              "key lengths"});
  }

  std::optional<BucketingAttrInterface> bucketing = op.getBucketing();
  if (Value relValues = op.getRelValues()) {
    if (!bucketing)
      return op.emitOpError() << "rel_values requires a 'bucketing' attribute";
    auto e = cast<RankedTensorType>(relValues.getType());
    if ((failed(c.rank(e, "rel_values", 2, "NB×Dv"))))
      return failure();
    if ((failed(c.elementTypes({{"q", q}, {"rel_values", e}})) ||
         failed(c.buckets(*bucketing, relValues, 0, "rel_values")) ||
         failed(c.same(vv, 3, relValues, 1, "value dimension", "v",
                       "rel_values"))))
      return failure();
  }
  if (bucketing && failed(c.window(*bucketing, qv, 2, kv, 2)))
    return failure();
  if (std::optional<APFloat> s = op.getScale())
    if (!s->isFinite())
      return op.emitOpError() << "scale must be finite";
  if (op.getCausal() && op.getLookahead())
    return op.emitOpError()
           << "'causal' and 'lookahead' are exclusive ('causal' is a lookahead "
              "of 0)";
  return success();
}

static SmallVector<ResultSource> resultSources(AttentionOp op) {
  Value q = op.getQ();
  return {{q, 0, "q", "batch size"},
          {q, 1, "q", "head count"},
          {q, 2, "q", "query length"},
          {op.getV(), 3, "v", "value dimension"}};
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyRequiredOperands(*this, {"q", "k", "v"})))
    return failure();
  return verifyOp(*this);
}

void AttentionOp::getShapeConstraints(
    SmallVectorImpl<ShapeConstraint> &constraints) {
  collectShapeConstraints(*this, constraints);
}

LogicalResult
AttentionOp::reifyResultShapes(OpBuilder &b,
                               ReifiedRankedShapedTypeDims &shapes) {
  return reifyFromSources(*this, b, shapes);
}

LogicalResult AttentionOp::verifyRegions() {
  Region &region = getScoreMod();
  if (region.empty())
    return success();
  Block &block = region.front();
  MLIRContext *ctx = getContext();
  Type f32 = Float32Type::get(ctx), idx = IndexType::get(ctx);
  SmallVector<Type> expected = {f32, idx, idx, idx, idx};
  if (block.getArgumentTypes() != TypeRange(expected))
    return emitOpError() << "expects the score_mod region to take (f32, index, "
                            "index, index, index) = (score, b, h, i, j), got ("
                         << typesToString(block.getArgumentTypes()) << ")";
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return emitOpError() << "expects the score_mod region to end in rpe.yield";
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != f32)
    return yield.emitOpError()
           << "must yield exactly one f32 score, got ("
           << typesToString(yield.getValues().getTypes()) << ")";
  return success();
}

#include "rpe/Dialect/RPE/IR/RPEOpInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "rpe/Dialect/RPE/IR/RPEOps.cpp.inc"
