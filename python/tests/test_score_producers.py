"""Front-end bias and mask code folded into score_mod (rpe-fuse-attention's
fold-ops, the kernels' diagonal tables): IR written the way torch-mlir
exports transformers' models, compiled fused and through the reference path,
against NumPy. The lengths are not multiples of the tiles, so the vector
kernel's padded diagonal entries are computed too: there a gather of a
(Lq + Lk - 1)-row table, with torch-mlir's bounds checks, would fail if
the padding read past the last diagonal."""

import os
import re
import subprocess

import numpy as np
import pytest

import rpe
from rpe import _tools

H, D = 2, 8
FINFO_MIN = float(np.finfo(np.float32).min)


def arange(name, n):
    """%name = arange(n) as i64, as torch-mlir writes it."""
    return f"""  %{name}_init = tensor.empty() : tensor<{n}xi64>
  %{name} = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}} outs(%{name}_init : tensor<{n}xi64>) {{
  ^bb0(%o: i64):
    %x = linalg.index 0 : index
    %c = arith.index_cast %x : index to i64
    linalg.yield %c : i64
  }} -> tensor<{n}xi64>
"""


def module(lq, lk, mask):
    """@f(q, k, v, table): attention with bias[h, i, j] = table[j - i + lq -
    1, h] (a relative_position_index gather, Swin style) and an additive
    mask built from aranges: "causal" keeps j <= i, "strict" keeps j < i,
    "nonneg" keeps position >= 0 (always)."""
    n = lq + lk - 1
    keep = {"causal": "arith.cmpi sle, %j, %i : i64",
            "strict": "arith.cmpi slt, %j, %i : i64",
            "nonneg": "arith.cmpi sge, %i, %c0_i64 : i64"}[mask]
    return f"""
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#col = affine_map<(d0, d1) -> (0, d1)>
#ij = affine_map<(d0, d1, d2) -> (d0, d1)>
#ijh = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#q4 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, 0)>
#k4 = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
func.func @f(%q: tensor<1x{H}x{lq}x{D}xf32>, %k: tensor<1x{H}x{lk}x{D}xf32>,
             %v: tensor<1x{H}x{lk}x{D}xf32>, %t: tensor<{n}x{H}xf32>)
    -> tensor<1x{H}x{lq}x{D}xf32> {{
  %c0 = arith.constant 0 : index
  %c0_i64 = arith.constant 0 : i64
  %off = arith.constant {lq - 1} : i64
  %cn = arith.constant {n} : index
  %zero = arith.constant 0.0 : f32
  %min = arith.constant {FINFO_MIN:.9e} : f32
{arange("aq", lq)}{arange("ak", lk)}  %r = tensor.expand_shape %aq [[0, 1]] output_shape [{lq}, 1]
      : tensor<{lq}xi64> into tensor<{lq}x1xi64>
  %c = tensor.expand_shape %ak [[0, 1]] output_shape [1, {lk}]
      : tensor<{lk}xi64> into tensor<1x{lk}xi64>
  %e = tensor.empty() : tensor<{lq}x{lk}xi64>
  %rel = linalg.generic {{indexing_maps = [#col, #row, #id2],
      iterator_types = ["parallel", "parallel"]}}
      ins(%c, %r : tensor<1x{lk}xi64>, tensor<{lq}x1xi64>)
      outs(%e : tensor<{lq}x{lk}xi64>) {{
  ^bb0(%a: i64, %b: i64, %o: i64):
    %d = arith.subi %a, %b : i64
    %s = arith.addi %d, %off : i64
    linalg.yield %s : i64
  }} -> tensor<{lq}x{lk}xi64>
  %eg = tensor.empty() : tensor<{lq}x{lk}x{H}xf32>
  %g = linalg.generic {{indexing_maps = [#ij, #ijh],
      iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%rel : tensor<{lq}x{lk}xi64>) outs(%eg : tensor<{lq}x{lk}x{H}xf32>) {{
  ^bb0(%in: i64, %o: f32):
    %idx = arith.index_cast %in : i64 to index
    %h = linalg.index 2 : index
    %lt = arith.cmpi slt, %idx, %cn : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %x = tensor.extract %t[%idx, %h] : tensor<{n}x{H}xf32>
    linalg.yield %x : f32
  }} -> tensor<{lq}x{lk}x{H}xf32>
  %et = tensor.empty() : tensor<{H}x{lq}x{lk}xf32>
  %tr = linalg.transpose ins(%g : tensor<{lq}x{lk}x{H}xf32>)
      outs(%et : tensor<{H}x{lq}x{lk}xf32>) permutation = [2, 0, 1]
  %bias = tensor.expand_shape %tr [[0, 1], [2], [3]]
      output_shape [1, {H}, {lq}, {lk}]
      : tensor<{H}x{lq}x{lk}xf32> into tensor<1x{H}x{lq}x{lk}xf32>
  %r4 = tensor.expand_shape %aq [[0, 1, 2, 3]] output_shape [1, 1, {lq}, 1]
      : tensor<{lq}xi64> into tensor<1x1x{lq}x1xi64>
  %c4 = tensor.expand_shape %ak [[0, 1, 2, 3]] output_shape [1, 1, 1, {lk}]
      : tensor<{lk}xi64> into tensor<1x1x1x{lk}xi64>
  %em = tensor.empty() : tensor<1x1x{lq}x{lk}xf32>
  %mask = linalg.generic {{indexing_maps = [#k4, #q4, #id4],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%c4, %r4 : tensor<1x1x1x{lk}xi64>, tensor<1x1x{lq}x1xi64>)
      outs(%em : tensor<1x1x{lq}x{lk}xf32>) {{
  ^bb0(%j: i64, %i: i64, %o: f32):
    %keep = {keep}
    %m = arith.select %keep, %zero, %min : f32
    linalg.yield %m : f32
  }} -> tensor<1x1x{lq}x{lk}xf32>
  %out = rpe.attention %q, %k, %v bias(%bias : tensor<1x{H}x{lq}x{lk}xf32>)
      : tensor<1x{H}x{lq}x{D}xf32>, tensor<1x{H}x{lk}x{D}xf32>,
        tensor<1x{H}x{lk}x{D}xf32> -> tensor<1x{H}x{lq}x{D}xf32> {{
  ^bb0(%s: f32, %b: index, %hh: index, %ii: index, %jj: index):
    %m = tensor.extract %mask[%c0, %c0, %ii, %jj] : tensor<1x1x{lq}x{lk}xf32>
    %sm = arith.addf %s, %m : f32
    rpe.yield %sm : f32
  }}
  return %out : tensor<1x{H}x{lq}x{D}xf32>
}}
"""


def expected(q, k, v, table, mask):
    lq, lk = q.shape[2], k.shape[2]
    i = np.arange(lq)[:, None]
    j = np.arange(lk)[None, :]
    bias = table[j - i + lq - 1].transpose(2, 0, 1)  # H × Lq × Lk
    keep = {"causal": j <= i, "strict": j < i,
            "nonneg": np.ones((lq, lk), bool)}[mask]
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k) / np.sqrt(D)
    s = s + bias + np.where(keep, 0.0, FINFO_MIN)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhij,bhjd->bhid", p, v)


@pytest.mark.parametrize("reference", [False, True], ids=["fused", "reference"])
@pytest.mark.parametrize("mask", ["causal", "strict", "nonneg"])
@pytest.mark.parametrize("lq,lk", [(1, 37), (50, 70), (130, 130), (77, 20)])
def test_folded_bias_and_mask(lq, lk, mask, reference):
    rng = np.random.default_rng(lq * 1000 + lk)
    q = rng.standard_normal((1, H, lq, D)).astype(np.float32)
    k = rng.standard_normal((1, H, lk, D)).astype(np.float32)
    v = rng.standard_normal((1, H, lk, D)).astype(np.float32)
    table = rng.standard_normal((lq + lk - 1, H)).astype(np.float32)
    got = rpe.compile(module(lq, lk, mask), reference=reference).f(q, k, v, table)
    want = expected(q, k, v, table, mask)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


def rope_chunk(name):
    """The function `name` of the rotary raising's lit test (front-end RoPE
    as torch-mlir writes transformers' rotate_half form)."""
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "test", "Dialect", "RPE", "fuse-attention-rotary.mlir")
    with open(path) as f:
        for chunk in f.read().split("// -----"):
            if "func.func @%s(" % name in chunk:
                return chunk
    raise AssertionError(name)


@pytest.mark.parametrize("name,theta", [("rope_theta_1e4", 1e4),
                                        ("rope_theta_5e5", 5e5),
                                        ("rope_not_geometric", None)])
@pytest.mark.parametrize("reference", [False, True])
def test_front_end_rope(name, theta, reference):
    """Raised to rpe.rotary (fused path) or not (reference path, or a
    frequency vector no θ gives): the same rotation as NumPy's
    transformers formula in float64, at positions up to 4095. transformers
    (and the unraised IR) compute the angles in float32, off by a few ulps of
    p·ω (tolerance as in test_parity's rope_atol); rpe.rotary computes them
    in float64, so the raised code meets a tolerance of a few float32
    roundings, which the unraised float32 angles at these positions do not."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    pos = rng.integers(0, 4096, (1, 6, 1)).astype(np.int64)
    mod = rpe.compile(rope_chunk(name), reference=reference)
    got = getattr(mod, name)(x, pos)
    if theta is None:
        inv = np.array([1.0, 0.1, 0.02, 0.001])
    else:
        inv = 1.0 / theta ** (np.arange(0, 8, 2) / 8.0)
    ang = pos[0, :, 0, None].astype(np.float64) * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    x64 = x.astype(np.float64)
    rot = np.concatenate([-x64[..., 4:], x64[..., :4]], axis=-1)
    want = x64 * np.cos(ang) + rot * np.sin(ang)
    if theta is not None and not reference:
        # Raised: float64 angles, only the float32 roundings of the tables
        # and the products remain.
        atol = 4.0 * np.abs(x).max() * 2.0 ** -23
    else:
        atol = 2.0 * np.abs(x).max() * (4095 * 2.0 ** -22 + 2.0 ** -21)
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)


@pytest.mark.parametrize("name,rest", [("rope_partial", 8),
                                       ("rope_partial_wrong_rest", 7)])
@pytest.mark.parametrize("reference", [False, True])
def test_front_end_rope_partial(name, rest, reference):
    """Partial rotary (the lit test's functions): dims 0..7 of x rotated
    with θ = 10^4 over R = 8, then x[..., rest:rest + 8] appended; raised to
    one rpe.rotary with rotary_dim = 8 when rest = 8, against NumPy."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, 6, 16)).astype(np.float32)
    pos = rng.integers(0, 4096, (1, 6, 1)).astype(np.int64)
    got = getattr(rpe.compile(rope_chunk(name), reference=reference),
                  name)(x, pos)
    inv = 1.0 / 1e4 ** (np.arange(0, 8, 2) / 8.0)
    ang = pos[0, :, 0, None].astype(np.float64) * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    x64 = x[..., :8].astype(np.float64)
    rot = np.concatenate([-x64[..., 4:], x64[..., :4]], axis=-1)
    want = np.concatenate([x64 * np.cos(ang) + rot * np.sin(ang),
                           x[..., rest:rest + 8]], axis=-1)
    if reference:
        atol = 2.0 * np.abs(x).max() * (4095 * 2.0 ** -22 + 2.0 ** -21)
    else:  # Raised (both): float64 angles.
        atol = 4.0 * np.abs(x).max() * 2.0 ** -23
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)


def scaled_frequencies(theta, dim, scaling):
    """transformers' inv_freq for rope_type "linear" / "llama3"
    (modeling_rope_utils), in float64."""
    omega = theta ** -(np.arange(0, dim, 2) / dim)
    if scaling[0] == "linear":
        return omega / scaling[1]
    factor, low, high, original = scaling[1:]
    wavelen = 2 * np.pi / omega
    smooth = (original / wavelen - low) / (high - low)
    mixed = (1 - smooth) * omega / factor + smooth * omega
    return np.where(wavelen > original / low, omega / factor,
                    np.where(wavelen < original / high, omega, mixed))


def rpe_opt(text, *passes):
    """rpe-opt's output for `text` (without the sanitizer runtime a sanitized
    test run preloads into Python: the tool links its own)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run([_tools.tool_path("rpe-opt"), "-", *passes],
                          input=text, capture_output=True, text=True,
                          check=True, env=env).stdout


def llama3_inv_freq_f32(theta, dim, factor, low, high, original):
    """transformers' llama3 inv_freq, computed in float32 as torch does."""
    f32 = np.float32
    exponent = np.arange(0, dim, 2).astype(f32) / f32(dim)
    inv = (f32(1.0) / np.power(f32(theta), exponent)).astype(f32)
    wavelen = (f32(2 * np.pi) / inv).astype(f32)
    scaled = np.where(wavelen > original / low, inv / f32(factor), inv)
    smooth = (f32(original) / wavelen - f32(low)) / f32(high - low)
    smoothed = (f32(1) - smooth) * scaled / f32(factor) + smooth * scaled
    medium = ~(wavelen < original / high) & ~(wavelen > original / low)
    return np.where(medium, smoothed, scaled).astype(f32)


def rope_ir(name, inv):
    """The lit test's @rope_theta_1e4 with inv_freq `inv` (D = 2·len)."""
    half, dim = len(inv), 2 * len(inv)
    text = rope_chunk("rope_theta_1e4").replace("@rope_theta_1e4", "@" + name)
    start = text.index("%inv = arith.constant dense<[")
    end = text.index("\n", start)
    text = (text[:start] + "%%inv = arith.constant dense<[%s]> : tensor<4xf32>"
            % ", ".join("%.9e" % v for v in inv) + text[end:])
    for old, new in [("x8xf32", "x@D@xf32"), ("1x6x4xf32", "1x6x@H@xf32"),
                     ("1x2x6x4xf32", "1x2x6x@H@xf32"),
                     ("tensor<4xf32>", "tensor<@H@xf32>"),
                     ("[1, 2, 6, 4]", "[1, 2, 6, @H@]"),
                     ("[0, 0, 0, 4]", "[0, 0, 0, @H@]"),
                     ("output_shape [1, 1, 6, 8]", "output_shape [1, 1, 6, @D@]")]:
        text = text.replace(old, new)
    return text.replace("@D@", str(dim)).replace("@H@", str(half))


@pytest.mark.parametrize("theta", [1e4, 5e5, 1e6])
@pytest.mark.parametrize("dim", [32, 64, 128])
@pytest.mark.parametrize("factor,low,high,original", [
    (8.0, 1.0, 4.0, 8192), (32.0, 1.0, 4.0, 8192), (4.0, 1.0, 8.0, 2048),
    (16.0, 1.0, 4.0, 4096), (2.0, 2.0, 16.0, 4096)])
def test_front_end_rope_llama3_configs(theta, dim, factor, low, high,
                                       original):
    """llama3 inv_freq from many configurations (transformers' f32
    arithmetic): raised every time, with parameters whose frequencies
    (transformers' formula in float64 on the printed attribute) are the
    configuration's within 4 units of 2^-23 at every t, factor and θ
    exact."""
    inv = llama3_inv_freq_f32(theta, dim, factor, low, high, original)
    out = rpe_opt(rope_ir("f", inv), "-rpe-fuse-attention")
    match = re.search(r"rpe\.rotary [^{:]*(\{[^}]*\})?", out)
    assert match and "math.cos" not in out, out
    attrs = match.group(1) or ""
    got_theta = re.search(r"theta = ([-+.e0-9]+)", attrs)
    got_theta = float(got_theta.group(1)) if got_theta else 1e4
    assert got_theta == theta
    want = scaled_frequencies(theta, dim, ("llama3", factor, low, high,
                                           original))
    params = re.search(r"rope_llama3<factor = ([^,]+), low_freq_factor = "
                       r"([^,]+), high_freq_factor = ([^,]+), "
                       r"original_max_position = (\d+)>", attrs)
    if params is None:  # Nothing scaled at this length: no scaling needed.
        assert np.array_equal(want, theta ** -(np.arange(0, dim, 2) / dim))
        return
    got = [float(x) for x in params.groups()]
    assert got[0] == factor
    np.testing.assert_allclose(
        scaled_frequencies(theta, dim, ("llama3", *got)), want,
        rtol=4 * 2.0 ** -23, atol=0)


@pytest.mark.parametrize("theta", [1e4, 5e5, 1e6])
@pytest.mark.parametrize("dim", [32, 128])
@pytest.mark.parametrize("factor", [1.5, 2.0, 3.0, 8.0, 40.0])
def test_front_end_rope_linear_configs(theta, dim, factor):
    """transformers' linear inv_freq (f32: default inv_freq / factor):
    raised with that factor and θ, exactly."""
    f32 = np.float32
    exponent = np.arange(0, dim, 2).astype(f32) / f32(dim)
    inv = (f32(1.0) / np.power(f32(theta), exponent)).astype(f32) / f32(factor)
    out = rpe_opt(rope_ir("f", inv), "-rpe-fuse-attention")
    match = re.search(r"rope_linear<factor = ([^>]+)>(, theta = ([^ ]+) : f64)?",
                      out)
    assert match and "math.cos" not in out, out
    assert float(match.group(1)) == factor
    assert float(match.group(3) or 1e4) == theta


@pytest.mark.parametrize("name,theta,scaling", [
    ("rope_linear", 1e4, ("linear", 4.0)),
    ("rope_llama3", 1e4, ("llama3", 4.0, 1.0, 8.0, 2048)),
    ("rope_llama3_1", 5e5, ("llama3", 8.0, 1.0, 4.0, 8192)),
    ("rope_llama3_one_smoothed", 1e4, ("llama3", 8.0, 1.0, 4.0, 2048)),
    ("rope_llama3_none_smoothed", 1e4, ("llama3", 8.0, 1.0, 2.0, 2048)),
    ("rope_llama3_perturbed", None, None)])
@pytest.mark.parametrize("reference", [False, True])
def test_front_end_rope_scaled(name, theta, scaling, reference):
    """inv_freq under a RoPE scaling, as transformers computes it in f32
    (the lit test's constants, from the configs named here): raised with
    the scaling, the rotation is that of transformers' formula in float64
    within a few float32 roundings, which only the right scaling
    parameters meet (the angles reach 4095·ω); the reference path and the
    perturbed table (not raised) compute f32 angles from the table."""
    chunk = rope_chunk(name)
    table = np.array([float(v) for v in chunk.split("dense<[")[1]
                      .split("]>")[0].split(",")], dtype=np.float32)
    dim = 2 * table.size
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 2, 6, dim)).astype(np.float32)
    pos = rng.integers(0, 4096, (1, 6, 1)).astype(np.int64)
    got = getattr(rpe.compile(chunk, reference=reference), name)(x, pos)
    raised = scaling is not None and not reference
    if scaling is not None:
        inv = scaled_frequencies(theta, dim, scaling)
        # The table is transformers' f32 rounding of these frequencies.
        np.testing.assert_allclose(table, inv, rtol=4 * 2.0 ** -23, atol=0)
    else:
        inv = table.astype(np.float64)
    ang = pos[0, :, 0, None].astype(np.float64) * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    x64 = x.astype(np.float64)
    half = dim // 2
    rot = np.concatenate([-x64[..., half:], x64[..., :half]], axis=-1)
    want = x64 * np.cos(ang) + rot * np.sin(ang)
    if raised:
        atol = 4.0 * np.abs(x).max() * 2.0 ** -23
    else:
        atol = 2.0 * np.abs(x).max() * (4095 * 2.0 ** -22 + 2.0 ** -21)
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)
