"""The tensor-core attention kernel of the GPU path (issue 9): the
``tensor_cores`` switch of rpe.compile reaches the NVPTX pipeline (mma.sync
in the PTX or not), and both kernels, emulated on the CPU, agree with a
NumPy reference for f16 and bf16."""

import os
import subprocess

import numpy as np
import pytest

import rpe
from rpe import _capi, _tools, ir

HAVE_TOOLKIT = (os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
                or bool(os.environ.get("CUDA_ROOT")))


def reference(q, k, v, causal):
    """softmax(q·kᵀ/√D, causal mask)·v in float64; GQA by head groups."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        lq, lk = s.shape[-2:]
        s = np.where(np.arange(lk)[None, :] > np.arange(lq)[:, None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def module(elem):
    return ir.attention((2, 4, None, 32), (2, 2, None, 32), (2, 2, None, 16),
                        causal=True, elem=elem, name="attn")


@pytest.mark.parametrize("elem", ["f16", "bf16"])
@pytest.mark.parametrize("tensor_cores", [True, False])
def test_emulated_kernels_match_numpy(elem, tensor_cores):
    mod = rpe.compile(module(elem), target="nvptx-emulated",
                      tensor_cores=tensor_cores)
    rng = np.random.default_rng(7)
    dtype = {"f16": np.float16, "bf16": None}[elem]
    for length in (3, 45, 100):
        args = [rng.uniform(-1.5, 1.5, shape).astype(np.float32)
                for shape in ((2, 4, length, 32), (2, 2, length, 32),
                              (2, 2, length, 16))]
        if dtype is not None:
            args = [a.astype(dtype) for a in args]
        else:  # bf16: values exactly representable (8 significant bits)
            args = [(a.view(np.uint32) & 0xFFFF0000).view(np.float32)
                    for a in args]
        got = np.asarray(mod.attn(*args), np.float64)
        want = reference(*args, causal=True)
        tol = 4e-3 if elem == "f16" else 2e-2
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.skipif(not HAVE_TOOLKIT, reason="needs the CUDA toolkit")
@pytest.mark.parametrize("elem", ["f16", "bf16"])
def test_switch_reaches_the_nvptx_pipeline(tmp_path, elem):
    text = module(elem)
    comp = _capi.compiler()
    found = {}
    for tensor_cores in (True, False):
        ptx = str(tmp_path / ("on.ptx" if tensor_cores else "off.ptx"))
        ok, diagnostics = comp.compile(text, "<test>", ptx, emit="ptx",
                                       target="nvptx", chip="sm_80",
                                       tensor_cores=tensor_cores)
        assert ok, diagnostics
        with open(ptx) as f:
            found[tensor_cores] = f.read().count(
                "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32" % (elem, elem))
    assert found[True] > 0 and found[False] == 0, found


def _sixteen_bit(a, elem):
    """`a` (float32) as f16, or as float32 values exact in bf16."""
    if elem == "f16":
        return a.astype(np.float16)
    return (a.view(np.uint32) & 0xFFFF0000).view(np.float32)


# The register kernel's emulation, as the differential suite's
# "gpu-registers" path: left out where RPE_DIFF_SKIP_PATHS names that path
# (the sanitized CI stage, for time; its passes run there through lit).
_emulated_registers = pytest.mark.skipif(
    "gpu-registers" in os.environ.get("RPE_DIFF_SKIP_PATHS", "").split(","),
    reason="RPE_DIFF_SKIP_PATHS leaves out gpu-registers")


# (B, H, Hkv, Lq, Lk, D, Dv, bias, key_lengths, q_offset, causal): odd
# lengths, GQA, a decode row, negative offsets, a key length of 0.
REGISTER_CASES = [
    (2, 4, 2, 45, 100, 32, 16, False, False, None, True),
    (1, 2, 2, 70, 33, 64, 64, True, False, None, False),
    (2, 2, 1, 37, 90, 16, 24, True, True, 40, True),
    (1, 4, 4, 1, 130, 128, 128, False, True, 129, True),
    (2, 2, 2, 50, 20, 32, 8, False, False, -7, True),
]


def _register_configurations():
    """(elem, case, options): the cases with both element types; the
    D = 128 decode case (half a minute of compilation each) and the option
    variants with one, taking turns (the options shape the tiles and the
    staging, the same code for both types)."""
    both = [(e, c, "mma-registers=1") for c in REGISTER_CASES
            if c[5] < 128 for e in ("f16", "bf16")]
    variants = [(c, "mma-registers=1") for c in REGISTER_CASES
                if c[5] == 128] + [
        # Three 16-row tiles per emulated warp, 32-key tiles.
        (c, "mma-registers=1 mma-block-rows=48 mma-tile-k=32")
        for c in REGISTER_CASES[:3]] + [
        # Every tile's keys clamped (no strided staging views).
        (c, "mma-registers=1 mma-stage-views=0") for c in REGISTER_CASES[:3]] + [
        # O rescaled only where a row of the warp saw its maximum grow (not
        # the D = 128 decode case: a minute of compilation for the same
        # code).
        (c, "mma-registers=1 mma-lazy-rescale=1")
        for c in REGISTER_CASES[:3] + REGISTER_CASES[4:]]
    return both + [(("bf16", "f16")[n % 2], c, o)
                   for n, (c, o) in enumerate(variants)]


@pytest.mark.parametrize("elem,case,options", _register_configurations(),
                         ids=lambda x: x if isinstance(x, str) else
                         "B%dH%dkv%d-%dx%d-D%dDv%d" % x[:7])
@_emulated_registers
def test_register_kernel_matches_reference(elem, case, options):
    """The register-resident tensor-core kernel (FlashAttention-2 form, its
    32 lanes and their shuffles and mma.sync emulated by one thread per
    block) against rpe.reference in float64."""
    B, H, Hkv, lq, lk, d, dv, bias, kl, off, causal = case
    text = ir.attention((B, H, None, d), (B, Hkv, None, d), (B, Hkv, None, dv),
                        bias_shape=(H, None, None) if bias else None,
                        key_lengths=kl, q_offset=off is not None,
                        causal=causal,
                        elem=elem, name="attn")
    mod = rpe.compile(text, target="nvptx-emulated",
                      gpu_kernel_options=options)
    rng = np.random.default_rng(11)
    q, k, v = (_sixteen_bit(rng.uniform(-1.5, 1.5, s).astype(np.float32), elem)
               for s in ((B, H, lq, d), (B, Hkv, lk, d), (B, Hkv, lk, dv)))
    args, ref = [q, k, v], {}
    if bias:
        ref["bias"] = _sixteen_bit(
            rng.uniform(-2, 2, (H, lq, lk)).astype(np.float32), elem)
        args.append(ref["bias"])
    if kl:
        ref["key_lengths"] = np.array([lk // 2, 0][:B], np.int32)
        args.append(ref["key_lengths"])
    if off is not None:
        ref["q_offset"] = off
        args.append(off)
    got = np.asarray(mod.attn(*args), np.float64)
    want = rpe.reference.attention(q, k, v, causal=causal, **ref)
    tol = 4e-3 if elem == "f16" else 2e-2
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("elem", ["f16", "bf16"])
@_emulated_registers
def test_lazy_rescale_skips_tiles_and_catches_one_late_maximum(elem):
    """mma-lazy-rescale: a bias falling by 0.5 per key keeps every row's
    maximum in its first tile, so the warps skip O *= alpha on the later
    tiles; one row (21: the second warp-tile's lanes 20-23) has a spike at
    key 130 (tile 4 of 32-key tiles) where its maximum grows, and only there
    must O be rescaled (by alpha = exp(m - m'), about 0 here), for all the
    warp's rows at once."""
    B, H, lq, lk, d = 1, 2, 40, 150, 32
    text = ir.attention((B, H, None, d), (B, H, None, d), (B, H, None, d),
                        bias_shape=(H, None, None), elem=elem, name="attn")
    rng = np.random.default_rng(5)
    q, k, v = (_sixteen_bit(rng.uniform(-1.5, 1.5, s).astype(np.float32), elem)
               for s in ((B, H, lq, d), (B, H, lk, d), (B, H, lk, d)))
    bias = np.broadcast_to(-0.5 * np.arange(lk, dtype=np.float32),
                           (H, lq, lk)).copy()
    bias[:, 21, 130] = 40.0
    bias = _sixteen_bit(bias, elem)
    want = rpe.reference.attention(q, k, v, bias=bias)
    for options in ("mma-registers=1 mma-lazy-rescale=1", "mma-registers=1"):
        mod = rpe.compile(text, target="nvptx-emulated",
                          gpu_kernel_options=options)
        got = np.asarray(mod.attn(q, k, v, bias), np.float64)
        tol = 4e-3 if elem == "f16" else 2e-2
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol,
                                   err_msg=options)
    # Row 21 is V's row 130, the others mostly V's row 0.
    np.testing.assert_allclose(got[0, :, 21], v[0, :, 130], rtol=2e-2,
                               atol=2e-2)


def _rpe_opt(text, pipeline):
    """rpe-opt's output for `text`, without the sanitizer runtime the
    sanitized test run preloads into Python (a sanitized tool links its
    own; two ASan runtimes abort)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run([_tools.tool_path("rpe-opt"), "-", pipeline],
                          input=text, capture_output=True, text=True,
                          check=True, env=env).stdout


def test_register_kernel_is_used():
    """mma-registers reaches rpe-gpu-attention: mma.sync on the fragments
    (no vector.contract nest), the warps' quad shuffles, no workgroup score
    tile; D = 256 keeps the shared-memory kernel."""
    text = ir.attention((1, 2, 64, 64), (1, 2, 64, 64), (1, 2, 64, 64),
                        causal=True, elem="bf16", name="attn")
    out = _rpe_opt(text, "-rpe-gpu-attention=mma-registers=1 mma-threads=128")
    # Per 32-key tile: S = Q·Kᵀ is 4 key tiles × 4 chunks of D, O += P·V 8
    # column tiles × 2 key chunks.
    assert out.count("nvvm.mma.sync") == 4 * 4 + 8 * 2, out
    # B fragments two per ldmatrix (x4): K 4 key tiles × 2 pairs of chunks,
    # V 4 pairs of column tiles × 2 key chunks.
    assert out.count("numTiles = 4") == 4 * 2 + 4 * 2, out
    assert "numTiles = 2" not in out
    assert "gpu.shuffle  xor" in out and "vector.contract" not in out
    assert "x32xf32, #gpu.address_space<workgroup>" not in out
    wide = ir.attention((1, 2, 64, 256), (1, 2, 64, 256), (1, 2, 64, 256),
                        elem="bf16", name="attn")
    out = _rpe_opt(wide, "-rpe-gpu-attention=mma-registers=1")
    assert "nvvm.mma.sync" not in out and "vector.contract" in out


@pytest.mark.parametrize("shift", [0, 1, 8])
@_emulated_registers
def test_register_kernel_stages_misaligned_operands(shift):
    """K and V that start `shift` elements (2 bytes each) into a buffer: the
    register kernel's 16-byte staging loads are taken only where every run
    of 8 elements is 16-byte aligned (shift 0 and 8), else 2-byte loads."""
    B, H, L, D = 1, 2, 40, 32
    text = ir.attention((B, H, None, D), (B, H, None, D), (B, H, None, D),
                        causal=True, elem="f16", name="attn")
    mod = rpe.compile(text, target="nvptx-emulated",
                      gpu_kernel_options="mma-registers=1")
    rng = np.random.default_rng(3)
    q, k, v = (rng.uniform(-1.5, 1.5, (B, H, L, D)).astype(np.float16)
               for _ in range(3))

    def shifted(a):
        base = np.zeros(a.size + 16, np.float16)
        out = base[shift:shift + a.size].reshape(a.shape)
        out[...] = a
        assert out.ctypes.data % 16 == (2 * shift) % 16
        return out

    got = np.asarray(mod.attn(q, shifted(k), shifted(v)), np.float64)
    want = rpe.reference.attention(q, k, v, causal=True)
    np.testing.assert_allclose(got, want, rtol=4e-3, atol=4e-3)


# score_mod bodies (s: the scaled score, i / j: query / key positions) and
# their NumPy forms. The register kernel folds the scale into an FMA with
# the term a score_mod adds to s (`s + x`, x free of s); the others get
# s·scale first.
SCORE_MODS = {
    "additive": ("""
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %d = arith.subi %ii, %ji : i64
    %df = arith.sitofp %d : i64 to f32
    %c = arith.constant 0.05 : f32
    %x = arith.mulf %df, %c : f32
    %r = arith.addf %x, %s : f32""",
                 lambda s, i, j: s + 0.05 * (i - j)),
    "softcap": ("""
    %c = arith.constant 2.0 : f32
    %a = arith.divf %s, %c : f32
    %t = math.tanh %a : f32
    %r = arith.mulf %t, %c : f32""",
                lambda s, i, j: 2.0 * np.tanh(s / 2.0)),
    "doubled": ("""
    %r = arith.addf %s, %s : f32""",
                lambda s, i, j: 2.0 * s),
    "scaled_then_added": ("""
    %c = arith.constant 1.5 : f32
    %m = arith.mulf %s, %c : f32
    %r = arith.addf %m, %c : f32""",
                          lambda s, i, j: 1.5 * s + 1.5),
}


@pytest.mark.parametrize("elem", ["f16", "bf16"])
@pytest.mark.parametrize("name", sorted(SCORE_MODS))
@_emulated_registers
def test_register_kernel_score_mods(elem, name):
    """score_mod on the register kernel's fragments, with the scale folded
    into an FMA where the body adds a term to the score, against NumPy."""
    body, fn = SCORE_MODS[name]
    t = "tensor<1x2x?x32x%s>" % elem
    text = """
func.func @attn(%%q: %(t)s, %%k: %(t)s, %%v: %(t)s) -> %(t)s {
  %%0 = rpe.attention %%q, %%k, %%v causal : %(t)s, %(t)s, %(t)s -> %(t)s {
  ^bb0(%%s: f32, %%b: index, %%h: index, %%i: index, %%j: index):%(body)s
    rpe.yield %%r : f32
  }
  return %%0 : %(t)s
}
""" % {"t": t, "body": body}
    mod = rpe.compile(text, target="nvptx-emulated",
                      gpu_kernel_options="mma-registers=1")
    rng = np.random.default_rng(5)
    L = 45
    q, k, v = (_sixteen_bit(rng.uniform(-1.5, 1.5, (1, 2, L, 32))
                            .astype(np.float32), elem) for _ in range(3))
    got = np.asarray(mod.attn(q, k, v), np.float64)
    q64, k64, v64 = (np.asarray(x, np.float64) for x in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) / np.sqrt(32)
    i, j = np.arange(L)[:, None], np.arange(L)[None, :]
    s = np.where(j > i, -np.inf, fn(s, i, j))
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v64
    tol = 4e-3 if elem == "f16" else 2e-2
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("options", [
    "mma-registers=1 mma-block-rows=16 mma-tile-k=16",
    "mma-registers=1 mma-block-rows=48 mma-tile-k=32"])
@_emulated_registers
def test_register_kernel_causal_tile_edges(options):
    """Causal attention with every query offset from -3 to 40: each key tile
    is scored without a mask only when the warp's first row sees its last
    key, so some offset puts a tile's last key one past, at and one before
    that row's position (an off-by-one there shows a masked key)."""
    B, H, lq, lk, D = 1, 2, 40, 90, 32
    text = ir.attention((B, H, None, D), (B, H, None, D), (B, H, None, D),
                        q_offset=True, causal=True, elem="f16", name="attn")
    mod = rpe.compile(text, target="nvptx-emulated",
                      gpu_kernel_options=options)
    rng = np.random.default_rng(13)
    q = rng.uniform(-1.5, 1.5, (B, H, lq, D)).astype(np.float16)
    k, v = (rng.uniform(-1.5, 1.5, (B, H, lk, D)).astype(np.float16)
            for _ in range(2))
    for offset in range(-3, 41):
        got = np.asarray(mod.attn(q, k, v, offset), np.float64)
        want = rpe.reference.attention(q, k, v, causal=True, q_offset=offset)
        np.testing.assert_allclose(got, want, rtol=4e-3, atol=4e-3,
                                   err_msg="q_offset %d" % offset)
