"""Transposes through the CPU pipeline's register-block kernel
(rpe-vectorize-transposes), against NumPy.

The shapes cover every edge of the kernel: sizes below one block, whole
blocks, and ends of either dimension (or both) that do not fill a block
(masked rows and lanes); a 3-D permutation that moves the unit-stride
dimension to the middle, element-wise bodies (a scale, f16 -> f32), f64
(half the lanes), i32, and the AVX2-sized (8) and generic (4) vector
widths. A transpose copies or scales each element once, so the results
must be exact (NumPy computes the same float32 product)."""

import numpy as np
import pytest

import rpe

TRANSPOSE = """
func.func @t(%x: tensor<?x?x{t}>) -> tensor<?x?x{t}> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?x{t}>
  %n = tensor.dim %x, %c1 : tensor<?x?x{t}>
  %e = tensor.empty(%n, %m) : tensor<?x?x{t}>
  %r = linalg.transpose ins(%x : tensor<?x?x{t}>) outs(%e : tensor<?x?x{t}>)
      permutation = [1, 0]
  return %r : tensor<?x?x{t}>
}}
"""

# out[r, q, p] = 0.125 · float(x[p, q, r]): the unit-stride dimension of x
# (r) is the first of the output, the output's (p) the first of x.
SCALED = """
func.func @s(%x: tensor<?x?x?xf16>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %p = tensor.dim %x, %c0 : tensor<?x?x?xf16>
  %q = tensor.dim %x, %c1 : tensor<?x?x?xf16>
  %r = tensor.dim %x, %c2 : tensor<?x?x?xf16>
  %e = tensor.empty(%r, %q, %p) : tensor<?x?x?xf32>
  %f = arith.constant 0.125 : f32
  %o = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (c, b, a)>,
                                        affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x?xf16>) outs(%e : tensor<?x?x?xf32>) {
  ^bb0(%v: f16, %out: f32):
    %w = arith.extf %v : f16 to f32
    %s = arith.mulf %w, %f : f32
    linalg.yield %s : f32
  } -> tensor<?x?x?xf32>
  return %o : tensor<?x?x?xf32>
}
"""

SHAPES = [(1, 1), (5, 7), (16, 16), (17, 33), (64, 129), (300, 47),
          (32, 8), (2, 512)]

TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32}


@pytest.fixture(scope="module", params=[("f32", "native"),
                                        ("f32", "x86-64"),
                                        ("f32", "haswell"),
                                        ("f64", "native"),
                                        ("i32", "native")],
                ids=lambda p: "-".join(p))
def transpose(request):
    t, cpu = request.param
    return t, rpe.compile(TRANSPOSE.format(t=t), cpu=cpu, opt_level=3)


@pytest.mark.parametrize("m,n", SHAPES)
def test_transpose(transpose, m, n):
    t, lib = transpose
    rng = np.random.default_rng(m * 1009 + n)
    x = (rng.standard_normal((m, n)) * 1000).astype(TYPES[t])
    got = lib.t(x)
    assert got.shape == (n, m)
    np.testing.assert_array_equal(got, x.T)


@pytest.mark.parametrize("cpu", ["native", "haswell"])
@pytest.mark.parametrize("p,q,r", [(1, 1, 1), (16, 3, 16), (19, 2, 37),
                                   (64, 4, 20)])
def test_scaled_3d(cpu, p, q, r):
    lib = rpe.compile(SCALED, cpu=cpu, opt_level=3)
    rng = np.random.default_rng(p * 10007 + q * 101 + r)
    x = rng.standard_normal((p, q, r)).astype(np.float16)
    got = lib.s(x)
    want = x.astype(np.float32).transpose(2, 1, 0) * np.float32(0.125)
    np.testing.assert_array_equal(got, want)

