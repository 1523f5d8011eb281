"""Numerics at the edges, each compared with the NumPy reference
(rpe.reference, float64): huge logits, -inf scores, fully masked rows, L = 1,
Lk = 0, q_offset beyond 2^31, NaN inputs, f16 scores beyond the f16 range,
through the default pipeline (the fused vector kernel)."""

import functools

import numpy as np
import pytest

import rpe
from rpe import ir
from rpe import reference as ref

RNG = np.random.default_rng(20261201)


def plain(elem="f32", key_lengths=False, q_offset=None, causal=False,
          scale=None):
    text = ir.attention((None, None, None, None), (None, None, None, None),
                        (None, None, None, None), key_lengths=key_lengths,
                        q_offset=q_offset, causal=causal, scale=scale,
                        elem=elem, name="attn")
    return rpe.compile(text).attn


def randn(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def test_huge_logits_do_not_overflow():
    """Scores up to about ±1e4: the running max keeps every exp <= 1."""
    attn = plain(scale=1.0)
    q, k, v = randn(2, 3, 37, 16, scale=25.0), randn(2, 3, 53, 16,
                                                     scale=25.0), \
        randn(2, 3, 53, 8)
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k)
    assert np.abs(s).max() > 5e3
    out = attn(q, k, v)
    assert np.isfinite(out).all()
    want = ref.attention(q, k, v, scale=1.0)
    # Near-one-hot rows: f32 scores of size 1e4 carry absolute errors of
    # ~1e-3, which move the weights of near-ties by as much.
    np.testing.assert_allclose(out, want, atol=2e-3, rtol=0)


SCORE_MOD_NEG_INF = """
func.func @attn(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = rpe.attention %q, %k, %v : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>,
      tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // -inf where (i + j) % 3 == 0, and the whole of row 0 of head 1.
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %ninf = arith.constant 0xFF800000 : f32
    %sum = arith.addi %i, %j : index
    %r = arith.remui %sum, %c3 : index
    %m1 = arith.cmpi eq, %r, %c0 : index
    %row0 = arith.cmpi eq, %i, %c0 : index
    %h1 = arith.cmpi eq, %h, %c1 : index
    %m2 = arith.andi %row0, %h1 : i1
    %m = arith.ori %m1, %m2 : i1
    %t = arith.select %m, %ninf, %s : f32
    rpe.yield %t : f32
  }
  return %o : tensor<1x2x?x8xf32>
}
"""


def neg_inf_mod(s, b, h, i, j):
    masked = ((i + j) % 3 == 0) | ((i == 0) & (h == 1))
    return np.where(masked, -np.inf, s)


@pytest.mark.parametrize("lq,lk", [(5, 7), (70, 131), (1, 1), (129, 3)])
def test_neg_inf_scores_and_fully_masked_rows(lq, lk):
    attn = rpe.compile(SCORE_MOD_NEG_INF).attn
    q, k, v = randn(1, 2, lq, 8), randn(1, 2, lk, 8), randn(1, 2, lk, 8)
    out = attn(q, k, v)
    want = ref.attention(q, k, v, score_mod=neg_inf_mod)
    np.testing.assert_allclose(out, want, atol=2e-6, rtol=2e-5)
    assert np.isfinite(out).all()
    # Row 0 of head 1 sees no key: exactly 0.
    np.testing.assert_array_equal(out[0, 1, 0], 0.0)


@pytest.mark.parametrize("lengths", [[0, 5], [0, 0], [9, 1]])
def test_every_key_masked_by_key_lengths(lengths):
    attn = plain(key_lengths=True)
    q, k, v = randn(2, 2, 9, 4), randn(2, 2, 9, 4), randn(2, 2, 9, 4)
    kl = np.array(lengths, np.int32)
    out = attn(q, k, v, kl)
    want = ref.attention(q, k, v, key_lengths=kl)
    np.testing.assert_allclose(out, want, atol=2e-6, rtol=2e-5)
    for b, n in enumerate(lengths):
        if n == 0:
            np.testing.assert_array_equal(out[b], 0.0)


def test_length_one():
    attn = plain()
    q, k, v = randn(1, 3, 1, 16), randn(1, 3, 1, 16), randn(1, 3, 1, 16)
    np.testing.assert_allclose(attn(q, k, v), v, atol=1e-7, rtol=0)


@pytest.mark.parametrize("key_lengths", [False, True])
def test_no_keys(key_lengths):
    """Lk = 0: every row is fully masked, the output is 0."""
    attn = plain(key_lengths=key_lengths)
    q, k, v = randn(2, 2, 6, 4), randn(2, 2, 0, 4), randn(2, 2, 0, 4)
    args = (q, k, v) + ((np.zeros(2, np.int32),) if key_lengths else ())
    out = attn(*args)
    assert out.shape == (2, 2, 6, 4)
    np.testing.assert_array_equal(out, 0.0)


@pytest.mark.parametrize("offset", [2**31 - 40, 2**31 + 5, 2**40])
def test_q_offset_beyond_int32(offset):
    """Query positions past 2^31 (a short key cache whose keys all lie
    before the queries): T5 buckets and the causal mask are 64-bit index
    arithmetic; every key is visible and in the farthest bucket."""
    text = ir.t5_attention(batch=1, heads=2, lq=None, lk=None, head_dim=8,
                           causal=True, q_offset=True, name="attn")
    attn = rpe.compile(text).attn
    lq, lk = 7, 50
    q, k, v = randn(1, 2, lq, 8), randn(1, 2, lk, 8), randn(1, 2, lk, 8)
    table = randn(32, 2)
    out = attn(q, k, v, table, offset)
    bias = ref.relative_bias(table, lq, lk, ref.T5(32, 128, True),
                             q_offset=offset)
    want = ref.attention(q, k, v, bias=bias, q_offset=offset, causal=True,
                         scale=1.0)
    np.testing.assert_allclose(out, want, atol=2e-6, rtol=2e-5)


@functools.lru_cache(maxsize=None)
def windowed(window, target):
    """Causal attention with `window` and a q_offset argument, all sizes
    dynamic, compiled once per (window, target)."""
    text = ir.attention((None, None, None, None), (None, None, None, None),
                        (None, None, None, None), q_offset=True, causal=True,
                        window=window, name="attn")
    return rpe.compile(text, target=target).attn


@pytest.mark.parametrize("lq", [7, 37])
@pytest.mark.parametrize("target", ["cpu", "nvptx-emulated"])
@pytest.mark.parametrize("window,offset", [
    (2**62, 2**62), (2**62, -2**62), (2**62, 2**40),
    (3, 2**40), (5, 2**62 - 20), (1, 0)])
def test_window_at_extreme_positions(window, offset, target, lq):
    """Windows up to the largest (2^62) with query positions near +-2^62
    (q_offset clamps there): no position arithmetic wraps. With W = 2^62
    and q_offset = 2^62 a causal row i sees only keys i + 1 and later;
    with q_offset = -2^62 none (0); W = 3 at 2^40 hides every key."""
    attn = windowed(window, target)
    lk = 45
    q, k, v = randn(1, 2, lq, 8), randn(1, 2, lk, 8), randn(1, 2, lk, 8)
    out = attn(q, k, v, offset)
    want = ref.attention(q, k, v, q_offset=offset, causal=True, window=window)
    np.testing.assert_allclose(out, want, atol=2e-6, rtol=2e-5)


@functools.lru_cache(maxsize=None)
def local(lookahead, target):
    """Attention through the band |i - j| <= lookahead (window = lookahead
    + 1) with a q_offset argument, all sizes dynamic, compiled once per
    (lookahead, target)."""
    text = ir.attention((None, None, None, None), (None, None, None, None),
                        (None, None, None, None), q_offset=True,
                        window=lookahead + 1, lookahead=lookahead, name="attn")
    return rpe.compile(text, target=target).attn


@pytest.mark.parametrize("target", ["cpu", "nvptx-emulated"])
@pytest.mark.parametrize("lookahead,offset", [
    (2**61, 2**62), (2**61, -2**62), (2**61, 2**40), (2**61, -40),
    (3, 2**40), (3, -2**62), (3, -20)])
def test_lookahead_at_extreme_positions(lookahead, offset, target):
    """The largest lookahead (2^61) with query positions near +-2^62
    (q_offset clamps there): neither i + q_offset + A nor i + q_offset - W
    wraps. At q_offset 2^62 every key is before the window, at -2^62 past
    the lookahead (rows of 0s); at 2^40 and -40 every key is in the band.
    A = 3 at 2^40 and -2^62 hides every key; at -20 rows 17 to 36 see the
    keys i - 23 .. i - 17."""
    attn = local(lookahead, target)
    lq, lk = 37, 45
    q, k, v = randn(1, 2, lq, 8), randn(1, 2, lk, 8), randn(1, 2, lk, 8)
    out = attn(q, k, v, offset)
    want = ref.attention(q, k, v, q_offset=offset, window=lookahead + 1,
                         lookahead=lookahead)
    np.testing.assert_allclose(out, want, atol=2e-6, rtol=2e-5)


def test_q_offset_masks_every_key_for_early_rows():
    """A negative offset hides every key from the first rows (causal): 0."""
    attn = plain(causal=True, q_offset=True)
    q, k, v = randn(1, 2, 9, 4), randn(1, 2, 9, 4), randn(1, 2, 9, 4)
    out = attn(q, k, v, -3)
    want = ref.attention(q, k, v, q_offset=-3, causal=True)
    np.testing.assert_allclose(out, want, atol=2e-6, rtol=2e-5)
    np.testing.assert_array_equal(out[0, :, :3], 0.0)


def test_nan_in_a_query_row_stays_in_that_row():
    attn = plain()
    q, k, v = randn(1, 2, 9, 4), randn(1, 2, 11, 4), randn(1, 2, 11, 4)
    q[0, 1, 3, 2] = np.nan
    out = attn(q, k, v)
    assert np.isnan(out[0, 1, 3]).all()
    finite = np.ones(out.shape[:3], bool)
    finite[0, 1, 3] = False
    assert np.isfinite(out[finite]).all()
    want = ref.attention(q, k, v)
    np.testing.assert_allclose(out[finite], want[finite], atol=2e-6,
                               rtol=2e-5)


def test_nan_in_a_key_reaches_the_rows_that_see_it():
    """A NaN key poisons the rows whose softmax includes it; with a causal
    mask, rows before it (which never see the key) stay finite."""
    attn = plain(causal=True)
    q, k, v = randn(1, 2, 80, 4), randn(1, 2, 80, 4), randn(1, 2, 80, 4)
    k[0, 0, 67, 1] = np.nan
    out = attn(q, k, v)
    assert np.isnan(out[0, 0, 67:]).all()
    assert np.isfinite(out[0, 0, :67]).all()
    assert np.isfinite(out[0, 1]).all()
    want = ref.attention(q, k, v, causal=True)
    np.testing.assert_allclose(out[0, 0, :67], want[0, 0, :67], atol=2e-6,
                               rtol=2e-5)


def test_f16_scores_beyond_the_f16_range():
    """q·k up to ~3e5 > 65504 (f16 max): scores and the softmax accumulate
    in f32, so nothing overflows."""
    attn = plain(elem="f16", scale=1.0)
    q = (RNG.standard_normal((1, 2, 21, 16)) * 100).astype(np.float16)
    k = (RNG.standard_normal((1, 2, 33, 16)) * 100).astype(np.float16)
    v = RNG.standard_normal((1, 2, 33, 16)).astype(np.float16)
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k)
    assert np.abs(s).max() > 65504
    out = attn(q, k, v)
    assert out.dtype == np.float16 and np.isfinite(out).all()
    want = ref.attention(q, k, v, scale=1.0)
    np.testing.assert_allclose(out.astype(np.float64), want, atol=4e-3,
                               rtol=4e-3)
