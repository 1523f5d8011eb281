"""Complex arithmetic through both CPU targets, against NumPy: the CPU
pipeline lowers `complex` ops on their parts (convert-complex-to-standard,
then convert-complex-to-llvm; before, every complex op was "cannot lower
'builtin.unrealized_conversion_cast'", while rpe-nvptx-pipeline compiled
them). The values go through a tensor of complex numbers (a memref of
{re, im} pairs) between two generics."""

import numpy as np
import pytest

import rpe

N = 37

PROGRAM = """
#m = affine_map<(i) -> (i)>
func.func @f(%ar: tensor<{n}x{t}>, %ai: tensor<{n}x{t}>, %br: tensor<{n}x{t}>,
             %bi: tensor<{n}x{t}>) -> (tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>) {{
  %e0 = tensor.empty() : tensor<{n}xcomplex<{t}>>
  %x, %y = linalg.generic {{indexing_maps = [#m, #m, #m, #m, #m, #m],
                           iterator_types = ["parallel"]}}
      ins(%ar, %ai, %br, %bi : tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>)
      outs(%e0, %e0 : tensor<{n}xcomplex<{t}>>, tensor<{n}xcomplex<{t}>>) {{
  ^bb0(%a: {t}, %b: {t}, %c: {t}, %d: {t}, %o: complex<{t}>, %p: complex<{t}>):
    %u = complex.create %a, %b : complex<{t}>
    %v = complex.create %c, %d : complex<{t}>
    linalg.yield %u, %v : complex<{t}>, complex<{t}>
  }} -> (tensor<{n}xcomplex<{t}>>, tensor<{n}xcomplex<{t}>>)
  %e1 = tensor.empty() : tensor<{n}x{t}>
  %re, %im, %abs = linalg.generic {{indexing_maps = [#m, #m, #m, #m, #m],
                                   iterator_types = ["parallel"]}}
      ins(%x, %y : tensor<{n}xcomplex<{t}>>, tensor<{n}xcomplex<{t}>>)
      outs(%e1, %e1, %e1 : tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>) {{
  ^bb0(%u: complex<{t}>, %v: complex<{t}>, %o0: {t}, %o1: {t}, %o2: {t}):
    %m1 = complex.mul %u, %v : complex<{t}>
    %q = complex.div %u, %v : complex<{t}>
    %s = complex.add %m1, %q : complex<{t}>
    %ex = complex.exp %u : complex<{t}>
    %z = complex.sub %s, %ex : complex<{t}>
    %r = complex.re %z : complex<{t}>
    %i = complex.im %z : complex<{t}>
    %a = complex.abs %v : complex<{t}>
    linalg.yield %r, %i, %a : {t}, {t}, {t}
  }} -> (tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>)
  return %re, %im, %abs : tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>
}}
"""


@pytest.mark.parametrize("target", ["cpu", "nvptx-emulated"])
@pytest.mark.parametrize("t,dtype,rtol", [("f32", np.float32, 2e-5),
                                          ("f64", np.float64, 1e-13)])
def test_complex_arithmetic(t, dtype, rtol, target):
    rng = np.random.default_rng(5)
    ar, ai, br, bi = (rng.uniform(-2, 2, N).astype(dtype) for _ in range(4))
    # Divisors far apart in scale (Smith's division keeps them accurate).
    br[:3] = [1e-3, 1e3, 0.0]
    bi[:3] = [1e3, 1e-3, 2.0]
    lib = rpe.compile(PROGRAM.format(n=N, t=t), target=target)
    re, im, ab = (np.asarray(r) for r in lib.f(ar, ai, br, bi))
    x = ar.astype(np.float64) + 1j * ai.astype(np.float64)
    y = br.astype(np.float64) + 1j * bi.astype(np.float64)
    z = x * y + x / y - np.exp(x)
    scale = np.maximum(np.abs(z), 1.0)
    np.testing.assert_array_less(np.abs(re - z.real) / scale, rtol)
    np.testing.assert_array_less(np.abs(im - z.imag) / scale, rtol)
    np.testing.assert_allclose(ab, np.abs(y), rtol=rtol)
