"""Matmul-like linalg ops through the CPU pipeline's register-blocked
contraction kernel (rpe-vectorize-contractions), against NumPy in float64.

Shapes cover every edge of the kernel: rows that do not fill a register
block, columns that do not fill a vector block (masked) and more than one
cache block of columns (512) and of k (256), B's cache blocks read in place
and copied (pack-min-rows: 64 rows or more, per thread); batched and
broadcast operands,
A read transposed, accumulation into a non-zero C, a filled C with k dynamic
(0 included), f64, threads, and the
AVX2-sized and generic (4-lane) vector widths. Tolerance: 1e-5 of the
largest |A|·|B| sum (f32 accumulation over up to 600 terms), 1e-12 for
f64."""

import numpy as np
import pytest

import rpe

MATMUL = """
func.func @mm(%a: tensor<?x?x{t}>, %b: tensor<?x?x{t}>, %c: tensor<?x?x{t}>) -> tensor<?x?x{t}> {{
  %0 = linalg.matmul ins(%a, %b : tensor<?x?x{t}>, tensor<?x?x{t}>) outs(%c : tensor<?x?x{t}>) -> tensor<?x?x{t}>
  return %0 : tensor<?x?x{t}>
}}
"""

# Batched over b, A stored (b, k, i), B shared by every batch: the maps give
# the kernel's indices.
BATCHED = """
func.func @bmm(%a: tensor<?x?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %nb = tensor.dim %a, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %a, %c2 : tensor<?x?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%nb, %m, %n) : tensor<?x?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(bb, i, j, k) -> (bb, k, i)>,
                                        affine_map<(bb, i, j, k) -> (k, j)>,
                                        affine_map<(bb, i, j, k) -> (bb, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}
"""

# C filled with a non-zero value right before the matmul, k dynamic: the
# fill runs only when k is 0, otherwise the kernel starts from its value.
FILLED = """
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %v = arith.constant 0.75 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%v : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"""

SHAPES = [(1, 1, 1), (5, 7, 3), (6, 64, 16), (13, 33, 17), (7, 600, 300),
          (64, 129, 513), (1, 1024, 64), (150, 600, 300), (130, 1, 70)]


def _check(got, a, b, c, tol):
    want = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    scale = max(1.0, float((np.abs(a) @ np.abs(b)).max()))
    err = float(np.abs(got - want).max()) / scale
    assert err <= tol, "max error %.3g (relative to %.3g)" % (err, scale)


@pytest.fixture(scope="module", params=[("f32", "native", 0),
                                        ("f32", "x86-64", 0),
                                        ("f32", "haswell", 2),
                                        ("f64", "native", 2)],
                ids=lambda p: "-".join(map(str, p)))
def matmul(request):
    t, cpu, threads = request.param
    lib = rpe.compile(MATMUL.format(t=t), cpu=cpu, num_threads=threads,
                      opt_level=3)
    return t, lib


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matmul(matmul, m, n, k):
    t, lib = matmul
    dtype = np.float32 if t == "f32" else np.float64
    rng = np.random.default_rng(m * 1000003 + n * 1009 + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    got = lib.mm(a, b, c.copy())
    _check(got, a, b, c, 1e-5 if t == "f32" else 1e-12)


@pytest.mark.parametrize("m,n,k", [(5, 7, 0), (70, 530, 0), (13, 33, 17),
                                   (150, 600, 300), (64, 129, 513)])
@pytest.mark.parametrize("threads", [0, 2])
def test_filled_dynamic_k(m, n, k, threads):
    lib = rpe.compile(FILLED, num_threads=threads, opt_level=3)
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    got = lib.mm(a, b)
    _check(got, a, b, np.full((m, n), 0.75, np.float32), 1e-5)


@pytest.mark.parametrize("nb,m,n,k", [(1, 1, 1, 1), (3, 10, 24, 32),
                                      (2, 37, 70, 259), (2, 70, 530, 300)])
def test_batched_transposed_a(nb, m, n, k):
    lib = rpe.compile(BATCHED, opt_level=3)
    rng = np.random.default_rng(nb + m + n + k)
    a = rng.standard_normal((nb, k, m)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    got = lib.bmm(a, b)
    for i in range(nb):
        _check(got[i], a[i].T, b, np.zeros((m, n), np.float32), 1e-5)

