"""Math ops that convert-math-to-llvm cannot lower (rpe-legalize-math in the
CPU pipeline): compiled and compared with Python's double-precision math
module. f32 erf/erfc are polynomial approximations (tolerances below are
their measured accuracy with a margin); the others are libm calls. And f32
exp and tanh in elementwise code, polynomials too (rpe-approximate-math),
against NumPy's float64 functions."""

import math

import numpy as np
import pytest

import rpe

UNARY = ["erf", "erfc", "asinh", "acosh", "atanh", "cbrt"]


def _module(dtype):
    # f32 functions carry the names of libm's double functions (`erf`,
    # `cbrt`): the library must call its own, not the process's libm
    # (linked -Bsymbolic). For f64 such a name would be the libm function
    # math.cbrt calls (an error: test/Dialect/RPE/legalize-math.mlir).
    funcs = []
    for name in UNARY:
        funcs.append("""
func.func @%(f)s(%%x: tensor<?x%(t)s>) -> tensor<?x%(t)s> {
  %%0 = math.%(n)s %%x : tensor<?x%(t)s>
  return %%0 : tensor<?x%(t)s>
}""" % {"f": _fname(name, dtype), "n": name, "t": dtype})
    funcs.append("""
func.func @classify(%%x: tensor<?x%(t)s>) -> (tensor<?x%(t)s>, tensor<?x%(t)s>) {
  %%0 = math.isinf %%x : tensor<?x%(t)s>
  %%1 = math.isnormal %%x : tensor<?x%(t)s>
  %%2 = arith.uitofp %%0 : tensor<?xi1> to tensor<?x%(t)s>
  %%3 = arith.uitofp %%1 : tensor<?xi1> to tensor<?x%(t)s>
  return %%2, %%3 : tensor<?x%(t)s>, tensor<?x%(t)s>
}
func.func @clamp(%%x: tensor<?x%(t)s>, %%lo: tensor<?x%(t)s>, %%hi: tensor<?x%(t)s>) -> tensor<?x%(t)s> {
  %%0 = math.clampf %%x to [%%lo, %%hi] : tensor<?x%(t)s>
  return %%0 : tensor<?x%(t)s>
}""" % {"t": dtype})
    return "\n".join(funcs)


def _fname(name, dtype):
    return name if dtype == "f32" else name + "_f64"


@pytest.fixture(scope="module", params=["f32", "f64"])
def compiled(request):
    return request.param, rpe.compile(_module(request.param))


def _domain(name, dtype):
    if name == "acosh":
        x = np.concatenate([np.linspace(1, 10, 2001), np.geomspace(10, 1e30, 200)])
    elif name == "atanh":
        x = np.linspace(-0.999, 0.999, 4001)
    elif name in ("erf", "erfc"):
        x = np.linspace(-6, 6, 24001)
    else:
        x = np.concatenate([np.linspace(-10, 10, 4001), np.geomspace(1e-30, 1e30, 300),
                            -np.geomspace(1e-30, 1e30, 300)])
    return x.astype(np.float32 if dtype == "f32" else np.float64)


# (absolute, relative) tolerance against the double-precision result.
TOL = {
    ("f32", "erf"): (3e-7, 0),
    ("f32", "erfc"): (0, 1e-6),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary(compiled, name):
    dtype, mod = compiled
    x = _domain(name, dtype)
    got = getattr(mod, _fname(name, dtype))(x).astype(np.float64)
    fn = {"cbrt": lambda v: math.copysign(abs(v) ** (1 / 3), v)}.get(
        name, getattr(math, name))
    want = np.array([fn(float(v)) for v in x])
    if name == "erfc":
        keep = want > 1e-30  # the f32 polynomial flushes the far tail
        got, want = got[keep], want[keep]
    atol, rtol = TOL.get((dtype, name),
                         (0, 4e-7 if dtype == "f32" else 1e-14))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def test_classify(compiled):
    dtype, mod = compiled
    ft = np.float32 if dtype == "f32" else np.float64
    info = np.finfo(ft)
    x = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan,
                  info.tiny, info.tiny / 2, -info.tiny, info.max], dtype=ft)
    isinf, isnormal = mod.classify(x)
    np.testing.assert_array_equal(isinf, np.isinf(x).astype(ft))
    normal = np.isfinite(x) & (np.abs(x) >= info.tiny)
    np.testing.assert_array_equal(isnormal, normal.astype(ft))


def test_clamp(compiled):
    dtype, mod = compiled
    ft = np.float32 if dtype == "f32" else np.float64
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100).astype(ft) * 3
    lo = np.full(100, -1, ft)
    hi = np.full(100, 2, ft)
    np.testing.assert_array_equal(mod.clamp(x, lo, hi), np.minimum(np.maximum(x, lo), hi))


UNARY_F32 = """
func.func @{0}(%x: tensor<?xf32>) -> tensor<?xf32> {{
  %0 = math.{0} %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}}
"""


def _relative_error(fn, x, reference):
    """Largest |fn(x) - reference(x)| / |reference(x)| in float64, where the
    reference is not 0."""
    want = reference(x.astype(np.float64))
    got = fn(x).astype(np.float64)
    nonzero = want != 0
    return float((np.abs(got - want)[nonzero] / np.abs(want[nonzero])).max())


@pytest.mark.parametrize("cpu", ["native", "haswell", "generic"])
def test_exp_polynomial(cpu):
    # With FMAs (native, haswell) and with multiplies and adds (generic).
    # Measured on [-87, 88]: 8.2e-8 (NumPy's own f32 exp: 2.0e-7).
    lib = rpe.compile(UNARY_F32.format("exp"), cpu=cpu)
    x = np.linspace(-87, 88, 1750001, dtype=np.float32)
    assert _relative_error(lib.exp, x, np.exp) <= 1.5e-7
    # The top of the range, up to the largest finite result: 3.2e-7.
    x = np.linspace(88, 88.72, 100001, dtype=np.float32)
    assert _relative_error(lib.exp, x, np.exp) <= 5e-7
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -87.3, -88.0,
                        -200.0, 88.7, 89.0, 1e-30, -1e-30], np.float32)
    got = lib.exp(special)
    assert got[0] == 1.0 and got[1] == 1.0
    assert got[2] == np.inf and got[3] == 0.0 and np.isnan(got[4])
    # exp(-87.3) is still a normal f32; below the smallest normal, 0.
    assert abs(got[5] / np.exp(np.float64(special[5])) - 1) <= 1.5e-7
    assert got[6] == 0.0 and got[7] == 0.0
    assert abs(got[8] / np.exp(np.float64(special[8])) - 1) <= 5e-7
    assert got[9] == np.inf
    assert got[10] == 1.0 and got[11] == 1.0


@pytest.mark.parametrize("cpu", ["native", "haswell", "generic"])
def test_tanh_polynomial(cpu):
    # Measured: 2.7e-7 with FMA, 4.0e-7 without (NumPy's own f32 tanh:
    # 1.1e-7), tiny arguments included (tanh(x) = x there).
    lib = rpe.compile(UNARY_F32.format("tanh"), cpu=cpu)
    x = np.concatenate([np.linspace(-10, 10, 2000001, dtype=np.float32),
                        np.geomspace(1e-30, 1e-2, 10000).astype(np.float32)])
    assert _relative_error(lib.tanh, x, np.tanh) <= \
        (6e-7 if cpu == "generic" else 4e-7)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 20.0, -20.0],
                       np.float32)
    got = lib.tanh(special)
    assert got[0] == 0.0 and not np.signbit(got[0])
    assert got[1] == 0.0 and np.signbit(got[1])
    assert np.isnan(got[4])
    # Saturated: ±1, within 2 ulp without FMA (0.9999998).
    for value, sign in ((got[2], 1), (got[3], -1), (got[5], 1),
                        (got[6], -1)):
        assert abs(value - sign) <= 2.5e-7
