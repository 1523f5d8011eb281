"""Parity of rpe with the real implementations it models.

The golden files in python/tests/fixtures/ are written by
python/tools/make_parity_fixtures.py from the seed write-up's PyTorch classes
(``RelativePositionBias``, ``MultiHeadAttentionWithRPE``) and from Hugging
Face transformers (T5, DeBERTa-v2, LLaMA, Swin). Here only NumPy is needed:
each fixture is compared with ``rpe.reference`` and with code compiled by
``rpe.compile`` from MLIR written in this file.

Tolerances
----------
* Buckets, indices and table lookups (biases gathered from a table) are
  compared for exact equality: the semantics follow HF's float32 steps bit
  for bit, and a gather copies float32 values exactly (also into the
  reference's float64).
* Attention outputs and weights, DeBERTa scores: ``rtol = 1e-5`` plus
  ``atol = 1e-6 * max|expected|``. PyTorch computes in float32 (unit
  roundoff 6e-8) and the reference in float64 from the same float32 inputs,
  so the difference is PyTorch's own rounding: dot products over D <= 16,
  a softmax over at most 49 keys and one more product with V accumulate a few
  dozen roundings, about 1e-6 relative; 1e-5 leaves a tenfold margin.
  The absolute part covers entries that are small next to the rest of the
  array (cancellation in a dot product, tiny attention weights), whose
  relative error is not bounded by the inputs' precision.
* RoPE: HF computes ``inv_freq`` and the angles ``p * inv_freq`` in float32,
  so its angle is off by up to a few ulps of ``|phi| = |p * omega|``
  (``inv_freq`` rounding, then the product), while rpe (reference and
  compiled) computes angles in float64. The bound used is
  ``atol = 2 * max|x| * (max|phi| * 2^-22 + 2^-21)`` (phase error of four
  ulps of phi, plus the roundings of cos/sin and of the two products), which
  is ~1e-5 for positions < 64 and grows with the position (fixture ``far``:
  positions up to 4096, atol ~3e-3; the observed difference there is 1.3e-5).
  Compiled RoPE is also compared with the reference at the default
  tolerance.
* Compiled code against fixtures: the same tolerances (the compiled kernels
  compute in float32, softmax and accumulations in float32, so both sides
  carry float32 rounding of the same size); compiled bucket values exactly.
"""

import functools
import json
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

from rpe import reference as ref  # noqa: E402
from rpe.ir import rope_scaling_attr  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures")
FIXTURE_NAMES = [
    "seed_mha_rpe", "seed_relative_position_bias",
    "t5_relative_position_bucket", "t5_attention_bias",
    "deberta_v2_log_bucket", "deberta_v2_disentangled",
    "llama_rope", "llama_rope_scaling", "swin_window_bias",
]

# Guard for the compiled tests: only while rpe.compile does not exist yet.
try:
    from rpe import compile as rpe_compile  # noqa: E402
except ImportError:  # pragma: no cover
    rpe_compile = None
needs_compile = pytest.mark.skipif(
    rpe_compile is None, reason="rpe.compile is not importable yet")

RTOL = 1e-5
ATOL_REL = 1e-6


@functools.lru_cache(maxsize=None)
def load(name):
    path = os.path.join(FIXTURES, name + ".npz")
    assert os.path.exists(path), (
        "missing fixture %s; regenerate with python/tools/make_parity_fixtures.py" % path)
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    data["meta"] = json.loads(str(data["meta"]))
    return data


def close(got, want, rtol=RTOL, atol=None, what=""):
    want = np.asarray(want, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if atol is None:
        atol = ATOL_REL * max(float(np.abs(want).max()), 1e-30)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def identity_values(b, h, lk):
    """V = I (B x H x Lk x Lk): attention then returns its weights p."""
    return np.ascontiguousarray(
        np.broadcast_to(np.eye(lk, dtype=np.float32), (b, h, lk, lk)))


def attention_weights(q, k, **kw):
    b, h, _, _ = q.shape
    return ref.attention(q, k, identity_values(b, k.shape[1], k.shape[2]), **kw)


def tt(shape, elem="f32"):
    return "tensor<%s>" % "x".join([str(s) if s is not None else "?" for s in shape] + [elem])


@functools.lru_cache(maxsize=None)
def compiled(text):
    return rpe_compile(text)


# ---------------------------------------------------------------------------
# The fixtures themselves
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_meta(name):
    meta = load(name)["meta"]
    assert meta["fixture"] == name
    for key in ("torch", "transformers", "numpy", "python"):
        assert meta["versions"][key], key
    assert meta["source"]


def test_fixtures_are_small():
    total = sum(os.path.getsize(os.path.join(FIXTURES, n + ".npz"))
                for n in FIXTURE_NAMES)
    assert total < 512 * 1024, total


# ---------------------------------------------------------------------------
# The seed's RelativePositionBias and MultiHeadAttentionWithRPE
# ---------------------------------------------------------------------------

def test_seed_projections_layout():
    """q/k/v in the fixture are x @ W^T + b split into heads (B, H, L, D)."""
    f = load("seed_mha_rpe")
    x = f["x"].astype(np.float64)
    b, l, d = x.shape
    h = f["q"].shape[1]
    for n in ("q", "k", "v"):
        p = x @ f["w_%s_weight" % n].T + f["w_%s_bias" % n]
        close(p.reshape(b, l, h, d // h).transpose(0, 2, 1, 3), f[n], what=n)


@pytest.mark.parametrize("name", ["seed_mha_rpe", "seed_relative_position_bias"])
def test_seed_bias_reference(name):
    f = load(name)
    k = int(f["max_relative_distance"])
    l = f["bias"].shape[-1]
    got = ref.relative_bias(f["table"], l, l, ref.Clip(k))
    np.testing.assert_array_equal(got, f["bias"][0])


@pytest.mark.parametrize("masked", [False, True])
def test_seed_attention_reference(masked):
    f = load("seed_mha_rpe")
    sfx = "_masked" if masked else ""
    bias = ref.relative_bias(f["table"], 10, 10, ref.Clip(int(f["max_relative_distance"])))
    kw = dict(bias=bias)
    if masked:
        kw["key_lengths"] = f["mask"].sum(axis=1)       # a prefix mask
        assert (f["mask"] == (np.arange(10)[None] < kw["key_lengths"][:, None])).all()
    ctx = ref.attention(f["q"], f["k"], f["v"], **kw)   # scale 1/sqrt(D)
    close(ctx, f["context" + sfx], what="context")
    close(attention_weights(f["q"], f["k"], **kw), f["attn_weights" + sfx], what="weights")
    b, h, l, d = ctx.shape
    out = ctx.transpose(0, 2, 1, 3).reshape(b, l, h * d) @ f["w_o_weight"].T + f["w_o_bias"]
    close(out, f["output" + sfx], what="output")


# ---------------------------------------------------------------------------
# T5
# ---------------------------------------------------------------------------

def test_t5_bucket_reference():
    f = load("t5_relative_position_bucket")
    n = f["relative_position"]
    for (nb, md, bidi), want in zip(f["configs"], f["buckets"]):
        # relative_position = j - i: i = 0, j = n.
        got = ref.T5(nb, md, bool(bidi)).bucket(np.zeros_like(n), n)
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, ("T5(%d, %d, %s)" % (nb, md, bool(bidi)),
                               [(int(n[i]), int(want[i]), int(got[i])) for i in bad[:10]])


@pytest.mark.parametrize("tag", ["enc", "dec"])
def test_t5_compute_bias_reference(tag):
    f = load("t5_attention_bias")
    nb, md, bidi, lq, lk, past = (int(v) for v in f[tag + "_params"])
    got = ref.relative_bias(f[tag + "_weight"], lq, lk, ref.T5(nb, md, bool(bidi)),
                            q_offset=past)
    np.testing.assert_array_equal(got, f[tag + "_bias"][0])


def test_t5_attention_reference():
    f = load("t5_attention_bias")
    nb, md, bidi, lq, lk, _ = (int(v) for v in f["enc_params"])
    np.testing.assert_array_equal(f["enc_position_bias"], f["enc_bias"])
    bias = ref.relative_bias(f["enc_weight"], lq, lk, ref.T5(nb, md, bool(bidi)))
    # T5 does not scale q.k.
    close(ref.attention(f["enc_q"], f["enc_k"], f["enc_v"], bias=bias, scale=1.0),
          f["enc_context"], what="context")
    close(attention_weights(f["enc_q"], f["enc_k"], bias=bias, scale=1.0),
          f["enc_attn_weights"], what="weights")


# ---------------------------------------------------------------------------
# DeBERTa-v2
# ---------------------------------------------------------------------------

def test_deberta_log_bucket_reference():
    f = load("deberta_v2_log_bucket")
    r = f["relative_position"]
    for (p, m), want in zip(f["configs"], f["log_bucket"]):
        got = ref.Log(p, m).log_bucket(r)
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, ("Log(%d, %d)" % (p, m),
                               [(int(r[i]), int(want[i]), int(got[i])) for i in bad[:10]])


def test_deberta_build_relative_position_reference():
    f = load("deberta_v2_log_bucket")
    for idx, (lq, lk, p, m) in enumerate(f["build_relative_position_configs"]):
        want = f["build_relative_position_%d" % idx]
        assert want.shape == (1, lq, lk)
        i = np.arange(lq)[:, None]
        j = np.arange(lk)[None, :]
        # HF buckets only when bucket_size > 0 and max_position > 0.
        scheme = ref.Log(p if p > 0 and m > 0 else 0, m if m > 0 else 1)
        np.testing.assert_array_equal(scheme.log_bucket(i - j), want[0])


def _deberta_case(f, tag):
    p, m, c2p, p2c, sf, lq, lk = (int(v) for v in f[tag + "_params"])
    q, k = f[tag + "_q"], f[tag + "_k"]
    d = q.shape[-1]
    pos_k = f[tag + "_pos_key"]
    pos_q = f[tag + "_pos_query"] if p2c else np.zeros_like(pos_k)
    # HF divides each term by sqrt(D * scale_factor), a float32.
    scale = 1.0 / float(np.sqrt(np.float32(d) * np.float32(sf)))
    return dict(p=p, m=m, c2p=bool(c2p), p2c=bool(p2c), sf=sf, lq=lq, lk=lk,
                q=q, k=k, v=f[tag + "_v"], pos_q=pos_q, pos_k=pos_k, scale=scale)


@pytest.mark.parametrize("tag", ["a", "b"])
def test_deberta_pos_projections_layout(tag):
    """pos_key / pos_query are the projected rel_embeddings split into heads
    (H x 2S x D), as rpe's disentangled_bias takes them."""
    f = load("deberta_v2_disentangled")
    re = f[tag + "_rel_embeddings"].astype(np.float64)
    for side in ("key", "query"):
        if tag + "_pos_%s_proj_weight" % side not in f:
            continue
        proj = re @ f[tag + "_pos_%s_proj_weight" % side].T + f[tag + "_pos_%s_proj_bias" % side]
        want = f[tag + "_pos_" + side]
        h, nb, d = want.shape
        close(proj.reshape(nb, h, d).transpose(1, 0, 2), want, what=side)


@pytest.mark.parametrize("tag", ["a", "b"])
def test_deberta_disentangled_bias_reference(tag):
    f = load("deberta_v2_disentangled")
    c = _deberta_case(f, tag)
    got = ref.disentangled_bias(c["q"], c["k"], c["pos_q"], c["pos_k"],
                                ref.Log(c["p"], c["m"]), c2p=c["c2p"], p2c=c["p2c"])
    close(got * c["scale"], f[tag + "_bias"], what="bias")


def test_deberta_attention_reference():
    f = load("deberta_v2_disentangled")
    c = _deberta_case(f, "a")
    bias = c["scale"] * ref.disentangled_bias(
        c["q"], c["k"], c["pos_q"], c["pos_k"], ref.Log(c["p"], c["m"]),
        c2p=c["c2p"], p2c=c["p2c"])
    # HF: q @ (k^T / sqrt(D * scale_factor)) + bias.
    close(ref.attention(c["q"], c["k"], c["v"], bias=bias, scale=c["scale"]),
          f["a_context"], what="context")
    close(attention_weights(c["q"], c["k"], bias=bias, scale=c["scale"]),
          f["a_attn_weights"], what="weights")


# ---------------------------------------------------------------------------
# LLaMA RoPE
# ---------------------------------------------------------------------------

def rope_atol(x, pos):
    """HF's float32 angle error plus roundings (see the module docstring)."""
    phi = float(np.abs(pos).max())          # omega_0 = 1 is the largest
    return 2.0 * float(np.abs(x).max()) * (phi * 2.0 ** -22 + 2.0 ** -21)


@pytest.mark.parametrize("tag", ["a", "b", "far"])
def test_llama_rope_reference(tag):
    f = load("llama_rope")
    pos, theta = f[tag + "_position_ids"], float(f[tag + "_theta"])
    for n in ("q", "k"):
        x = f[tag + "_" + n]
        got = ref.rotary(x, pos, theta=theta)           # half layout, R = D
        close(got, f[tag + "_%s_embed" % n], rtol=0,
              atol=rope_atol(x, pos), what=n)


def test_llama_rope_cos_sin_reference():
    """HF's cos/sin are rpe's angles: rotating e_t by the reference gives
    (cos, sin) of phi_t in components t and t + D/2."""
    f = load("llama_rope")
    for tag in ("a", "b", "far"):
        pos, theta = f[tag + "_position_ids"], float(f[tag + "_theta"])
        d = f[tag + "_cos"].shape[-1]
        b, l = pos.shape
        for t in range(d // 2):
            e = np.zeros((b, 1, l, d))
            e[..., t] = 1.0
            y = ref.rotary(e, pos, theta=theta)[:, 0]
            atol = float(np.abs(pos).max()) * 2.0 ** -22 + 2.0 ** -21
            close(y[..., t], f[tag + "_cos"][..., t], rtol=0, atol=atol, what="cos")
            close(y[..., t + d // 2], f[tag + "_sin"][..., t], rtol=0, atol=atol, what="sin")


# ---------------------------------------------------------------------------
# RoPE scaling (rope_type linear, llama3, yarn, dynamic)
# ---------------------------------------------------------------------------

SCALING_TAGS = ["%s_%s" % (k, c) for k in ("linear", "llama3", "yarn", "dynamic")
                for c in ("short", "long")]


def scaling_case(f, tag):
    cfg = f["meta"]["config"][tag]
    return (f[tag + "_q"], f[tag + "_position_ids"], float(f[tag + "_theta"]),
            cfg["rpe_scaling"], cfg)


@pytest.mark.parametrize("tag", SCALING_TAGS)
def test_rope_scaling_reference(tag):
    f = load("llama_rope_scaling")
    x, pos, theta, scaling, cfg = scaling_case(f, tag)
    _, magnitude = ref.rotary_frequencies(x.shape[-1], theta, scaling, pos)
    assert magnitude == pytest.approx(cfg["attention_scaling"], rel=1e-12)
    got = ref.rotary(x, pos, theta=theta, scaling=scaling)
    close(got, f[tag + "_q_embed"], rtol=0, atol=magnitude * rope_atol(x, pos), what=tag)


@needs_compile
def test_rope_scaling_compiled():
    f = load("llama_rope_scaling")
    texts = []
    for tag in SCALING_TAGS:
        x, pos, theta, scaling, _ = scaling_case(f, tag)
        xt, pt = tt(x.shape), tt(pos.shape, "i64")
        texts.append("""
func.func @rope_{tag}(%q: {xt}, %pos: {pt}) -> {xt} {{
  %r = rpe.rotary %q, %pos {{theta = {theta!r} : f64, scaling = {attr}}} : {xt}, {pt}
  return %r : {xt}
}}""".format(tag=tag, xt=xt, pt=pt, theta=theta, attr=rope_scaling_attr(scaling)))
    mod = compiled("\n".join(texts))
    for tag in SCALING_TAGS:
        x, pos, theta, scaling, _ = scaling_case(f, tag)
        got = getattr(mod, "rope_" + tag)(x, pos)
        want = ref.rotary(x, pos, theta=theta, scaling=scaling)
        _, magnitude = ref.rotary_frequencies(x.shape[-1], theta, scaling, pos)
        close(got, f[tag + "_q_embed"], rtol=0, atol=magnitude * rope_atol(x, pos),
              what=tag)
        close(got, want, what=tag + " vs reference")


# ---------------------------------------------------------------------------
# Swin
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tag", ["a", "b"])
def test_swin_index_and_bias_reference(tag):
    f = load("swin_window_bias")
    wh, ww = (int(v) for v in f[tag + "_window"])
    scheme = ref.Window2D(wh, ww)
    n = wh * ww
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    np.testing.assert_array_equal(scheme.bucket(i, j), f[tag + "_relative_position_index"])
    got = ref.relative_bias(f[tag + "_table"], n, n, scheme)
    np.testing.assert_array_equal(got, f[tag + "_bias"][0])


def test_swin_attention_reference():
    f = load("swin_window_bias")
    wh, ww = (int(v) for v in f["a_window"])
    bias = ref.relative_bias(f["a_table"], wh * ww, wh * ww, ref.Window2D(wh, ww))
    scale = float(f["a_scaling"])
    close(ref.attention(f["a_q"], f["a_k"], f["a_v"], bias=bias, scale=scale),
          f["a_context"], what="context")
    close(attention_weights(f["a_q"], f["a_k"], bias=bias, scale=scale),
          f["a_attn_weights"], what="weights")


# ---------------------------------------------------------------------------
# Compiled rpe against the fixtures
# ---------------------------------------------------------------------------

def bucket_module(schemes):
    """One @b<n>(i, j) -> index function per scheme."""
    return "\n".join(
        "func.func @b%d(%%i: index, %%j: index) -> index {\n"
        "  %%b = rpe.bucket %%i, %%j by %s\n"
        "  return %%b : index\n}" % (n, s.mlir()) for n, s in enumerate(schemes))


@needs_compile
def test_t5_bucket_compiled():
    f = load("t5_relative_position_bucket")
    schemes = [ref.T5(nb, md, bool(bidi)) for nb, md, bidi in f["configs"]]
    mod = compiled(bucket_module(schemes))
    n = f["relative_position"]
    for idx, (s, want) in enumerate(zip(schemes, f["buckets"])):
        fn = getattr(mod, "b%d" % idx)
        got = np.array([fn(0, int(v)) for v in n])
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, (repr(s), [(int(n[i]), int(want[i]), int(got[i]))
                                         for i in bad[:10]])


@needs_compile
def test_deberta_bucket_compiled():
    """rpe.bucket by log<P, M> is the c2p index clamp(lb(i - j) + S, 0, 2S-1)."""
    f = load("deberta_v2_log_bucket")
    r = f["relative_position"]
    schemes = [ref.Log(p, m) for p, m in f["configs"]] + [ref.Log(0, 12)]
    lbs = list(f["log_bucket"]) + [r]            # P = 0: no log buckets (HF)
    mod = compiled(bucket_module(schemes))
    for idx, (s, lb) in enumerate(zip(schemes, lbs)):
        fn = getattr(mod, "b%d" % idx)
        want = np.clip(lb + s.span, 0, 2 * s.span - 1)
        got = np.array([fn(int(v), 0) for v in r])   # r = i - j
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, (repr(s), [(int(r[i]), int(want[i]), int(got[i]))
                                         for i in bad[:10]])


@needs_compile
def test_seed_compiled():
    f = load("seed_mha_rpe")
    b, h, l, d = f["q"].shape
    k = int(f["max_relative_distance"])
    nb = 2 * k + 1
    qt, bt, wt = tt([b, h, l, d]), tt([h, l, l]), tt([b, h, l, l])
    text = """
func.func @seed(%table: {tab}, %q: {qt}, %k: {qt}, %v: {qt}, %lens: tensor<{b}xi32>)
    -> ({bt}, {qt}, {qt}) {{
  %bias = rpe.relative_bias %table by clip<max_distance = {k}> : {tab} -> {bt}
  %o = rpe.attention %q, %k, %v bias(%bias : {bt}) : {qt}, {qt}, {qt} -> {qt}
  %m = rpe.attention %q, %k, %v bias(%bias : {bt}) key_lengths(%lens : tensor<{b}xi32>)
      : {qt}, {qt}, {qt} -> {qt}
  return %bias, %o, %m : {bt}, {qt}, {qt}
}}
func.func @weights(%table: {tab}, %q: {qt}, %k: {qt}, %eye: {wt}, %lens: tensor<{b}xi32>)
    -> ({wt}, {wt}) {{
  %bias = rpe.relative_bias %table by clip<max_distance = {k}> : {tab} -> {bt}
  %p = rpe.attention %q, %k, %eye bias(%bias : {bt}) : {qt}, {qt}, {wt} -> {wt}
  %pm = rpe.attention %q, %k, %eye bias(%bias : {bt}) key_lengths(%lens : tensor<{b}xi32>)
      : {qt}, {qt}, {wt} -> {wt}
  return %p, %pm : {wt}, {wt}
}}
""".format(tab=tt([nb, h]), qt=qt, bt=bt, wt=wt, b=b, k=k)
    mod = compiled(text)
    lens = f["mask"].sum(axis=1).astype(np.int32)
    bias, ctx, ctx_m = mod.seed(f["table"], f["q"], f["k"], f["v"], lens)
    np.testing.assert_array_equal(bias, f["bias"][0])
    close(ctx, f["context"], what="context")
    close(ctx_m, f["context_masked"], what="context masked")
    p, pm = mod.weights(f["table"], f["q"], f["k"], identity_values(b, h, l), lens)
    close(p, f["attn_weights"], what="weights")
    close(pm, f["attn_weights_masked"], what="weights masked")
    out = ctx.astype(np.float64).transpose(0, 2, 1, 3).reshape(b, l, h * d) \
        @ f["w_o_weight"].T + f["w_o_bias"]
    close(out, f["output"], what="output")


@needs_compile
def test_seed_relative_position_bias_compiled_dynamic():
    f = load("seed_relative_position_bias")
    k, l = int(f["max_relative_distance"]), int(f["seq_len"])
    h = f["table"].shape[1]
    tab, bt = tt([2 * k + 1, h]), tt([h, None, None])
    mod = compiled("""
func.func @bias(%table: {tab}, %lq: index, %lk: index) -> {bt} {{
  %b = rpe.relative_bias %table sizes(%lq, %lk) by clip<max_distance = {k}> : {tab} -> {bt}
  return %b : {bt}
}}""".format(tab=tab, bt=bt, k=k))
    np.testing.assert_array_equal(mod.bias(f["table"], l, l), f["bias"][0])


@needs_compile
def test_t5_compiled():
    f = load("t5_attention_bias")
    # compute_bias with dynamic sizes and q_offset = past_seen_tokens.
    texts, calls = [], []
    for tag in ("enc", "dec"):
        nb, md, bidi, lq, lk, past = (int(v) for v in f[tag + "_params"])
        h = f[tag + "_weight"].shape[1]
        s = ref.T5(nb, md, bool(bidi))
        tab, bt = tt([nb, h]), tt([h, None, None])
        texts.append("""
func.func @bias_{tag}(%table: {tab}, %off: index, %lq: index, %lk: index) -> {bt} {{
  %b = rpe.relative_bias %table offset %off sizes(%lq, %lk) by {s} : {tab} -> {bt}
  return %b : {bt}
}}""".format(tag=tag, tab=tab, bt=bt, s=s.mlir()))
        calls.append((tag, (f[tag + "_weight"], past, lq, lk)))
    nb, md, bidi, lq, lk, _ = (int(v) for v in f["enc_params"])
    b, h, _, d = f["enc_q"].shape
    s = ref.T5(nb, md, bool(bidi))
    qt, bt, wt = tt([b, h, lq, d]), tt([h, lq, lk]), tt([b, h, lk, lk])
    texts.append("""
func.func @attn(%table: {tab}, %q: {qt}, %k: {qt}, %v: {qt}, %eye: {wt}) -> ({qt}, {wt}) {{
  %b = rpe.relative_bias %table by {s} : {tab} -> {bt}
  %o = rpe.attention %q, %k, %v bias(%b : {bt}) scale = 1.0 : {qt}, {qt}, {qt} -> {qt}
  %p = rpe.attention %q, %k, %eye bias(%b : {bt}) scale = 1.0 : {qt}, {qt}, {wt} -> {wt}
  return %o, %p : {qt}, {wt}
}}""".format(tab=tt([nb, h]), qt=qt, bt=bt, wt=wt, s=s.mlir()))
    mod = compiled("\n".join(texts))
    for tag, args in calls:
        np.testing.assert_array_equal(getattr(mod, "bias_" + tag)(*args), f[tag + "_bias"][0])
    ctx, p = mod.attn(f["enc_weight"], f["enc_q"], f["enc_k"], f["enc_v"],
                      identity_values(b, h, lk))
    close(ctx, f["enc_context"], what="context")
    close(p, f["enc_attn_weights"], what="weights")


@needs_compile
def test_deberta_compiled():
    f = load("deberta_v2_disentangled")
    texts, cases = [], {}
    for tag in ("a", "b"):
        c = _deberta_case(f, tag)
        cases[tag] = c
        b, h, _, d = c["q"].shape
        lq, lk = c["lq"], c["lk"]
        nb = c["pos_k"].shape[1]
        s = ref.Log(c["p"], c["m"])
        assert s.num_buckets == nb
        qt, kt, pt = tt([b, h, lq, d]), tt([b, h, lk, d]), tt([h, nb, d])
        st, wt = tt([b, h, lq, lk]), tt([b, h, lk, lk])
        terms = " ".join(t for t in ("c2p", "p2c") if c[t])
        texts.append("""
func.func @bias_{tag}(%q: {qt}, %k: {kt}, %pq: {pt}, %pk: {pt}) -> {st} {{
  %d = rpe.disentangled_bias %q, %k, %pq, %pk by {s} {terms} : {qt}, {kt}, {pt}, {pt} -> {st}
  return %d : {st}
}}""".format(tag=tag, qt=qt, kt=kt, pt=pt, st=st, s=s.mlir(), terms=terms))
        if tag == "a":
            texts.append("""
func.func @attn(%q: {qt}, %k: {kt}, %v: {kt}, %pq: {pt}, %pk: {pt}, %eye: {wt}) -> ({qt}, {wt}) {{
  %d = rpe.disentangled_bias %q, %k, %pq, %pk by {s} {terms} : {qt}, {kt}, {pt}, {pt} -> {st}
  %o = rpe.attention %q, %k, %v bias(%d : {st}) scale = {scale!r} : {qt}, {kt}, {kt} -> {qt}
  %p = rpe.attention %q, %k, %eye bias(%d : {st}) scale = {scale!r} : {qt}, {kt}, {wt} -> {wt}
  return %o, %p : {qt}, {wt}
}}""".format(qt=qt, kt=kt, pt=pt, st=st, wt=wt, s=s.mlir(), terms=terms,
             scale=c["scale"]))
    mod = compiled("\n".join(texts))
    for tag, c in cases.items():
        # The op does not scale: scaling pos_q, pos_k scales the (linear) bias.
        pq = (c["pos_q"] * np.float32(c["scale"])).astype(np.float32)
        pk = (c["pos_k"] * np.float32(c["scale"])).astype(np.float32)
        close(getattr(mod, "bias_" + tag)(c["q"], c["k"], pq, pk), f[tag + "_bias"],
              what="bias " + tag)
    c = cases["a"]
    pq = (c["pos_q"] * np.float32(c["scale"])).astype(np.float32)
    pk = (c["pos_k"] * np.float32(c["scale"])).astype(np.float32)
    b, h, lk, _ = c["k"].shape
    ctx, p = mod.attn(c["q"], c["k"], c["v"], pq, pk, identity_values(b, h, lk))
    close(ctx, f["a_context"], what="context")
    close(p, f["a_attn_weights"], what="weights")


@needs_compile
def test_llama_rope_compiled():
    f = load("llama_rope")
    texts = []
    for tag in ("a", "b", "far"):
        x, pos = f[tag + "_q"], f[tag + "_position_ids"]
        xt, pt = tt(x.shape), tt(pos.shape, "i64")
        texts.append("""
func.func @rope_{tag}(%q: {xt}, %k: {xt}, %pos: {pt}) -> ({xt}, {xt}) {{
  %rq = rpe.rotary %q, %pos {{theta = {theta!r} : f64}} : {xt}, {pt}
  %rk = rpe.rotary %k, %pos {{theta = {theta!r} : f64}} : {xt}, {pt}
  return %rq, %rk : {xt}, {xt}
}}""".format(tag=tag, xt=xt, pt=pt, theta=float(f[tag + "_theta"])))
    mod = compiled("\n".join(texts))
    for tag in ("a", "b", "far"):
        pos, theta = f[tag + "_position_ids"], float(f[tag + "_theta"])
        outs = getattr(mod, "rope_" + tag)(f[tag + "_q"], f[tag + "_k"], pos)
        for n, got in zip(("q", "k"), outs):
            x = f[tag + "_" + n]
            close(got, f[tag + "_%s_embed" % n], rtol=0,
                  atol=rope_atol(x, pos), what=tag + n)
            # Compiled angles are float64 like the reference's.
            close(got, ref.rotary(x, pos, theta=theta), what=tag + n + " vs reference")


@needs_compile
def test_swin_compiled():
    f = load("swin_window_bias")
    texts = []
    for tag in ("a", "b"):
        wh, ww = (int(v) for v in f[tag + "_window"])
        nb, h = f[tag + "_table"].shape
        n = wh * ww
        texts.append("""
func.func @bias_{tag}(%t: {tab}) -> {bt} {{
  %b = rpe.relative_bias %t by {s} : {tab} -> {bt}
  return %b : {bt}
}}""".format(tag=tag, tab=tt([nb, h]), bt=tt([h, n, n]), s=ref.Window2D(wh, ww).mlir()))
    wh, ww = (int(v) for v in f["a_window"])
    b, h, n, d = f["a_q"].shape
    qt, bt, wt = tt([b, h, n, d]), tt([h, n, n]), tt([b, h, n, n])
    texts.append("""
func.func @attn(%t: {tab}, %q: {qt}, %k: {qt}, %v: {qt}, %eye: {wt}) -> ({qt}, {wt}) {{
  %b = rpe.relative_bias %t by {s} : {tab} -> {bt}
  %o = rpe.attention %q, %k, %v bias(%b : {bt}) scale = {scale!r} : {qt}, {qt}, {qt} -> {qt}
  %p = rpe.attention %q, %k, %eye bias(%b : {bt}) scale = {scale!r} : {qt}, {qt}, {wt} -> {wt}
  return %o, %p : {qt}, {wt}
}}""".format(tab=tt(f["a_table"].shape), qt=qt, bt=bt, wt=wt,
             s=ref.Window2D(wh, ww).mlir(), scale=float(f["a_scaling"])))
    mod = compiled("\n".join(texts))
    for tag in ("a", "b"):
        np.testing.assert_array_equal(getattr(mod, "bias_" + tag)(f[tag + "_table"]),
                                      f[tag + "_bias"][0])
    ctx, p = mod.attn(f["a_table"], f["a_q"], f["a_k"], f["a_v"], identity_values(b, h, n))
    close(ctx, f["a_context"], what="context")
    close(p, f["a_attn_weights"], what="weights")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
