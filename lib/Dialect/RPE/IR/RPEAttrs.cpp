//===- RPEAttrs.cpp - rpe bucketing attributes ------------------*- C++ -*-===//
//
// Each bucketing scheme is defined twice, side by side: `bucket` evaluates it
// on integers (folders, tests) and `buildBucket` emits the same arithmetic as
// IR (every lowering). Floating-point steps follow Hugging Face's f32 order
// of operations so that bucket boundaries agree with the real models.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEAttrs.h"
#include "rpe/Dialect/RPE/IR/RPEDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::rpe;

#include "rpe/Dialect/RPE/IR/RPEAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "rpe/Dialect/RPE/IR/RPEAttrs.cpp.inc"

void RPEDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "rpe/Dialect/RPE/IR/RPEAttrs.cpp.inc"
      >();
}

ParseResult mlir::rpe::parseBucketingAttr(AsmParser &parser,
                                          BucketingAttrInterface &bucketing) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult result =
      generatedAttributeParser(parser, &mnemonic, Type(), attr);
  if (!result.has_value())
    return parser.emitError(loc) << "expected a bucketing scheme: clip<...>, "
                                    "t5<...>, log<...> or window2d<...>";
  if (failed(*result))
    return failure();
  bucketing = cast<BucketingAttrInterface>(attr);
  return success();
}

void mlir::rpe::printBucketingAttr(AsmPrinter &printer,
                                   BucketingAttrInterface bucketing) {
  (void)generatedAttributePrinter(bucketing, printer);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Positions are int64; their differences saturate at ±2^62 so that negating
/// or adding small constants never overflows.
static int64_t diff(int64_t a, int64_t b) {
  constexpr int64_t kLimit = int64_t(1) << 62;
  int64_t r;
  if (llvm::SubOverflow(a, b, r))
    return a > b ? kLimit : -kLimit;
  return std::clamp(r, -kLimit, kLimit);
}

static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static LogicalResult checkRange(function_ref<InFlightDiagnostic()> emitError,
                                StringRef attr, StringRef name, int64_t value,
                                int64_t lo, int64_t hi) {
  if (value < lo || value > hi)
    return emitError() << "#rpe." << attr << " parameter '" << name
                       << "' must be in [" << lo << ", " << hi << "], got "
                       << value;
  return success();
}

namespace {
/// Small IR builder for index/f32 arithmetic used by `buildBucket` (not
/// upstream's mlir::ArithBuilder). Each op is built in a statement of its
/// own, or as the only op-building argument of a call (the overloads with a
/// constant build it after their Value operand): C++ leaves the order of
/// evaluating arguments open, and the IR's order would depend on the
/// compiler.
struct BucketArith {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  /// x - y saturated at ±2^62, as diff() does: the wrapped difference is
  /// replaced when the operands' signs differ and the result's sign is not
  /// the minuend's (int64 overflow).
  Value satSub(Value x, Value y) {
    constexpr int64_t kLimit = int64_t(1) << 62;
    Value d = sub(x, y);
    Value zero = idx(0);
    Value xNeg = cmp(arith::CmpIPredicate::slt, x, zero);
    Value yNeg = cmp(arith::CmpIPredicate::slt, y, zero);
    Value dNeg = cmp(arith::CmpIPredicate::slt, d, zero);
    Value signsDiffer = arith::XOrIOp::create(b, loc, xNeg, yNeg);
    Value signChanged = arith::XOrIOp::create(b, loc, dNeg, xNeg);
    Value overflow = arith::AndIOp::create(b, loc, signsDiffer, signChanged);
    Value low = idx(-kLimit);
    Value high = idx(kLimit);
    Value saturated = select(xNeg, low, high);
    return select(overflow, saturated, clamp(d, -kLimit, kLimit));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t c) { return add(x, idx(c)); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t c) { return mul(x, idx(c)); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value clamp(Value x, int64_t lo, int64_t hi) {
    Value atLeast = max(x, idx(lo));
    return min(atLeast, idx(hi));
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t c) {
    return cmp(p, x, idx(c));
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value abs(Value x) {
    Value negative = cmp(arith::CmpIPredicate::slt, x, 0);
    Value negated = sub(idx(0), x);
    return select(negative, negated, x);
  }
  Value floorDiv(Value x, int64_t d) {
    return arith::FloorDivSIOp::create(b, loc, x, idx(d));
  }
  /// index -> f32 (through i64).
  Value toF32(Value x) {
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), x);
    return arith::SIToFPOp::create(b, loc, b.getF32Type(), i);
  }
  /// f32 -> index, truncating toward zero.
  Value toIndex(Value x) {
    Value i = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
  }
  Value divf(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value divf(Value x, float c) { return divf(x, f32(c)); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value mulf(Value x, float c) { return mulf(x, f32(c)); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value addf(Value x, float c) { return addf(x, f32(c)); }
  Value minf(Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  Value minf(Value x, float c) { return minf(x, f32(c)); }
  /// The correctly rounded f32 log of f32 `x` (as `correctLogF32`): the f64 log
  /// rounded to f32. A target's own f32 log may be an ulp off (CUDA's
  /// logf is), which moves a bucket whose quotient lands on an integer.
  Value log(Value x) {
    Value wide = arith::ExtFOp::create(b, loc, b.getF64Type(), x);
    return arith::TruncFOp::create(b, loc, b.getF32Type(),
                                   math::LogOp::create(b, loc, wide));
  }
  Value ceil(Value x) { return math::CeilOp::create(b, loc, x); }
};
} // namespace

//===----------------------------------------------------------------------===//
// #rpe.clip
//===----------------------------------------------------------------------===//

LogicalResult
ClipBucketingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t maxDistance) {
  return checkRange(emitError, "clip", "max_distance", maxDistance, 0,
                    kMaxBucketParam);
}

int64_t ClipBucketingAttr::getNumBuckets() const {
  return 2 * getMaxDistance() + 1;
}

int64_t ClipBucketingAttr::bucket(int64_t i, int64_t j) const {
  int64_t k = getMaxDistance();
  return std::clamp(diff(i, j), -k, k) + k;
}

Value ClipBucketingAttr::buildBucket(OpBuilder &builder, Location loc, Value i,
                                     Value j) const {
  BucketArith ab{builder, loc};
  int64_t k = getMaxDistance();
  return ab.add(ab.clamp(ab.satSub(i, j), -k, k), k);
}

bool ClipBucketingAttr::isToeplitz() const { return true; }

//===----------------------------------------------------------------------===//
// #rpe.t5
//===----------------------------------------------------------------------===//

LogicalResult
T5BucketingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t numBuckets, int64_t maxDistance,
                        bool bidirectional) {
  int64_t minBuckets = bidirectional ? 4 : 2;
  if (failed(checkRange(emitError, "t5", "num_buckets", numBuckets, minBuckets,
                        kMaxBucketParam)))
    return failure();
  int64_t numExact = (bidirectional ? numBuckets / 2 : numBuckets) / 2;
  return checkRange(emitError, "t5", "max_distance", maxDistance, numExact + 1,
                    kMaxBucketParam);
}

/// The correctly rounded f32 natural log of `x` (Semantics.md's `logf`):
/// the f64 log rounded to f32, on the host as in the generated code. libm's
/// logf may be an ulp off.
static float correctLogF32(float x) {
  return static_cast<float>(std::log(static_cast<double>(x)));
}

namespace {
/// The derived constants of a T5 scheme.
struct T5Params {
  int64_t half;     // N'
  int64_t exact;    // e
  float logRatio;   // f32(ln(M / e)), as HF's Python float scalar
  float logBuckets; // f32(N' - e)
};
} // namespace

static T5Params getT5Params(T5BucketingAttr attr) {
  int64_t half =
      attr.getBidirectional() ? attr.getNumBuckets() / 2 : attr.getNumBuckets();
  int64_t exact = half / 2;
  float logRatio = static_cast<float>(
      std::log(static_cast<double>(attr.getMaxDistance()) / exact));
  return {half, exact, logRatio, static_cast<float>(half - exact)};
}

/// The bucket of a distance a >= e beyond the exact ones (without the
/// direction's offset).
static int64_t t5LargeBucket(const T5Params &p, int64_t a) {
  float v = correctLogF32(static_cast<float>(a) / static_cast<float>(p.exact)) /
            p.logRatio * p.logBuckets;
  v = std::min(v, static_cast<float>(p.half));
  return std::min(p.exact + static_cast<int64_t>(v), p.half - 1);
}

/// The large buckets as steps: t5LargeBucket(a) is the value of the last
/// step at or below a (t5LargeBucket(e) below the first), {a, value} in
/// increasing order (none when it is N' - 1 from e on). The function is
/// non-decreasing in a (each of its operations is monotonic; checked over
/// the scan) and capped at N' - 1: once it reaches that at a = M it stays
/// there. std::nullopt (the logarithm instead) when it has not reached it by
/// M, for more than kMaxT5Steps steps, or M - e above kMaxT5Scan.
static std::optional<SmallVector<std::pair<int64_t, int64_t>>>
t5LargeBucketSteps(const T5Params &p, int64_t maxDistance) {
  constexpr int64_t kMaxT5Steps = 32, kMaxT5Scan = 8192;
  if (maxDistance - p.exact > kMaxT5Scan)
    return std::nullopt;
  SmallVector<std::pair<int64_t, int64_t>> steps;
  int64_t last = t5LargeBucket(p, p.exact);
  for (int64_t a = p.exact + 1; a <= maxDistance; ++a) {
    int64_t value = t5LargeBucket(p, a);
    if (value == last)
      continue;
    if (value < last || steps.size() == kMaxT5Steps)
      return std::nullopt;
    steps.push_back({a, value});
    last = value;
  }
  if (last != p.half - 1)
    return std::nullopt;
  return steps;
}

int64_t T5BucketingAttr::bucket(int64_t i, int64_t j) const {
  T5Params p = getT5Params(*this);
  int64_t n = diff(j, i);
  int64_t offset = 0, a;
  if (getBidirectional()) {
    offset = n > 0 ? p.half : 0;
    a = n < 0 ? -n : n;
  } else {
    a = std::max<int64_t>(-n, 0);
  }
  if (a < p.exact)
    return offset + a;
  return offset + t5LargeBucket(p, a);
}

Value T5BucketingAttr::buildBucket(OpBuilder &builder, Location loc, Value i,
                                   Value j) const {
  T5Params p = getT5Params(*this);
  BucketArith ab{builder, loc};
  Value n = ab.satSub(j, i);
  Value zero = ab.idx(0);
  Value offset, a;
  if (getBidirectional()) {
    Value after = ab.cmp(arith::CmpIPredicate::sgt, n, zero);
    offset = ab.select(after, ab.idx(p.half), zero);
    a = ab.abs(n);
  } else {
    a = ab.max(ab.sub(zero, n), zero);
  }
  Value exact = ab.idx(p.exact);
  Value large;
  if (std::optional<SmallVector<std::pair<int64_t, int64_t>>> steps =
          t5LargeBucketSteps(p, getMaxDistance())) {
    // Compares with the distances where the bucket steps up (found by
    // evaluating t5LargeBucket at build time): no logarithm per element,
    // and the same buckets.
    large = ab.idx(t5LargeBucket(p, p.exact));
    for (auto [from, value] : *steps) {
      Value reached = ab.cmp(arith::CmpIPredicate::sge, a, from);
      large = ab.select(reached, ab.idx(value), large);
    }
  } else {
    // The log branch is evaluated for every a; max(a, e) keeps it finite.
    Value af = ab.toF32(ab.max(a, exact));
    Value logRatio = ab.log(ab.divf(af, static_cast<float>(p.exact)));
    Value v = ab.mulf(ab.divf(logRatio, p.logRatio), p.logBuckets);
    v = ab.minf(v, static_cast<float>(p.half));
    Value capped = ab.add(exact, ab.toIndex(v));
    large = ab.min(capped, ab.idx(p.half - 1));
  }
  Value b = ab.select(ab.cmp(arith::CmpIPredicate::slt, a, exact), a, large);
  return offset ? ab.add(offset, b) : b;
}

bool T5BucketingAttr::isToeplitz() const { return true; }

//===----------------------------------------------------------------------===//
// #rpe.log
//===----------------------------------------------------------------------===//

LogicalResult
LogBucketingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t positionBuckets,
                         int64_t maxRelativePositions) {
  if (failed(checkRange(emitError, "log", "position_buckets", positionBuckets,
                        0, kMaxBucketParam)) ||
      failed(checkRange(emitError, "log", "max_relative_positions",
                        maxRelativePositions, 1, kMaxBucketParam)))
    return failure();
  if (positionBuckets == 0)
    return success();
  if (positionBuckets < 2)
    return emitError() << "#rpe.log parameter 'position_buckets' must be 0 or "
                          ">= 2, got "
                       << positionBuckets;
  int64_t mid = positionBuckets / 2;
  if (maxRelativePositions <= mid + 1)
    return emitError() << "#rpe.log parameter 'max_relative_positions' must "
                          "exceed position_buckets / 2 + 1 = "
                       << mid + 1 << ", got " << maxRelativePositions;
  return success();
}

static int64_t getLogSpan(LogBucketingAttr attr) {
  return attr.getPositionBuckets() > 0 ? attr.getPositionBuckets()
                                       : attr.getMaxRelativePositions();
}

int64_t LogBucketingAttr::getNumBuckets() const {
  return 2 * getLogSpan(*this);
}

namespace {
struct LogParams {
  int64_t mid;      // c
  float logRatio;   // logf(f32((M - 1) / c))
  float logBuckets; // f32(c - 1)
};
} // namespace

static LogParams getLogParams(LogBucketingAttr attr) {
  int64_t mid = attr.getPositionBuckets() / 2;
  float ratio = static_cast<float>(
      static_cast<double>(attr.getMaxRelativePositions() - 1) / mid);
  return {mid, correctLogF32(ratio), static_cast<float>(mid - 1)};
}

/// Largest magnitude of a log bucket before clamping; keeps f32 -> int
/// conversions in range.
static constexpr float kLogBucketCap = static_cast<float>(int64_t(1) << 40);

int64_t LogBucketingAttr::bucket(int64_t i, int64_t j) const {
  int64_t r = diff(i, j);
  int64_t lb = r;
  if (getPositionBuckets() > 0) {
    LogParams p = getLogParams(*this);
    int64_t absR = r < 0 ? -r : r;
    if (absR > p.mid) {
      float v = std::ceil(correctLogF32(static_cast<float>(absR) /
                                        static_cast<float>(p.mid)) /
                          p.logRatio * p.logBuckets) +
                static_cast<float>(p.mid);
      int64_t mag = static_cast<int64_t>(std::min(v, kLogBucketCap));
      lb = r < 0 ? -mag : mag;
    }
  }
  int64_t span = getLogSpan(*this);
  return std::clamp(lb + span, int64_t(0), 2 * span - 1);
}

Value LogBucketingAttr::buildBucket(OpBuilder &builder, Location loc, Value i,
                                    Value j) const {
  BucketArith ab{builder, loc};
  Value r = ab.satSub(i, j);
  Value lb = r;
  if (getPositionBuckets() > 0) {
    LogParams p = getLogParams(*this);
    Value absR = ab.abs(r);
    Value mid = ab.idx(p.mid);
    Value af = ab.toF32(ab.max(absR, mid));
    Value logRatio = ab.log(ab.divf(af, static_cast<float>(p.mid)));
    Value scaled = ab.mulf(ab.divf(logRatio, p.logRatio), p.logBuckets);
    Value v = ab.addf(ab.ceil(scaled), static_cast<float>(p.mid));
    Value mag = ab.toIndex(ab.minf(v, kLogBucketCap));
    Value zero = ab.idx(0);
    Value negative = ab.cmp(arith::CmpIPredicate::slt, r, zero);
    Value signedMag = ab.select(negative, ab.sub(zero, mag), mag);
    Value near = ab.cmp(arith::CmpIPredicate::sle, absR, mid);
    lb = ab.select(near, r, signedMag);
  }
  int64_t span = getLogSpan(*this);
  return ab.clamp(ab.add(lb, span), 0, 2 * span - 1);
}

bool LogBucketingAttr::isToeplitz() const { return true; }

//===----------------------------------------------------------------------===//
// #rpe.window2d
//===----------------------------------------------------------------------===//

LogicalResult
Window2DBucketingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t height, int64_t width) {
  // (2Wh - 1)(2Ww - 1) and Wh·Ww must stay well inside int32.
  constexpr int64_t kMaxSide = 1 << 14;
  if (failed(
          checkRange(emitError, "window2d", "height", height, 1, kMaxSide)) ||
      failed(checkRange(emitError, "window2d", "width", width, 1, kMaxSide)))
    return failure();
  return success();
}

int64_t Window2DBucketingAttr::getNumBuckets() const {
  return (2 * getHeight() - 1) * (2 * getWidth() - 1);
}

int64_t Window2DBucketingAttr::bucket(int64_t i, int64_t j) const {
  int64_t wh = getHeight(), ww = getWidth();
  int64_t hi = floorDiv(i, ww), hj = floorDiv(j, ww);
  // i mod ww in [0, ww) (i - hi·ww may overflow for extreme i).
  int64_t wi = (i % ww + ww) % ww, wj = (j % ww + ww) % ww;
  int64_t dh = std::clamp(diff(hi, hj), -(wh - 1), wh - 1);
  int64_t dw = std::clamp(wi - wj, -(ww - 1), ww - 1);
  return (dh + wh - 1) * (2 * ww - 1) + (dw + ww - 1);
}

Value Window2DBucketingAttr::buildBucket(OpBuilder &builder, Location loc,
                                         Value i, Value j) const {
  BucketArith ab{builder, loc};
  int64_t wh = getHeight(), ww = getWidth();
  Value hi = ab.floorDiv(i, ww), hj = ab.floorDiv(j, ww);
  Value wIdx = ab.idx(ww);
  Value wi = ab.sub(i, ab.mul(hi, wIdx)), wj = ab.sub(j, ab.mul(hj, wIdx));
  Value dh = ab.clamp(ab.satSub(hi, hj), -(wh - 1), wh - 1);
  Value dw = ab.clamp(ab.sub(wi, wj), -(ww - 1), ww - 1);
  Value row = ab.mul(ab.add(dh, wh - 1), 2 * ww - 1);
  return ab.add(row, ab.add(dw, ww - 1));
}

bool Window2DBucketingAttr::isToeplitz() const { return false; }

Value Window2DBucketingAttr::buildPlaneOffset(OpBuilder &builder, Location loc,
                                              Value t) const {
  BucketArith ab{builder, loc};
  int64_t ww = getWidth();
  return ab.add(t, ab.mul(ab.floorDiv(t, ww), ww - 1));
}

Value Window2DBucketingAttr::buildBucketFromPlaneDifference(OpBuilder &builder,
                                                            Location loc,
                                                            Value v) const {
  // v = dh·(2Ww - 1) + dw with |dw| <= Ww - 1: one (dh, dw) per v.
  BucketArith ab{builder, loc};
  int64_t wh = getHeight(), ww = getWidth();
  Value dh = ab.floorDiv(ab.add(v, ww - 1), 2 * ww - 1);
  Value dw = ab.sub(v, ab.mul(dh, 2 * ww - 1));
  dh = ab.clamp(dh, -(wh - 1), wh - 1);
  Value row = ab.mul(ab.add(dh, wh - 1), 2 * ww - 1);
  return ab.add(row, ab.add(dw, ww - 1));
}

//===----------------------------------------------------------------------===//
// RoPE scaling
//===----------------------------------------------------------------------===//

FailureOr<llvm::APFloat> mlir::rpe::parseDoubleParameter(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
}

static LogicalResult checkPositive(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef attr, StringRef name,
                                   const llvm::APFloat &apValue) {
  double value = apValue.convertToDouble();
  if (!std::isfinite(value) || value <= 0.0)
    return emitError() << "#rpe." << attr << " parameter '" << name
                       << "' must be finite and positive, got " << value;
  return success();
}

static LogicalResult checkOriginal(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef attr, int64_t original) {
  return checkRange(emitError, attr, "original_max_position", original, 1,
                    int64_t(1) << 40);
}

LogicalResult
RopeLinearAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       llvm::APFloat factor) {
  return checkPositive(emitError, "rope_linear", "factor", factor);
}

LogicalResult
RopeLlama3Attr::verify(function_ref<InFlightDiagnostic()> emitError,
                       llvm::APFloat factor, llvm::APFloat lowFreqFactor,
                       llvm::APFloat highFreqFactor, int64_t original) {
  if (failed(checkPositive(emitError, "rope_llama3", "factor", factor)) ||
      failed(checkPositive(emitError, "rope_llama3", "low_freq_factor",
                           lowFreqFactor)) ||
      failed(checkPositive(emitError, "rope_llama3", "high_freq_factor",
                           highFreqFactor)) ||
      failed(checkOriginal(emitError, "rope_llama3", original)))
    return failure();
  if (!(highFreqFactor.convertToDouble() > lowFreqFactor.convertToDouble()))
    return emitError() << "#rpe.rope_llama3 needs high_freq_factor > "
                          "low_freq_factor, got "
                       << highFreqFactor.convertToDouble() << " and "
                       << lowFreqFactor.convertToDouble();
  return success();
}

LogicalResult RopeYarnAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   llvm::APFloat factor, int64_t original,
                                   llvm::APFloat betaFast,
                                   llvm::APFloat betaSlow) {
  if (failed(checkPositive(emitError, "rope_yarn", "factor", factor)) ||
      failed(checkOriginal(emitError, "rope_yarn", original)) ||
      failed(checkPositive(emitError, "rope_yarn", "beta_fast", betaFast)) ||
      failed(checkPositive(emitError, "rope_yarn", "beta_slow", betaSlow)))
    return failure();
  if (!(betaFast.convertToDouble() > betaSlow.convertToDouble()))
    return emitError() << "#rpe.rope_yarn needs beta_fast > beta_slow, got "
                       << betaFast.convertToDouble() << " and "
                       << betaSlow.convertToDouble();
  return success();
}

double RopeYarnAttr::getAttentionFactor() const {
  double factor = getFactor().convertToDouble();
  return factor <= 1.0 ? 1.0 : 0.1 * std::log(factor) + 1.0;
}

LogicalResult
RopeDynamicAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        llvm::APFloat factor, int64_t original) {
  if (failed(checkPositive(emitError, "rope_dynamic", "factor", factor)) ||
      failed(checkOriginal(emitError, "rope_dynamic", original)))
    return failure();
  return success();
}
