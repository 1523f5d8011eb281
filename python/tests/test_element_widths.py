"""Element types whose width is not 8, 16, 32 or 64 bits, through both CPU
targets, against NumPy: i8 input widened (or narrowed) to the type under
test, transposed, and brought back to i8 (f64 through f80 / f128).

And a copy out of a slice (a strided copy: rpe-expand-strided-copies).

Three bugs these caught: rpe-vectorize-transposes and
rpe-expand-strided-copies moved such elements with vector loads and
stores, which LLVM packs without padding (i2 … i96, f80: wrong values; f80
in the transposes: a crash), and rpe-compile sized allocations with the
default data layout before setting the target's (i65 … i96 got 9 … 12
bytes an element where x86 strides 16: a heap overflow). The values pass
through unchanged, so the results must be exact."""

import numpy as np
import pytest

import rpe

ROWS, COLS = 19, 37  # neither a multiple of any vector width

PROGRAM = """
#m = affine_map<(i, j) -> (i, j)>
func.func @f(%a: tensor<{r}x{c}x{e}>) -> tensor<{c}x{r}x{e}> {{
  %e0 = tensor.empty() : tensor<{r}x{c}x{t}>
  %n = linalg.generic {{indexing_maps = [#m, #m],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%a : tensor<{r}x{c}x{e}>) outs(%e0 : tensor<{r}x{c}x{t}>) {{
  ^bb0(%x: {e}, %o: {t}):
    %y = arith.{to} %x : {e} to {t}
    linalg.yield %y : {t}
  }} -> tensor<{r}x{c}x{t}>
  %e1 = tensor.empty() : tensor<{c}x{r}x{t}>
  %tr = linalg.transpose ins(%n : tensor<{r}x{c}x{t}>)
      outs(%e1 : tensor<{c}x{r}x{t}>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<{c}x{r}x{e}>
  %w = linalg.generic {{indexing_maps = [#m, #m],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%tr : tensor<{c}x{r}x{t}>) outs(%e2 : tensor<{c}x{r}x{e}>) {{
  ^bb0(%x: {t}, %o: {e}):
    %y = arith.{back} %x : {t} to {e}
    linalg.yield %y : {e}
  }} -> tensor<{c}x{r}x{e}>
  return %w : tensor<{c}x{r}x{e}>
}}
"""

TYPES = ["i2", "i3", "i4", "i7", "i12", "i24", "i48", "i65", "i80", "i96",
         "i127", "i128", "i200", "f80", "f128"]


def _program(t):
    if t.startswith("f"):
        return PROGRAM.format(r=ROWS, c=COLS, e="f64", t=t, to="extf",
                              back="truncf")
    narrow = int(t[1:]) < 8
    return PROGRAM.format(r=ROWS, c=COLS, e="i8", t=t,
                          to="trunci" if narrow else "extsi",
                          back="extsi" if narrow else "trunci")


@pytest.mark.parametrize("target", ["cpu", "nvptx-emulated"])
@pytest.mark.parametrize("t", TYPES)
def test_transpose_through_type(t, target):
    rng = np.random.default_rng(int(t[1:]))
    if t.startswith("f"):
        a = rng.standard_normal((ROWS, COLS))
    else:
        bits = int(t[1:])
        # Values the type holds, so that the round trip is exact.
        half = 1 << (min(bits, 8) - 1)
        a = rng.integers(-half, half, (ROWS, COLS)).astype(np.int8)
    lib = rpe.compile(_program(t), target=target)
    np.testing.assert_array_equal(np.asarray(lib.f(a)), a.T)


SLICE = """
#m = affine_map<(i, j) -> (i, j)>
func.func @f(%a: tensor<8x16x{e}>) -> tensor<8x8x{e}> {{
  %e0 = tensor.empty() : tensor<8x16x{t}>
  %n = linalg.generic {{indexing_maps = [#m, #m],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%a : tensor<8x16x{e}>) outs(%e0 : tensor<8x16x{t}>) {{
  ^bb0(%x: {e}, %o: {t}):
    %y = arith.{to} %x : {e} to {t}
    linalg.yield %y : {t}
  }} -> tensor<8x16x{t}>
  %s = tensor.extract_slice %n[0, 4] [8, 8] [1, 1]
      : tensor<8x16x{t}> to tensor<8x8x{t}>
  %e1 = tensor.empty() : tensor<8x8x{t}>
  %c = bufferization.materialize_in_destination %s in %e1
      : (tensor<8x8x{t}>, tensor<8x8x{t}>) -> tensor<8x8x{t}>
  %e2 = tensor.empty() : tensor<8x8x{e}>
  %w = linalg.generic {{indexing_maps = [#m, #m],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%c : tensor<8x8x{t}>) outs(%e2 : tensor<8x8x{e}>) {{
  ^bb0(%x: {t}, %o: {e}):
    %y = arith.{back} %x : {t} to {e}
    linalg.yield %y : {e}
  }} -> tensor<8x8x{e}>
  return %w : tensor<8x8x{e}>
}}
"""


@pytest.mark.parametrize("t", ["i24", "i48", "i72", "i96", "i128", "f80"])
def test_strided_copy_of_type(t):
    if t.startswith("f"):
        src = SLICE.format(e="f64", t=t, to="extf", back="truncf")
        a = np.random.default_rng(1).standard_normal((8, 16))
    else:
        src = SLICE.format(e="i8", t=t, to="extsi", back="trunci")
        a = (np.arange(128).reshape(8, 16) - 64).astype(np.int8)
    lib = rpe.compile(src, target="cpu")
    np.testing.assert_array_equal(np.asarray(lib.f(a)), a[:, 4:12])
