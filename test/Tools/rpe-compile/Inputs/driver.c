/* Links the rpe-compile'd Inputs/small.mlir through its generated header and
 * checks every entry point against values computed here from the formulas. */
#include "small.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

static void expect(const char *what, double got, double want) {
  if (fabs(got - want) > 1e-6 * (1 + fabs(want))) {
    printf("MISMATCH %s: got %g, want %g\n", what, got, want);
    ++failures;
  }
}

static float at3(const rpe_memref_f32_3d *m, int a, int b, int c) {
  return m->aligned[m->offset + a * m->strides[0] + b * m->strides[1] +
                    c * m->strides[2]];
}

static int clamp(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }

int main(void) {
  /* table[b][h] = 10 b + h: a clip<2> bucket b reads 10 b + h. */
  float table[5 * 2];
  for (int b = 0; b < 5; ++b)
    for (int h = 0; h < 2; ++h)
      table[b * 2 + h] = 10.0f * b + h;
  rpe_memref_f32_2d t = {table, table, 0, {5, 2}, {2, 1}};

  /* Two results and a scalar argument (q_offset = 3). */
  rpe_bias_and_alibi_results both;
  _mlir_ciface_bias_and_alibi(&both, &t, 3);
  const double slopes[2] = {0.5, 0.25};
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        expect("relative_bias", at3(&both.r0, h, i, j),
               10.0 * (clamp(i + 3 - j, -2, 2) + 2) + h);
        expect("alibi", at3(&both.r1, h, i, j), -slopes[h] * abs(i + 3 - j));
      }
  free(both.r0.allocated);
  free(both.r1.allocated);

  /* A dynamic result shape. */
  rpe_memref_f32_3d dyn;
  _mlir_ciface_bias(&dyn, &t, 7);
  if (dyn.sizes[0] != 2 || dyn.sizes[1] != 7 || dyn.sizes[2] != 7) {
    printf("MISMATCH shape %ldx%ldx%ld\n", (long)dyn.sizes[0],
           (long)dyn.sizes[1], (long)dyn.sizes[2]);
    ++failures;
  }
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 7; ++j)
        expect("dynamic relative_bias", at3(&dyn, h, i, j),
               10.0 * (clamp(i - j, -2, 2) + 2) + h);
  free(dyn.allocated);

  /* The argument and one value twice: three buffers of the caller's own
   * (freeing them all is a double free, or frees `table`, otherwise). */
  rpe_echo_twice_results echo;
  _mlir_ciface_echo_twice(&echo, &t);
  if (echo.r0.allocated == table || echo.r1.allocated == echo.r2.allocated) {
    printf("MISMATCH echo_twice: results share a buffer\n");
    ++failures;
  }
  for (int i = 0; i < 10; ++i) {
    expect("echo", echo.r0.aligned[echo.r0.offset + i], table[i]);
    expect("twice", echo.r1.aligned[echo.r1.offset + i], 2 * table[i]);
    expect("twice", echo.r2.aligned[echo.r2.offset + i], 2 * table[i]);
  }
  if (echo.r0.allocated != table)
    free(echo.r0.allocated);
  free(echo.r1.allocated);
  if (echo.r2.allocated != echo.r1.allocated)
    free(echo.r2.allocated);

  /* A scalar result: T5, n = j - i = +200 lands in the last bucket. */
  expect("bucket", (double)_mlir_ciface_bucket(0, 200), 31);
  expect("bucket", (double)_mlir_ciface_bucket(5, 5), 0);

  printf(failures ? "FAIL\n" : "OK\n");
  return failures != 0;
}
