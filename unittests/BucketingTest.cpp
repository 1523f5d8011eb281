//===- BucketingTest.cpp - bucketing schemes against references -----------===//
//
// Expected buckets come from BucketTables.inc, written by
// gen_bucket_tables.py from NumPy ports of the seed's RelativePositionBias,
// Hugging Face T5 and DeBERTa-v2, and Swin; the spot checks below were
// worked out by hand from the formulas.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEAttrs.h"
#include "rpe/Dialect/RPE/IR/RPEDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::rpe;

namespace {

enum class Scheme { Clip, T5, Log };

struct ToeplitzCase {
  const char *name;
  Scheme scheme;
  int64_t p0, p1;
  bool bidirectional;
  std::vector<int64_t> buckets; // one per entry of kDistances (r = i - j)
};

struct WindowCase {
  int64_t height, width;
  std::vector<int64_t> index; // row-major L×L, L = height·width
};

#include "BucketTables.inc"

class BucketingTest : public ::testing::Test {
protected:
  BucketingTest() {
    ctx.loadDialect<RPEDialect, arith::ArithDialect, math::MathDialect>();
    ctx.allowUnregisteredDialects();
  }

  BucketingAttrInterface make(const ToeplitzCase &c) {
    switch (c.scheme) {
    case Scheme::Clip:
      return ClipBucketingAttr::get(&ctx, c.p0);
    case Scheme::T5:
      return T5BucketingAttr::get(&ctx, c.p0, c.p1, c.bidirectional);
    case Scheme::Log:
      return LogBucketingAttr::get(&ctx, c.p0, c.p1);
    }
    return {};
  }

  /// arith.truncf does not fold inexact conversions; the bucket's log
  /// (f64, rounded to f32) needs this one, to nearest even as the machine
  /// rounds.
  struct FoldTruncF : OpRewritePattern<arith::TruncFOp> {
    using OpRewritePattern::OpRewritePattern;
    LogicalResult matchAndRewrite(arith::TruncFOp op,
                                  PatternRewriter &rewriter) const override {
      FloatAttr in;
      if (!matchPattern(op.getIn(), m_Constant(&in)))
        return failure();
      APFloat value = in.getValue();
      bool losesInfo = false;
      value.convert(cast<FloatType>(op.getType()).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, FloatAttr::get(op.getType(), value));
      return success();
    }
  };

  /// Emits `buildBucket` on constant positions, folds, and returns the
  /// constant bucket (or -1 when the IR did not fold to a constant).
  int64_t buildAndFold(BucketingAttrInterface attr, int64_t i, int64_t j) {
    OpBuilder b(&ctx);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    Value vi = arith::ConstantIndexOp::create(b, loc, i);
    Value vj = arith::ConstantIndexOp::create(b, loc, j);
    Value bucket = attr.buildBucket(b, loc, vi, vj);
    OperationState state(loc, "test.use");
    state.addOperands(bucket);
    Operation *use = b.create(state);
    RewritePatternSet patterns(&ctx);
    patterns.add<FoldTruncF>(&ctx);
    if (failed(
            applyPatternsGreedily(module->getOperation(), std::move(patterns))))
      return -1;
    APInt value;
    if (!matchPattern(use->getOperand(0), m_ConstantInt(&value)))
      return -1;
    return value.getSExtValue();
  }

  MLIRContext ctx;
};

TEST_F(BucketingTest, ToeplitzSchemesMatchReferences) {
  for (const ToeplitzCase &c : kToeplitzCases) {
    BucketingAttrInterface attr = make(c);
    ASSERT_TRUE(attr) << c.name;
    EXPECT_TRUE(attr.isToeplitz()) << c.name;
    ASSERT_EQ(c.buckets.size(), kDistances.size());
    for (size_t k = 0; k < kDistances.size(); ++k) {
      int64_t r = kDistances[k], expected = c.buckets[k];
      // Several (i, j) pairs with the same difference, including offsets.
      int64_t base = r < 0 ? -r : 0;
      for (int64_t shift : {int64_t(0), int64_t(17), int64_t(1) << 33}) {
        int64_t i = base + r + shift, j = base + shift;
        EXPECT_EQ(attr.bucket(i, j), expected)
            << c.name << " i=" << i << " j=" << j;
      }
      EXPECT_GE(expected, 0) << c.name;
      EXPECT_LT(expected, attr.getNumBuckets()) << c.name;
    }
  }
}

TEST_F(BucketingTest, ToeplitzIRBuilderMatchesReferences) {
  for (const ToeplitzCase &c : kToeplitzCases) {
    BucketingAttrInterface attr = make(c);
    // T5 at every distance: its IR compares a with the distances where the
    // bucket steps up, found at build time, so an off-by-one step shows
    // only at that distance.
    size_t stride = c.scheme == Scheme::T5 ? 1 : 7;
    for (size_t k = 0; k < kDistances.size(); k += stride) {
      int64_t r = kDistances[k];
      int64_t base = r < 0 ? -r : 0;
      EXPECT_EQ(buildAndFold(attr, base + r, base), c.buckets[k])
          << c.name << " r=" << r;
    }
  }
}

TEST_F(BucketingTest, WindowMatchesSwinIndex) {
  for (const WindowCase &c : kWindowCases) {
    auto attr = Window2DBucketingAttr::get(&ctx, c.height, c.width);
    EXPECT_FALSE(cast<BucketingAttrInterface>(attr).isToeplitz());
    int64_t tokens = c.height * c.width;
    ASSERT_EQ(static_cast<int64_t>(c.index.size()), tokens * tokens);
    EXPECT_EQ(attr.getNumBuckets(), (2 * c.height - 1) * (2 * c.width - 1));
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t s = 0; s < tokens; ++s) {
        EXPECT_EQ(attr.bucket(t, s), c.index[t * tokens + s])
            << c.height << "x" << c.width << " t=" << t << " s=" << s;
        if ((t * tokens + s) % 5 == 0) {
          EXPECT_EQ(buildAndFold(attr, t, s), c.index[t * tokens + s]);
        }
      }
  }
}

// A T5 max_distance too far to scan for the steps (more than 8192
// distances) keeps the logarithm in the IR; it buckets as the formula does.
TEST_F(BucketingTest, FarT5KeepsTheLogarithm) {
  auto t5 = T5BucketingAttr::get(&ctx, 32, 100000, true);
  // Hugging Face's f32 formula with e = 8, ln(M / e) = ln(12500):
  // a = 100: 8 + trunc(ln(12.5) / ln(12500) * 8) = 8 + 2 = 10;
  // a = 5000: 8 + trunc(ln(625) / ln(12500) * 8) = 8 + 5 = 13;
  // a = 10^6: capped at 15. Offset 16 for j > i.
  EXPECT_EQ(t5.bucket(100, 0), 10);
  EXPECT_EQ(t5.bucket(0, 5000), 16 + 13);
  EXPECT_EQ(t5.bucket(1000000, 0), 15);
  for (int64_t r : {0, 7, 8, 9, 100, 101, 5000, 99999, 100000, 1000000}) {
    EXPECT_EQ(buildAndFold(t5, r, 0), t5.bucket(r, 0)) << "r=" << r;
    EXPECT_EQ(buildAndFold(t5, 0, r), t5.bucket(0, r)) << "r=" << -r;
  }
}

TEST_F(BucketingTest, HandComputedSpotChecks) {
  // T5, N = 32, M = 128, bidirectional, n = j - i = +200: offset N' = 16,
  // a = 200 >= e = 8, 8 + trunc(ln(25)/ln(16)·8) = 8 + 9 = 17 -> min(15) = 15.
  auto t5 = T5BucketingAttr::get(&ctx, 32, 128, true);
  EXPECT_EQ(t5.bucket(0, 200), 31);
  EXPECT_EQ(t5.bucket(200, 0), 15); // n = -200: no offset.
  EXPECT_EQ(t5.bucket(5, 5), 0);
  EXPECT_EQ(t5.bucket(0, 1), 17); // n = +1: 16 + 1.
  EXPECT_EQ(t5.bucket(0, 8), 24); // a = e = 8: 8 + trunc(0) = 8, + 16.
  // Unidirectional: only n < 0 (keys before the query) get buckets.
  auto t5u = T5BucketingAttr::get(&ctx, 32, 128, false);
  EXPECT_EQ(t5u.bucket(0, 200), 0);
  EXPECT_EQ(t5u.bucket(3, 0), 3);
  EXPECT_EQ(t5u.bucket(100000, 0), 31);

  // DeBERTa-v2, P = 256, M = 512: c = 128, S = 256.
  auto lg = LogBucketingAttr::get(&ctx, 256, 512);
  EXPECT_EQ(lg.getNumBuckets(), 512);
  EXPECT_EQ(lg.bucket(128, 0), 128 + 256); // |r| = c: r itself.
  // |r| = c + 1: 128 + ceil(ln(129/128)/ln(511/128)·127) = 128 + 1.
  EXPECT_EQ(lg.bucket(129, 0), 129 + 256);
  EXPECT_EQ(lg.bucket(0, 129), -129 + 256); // negative r.
  EXPECT_EQ(lg.bucket(5120, 0), 511);       // 10·M: clamped to 2S - 1.
  EXPECT_EQ(lg.bucket(0, 5120), 0);
  EXPECT_EQ(lg.bucket(0, 0), 256);
  // P = 0 disables log bucketing: S = M.
  auto plain = LogBucketingAttr::get(&ctx, 0, 16);
  EXPECT_EQ(plain.getNumBuckets(), 32);
  EXPECT_EQ(plain.bucket(20, 0), 31);
  EXPECT_EQ(plain.bucket(0, 3), 13);

  // Swin 7×7 corners: (0,0) vs itself is the centre bucket 6·13 + 6.
  auto w = Window2DBucketingAttr::get(&ctx, 7, 7);
  EXPECT_EQ(w.getNumBuckets(), 169);
  EXPECT_EQ(w.bucket(0, 0), 84);
  EXPECT_EQ(w.bucket(0, 48), 0);   // dh = dw = -6
  EXPECT_EQ(w.bucket(48, 0), 168); // dh = dw = +6
  EXPECT_EQ(w.bucket(6, 42), 12);  // (0,6) vs (6,0): dh = -6, dw = +6
  EXPECT_EQ(w.bucket(42, 6), 156); // dh = +6, dw = -6
  // Outside the window the offsets clamp, so buckets stay in range.
  EXPECT_EQ(w.bucket(1000, 0), 168);
  EXPECT_EQ(w.bucket(-1, 0), w.bucket(6, 7)); // -1 sits at (-1, 6)

  // Seed clip scheme.
  auto clip = ClipBucketingAttr::get(&ctx, 4);
  EXPECT_EQ(clip.getNumBuckets(), 9);
  EXPECT_EQ(clip.bucket(2, 0), 6);
  EXPECT_EQ(clip.bucket(0, 100), 0);
}

TEST_F(BucketingTest, ExtremePositionsDoNotOverflow) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  SmallVector<BucketingAttrInterface> attrs = {
      ClipBucketingAttr::get(&ctx, 4),
      T5BucketingAttr::get(&ctx, 32, 128, true),
      T5BucketingAttr::get(&ctx, 32, 128, false),
      LogBucketingAttr::get(&ctx, 256, 512),
      Window2DBucketingAttr::get(&ctx, 7, 7)};
  for (BucketingAttrInterface attr : attrs)
    for (int64_t i : {lo, int64_t(-1), int64_t(0), hi})
      for (int64_t j : {lo, int64_t(0), hi}) {
        int64_t b = attr.bucket(i, j);
        EXPECT_GE(b, 0);
        EXPECT_LT(b, attr.getNumBuckets());
        // The emitted IR saturates the same way (arith folds with int64
        // wrap-around, as the machine code runs).
        EXPECT_EQ(buildAndFold(attr, i, j), b) << "i=" << i << " j=" << j;
      }
}

TEST_F(BucketingTest, VerifierRejectsBadParameters) {
  auto emit = [&] { return emitError(UnknownLoc::get(&ctx)); };
  // Silence the diagnostics emitted by the failing checks.
  ScopedDiagnosticHandler silence(&ctx, [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(ClipBucketingAttr::verify(emit, -1)));
  EXPECT_TRUE(failed(ClipBucketingAttr::verify(emit, int64_t(1) << 62)));
  EXPECT_TRUE(succeeded(ClipBucketingAttr::verify(emit, 0)));
  EXPECT_TRUE(failed(T5BucketingAttr::verify(emit, 1, 128, false)));
  EXPECT_TRUE(failed(T5BucketingAttr::verify(emit, 2, 128, true)));
  EXPECT_TRUE(failed(T5BucketingAttr::verify(emit, 32, 8, true)));
  EXPECT_TRUE(succeeded(T5BucketingAttr::verify(emit, 32, 9, true)));
  EXPECT_TRUE(failed(LogBucketingAttr::verify(emit, 1, 512)));
  EXPECT_TRUE(failed(LogBucketingAttr::verify(emit, 256, 129)));
  EXPECT_TRUE(failed(LogBucketingAttr::verify(emit, 0, 0)));
  EXPECT_TRUE(failed(Window2DBucketingAttr::verify(emit, 0, 7)));
  EXPECT_TRUE(failed(Window2DBucketingAttr::verify(emit, 7, int64_t(1) << 40)));
}

} // namespace
