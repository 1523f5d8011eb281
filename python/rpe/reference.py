"""NumPy reference implementations of the rpe ops.

Written from the formulas in docs/Semantics.md (and, for the bucketing
schemes, after the NumPy ports of the original implementations in
unittests/gen_bucket_tables.py), independently of rpe's C++ code.

Conventions
-----------
* Positions: query ``i`` in ``[0, Lq)``, key ``j`` in ``[0, Lk)``; ``q_offset``
  shifts query positions to ``i + q_offset``, with ``q_offset`` clamped to
  ``[-2**62, 2**62]`` (position differences saturate there anyway).
* Values are computed in float64 from the given inputs (which may be float32,
  float16 or any other NumPy float array; bfloat16 inputs are passed as
  float32 arrays holding bf16-representable values).  Results are float64.
* Bucket arithmetic follows Hugging Face's float32 steps exactly (T5,
  DeBERTa-v2), as the semantics require.
"""

import math

import numpy as np

__all__ = [
    "Clip", "T5", "Log", "Window2D",
    "relative_bias", "default_alibi_slopes", "alibi", "rotary",
    "shaw_logits", "shaw_values", "disentangled_bias", "attention",
]

_SAT = 2 ** 62


def _logf(x):
    """float32 natural log, correctly rounded, of float32 ``x``.

    HF's bucketing takes ``torch.log`` of float32 tensors, which (like glibc's
    ``logf`` on the inputs that occur) returns the correctly rounded float32.
    NumPy's own float32 ``np.log`` (SIMD) is off by one ulp on some inputs,
    e.g. log(1.625), which moves a bucket whose quotient lands exactly on an
    integer: T5(128, 169, bidirectional=False) at j - i = -104 is 96 in HF
    and 95 with NumPy's float32 log. The float64 log rounded to float32 is
    the correctly rounded value (python/tests/test_parity.py pins such cases).
    """
    x = np.asarray(x, dtype=np.float32)
    return np.log(x.astype(np.float64)).astype(np.float32)


def _rel(i, j):
    """Saturated ``i - j`` (to +-2^62) as int64, broadcasting i against j."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    if i.size and j.size and (np.abs(i).max() >= _SAT or np.abs(j).max() >= _SAT):
        d = np.asarray(i, dtype=object) - np.asarray(j, dtype=object)
        d = np.minimum(np.maximum(d, -_SAT), _SAT)
        return d.astype(np.int64)
    return i - j


# ---------------------------------------------------------------------------
# Bucketing schemes
# ---------------------------------------------------------------------------

class Clip:
    """``#rpe.clip<max_distance = K>``: ``clamp(i - j, -K, K) + K``."""

    def __init__(self, max_distance):
        self.max_distance = int(max_distance)
        assert self.max_distance >= 0

    @property
    def num_buckets(self):
        return 2 * self.max_distance + 1

    def bucket(self, i, j):
        k = self.max_distance
        return np.clip(_rel(i, j), -k, k) + k

    def mlir(self):
        return "clip<max_distance = %d>" % self.max_distance

    def __repr__(self):
        return "Clip(%d)" % self.max_distance


class T5:
    """``#rpe.t5<num_buckets = N, max_distance = M, bidirectional>``.

    Hugging Face ``T5Attention._relative_position_bucket`` with
    ``relative_position = j - i`` (memory - context), f32 math in HF's order.
    """

    def __init__(self, num_buckets, max_distance, bidirectional):
        self.n = int(num_buckets)
        self.m = int(max_distance)
        self.bidirectional = bool(bidirectional)

    @property
    def num_buckets(self):
        return self.n

    def bucket(self, i, j):
        relative_position = -_rel(i, j)  # j - i
        relative_buckets = np.zeros_like(relative_position)
        num_buckets = self.n
        if self.bidirectional:
            num_buckets //= 2
            relative_buckets = relative_buckets + (
                relative_position > 0).astype(np.int64) * num_buckets
            relative_position = np.abs(relative_position)
        else:
            relative_position = -np.minimum(relative_position, 0)
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        with np.errstate(divide="ignore", invalid="ignore"):
            # torch.log on f32; math.log(M / e) is a double that torch rounds
            # to f32 when dividing an f32 tensor; then * f32(N' - e).
            large = (_logf(relative_position.astype(np.float32)
                             / np.float32(max_exact))
                     / np.float32(math.log(self.m / max_exact))
                     * np.float32(num_buckets - max_exact))
            large = np.where(is_small, np.float32(0), large)
            large = np.trunc(large).astype(np.int64) + max_exact
        large = np.minimum(large, num_buckets - 1)
        return relative_buckets + np.where(is_small, relative_position, large)

    def mlir(self):
        return "t5<num_buckets = %d, max_distance = %d, bidirectional = %s>" % (
            self.n, self.m, "true" if self.bidirectional else "false")

    def __repr__(self):
        return "T5(%d, %d, %s)" % (self.n, self.m, self.bidirectional)


class Log:
    """``#rpe.log<position_buckets = P, max_relative_positions = M>``.

    DeBERTa-v2 ``make_log_bucket_position`` (f32, HF's order) followed by the
    c2p index ``clamp(lb(r) + S, 0, 2S - 1)``, ``r = i - j``.
    """

    def __init__(self, position_buckets, max_relative_positions):
        self.p = int(position_buckets)
        self.m = int(max_relative_positions)

    @property
    def span(self):
        return self.p if self.p > 0 else self.m

    @property
    def num_buckets(self):
        return 2 * self.span

    def log_bucket(self, r):
        """``lb(r)`` of Semantics.md (before the span shift and clamp)."""
        relative_pos = np.asarray(r, dtype=np.int64)
        if self.p <= 0:
            return relative_pos
        mid = self.p // 2
        sign = np.sign(relative_pos)
        abs_pos = np.where((relative_pos < mid) & (relative_pos > -mid),
                           np.int64(mid - 1), np.abs(relative_pos))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_pos = (np.ceil(_logf(abs_pos.astype(np.float32) / np.float32(mid))
                               / _logf(np.float32((self.m - 1) / mid))
                               * np.float32(mid - 1)) + np.float32(mid))
            bucket_pos = np.where(abs_pos <= mid, relative_pos.astype(np.float32),
                                  log_pos * sign.astype(np.float32))
        # |r| <= mid keeps r exactly (it may not be exact in f32 for huge r,
        # but those take the log branch).
        bucket_pos = np.where(abs_pos <= mid, relative_pos,
                              bucket_pos.astype(np.int64))
        return bucket_pos

    def bucket(self, i, j):
        s = self.span
        return np.clip(self.log_bucket(_rel(i, j)) + s, 0, 2 * s - 1)

    def mlir(self):
        return "log<position_buckets = %d, max_relative_positions = %d>" % (
            self.p, self.m)

    def __repr__(self):
        return "Log(%d, %d)" % (self.p, self.m)


class Window2D:
    """``#rpe.window2d<height = Wh, width = Ww>``: Swin's relative index.

    Token ``t`` sits at ``(t floordiv Ww, t mod Ww)``; ``dh``, ``dw`` are
    clamped to ``[-(Wh-1), Wh-1]``, ``[-(Ww-1), Ww-1]`` (only matters for
    positions outside ``[0, Wh*Ww)``).
    """

    def __init__(self, height, width):
        self.wh = int(height)
        self.ww = int(width)

    @property
    def num_buckets(self):
        return (2 * self.wh - 1) * (2 * self.ww - 1)

    @property
    def length(self):
        return self.wh * self.ww

    def bucket(self, i, j):
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        hi, wi = np.floor_divide(i, self.ww), np.mod(i, self.ww)
        hj, wj = np.floor_divide(j, self.ww), np.mod(j, self.ww)
        dh = np.clip(_rel(hi, hj), -(self.wh - 1), self.wh - 1)
        dw = np.clip(_rel(wi, wj), -(self.ww - 1), self.ww - 1)
        return (dh + self.wh - 1) * (2 * self.ww - 1) + (dw + self.ww - 1)

    def mlir(self):
        return "window2d<height = %d, width = %d>" % (self.wh, self.ww)

    def __repr__(self):
        return "Window2D(%d, %d)" % (self.wh, self.ww)


def _f64(x):
    return np.asarray(x).astype(np.float64)


_MAX_OFFSET = 2 ** 62


def _offset(q_offset):
    """``q_offset`` clamped to [-2**62, 2**62] (Semantics.md)."""
    return max(-_MAX_OFFSET, min(_MAX_OFFSET, int(q_offset)))


def _grid(lq, lk, q_offset=0):
    i = (np.arange(lq, dtype=np.int64) + _offset(q_offset))[:, None]
    j = np.arange(lk, dtype=np.int64)[None, :]
    return i, j


# ---------------------------------------------------------------------------
# Ops
# ---------------------------------------------------------------------------

def relative_bias(table, lq, lk, bucketing, q_offset=0):
    """``out[h, i, j] = table[bucket(i + q_offset, j), h]``; ``table: NB x H``."""
    table = _f64(table)
    assert table.ndim == 2 and table.shape[0] == bucketing.num_buckets, table.shape
    i, j = _grid(lq, lk, q_offset)
    b = bucketing.bucket(i, j)                      # Lq x Lk
    return np.ascontiguousarray(table[b].transpose(2, 0, 1))  # H x Lq x Lk


def default_alibi_slopes(h):
    """ALiBi's default slopes (Press et al.; as in HF/BLOOM), float64."""
    h = int(h)
    assert h >= 1

    def pow2(n):
        return [2.0 ** (-8.0 * (k + 1) / n) for k in range(n)]

    n = 1 << (h.bit_length() - 1)          # largest power of two <= h
    if n == h:
        return np.array(pow2(h))
    extra = [2.0 ** (-8.0 * (2 * k + 1) / (2 * n)) for k in range(h - n)]
    return np.array(pow2(n) + extra)


def alibi(h, lq, lk, slopes=None, symmetric=False, q_offset=0):
    """``-m_h |i' - j|`` (symmetric) or ``m_h (j - i')``, ``i' = i + q_offset``."""
    m = default_alibi_slopes(h) if slopes is None else np.asarray(slopes, np.float64)
    assert m.shape == (h,)
    i, j = _grid(lq, lk, q_offset)
    d = (j - i).astype(np.float64)
    if symmetric:
        return -m[:, None, None] * np.abs(d)[None]
    return m[:, None, None] * d[None]


def rotary_frequencies(r, theta=10000.0, scaling=None, positions=None):
    """omega_t, t < r/2, and the factor of the rotated dimensions, for
    rpe.rotary's ``scaling``: None or a dict with ``type`` in linear,
    llama3, yarn, dynamic and transformers' ``rope_parameters`` names
    (``original_max_position`` for ``original_max_position_embeddings``)."""
    half = r // 2
    t = np.arange(half, dtype=np.float64)
    if not r:
        return t, 1.0
    kind = scaling["type"] if scaling else None
    base = float(theta)
    if kind == "dynamic":
        orig = float(scaling["original_max_position"])
        factor = float(scaling["factor"])
        seq = max(float(np.max(positions)) + 1 if np.size(positions) else 0, orig)
        base = base * (factor * seq / orig - (factor - 1)) ** (r / (r - 2)) \
            if r != 2 else base
    omega = base ** (-2.0 * t / r)
    if kind == "linear":
        return omega / float(scaling["factor"]), 1.0
    if kind == "llama3":
        factor = float(scaling["factor"])
        low, high = float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"])
        orig = float(scaling["original_max_position"])
        wavelen = 2 * np.pi / omega
        smooth = (orig / wavelen - low) / (high - low)
        mixed = (1 - smooth) * omega / factor + smooth * omega
        out = np.where(wavelen < orig / high, omega, mixed)
        return np.where(wavelen > orig / low, omega / factor, out), 1.0
    if kind == "yarn":
        factor = float(scaling["factor"])
        orig = float(scaling["original_max_position"])

        def corr(n):
            return r * np.log(orig / (n * 2 * np.pi)) / (2 * np.log(float(theta)))
        lo = max(np.floor(corr(float(scaling["beta_fast"]))), 0.0)
        hi = min(np.ceil(corr(float(scaling["beta_slow"]))), r - 1.0)
        if lo == hi:
            hi += 0.001
        ramp = np.clip((t - lo) / (hi - lo), 0.0, 1.0)
        magnitude = 1.0 if factor <= 1 else 0.1 * np.log(factor) + 1.0
        return omega / factor * ramp + omega * (1 - ramp), magnitude
    assert kind in (None, "dynamic"), kind
    return omega, 1.0


def rotary(x, positions, theta=10000.0, rotary_dim=None, interleaved=False,
           scaling=None):
    """RoPE on ``x: ... x L x D``; ``positions: L`` or ``B x L`` integers;
    ``scaling``: see rotary_frequencies."""
    x = _f64(x)
    pos = np.asarray(positions).astype(np.int64)
    d = x.shape[-1]
    r = d if rotary_dim is None else int(rotary_dim)
    assert r % 2 == 0 and 0 <= r <= d
    half = r // 2
    omega, magnitude = rotary_frequencies(r, theta, scaling, pos)
    if pos.ndim == 1:
        assert pos.shape[0] == x.shape[-2]
        phi = pos.astype(np.float64)[:, None] * omega          # L x R/2
    else:
        assert pos.ndim == 2 and pos.shape[0] == x.shape[0] and \
            pos.shape[1] == x.shape[-2], (pos.shape, x.shape)
        phi = pos.astype(np.float64)[..., None] * omega        # B x L x R/2
        phi = phi.reshape((pos.shape[0],) + (1,) * (x.ndim - 3) + phi.shape[1:])
    c, s = magnitude * np.cos(phi), magnitude * np.sin(phi)
    y = x.copy()
    if interleaved:
        ia, ib = 2 * np.arange(half), 2 * np.arange(half) + 1
    else:
        ia, ib = np.arange(half), np.arange(half) + half
    xa, xb = x[..., ia], x[..., ib]
    y[..., ia] = xa * c - xb * s
    y[..., ib] = xb * c + xa * s
    return y


def shaw_logits(q, emb, lk, bucketing):
    """``out[b,h,i,j] = sum_d q[b,h,i,d] emb[bucket(i,j), d]``."""
    q, emb = _f64(q), _f64(emb)
    assert emb.shape[0] == bucketing.num_buckets
    i, j = _grid(q.shape[-2], lk)
    a = emb[bucketing.bucket(i, j)]                 # Lq x Lk x D
    return np.einsum("bhid,ijd->bhij", q, a)


def shaw_values(p, emb, bucketing):
    """``out[b,h,i,:] = sum_j p[b,h,i,j] emb[bucket(i,j), :]``."""
    p, emb = _f64(p), _f64(emb)
    assert emb.shape[0] == bucketing.num_buckets
    i, j = _grid(p.shape[-2], p.shape[-1])
    a = emb[bucketing.bucket(i, j)]                 # Lq x Lk x D
    return np.einsum("bhij,ijd->bhid", p, a)


def disentangled_bias(q, k, pos_q, pos_k, bucketing, c2p=True, p2c=True):
    """DeBERTa terms ``c2p[i,j] = q_i . pos_k[h, d(i,j)]``,
    ``p2c[i,j] = k_j . pos_q[h, d(i,j)]``, summed, no scaling."""
    assert c2p or p2c
    q, k, pos_q, pos_k = _f64(q), _f64(k), _f64(pos_q), _f64(pos_k)
    lq, lk = q.shape[-2], k.shape[-2]
    i, j = _grid(lq, lk)
    delta = bucketing.bucket(i, j)                  # Lq x Lk
    out = np.zeros(q.shape[:2] + (lq, lk))
    if c2p:
        pk = pos_k[:, delta]                        # H x Lq x Lk x D
        out += np.einsum("bhid,hijd->bhij", q, pk)
    if p2c:
        pq = pos_q[:, delta]
        out += np.einsum("bhjd,hijd->bhij", k, pq)
    return out


def attention(q, k, v, bias=None, key_lengths=None, q_offset=0,
              rel_values=None, scale=None, causal=False, bucketing=None,
              score_mod=None, window=None, lookahead=None):
    """``rpe.attention``.

    ``window = W`` masks ``j_pos <= i_pos - W`` (Mistral's sliding window
    with ``causal``); ``lookahead = A`` masks ``j_pos > i_pos + A``
    (ModernBERT's ``|i - j| <= W`` is ``window = W + 1, lookahead = W``).

    ``score_mod(s, b, h, i_pos, j_pos)`` receives the B x H x Lq x Lk score
    array and broadcastable int64 index arrays (``i_pos = row + q_offset``)
    and returns the modified scores; write it with NumPy operations.
    """
    q, k, v = _f64(q), _f64(k), _f64(v)
    bsz, h, lq, d = q.shape
    bk, hkv, lk, dk = k.shape
    assert bk == bsz and dk == d and v.shape[:3] == (bsz, hkv, lk)
    assert h % hkv == 0
    group = h // hkv
    kv_head = np.arange(h) // group
    kh, vh = k[:, kv_head], v[:, kv_head]
    if scale is None:
        # D = 0: empty dot products, scores 0 (1/sqrt(0) would make them
        # inf * 0 = nan).
        scale = 1.0 / math.sqrt(max(d, 1))
    s = float(scale) * np.einsum("bhid,bhjd->bhij", q, kh)
    if bias is not None:
        bias = _f64(bias)
        if bias.ndim == 3:
            bias = bias[None]
        assert bias.ndim == 4
        s = s + bias                                # NumPy broadcast of 1s
    i_pos = (np.arange(lq, dtype=np.int64) + _offset(q_offset))[None, None, :, None]
    j_pos = np.arange(lk, dtype=np.int64)[None, None, None, :]
    if score_mod is not None:
        bb = np.arange(bsz, dtype=np.int64)[:, None, None, None]
        hh = np.arange(h, dtype=np.int64)[None, :, None, None]
        s = np.broadcast_to(np.asarray(score_mod(s, bb, hh, i_pos, j_pos),
                                       dtype=np.float64), s.shape).copy()
    mask = np.zeros(s.shape, dtype=bool)
    if causal:
        mask |= j_pos > i_pos
    if window is not None:
        mask |= j_pos <= i_pos - window
    if lookahead is not None:
        mask |= j_pos > i_pos + lookahead
    if key_lengths is not None:
        kl = np.asarray(key_lengths, dtype=np.int64)
        assert kl.shape == (bsz,)
        mask |= j_pos >= kl[:, None, None, None]
    s = np.where(mask, -np.inf, s)
    row_max = s.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.where(np.isneginf(s), 0.0, np.exp(s - row_max))
    denom = e.sum(axis=-1, keepdims=True)
    p = np.divide(e, denom, out=np.zeros_like(e), where=denom > 0)
    out = np.einsum("bhij,bhjd->bhid", p, vh)
    if rel_values is not None:
        assert bucketing is not None
        rv = _f64(rel_values)
        assert rv.shape == (bucketing.num_buckets, v.shape[-1])
        ii, jj = _grid(lq, lk, q_offset)
        out = out + np.einsum("bhij,ijd->bhid", p, rv[bucketing.bucket(ii, jj)])
    return out
