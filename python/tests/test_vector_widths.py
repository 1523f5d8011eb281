"""The CPU attention kernel at both vector widths the pipeline picks:
8 lanes (cpu="haswell", AVX2) and the host's (16 on AVX-512 machines).
The differential suite compiles for the host only; paths that depend on
the width -- Swin's window table read as one vector when the window width
is a multiple of it, a gather otherwise -- run here at both, against the
NumPy reference (rpe.reference, float64) with the suite's f32 tolerances."""

import numpy as np
import pytest

import rpe
from rpe import ir
from rpe import reference as ref

RTOL, ATOL = 1e-5, 1e-6
CPUS = ["haswell", "native"]


def _inputs(rng, b, h, lq, lk, d, nb):
    q = rng.standard_normal((b, h, lq, d)).astype(np.float32)
    k = rng.standard_normal((b, h, lk, d)).astype(np.float32)
    v = rng.standard_normal((b, h, lk, d)).astype(np.float32)
    table = rng.uniform(-2.0, 2.0, (nb, h)).astype(np.float32)
    return q, k, v, table


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("wh,ww", [(3, 8), (2, 16), (3, 24), (2, 32), (4, 5)])
def test_swin_window_widths(cpu, wh, ww):
    """Static windows (L = Wh·Ww): widths that are multiples of 8, 16 or
    neither; 2·L rows make a partial last tile."""
    text = ir.swin_window_attention(wh, ww, batch=None, heads=2, head_dim=8,
                                    name="swin")
    fn = rpe.compile(text, cpu=cpu).swin
    rng = np.random.default_rng(wh * 100 + ww)
    win = ref.Window2D(wh, ww)
    L = wh * ww
    q, k, v, table = _inputs(rng, 3, 2, L, L, 8, win.num_buckets)
    want = ref.attention(q, k, v, bias=ref.relative_bias(table, L, L, win))
    np.testing.assert_allclose(fn(q, k, v, table), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("offset", [None, 0, 5, 16])
def test_window_lengths_beyond_the_window(cpu, offset):
    """Dynamic lengths past the window (buckets clamped to it), causal, and
    a q_offset (rows that need not start a window row: gathers)."""
    win = ir.Window2D(3, 16)
    text = ir.relative_bias_attention(win, batch=None, heads=2, lq=None,
                                      lk=None, head_dim=8, causal=True,
                                      q_offset=True if offset is not None else None,
                                      name="rba")
    fn = rpe.compile(text, cpu=cpu).rba
    rng = np.random.default_rng(7)
    rwin = ref.Window2D(3, 16)
    for lq, lk in [(37, 70), (64, 64), (1, 97), (100, 131)]:
        off = offset or 0
        q, k, v, table = _inputs(rng, 1, 2, lq, lk, 8, rwin.num_buckets)
        args = [q, k, v, table] + ([off] if offset is not None else [])
        bias = ref.relative_bias(table, lq, lk, rwin, q_offset=off)
        want = ref.attention(q, k, v, bias=bias, q_offset=off, causal=True)
        np.testing.assert_allclose(fn(*args), want, rtol=RTOL, atol=ATOL,
                                   err_msg="lq=%d lk=%d" % (lq, lk))
