/* Calls the checked entry points of checked.mlir (rpe_<name>) with sizes that
 * violate each kind of constraint: each call must return nonzero, print its
 * message and leave the result descriptor untouched; fitting calls return 0.
 */
#include "checked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float data[4096];
static int failures;

static rpe_memref_f32_4d t4(int64_t a, int64_t b, int64_t c, int64_t d) {
  rpe_memref_f32_4d m = {data, data, 0, {a, b, c, d},
                         {b * c * d, c * d, d, 1}};
  return m;
}
static rpe_memref_f32_2d t2(int64_t a, int64_t b) {
  rpe_memref_f32_2d m = {data, data, 0, {a, b}, {b, 1}};
  return m;
}

/* A result descriptor the call must not touch on failure. */
#define SENTINEL(type, name)                                                   \
  type name;                                                                   \
  memset(&name, 0xA5, sizeof(name))
static int untouched(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; ++i)
    if (c[i] != 0xA5)
      return 0;
  return 1;
}

static void expect_failure(const char *what, int status, const char *error,
                           const void *result, size_t size) {
  printf("%s: status %d: %s\n", what, status, error);
  if (status == 0 || !untouched(result, size)) {
    printf("MISMATCH: %s\n", what);
    ++failures;
  }
}

int main(void) {
  char error[512];
  int32_t lengths[1] = {8};
  rpe_memref_i32_1d len = {lengths, lengths, 0, {1}, {1}};
  for (int i = 0; i < 4096; ++i)
    data[i] = 0.01f * (float)(i % 7);

  { /* k's head dimension differs from q's. */
    SENTINEL(rpe_memref_f32_4d, out);
    rpe_memref_f32_4d q = t4(1, 2, 8, 16), k = t4(1, 2, 8, 4),
                      v = t4(1, 2, 8, 16);
    int s = rpe_attn(&out, &q, &k, &v, &len, error, sizeof error);
    expect_failure("head dim", s, error, &out, sizeof out);
  }
  { /* GQA: 3 query heads over 2 kv heads. */
    SENTINEL(rpe_memref_f32_4d, out);
    rpe_memref_f32_4d q = t4(1, 3, 8, 16), k = t4(1, 2, 8, 16);
    int s = rpe_attn(&out, &q, &k, &k, &len, error, sizeof error);
    expect_failure("gqa", s, error, &out, sizeof out);
  }
  { /* key_lengths beyond Lk. */
    SENTINEL(rpe_memref_f32_4d, out);
    int32_t bad[1] = {9};
    rpe_memref_i32_1d badLen = {bad, bad, 0, {1}, {1}};
    rpe_memref_f32_4d q = t4(1, 2, 8, 16);
    int s = rpe_attn(&out, &q, &q, &q, &badLen, error, sizeof error);
    expect_failure("key_lengths", s, error, &out, sizeof out);
  }
  { /* 8 table rows for 9 buckets. */
    SENTINEL(rpe_memref_f32_3d, out);
    rpe_memref_f32_2d table = t2(8, 2);
    int s = rpe_bias(&out, &table, 5, error, sizeof error);
    expect_failure("buckets", s, error, &out, sizeof out);
  }
  { /* rotary_dim 8 > D = 4. */
    SENTINEL(rpe_memref_f32_3d, out);
    int64_t pos[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    rpe_memref_i64_1d p = {pos, pos, 0, {8}, {1}};
    rpe_memref_f32_3d x = {data, data, 0, {2, 8, 4}, {32, 4, 1}};
    int s = rpe_rope(&out, &x, &p, error, sizeof error);
    expect_failure("rotary_dim", s, error, &out, sizeof out);
  }
  { /* rotary_dim defaults to D = 5: odd. */
    SENTINEL(rpe_memref_f32_3d, out);
    int64_t pos[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    rpe_memref_i64_1d p = {pos, pos, 0, {8}, {1}};
    rpe_memref_f32_3d x = {data, data, 0, {2, 8, 5}, {40, 5, 1}};
    int s = rpe_rope_even(&out, &x, &p, error, sizeof error);
    expect_failure("even D", s, error, &out, sizeof out);
  }
  { /* matmul: 3x4 times 5x2. */
    SENTINEL(rpe_memref_f32_2d, out);
    rpe_memref_f32_2d a = t2(3, 4), b = t2(5, 2), c = t2(3, 2);
    int s = rpe_mm(&out, &a, &b, &c, error, sizeof error);
    expect_failure("matmul", s, error, &out, sizeof out);
  }
  { /* A short error buffer is truncated, never overrun. */
    char small[8];
    memset(small, 'x', sizeof small);
    rpe_memref_f32_2d a = t2(3, 4), b = t2(5, 2), c = t2(3, 2);
    rpe_memref_f32_2d out;
    int s = rpe_mm(&out, &a, &b, &c, small, 4);
    if (s == 0 || small[3] != '\0' || small[4] != 'x') {
      printf("MISMATCH: truncation\n");
      ++failures;
    }
    if (rpe_mm(&out, &a, &b, &c, NULL, 0) == 0) {
      printf("MISMATCH: NULL error buffer\n");
      ++failures;
    }
  }
  { /* Sizes that fit: status 0 and a result. */
    rpe_memref_f32_4d out;
    rpe_memref_f32_4d q = t4(1, 2, 8, 16);
    int s = rpe_attn(&out, &q, &q, &q, &len, error, sizeof error);
    if (s != 0 || out.sizes[2] != 8) {
      printf("MISMATCH: fitting call: %d\n", s);
      ++failures;
    } else {
      free(out.allocated);
    }
  }
  printf("%s\n", failures ? "FAILED" : "OK");
  return failures != 0;
}
