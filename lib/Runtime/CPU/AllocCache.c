/*===- AllocCache.c - Buffer allocation for CPU modules ---------*- C -*-===*\
|*                                                                          *|
|* The allocation functions of shared libraries that rpe compiles for the   *|
|* CPU (finalize-memref-to-llvm with use-generic-functions): malloc/free    *|
|* behind a small cache of large freed blocks.                              *|
|*                                                                          *|
|* A module that allocates large temporaries (the DeBERTa tables: MiB per   *|
|* head) and frees them in every call otherwise hands them back to the     *|
|* kernel (glibc serves them with mmap or trims its heaps), and the next    *|
|* call pays a page fault and a page zeroing for every 4 KiB of them: a     *|
|* third of the time of DeBERTa attention at L = 2048. The cache keeps up   *|
|* to RPE_ALLOC_CACHE_MB (default 1024; 0 turns it off) of freed blocks of  *|
|* at least 256 KiB and reuses one for a request of at least half its size. *|
|* Blocks come from malloc / posix_memalign, so that a buffer a module      *|
|* returns may be released with free() by its caller.                       *|
|*                                                                          *|
|* A new block of 2 MiB or more is 2 MiB-aligned and madvise'd              *|
|* MADV_HUGEPAGE before anything touches it (see allocHuge): where          *|
|* transparent huge pages are on for such regions ("madvise", the usual     *|
|* default, or "always") it is backed by 2 MiB pages. The DeBERTa tables'   *|
|* rows are 2 KiB apart and the kernel walks their columns: with 4 KiB      *|
|* pages, a new page every other row. RPE_HUGE_PAGES=0 turns this off.      *|
|*                                                                          *|
|* Linked statically (librpe_cpu_runtime.a) into each library, with hidden  *|
|* visibility: each library has its own cache. It exports one function,     *|
|* rpe_free_buffer, through which a caller may give a result buffer back    *|
|* (free() works too): rpe.compile's Python wrapper does, so that the       *|
|* output of one call is the next call's buffer.                            *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define RPE_HIDDEN __attribute__((visibility("hidden")))

enum { kSlots = 32 };
static const size_t kMinBytes = (size_t)256 << 10;
static const size_t kHugeBytes = (size_t)2 << 20;

struct Slot {
  void *ptr;
  size_t capacity;
  size_t counted;    /* what the half-size rule counts (countedBytes) */
  unsigned long age; /* when it was cached: the oldest goes first */
};

static struct Slot slots[kSlots];
static size_t cachedBytes;
static unsigned long ageCounter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t limitOnce = PTHREAD_ONCE_INIT;
static size_t limitBytes;

static void readLimit(void) {
  size_t megabytes = 1024;
  const char *env = getenv("RPE_ALLOC_CACHE_MB");
  if (env && *env) {
    char *end;
    errno = 0;
    unsigned long long value = strtoull(env, &end, 10);
    if (*end == '\0' && errno == 0 && env[0] != '-')
      megabytes = (size_t)value;
    else
      fprintf(stderr,
              "rpe: RPE_ALLOC_CACHE_MB='%s' is not a number of MiB; the "
              "allocation cache keeps up to %zu MiB\n",
              env, megabytes);
  }
  limitBytes = megabytes > (SIZE_MAX >> 20) ? SIZE_MAX : megabytes << 20;
}

static pthread_once_t hugeOnce = PTHREAD_ONCE_INIT;
static int hugePages;

static void readHugePages(void) {
  const char *env = getenv("RPE_HUGE_PAGES");
  hugePages = 1;
  if (!env || !*env)
    return;
  if (strcmp(env, "0") == 0)
    hugePages = 0;
  else if (strcmp(env, "1") != 0)
    fprintf(stderr,
            "rpe: RPE_HUGE_PAGES='%s' is neither 0 nor 1; large buffers ask "
            "for huge pages\n",
            env);
}

/* A new block of `size` >= kHugeBytes bytes on a huge-page boundary,
   marked for transparent huge pages before its first touch; NULL if huge
   pages are off or the allocation fails (the caller then allocates as
   usual). A last part of half a huge page or more gets a huge page of its
   own (the block grows to whole huge pages: at most half a huge page
   more); a smaller one keeps small pages (rounding every size up made a
   block of 2 MiB + 64 bytes take two huge pages). The advice is a hint:
   where THP is "never", or madvise fails, the block is an ordinary one. */
static void *allocHuge(size_t size) {
  if (size < kHugeBytes || size > SIZE_MAX - kHugeBytes)
    return NULL;
  pthread_once(&hugeOnce, readHugePages);
  if (!hugePages)
    return NULL;
  size_t whole = size & ~(kHugeBytes - 1);
  if (size - whole >= kHugeBytes / 2)
    whole += kHugeBytes;
  size_t bytes = whole > size ? whole : size;
  void *ptr;
  if (posix_memalign(&ptr, kHugeBytes, bytes) != 0)
    return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(ptr, whole, MADV_HUGEPAGE);
#endif
  return ptr;
}

/* The bytes of a freed block of `capacity` usable bytes that take()'s
   half-size rule counts: a block on a huge-page boundary of more than a
   huge page may be allocHuge's, whose usable size can exceed what it asked
   for by up to a huge page and a page of alignment slack that nothing
   touches (glibc keeps the slack of a large aligned block), so at most
   that much is not counted: otherwise a block made for a request of 2 MiB
   + 64 bytes could count nearly 4 MiB + 64 and never be handed out for the
   same request again. A block that is aligned by chance only counts less
   too, which merely lets it serve somewhat smaller requests. */
static size_t countedBytes(void *ptr, size_t capacity) {
  const size_t slack = kHugeBytes + 4096;
  if ((uintptr_t)ptr % kHugeBytes != 0 || capacity <= kHugeBytes)
    return capacity;
  return capacity > kHugeBytes + slack ? capacity - slack : kHugeBytes;
}

static size_t cacheLimit(void) {
  pthread_once(&limitOnce, readLimit);
  return limitBytes;
}

/* A cached block of `size` bytes or more (at most twice as many) aligned to
   `alignment`, removed from the cache; NULL if there is none. */
static void *take(size_t size, size_t alignment) {
  if (size < kMinBytes || cacheLimit() == 0)
    return NULL;
  void *found = NULL;
  pthread_mutex_lock(&lock);
  int best = -1;
  for (int i = 0; i < kSlots; ++i) {
    struct Slot *s = &slots[i];
    if (!s->ptr || s->capacity < size || s->counted / 2 > size ||
        (uintptr_t)s->ptr % alignment != 0)
      continue;
    if (best < 0 || s->capacity < slots[best].capacity)
      best = i;
  }
  if (best >= 0) {
    found = slots[best].ptr;
    cachedBytes -= slots[best].capacity;
    slots[best].ptr = NULL;
  }
  pthread_mutex_unlock(&lock);
  return found;
}

RPE_HIDDEN void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *ptr = take(size, 1);
  if (!ptr)
    ptr = allocHuge(size);
  return ptr ? ptr : malloc(size);
}

RPE_HIDDEN void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  void *ptr = take(size, alignment);
  if (!ptr && alignment <= kHugeBytes)
    ptr = allocHuge(size);
  if (ptr)
    return ptr;
  if (posix_memalign(&ptr, alignment, size ? size : 1) != 0)
    return NULL;
  return ptr;
}

RPE_HIDDEN void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  size_t capacity = malloc_usable_size(ptr);
  size_t limit = cacheLimit();
  if (capacity < kMinBytes || capacity > limit) {
    free(ptr);
    return;
  }
  /* Blocks to free outside the lock: the evicted ones. */
  void *evicted[kSlots];
  int numEvicted = 0;
  pthread_mutex_lock(&lock);
  for (;;) {
    int empty = -1, oldest = -1;
    for (int i = 0; i < kSlots; ++i) {
      if (!slots[i].ptr) {
        if (empty < 0)
          empty = i;
      } else if (oldest < 0 || slots[i].age < slots[oldest].age) {
        oldest = i;
      }
    }
    if (empty >= 0 && cachedBytes + capacity <= limit) {
      slots[empty].ptr = ptr;
      slots[empty].capacity = capacity;
      slots[empty].counted = countedBytes(ptr, capacity);
      slots[empty].age = ++ageCounter;
      cachedBytes += capacity;
      ptr = NULL;
      break;
    }
    /* Full (slots or bytes): the oldest block makes room. capacity <= limit,
       so this ends with an empty cache at the latest. */
    evicted[numEvicted++] = slots[oldest].ptr;
    cachedBytes -= slots[oldest].capacity;
    slots[oldest].ptr = NULL;
  }
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < numEvicted; ++i)
    free(evicted[i]);
}

/* A result buffer given back by the caller: cached like the module's own.
   Any library's rpe_free_buffer takes any block (they all come from
   malloc). */
__attribute__((visibility("default"))) void rpe_free_buffer(void *ptr) {
  _mlir_memref_to_llvm_free(ptr);
}
