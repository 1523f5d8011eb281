//===- AllocCacheTest.cpp - librpe_cpu_runtime's allocation cache --------===//
//
// The functions compiled CPU libraries call for their buffers
// (lib/Runtime/CPU/AllocCache.c), linked statically as they are into those
// libraries. The cache is process-wide state: each test starts by emptying
// it (freeing blocks larger than the limit evicts everything).
//
// Blocks of 2 MiB or more are allocHuge's (huge pages are on unless
// RPE_HUGE_PAGES=0): aligned to 2 MiB, with up to 2 MiB of glibc's
// alignment slack after them, so the sizes below keep every comparison
// clear of that slack.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);
void rpe_free_buffer(void *ptr);
}

namespace {

constexpr size_t kMiB = size_t(1) << 20;

/// Empties the cache: 33 small-enough blocks of 1 MiB evict whatever is in
/// its 32 slots, and are then taken back out and freed for good.
void drainCache() {
  std::vector<void *> blocks;
  for (int i = 0; i < 33; ++i)
    blocks.push_back(malloc(kMiB));
  for (void *p : blocks)
    _mlir_memref_to_llvm_free(p);
  for (int i = 0; i < 33; ++i) {
    void *p = _mlir_memref_to_llvm_alloc(kMiB);
    free(p);
  }
}

TEST(AllocCache, ReusesALargeFreedBlock) {
  drainCache();
  void *a = _mlir_memref_to_llvm_alloc(4 * kMiB);
  ASSERT_NE(a, nullptr);
  memset(a, 0x5a, 4 * kMiB);
  _mlir_memref_to_llvm_free(a);
  auto *b = static_cast<unsigned char *>(_mlir_memref_to_llvm_alloc(4 * kMiB));
  EXPECT_EQ(a, b);
  // The same pages, not new ones from the kernel (those come zeroed).
  EXPECT_EQ(b[2 * kMiB], 0x5a);
  // A smaller request, down to about half the block, takes it too.
  _mlir_memref_to_llvm_free(b);
  void *c = _mlir_memref_to_llvm_alloc(5 * kMiB / 2);
  EXPECT_EQ(a, c);
  _mlir_memref_to_llvm_free(c);
  drainCache();
}

TEST(AllocCache, DoesNotHandOutAMuchLargerOrTooSmallBlock) {
  drainCache();
  void *big = _mlir_memref_to_llvm_alloc(8 * kMiB);
  _mlir_memref_to_llvm_free(big);
  void *small = _mlir_memref_to_llvm_alloc(kMiB);
  EXPECT_NE(small, big);
  // More than the block holds, alignment slack included (below 10 MiB).
  void *larger = _mlir_memref_to_llvm_alloc(11 * kMiB);
  EXPECT_NE(larger, big);
  memset(larger, 0, 11 * kMiB);
  _mlir_memref_to_llvm_free(small);
  _mlir_memref_to_llvm_free(larger);
  drainCache();
}

TEST(AllocCache, PicksTheSmallestFittingBlock) {
  drainCache();
  // 7 MiB becomes a block of 8 MiB (its last huge page whole): usable
  // sizes in (8, 10] MiB and (4, 6] MiB, which do not overlap.
  void *a = _mlir_memref_to_llvm_alloc(7 * kMiB);
  void *b = _mlir_memref_to_llvm_alloc(4 * kMiB);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(3 * kMiB), b);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(4 * kMiB), a);
  free(a);
  free(b);
  drainCache();
}

TEST(AllocCache, AlignedRequestsGetAlignedBlocks) {
  drainCache();
  for (size_t alignment : {size_t(64), size_t(4096)}) {
    void *p = _mlir_memref_to_llvm_aligned_alloc(alignment, 2 * kMiB);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
    _mlir_memref_to_llvm_free(p);
    void *q = _mlir_memref_to_llvm_aligned_alloc(alignment, 2 * kMiB);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % alignment, 0u);
    _mlir_memref_to_llvm_free(q);
  }
  drainCache();
}

TEST(AllocCache, BlocksFreedByTheCallerWithFree) {
  // A buffer a compiled function returns is released by its caller with
  // free(): every block, cached or not, must come from malloc.
  drainCache();
  void *a = _mlir_memref_to_llvm_alloc(3 * kMiB);
  _mlir_memref_to_llvm_free(a);
  void *b = _mlir_memref_to_llvm_alloc(3 * kMiB);
  free(b);
  drainCache();
}

TEST(AllocCache, ResultsGivenBackByTheCaller) {
  // rpe_free_buffer (exported: what rpe.compile's wrapper calls for a
  // result no array uses any more) caches the block like the library's
  // own frees.
  drainCache();
  void *result = _mlir_memref_to_llvm_alloc(2 * kMiB);
  memset(result, 0x33, 2 * kMiB);
  rpe_free_buffer(result);
  auto *next =
      static_cast<unsigned char *>(_mlir_memref_to_llvm_alloc(2 * kMiB));
  EXPECT_EQ(next, result);
  EXPECT_EQ(next[kMiB], 0x33);
  _mlir_memref_to_llvm_free(next);
  drainCache();
}

TEST(AllocCache, ConcurrentThreads) {
  drainCache();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        size_t size = (1 + (i + t) % 5) * kMiB / 2;
        auto *p =
            static_cast<unsigned char *>(_mlir_memref_to_llvm_alloc(size));
        ASSERT_NE(p, nullptr);
        // Another thread holding the same block would overwrite the mark.
        memset(p, t + 1, size);
        for (size_t k = 0; k < size; k += 4096)
          ASSERT_EQ(p[k], t + 1);
        _mlir_memref_to_llvm_free(p);
      }
    });
  for (std::thread &t : threads)
    t.join();
  drainCache();
}

/// The VmFlags of the mapping that holds `address` (/proc/self/smaps), or
/// "?" when there is none.
std::string vmFlagsAt(const void *address) {
  auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long start, end;
    char dash;
    std::istringstream head(line);
    if (line.find(':') > line.find(' ') &&
        (head >> std::hex >> start >> dash >> end) && dash == '-') {
      inside = start <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line.substr(8);
  }
  return "?";
}

bool hugePageAdvised(const void *address) {
  return vmFlagsAt(address).find(" hg") != std::string::npos;
}

/// Tests of the huge-page advice, in this process with the default
/// setting: skipped on a kernel without transparent huge pages, or when
/// RPE_HUGE_PAGES is set.
class AllocCacheHugePages : public testing::Test {
protected:
  void SetUp() override {
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0)
      GTEST_SKIP() << "the kernel has no transparent huge pages";
    if (getenv("RPE_HUGE_PAGES"))
      GTEST_SKIP() << "RPE_HUGE_PAGES is set";
    drainCache();
  }
  void TearDown() override { drainCache(); }
};

TEST_F(AllocCacheHugePages, LargeBlocksAskForHugePages) {
  auto *p = static_cast<char *>(_mlir_memref_to_llvm_alloc(4 * kMiB));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (2 * kMiB), 0u);
  EXPECT_TRUE(hugePageAdvised(p)) << vmFlagsAt(p);
  EXPECT_TRUE(hugePageAdvised(p + 4 * kMiB - 1)) << vmFlagsAt(p + 4 * kMiB - 1);
  // Aligned requests too.
  auto *q =
      static_cast<char *>(_mlir_memref_to_llvm_aligned_alloc(64, 2 * kMiB));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % (2 * kMiB), 0u);
  EXPECT_TRUE(hugePageAdvised(q)) << vmFlagsAt(q);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(q);
}

TEST_F(AllocCacheHugePages, OnlyALargeLastPartGetsAHugePage) {
  // 2 MiB + 64 bytes: one huge page (that the 64 bytes after it keep small
  // pages is checked in a new process, below: the advice stays with memory
  // that glibc hands out again).
  auto *p = static_cast<char *>(_mlir_memref_to_llvm_alloc(2 * kMiB + 64));
  EXPECT_TRUE(hugePageAdvised(p)) << vmFlagsAt(p);
  // 3 MiB: the last MiB gets a huge page of its own, the block 4 MiB.
  auto *q = static_cast<char *>(_mlir_memref_to_llvm_alloc(3 * kMiB));
  EXPECT_TRUE(hugePageAdvised(q + 3 * kMiB - 1)) << vmFlagsAt(q + 3 * kMiB - 1);
  EXPECT_GE(malloc_usable_size(q), 4 * kMiB);
  // Freed and asked for again, each block serves its own size (its
  // alignment slack does not count against it).
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(q);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(2 * kMiB + 64), p);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(3 * kMiB), q);
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(q);
}

/// In a new process (gtest's threadsafe death-test style runs the test
/// binary again), whose first large block comes from a mapping of its own:
/// RPE_HUGE_PAGES is read once, at the first large block.
void allocateWithHugePages(const char *value, bool expectAdvised) {
  if (value)
    setenv("RPE_HUGE_PAGES", value, 1);
  else
    unsetenv("RPE_HUGE_PAGES");
  auto *p = static_cast<char *>(_mlir_memref_to_llvm_alloc(2 * kMiB + 64));
  memset(p, 1, 2 * kMiB + 64);
  bool advised = hugePageAdvised(p);
  bool tail = hugePageAdvised(p + 2 * kMiB + 32);
  fprintf(stderr, "advised: %d, tail: %d\n", advised, tail);
  _mlir_memref_to_llvm_free(p);
  exit(advised == expectAdvised && !tail ? 0 : 1);
}

TEST_F(AllocCacheHugePages, ByDefaultOffOrABadSetting) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(allocateWithHugePages(nullptr, true), testing::ExitedWithCode(0),
              "advised: 1, tail: 0");
  EXPECT_EXIT(allocateWithHugePages("0", false), testing::ExitedWithCode(0),
              "advised: 0, tail: 0");
  EXPECT_EXIT(allocateWithHugePages("1", true), testing::ExitedWithCode(0),
              "advised: 1, tail: 0");
  // Anything else: a message naming it, and huge pages as by default.
  EXPECT_EXIT(allocateWithHugePages("yes", true), testing::ExitedWithCode(0),
              "rpe: RPE_HUGE_PAGES='yes' is neither 0 nor 1; large buffers "
              "ask for huge pages");
}

} // namespace
