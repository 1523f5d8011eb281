//===- AllocCacheTest.cpp - librpe_cpu_runtime's allocation cache --------===//
//
// The functions compiled CPU libraries call for their buffers
// (lib/Runtime/CPU/AllocCache.c), linked statically as they are into those
// libraries. The cache is process-wide state: each test starts by emptying
// it (freeing blocks larger than the limit evicts everything).
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
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
  void *larger = _mlir_memref_to_llvm_alloc(9 * kMiB);
  EXPECT_NE(larger, big);
  memset(larger, 0, 9 * kMiB);
  _mlir_memref_to_llvm_free(small);
  _mlir_memref_to_llvm_free(larger);
  drainCache();
}

TEST(AllocCache, PicksTheSmallestFittingBlock) {
  drainCache();
  void *a = _mlir_memref_to_llvm_alloc(5 * kMiB);
  void *b = _mlir_memref_to_llvm_alloc(4 * kMiB);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(3 * kMiB), b);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(3 * kMiB), a);
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

} // namespace
