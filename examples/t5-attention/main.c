/* Calls the ahead-of-time compiled T5-bias attention (t5_attention.mlir,
 * compiled by rpe-compile into an object or shared library) on random inputs
 * and compares it with a plain C reference written from the T5 formulas.
 *
 *   ./t5-attention [L] [repeats]
 *
 * Prints the maximum error and the median time; exits 1 if the error exceeds
 * the tolerance. */
#include "t5_attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B = 1, H = 8, D = 64, NUM_BUCKETS = 32, MAX_DISTANCE = 128 };

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float uniform(void) { /* xorshift64*, in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
  return (float)((r >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

/* Hugging Face T5 _relative_position_bucket, bidirectional, in f32. */
static int t5_bucket(int i, int j) {
  int n = j - i, half = NUM_BUCKETS / 2, exact = half / 2;
  int bucket = n > 0 ? half : 0;
  int a = n < 0 ? -n : n;
  if (a < exact)
    return bucket + a;
  float v = logf((float)a / (float)exact) /
            (float)log((double)MAX_DISTANCE / exact) * (float)(half - exact);
  int large = exact + (int)v;
  return bucket + (large < half - 1 ? large : half - 1);
}

static void reference(const float *q, const float *k, const float *v,
                      const float *table, int L, double *out) {
  double *s = malloc(sizeof(double) * L);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < L; ++i) {
      double m = -INFINITY, sum = 0;
      for (int j = 0; j < L; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += (double)q[(h * L + i) * D + d] * k[(h * L + j) * D + d];
        s[j] = dot + table[t5_bucket(i, j) * H + h];
        if (s[j] > m)
          m = s[j];
      }
      for (int j = 0; j < L; ++j)
        sum += (s[j] = exp(s[j] - m));
      for (int d = 0; d < D; ++d) {
        double acc = 0;
        for (int j = 0; j < L; ++j)
          acc += s[j] * v[(h * L + j) * D + d];
        out[(h * L + i) * D + d] = acc / sum;
      }
    }
  free(s);
}

static rpe_memref_f32_4d view4(float *data, int64_t l) {
  rpe_memref_f32_4d m = {data, data, 0, {B, H, l, D},
                         {H * l * D, l * D, D, 1}};
  return m;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int L = argc > 1 ? atoi(argv[1]) : 256;
  int repeats = argc > 2 ? atoi(argv[2]) : 5;
  if (L <= 0 || repeats <= 0) {
    fprintf(stderr, "usage: %s [L > 0] [repeats > 0]\n", argv[0]);
    return 2;
  }
  size_t n = (size_t)B * H * L * D;
  float *q = malloc(n * sizeof(float)), *k = malloc(n * sizeof(float));
  float *v = malloc(n * sizeof(float));
  float table[NUM_BUCKETS * H];
  for (size_t i = 0; i < n; ++i) {
    q[i] = uniform() * 0.5f;
    k[i] = uniform() * 0.5f;
    v[i] = uniform();
  }
  for (int i = 0; i < NUM_BUCKETS * H; ++i)
    table[i] = uniform();

  rpe_memref_f32_4d mq = view4(q, L), mk = view4(k, L), mv = view4(v, L);
  rpe_memref_f32_2d mt = {table, table, 0, {NUM_BUCKETS, H}, {H, 1}};
  double *times = malloc(sizeof(double) * repeats);
  rpe_memref_f32_4d out;
  for (int r = 0; r < repeats; ++r) {
    double t0 = now();
    _mlir_ciface_t5_attention(&out, &mq, &mk, &mv, &mt);
    times[r] = now() - t0;
    if (r + 1 < repeats)
      free(out.allocated);
  }
  qsort(times, repeats, sizeof(double), compare_doubles);

  double *ref = malloc(n * sizeof(double));
  reference(q, k, v, table, L, ref);
  double max_abs = 0, max_rel = 0;
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < L; ++i)
      for (int d = 0; d < D; ++d) {
        float got = out.aligned[out.offset + h * out.strides[1] +
                                i * out.strides[2] + d * out.strides[3]];
        double want = ref[(h * L + i) * D + d];
        double err = fabs(got - want);
        if (err > max_abs)
          max_abs = err;
        if (err / (fabs(want) + 1e-3) > max_rel)
          max_rel = err / (fabs(want) + 1e-3);
      }
  double flops = 4.0 * B * H * (double)L * L * D;
  printf("T5-bias attention B=%d H=%d L=%d D=%d (rpe-compile, AOT)\n", B, H, L,
         D);
  printf("max abs error vs C reference: %.3g (max rel %.3g)\n", max_abs,
         max_rel);
  printf("median time over %d runs: %.3f ms (%.2f GFLOP/s)\n", repeats,
         times[repeats / 2] * 1e3, flops / times[repeats / 2] * 1e-9);
  int ok = max_abs <= 1e-5;
  printf("%s\n", ok ? "PASS" : "FAIL: error above 1e-5");
  free(out.allocated);
  free(q);
  free(k);
  free(v);
  free(ref);
  free(times);
  return ok ? 0 : 1;
}
