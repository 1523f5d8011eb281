//===- RPEOps.cpp - rpe operations and verifiers ----------------*- C++ -*-===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"

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
/// Shape checks shared by the op verifiers. Every check is skipped where a
/// size is dynamic.
struct ShapeChecker {
  Operation *op;

  /// `name` (an operand or result) must have rank `rank`.
  LogicalResult rank(ShapedType type, StringRef name, int64_t rank,
                     StringRef layout) {
    if (type.getRank() != rank)
      return op->emitOpError() << "expects " << name << " of rank " << rank
                               << " (" << layout << "), got " << type;
    return success();
  }

  /// Static sizes `a` (of `what` in `aName`) and `b` (in `bName`) agree.
  LogicalResult same(int64_t a, int64_t b, StringRef what, StringRef aName,
                     StringRef bName) {
    if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b)
      return success();
    return op->emitOpError() << what << " mismatch: " << aName << " has " << a
                             << " but " << bName << " has " << b;
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

  /// A sequence length must be within the supported range.
  LogicalResult seqLength(int64_t size, StringRef name) {
    if (!ShapedType::isDynamic(size) && size > kMaxSequenceLength)
      return op->emitOpError()
             << name << " = " << size << " exceeds the maximum sequence length "
             << kMaxSequenceLength;
    return success();
  }

  /// A table indexed by `bucketing` has `numBuckets` rows.
  LogicalResult buckets(BucketingAttrInterface bucketing, int64_t rows,
                        StringRef tableName) {
    if (ShapedType::isDynamic(rows) || rows == bucketing.getNumBuckets())
      return success();
    return op->emitOpError()
           << tableName << " has " << rows << " bucket rows but " << bucketing
           << " has " << bucketing.getNumBuckets() << " buckets";
  }

  /// Window bucketing needs every sequence to fill the window exactly.
  LogicalResult window(BucketingAttrInterface bucketing, int64_t lq,
                       int64_t lk) {
    auto w = dyn_cast<Window2DBucketingAttr>(bucketing);
    if (!w)
      return success();
    int64_t tokens = w.getHeight() * w.getWidth();
    for (auto [size, name] : {std::pair<int64_t, StringRef>{lq, "Lq"},
                              std::pair<int64_t, StringRef>{lk, "Lk"}})
      if (!ShapedType::isDynamic(size) && size != tokens)
        return op->emitOpError()
               << name << " = " << size << " but " << bucketing << " covers "
               << tokens << " tokens (height·width)";
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
} // namespace

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

LogicalResult RelativeBiasOp::verify() {
  ShapeChecker c{*this};
  auto table = getTable().getType();
  auto result = getResult().getType();
  if ((failed(c.rank(table, "table", 2, "NB×H")) ||
       failed(c.rank(result, "result", 3, "H×Lq×Lk"))))
    return failure();
  return success(
      !(failed(c.elementTypes({{"table", table}, {"result", result}})) ||
        failed(c.buckets(getBucketing(), table.getDimSize(0), "table")) ||
        failed(c.same(table.getDimSize(1), result.getDimSize(0), "head count",
                      "table", "result")) ||
        failed(c.dynamicSizes(result, getDynamicSizes().size())) ||
        failed(c.lengths(result.getDimSize(1), result.getDimSize(2))) ||
        failed(c.window(getBucketing(), result.getDimSize(1),
                        result.getDimSize(2)))));
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

LogicalResult AlibiOp::verify() {
  ShapeChecker c{*this};
  auto result = getResult().getType();
  if (failed(c.rank(result, "result", 3, "H×Lq×Lk")))
    return failure();
  if ((failed(c.dynamicSizes(result, getDynamicSizes().size())) ||
       failed(c.lengths(result.getDimSize(1), result.getDimSize(2)))))
    return failure();
  if (std::optional<ArrayRef<double>> slopes = getSlopes()) {
    if (!result.isDynamicDim(0) &&
        static_cast<int64_t>(slopes->size()) != result.getDimSize(0))
      return emitOpError() << "has " << slopes->size() << " slopes but "
                           << result.getDimSize(0) << " heads";
    for (double s : *slopes)
      if (!std::isfinite(s))
        return emitOpError() << "slopes must be finite, got " << s;
  }
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

LogicalResult RotaryOp::verify() {
  ShapeChecker c{*this};
  auto x = getX().getType();
  auto pos = getPositions().getType();
  if (x.getRank() < 2)
    return emitOpError() << "expects x of rank >= 2 (…×L×D), got " << x;
  int64_t rank = x.getRank();
  int64_t length = x.getDimSize(rank - 2), dim = x.getDimSize(rank - 1);
  if (pos.getRank() != 1 && pos.getRank() != 2)
    return emitOpError() << "expects positions of rank 1 (L) or 2 (B×L), got "
                         << pos;
  if (pos.getRank() == 2 && rank < 3)
    return emitOpError() << "positions of shape B×L need x of rank >= 3, got "
                         << x;
  if ((failed(c.same(pos.getDimSize(pos.getRank() - 1), length,
                     "sequence length", "positions", "x")) ||
       failed(pos.getRank() == 2 ? c.same(pos.getDimSize(0), x.getDimSize(0),
                                          "batch size", "positions", "x")
                                 : success()) ||
       failed(c.seqLength(length, "L"))))
    return failure();
  double theta = getTheta().convertToDouble();
  if (!std::isfinite(theta) || theta <= 0.0)
    return emitOpError() << "theta must be finite and positive, got " << theta;
  if (std::optional<int64_t> r = getRotaryDim()) {
    if (*r < 0 || *r % 2 != 0)
      return emitOpError() << "rotary_dim must be even and non-negative, got "
                           << *r;
    if (!ShapedType::isDynamic(dim) && *r > dim)
      return emitOpError() << "rotary_dim = " << *r
                           << " exceeds the head dimension D = " << dim;
  } else if (!ShapedType::isDynamic(dim) && dim % 2 != 0) {
    return emitOpError() << "rotary_dim defaults to D = " << dim
                         << ", which must be even";
  }
  return success();
}

OpFoldResult RotaryOp::fold(FoldAdaptor) {
  if (getEffectiveRotaryDim() == 0)
    return getX();
  return {};
}

//===----------------------------------------------------------------------===//
// ShawLogitsOp / ShawValuesOp
//===----------------------------------------------------------------------===//

LogicalResult ShawLogitsOp::verify() {
  ShapeChecker c{*this};
  auto q = getQ().getType();
  auto emb = getEmb().getType();
  auto result = getResult().getType();
  if ((failed(c.rank(q, "q", 4, "B×H×Lq×D")) ||
       failed(c.rank(emb, "emb", 2, "NB×D")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×Lk"))))
    return failure();
  if (result.isDynamicDim(3) != static_cast<bool>(getKeyLength()))
    return emitOpError() << "expects a key_length operand exactly when Lk is "
                            "dynamic in the result type";
  return success(!(
      failed(c.elementTypes({{"q", q}, {"emb", emb}, {"result", result}})) ||
      failed(c.buckets(getBucketing(), emb.getDimSize(0), "emb")) ||
      failed(c.same(emb.getDimSize(1), q.getDimSize(3), "head dimension", "emb",
                    "q")) ||
      failed(c.same(q.getDimSize(0), result.getDimSize(0), "batch size", "q",
                    "result")) ||
      failed(c.same(q.getDimSize(1), result.getDimSize(1), "head count", "q",
                    "result")) ||
      failed(c.same(q.getDimSize(2), result.getDimSize(2), "query length", "q",
                    "result")) ||
      failed(c.lengths(q.getDimSize(2), result.getDimSize(3))) ||
      failed(c.window(getBucketing(), q.getDimSize(2), result.getDimSize(3)))));
}

LogicalResult ShawValuesOp::verify() {
  ShapeChecker c{*this};
  auto p = getP().getType();
  auto emb = getEmb().getType();
  auto result = getResult().getType();
  if ((failed(c.rank(p, "p", 4, "B×H×Lq×Lk")) ||
       failed(c.rank(emb, "emb", 2, "NB×D")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×D"))))
    return failure();
  return success(
      !(failed(c.elementTypes({{"p", p}, {"emb", emb}, {"result", result}})) ||
        failed(c.buckets(getBucketing(), emb.getDimSize(0), "emb")) ||
        failed(c.same(emb.getDimSize(1), result.getDimSize(3), "head dimension",
                      "emb", "result")) ||
        failed(c.same(p.getDimSize(0), result.getDimSize(0), "batch size", "p",
                      "result")) ||
        failed(c.same(p.getDimSize(1), result.getDimSize(1), "head count", "p",
                      "result")) ||
        failed(c.same(p.getDimSize(2), result.getDimSize(2), "query length",
                      "p", "result")) ||
        failed(c.lengths(p.getDimSize(2), p.getDimSize(3))) ||
        failed(c.window(getBucketing(), p.getDimSize(2), p.getDimSize(3)))));
}

//===----------------------------------------------------------------------===//
// DisentangledBiasOp
//===----------------------------------------------------------------------===//

LogicalResult DisentangledBiasOp::verify() {
  ShapeChecker c{*this};
  auto q = getQ().getType(), k = getK().getType();
  auto posQ = getPosQ().getType(), posK = getPosK().getType();
  auto result = getResult().getType();
  if ((failed(c.rank(q, "q", 4, "B×H×Lq×D")) ||
       failed(c.rank(k, "k", 4, "B×H×Lk×D")) ||
       failed(c.rank(posQ, "pos_q", 3, "H×NB×D")) ||
       failed(c.rank(posK, "pos_k", 3, "H×NB×D")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×Lk"))))
    return failure();
  if (!getC2p() && !getP2c())
    return emitOpError() << "needs at least one of 'c2p' and 'p2c'";
  if ((failed(c.elementTypes({{"q", q},
                              {"k", k},
                              {"pos_q", posQ},
                              {"pos_k", posK},
                              {"result", result}})) ||
       failed(
           c.same(q.getDimSize(0), k.getDimSize(0), "batch size", "q", "k")) ||
       failed(
           c.same(q.getDimSize(1), k.getDimSize(1), "head count", "q", "k")) ||
       failed(c.same(q.getDimSize(3), k.getDimSize(3), "head dimension", "q",
                     "k"))))
    return failure();
  for (auto [pos, name] :
       {std::pair<RankedTensorType, StringRef>{posQ, "pos_q"},
        std::pair<RankedTensorType, StringRef>{posK, "pos_k"}})
    if ((failed(c.same(pos.getDimSize(0), q.getDimSize(1), "head count", name,
                       "q")) ||
         failed(c.buckets(getBucketing(), pos.getDimSize(1), name)) ||
         failed(c.same(pos.getDimSize(2), q.getDimSize(3), "head dimension",
                       name, "q"))))
      return failure();
  return success(
      !(failed(c.same(q.getDimSize(0), result.getDimSize(0), "batch size", "q",
                      "result")) ||
        failed(c.same(q.getDimSize(1), result.getDimSize(1), "head count", "q",
                      "result")) ||
        failed(c.same(q.getDimSize(2), result.getDimSize(2), "query length",
                      "q", "result")) ||
        failed(c.same(k.getDimSize(2), result.getDimSize(3), "key length", "k",
                      "result")) ||
        failed(c.lengths(q.getDimSize(2), k.getDimSize(2))) ||
        failed(c.window(getBucketing(), q.getDimSize(2), k.getDimSize(2)))));
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
  return 1.0 / std::sqrt(static_cast<double>(d));
}

LogicalResult AttentionOp::verify() {
  ShapeChecker c{*this};
  auto q = getQ().getType(), k = getK().getType(), v = getV().getType();
  auto result = getResult().getType();
  if ((failed(c.rank(q, "q", 4, "B×H×Lq×D")) ||
       failed(c.rank(k, "k", 4, "B×Hkv×Lk×D")) ||
       failed(c.rank(v, "v", 4, "B×Hkv×Lk×Dv")) ||
       failed(c.rank(result, "result", 4, "B×H×Lq×Dv"))))
    return failure();
  int64_t batch = q.getDimSize(0), heads = q.getDimSize(1);
  int64_t lq = q.getDimSize(2), lk = k.getDimSize(2);
  int64_t kvHeads = k.getDimSize(1);
  if ((failed(c.elementTypes(
           {{"q", q}, {"k", k}, {"v", v}, {"result", result}})) ||
       failed(c.same(batch, k.getDimSize(0), "batch size", "q", "k")) ||
       failed(c.same(batch, v.getDimSize(0), "batch size", "q", "v")) ||
       failed(c.same(kvHeads, v.getDimSize(1), "key/value head count", "k",
                     "v")) ||
       failed(c.same(lk, v.getDimSize(2), "key length", "k", "v")) ||
       failed(c.same(q.getDimSize(3), k.getDimSize(3), "head dimension", "q",
                     "k")) ||
       failed(
           c.same(batch, result.getDimSize(0), "batch size", "q", "result")) ||
       failed(
           c.same(heads, result.getDimSize(1), "head count", "q", "result")) ||
       failed(
           c.same(lq, result.getDimSize(2), "query length", "q", "result")) ||
       failed(c.same(v.getDimSize(3), result.getDimSize(3), "value dimension",
                     "v", "result")) ||
       failed(c.lengths(lq, lk))))
    return failure();
  if (!ShapedType::isDynamic(heads) && !ShapedType::isDynamic(kvHeads) &&
      (kvHeads == 0 || heads % kvHeads != 0))
    return emitOpError() << "query head count " << heads
                         << " is not a multiple of the key/value head count "
                         << kvHeads;

  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (b.getRank() != 3 && b.getRank() != 4)
      return emitOpError() << "expects bias of rank 3 (H×Lq×Lk) or 4 "
                              "(B×H×Lq×Lk), got "
                           << b;
    if (failed(c.elementTypes({{"q", q}, {"bias", b}})))
      return failure();
    // Trailing dims of the bias against B×H×Lq×Lk; a static 1 broadcasts.
    int64_t full[] = {batch, heads, lq, lk};
    const char *names[] = {"batch size", "head count", "query length",
                           "key length"};
    for (int64_t d = 0; d < b.getRank(); ++d) {
      int64_t fd = 4 - b.getRank() + d;
      int64_t size = b.getDimSize(d);
      if (size == 1)
        continue;
      if (failed(c.same(size, full[fd], names[fd], "bias", "q/k")))
        return failure();
    }
  }
  if (Value lengths = getKeyLengths())
    if (failed(c.same(cast<RankedTensorType>(lengths.getType()).getDimSize(0),
                      batch, "batch size", "key_lengths", "q")))
      return failure();

  std::optional<BucketingAttrInterface> bucketing = getBucketing();
  if (Value relValues = getRelValues()) {
    if (!bucketing)
      return emitOpError() << "rel_values requires a 'bucketing' attribute";
    auto e = cast<RankedTensorType>(relValues.getType());
    if ((failed(c.rank(e, "rel_values", 2, "NB×Dv"))))
      return failure();
    if ((failed(c.elementTypes({{"q", q}, {"rel_values", e}})) ||
         failed(c.buckets(*bucketing, e.getDimSize(0), "rel_values")) ||
         failed(c.same(e.getDimSize(1), v.getDimSize(3), "value dimension",
                       "rel_values", "v"))))
      return failure();
  }
  if (bucketing && failed(c.window(*bucketing, lq, lk)))
    return failure();
  if (std::optional<APFloat> s = getScale())
    if (!s->isFinite())
      return emitOpError() << "scale must be finite";
  return success();
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

#define GET_OP_CLASSES
#include "rpe/Dialect/RPE/IR/RPEOps.cpp.inc"
