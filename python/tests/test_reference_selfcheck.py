"""Self-checks of rpe.reference against independent, naive formulations.

Run:  /usr/bin/python3 -m pytest -q python/tests
  or: /usr/bin/python3 python/tests/test_reference_selfcheck.py
"""
import cmath
import math
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

from rpe import reference as ref  # noqa: E402

RNG = np.random.default_rng(1234)


def rand(*shape, dtype=np.float32):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(dtype)


# ---------------------------------------------------------------------------
# Bucketing
# ---------------------------------------------------------------------------

def test_t5_documented_value():
    # Semantics.md: N=32, M=128, bidirectional, n = j - i = +200 -> 31.
    b = ref.T5(32, 128, True)
    assert int(b.bucket(0, 200)) == 31
    assert int(b.bucket(np.array([0]), np.array([200]))[0]) == 31
    # n = 0 -> 0; n = +1 -> 16 + 1; n = -1 -> 1 (bidirectional).
    assert [int(b.bucket(0, n)) for n in (0, 1, -1)] == [0, 17, 1]
    u = ref.T5(32, 128, False)
    # unidirectional: future keys (n > 0) all land in bucket 0.
    assert [int(u.bucket(0, n)) for n in (0, 5, 200)] == [0, 0, 0]
    assert int(u.bucket(200, 0)) == 31


def _t5_scalar(n, N, M, bidi):
    """Scalar transcription of Semantics.md's T5 formula with f32 steps."""
    f32 = np.float32
    if bidi:
        Np, o, a = N // 2, (N // 2) * (n > 0), abs(n)
    else:
        Np, o, a = N, 0, max(-n, 0)
    e = Np // 2
    if a < e:
        return o + a
    v = np.log(f32(a) / f32(e)) / f32(math.log(M / e)) * f32(Np - e)
    return o + min(Np - 1, e + int(v))


def _log_scalar(r, P, M):
    f32 = np.float32
    S = P if P > 0 else M
    if P > 0:
        c = P // 2
        if abs(r) <= c:
            lb = r
        else:
            v = np.ceil(np.log(f32(abs(r)) / f32(c)) / np.log(f32((M - 1) / c))
                        * f32(c - 1))
            lb = int(np.sign(r)) * (c + int(v))
    else:
        lb = r
    return min(max(lb + S, 0), 2 * S - 1)


def test_scalar_formulas_match_vectorized():
    rel = np.arange(-300, 301)
    for N, M, bidi in ((32, 128, True), (32, 128, False), (8, 20, True),
                       (16, 12, True), (8, 16, False)):
        b = ref.T5(N, M, bidi)
        got = b.bucket(rel, 0)          # i = rel, j = 0: n = j - i = -rel
        want = [_t5_scalar(-int(r), N, M, bidi) for r in rel]
        assert list(got) == want, (N, M, bidi)
        assert got.min() >= 0 and got.max() < b.num_buckets
    for P, M in ((256, 512), (8, 20), (0, 16), (2, 3)):
        b = ref.Log(P, M)
        got = b.bucket(rel, 0)
        want = [_log_scalar(int(r), P, M) for r in rel]
        assert list(got) == want, (P, M)
        assert got.min() >= 0 and got.max() < b.num_buckets


def _parse_bucket_tables():
    path = os.path.join(ROOT, "unittests", "BucketTables.inc")
    if not os.path.exists(path):
        return None
    text = open(path).read()
    dist = [int(x) for x in re.search(r"kDistances = \{([^}]*)\}", text)
            .group(1).split(",")]
    toe = []
    for m in re.finditer(r'\{"[^"]*", Scheme::(\w+), (\d+), (\d+), (\w+), \{([^}]*)\}\}',
                         text):
        toe.append((m.group(1), int(m.group(2)), int(m.group(3)),
                    m.group(4) == "true", [int(x) for x in m.group(5).split(",")]))
    win = []
    for m in re.finditer(r"  \{(\d+), (\d+), \{([^}]*)\}\},", text):
        win.append((int(m.group(1)), int(m.group(2)),
                    [int(x) for x in m.group(3).split(",")]))
    return dist, toe, win


def test_against_committed_bucket_tables():
    parsed = _parse_bucket_tables()
    if parsed is None:
        return
    dist, toe, win = parsed
    rel = np.array(dist, dtype=np.int64)    # these are i - j
    assert toe and win
    for scheme, a, b, bidi, want in toe:
        if scheme == "Clip":
            bk = ref.Clip(a)
        elif scheme == "T5":
            bk = ref.T5(a, b, bidi)
        else:
            bk = ref.Log(a, b)
        # Same distances through two different (i, j) decompositions.
        assert list(bk.bucket(rel, 0)) == want, (scheme, a, b, bidi)
        assert list(bk.bucket(rel + 7, np.full_like(rel, 7))) == want
    for wh, ww, want in win:
        n = wh * ww
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        assert list(ref.Window2D(wh, ww).bucket(i, j).ravel()) == want


def test_clip_and_window():
    c = ref.Clip(4)
    assert c.num_buckets == 9
    assert list(c.bucket(np.arange(-6, 7), 0)) == [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8]
    w = ref.Window2D(2, 3)
    assert w.num_buckets == 15
    # Inside: token 5 = (1, 2), token 0 = (0, 0): dh = 1, dw = 2 -> (2)(5) + 4.
    assert int(w.bucket(5, 0)) == 14 and int(w.bucket(0, 5)) == 0
    assert int(w.bucket(3, 3)) == 7        # centre bucket (1)(5) + 2
    # Outside: token 10 = (3, 1), token 0 = (0, 0): dh = 3 -> clamped to 1.
    assert int(w.bucket(10, 0)) == (1 + 1) * 5 + (1 + 2)
    # Negative position -1 = (-1, 2): vs token 5 = (1, 2): dh = -2 -> -1.
    assert int(w.bucket(-1, 5)) == 0 * 5 + (0 + 2)
    assert c.mlir() == "clip<max_distance = 4>"
    assert ref.T5(32, 128, True).mlir() == \
        "t5<num_buckets = 32, max_distance = 128, bidirectional = true>"
    assert ref.Log(256, 512).mlir() == \
        "log<position_buckets = 256, max_relative_positions = 512>"
    assert w.mlir() == "window2d<height = 2, width = 3>"


def test_saturation():
    c = ref.Clip(3)
    big = np.array([2 ** 62, -(2 ** 62), 2 ** 63 - 1], dtype=np.int64)
    assert list(c.bucket(big, -big)) == [6, 0, 6]
    assert int(ref.T5(32, 128, True).bucket(0, 2 ** 62)) == 31


# ---------------------------------------------------------------------------
# Simple ops
# ---------------------------------------------------------------------------

def test_relative_bias_loop():
    for bk, off in ((ref.Clip(3), 0), (ref.T5(16, 12, True), 2),
                    (ref.Log(8, 20), 1), (ref.Window2D(2, 3), 0)):
        table = rand(bk.num_buckets, 3)
        lq, lk = (6, 6) if isinstance(bk, ref.Window2D) else (5, 9)
        got = ref.relative_bias(table, lq, lk, bk, q_offset=off)
        assert got.shape == (3, lq, lk)
        for h in range(3):
            for i in range(lq):
                for j in range(lk):
                    assert got[h, i, j] == table[int(bk.bucket(i + off, j)), h]


def test_alibi():
    s8 = ref.default_alibi_slopes(8)
    assert np.array_equal(s8, [2.0 ** -k for k in range(1, 9)])
    # BLOOM/HF get_slopes, transcribed.
    def hf_slopes(n):
        def p2(n):
            start = 2 ** (-2 ** -(math.log2(n) - 3))
            return [start * start ** i for i in range(n)]
        if math.log2(n).is_integer():
            return p2(n)
        c = 2 ** math.floor(math.log2(n))
        return p2(c) + hf_slopes(2 * c)[0::2][: n - c]
    for h in (1, 2, 3, 4, 5, 6, 7, 8, 12, 16):
        assert np.allclose(ref.default_alibi_slopes(h), hf_slopes(h), rtol=1e-15)
    assert np.allclose(ref.default_alibi_slopes(6),
                       [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3])
    a = ref.alibi(3, 4, 6, slopes=[0.5, 0.25, 0.125], symmetric=False, q_offset=2)
    for h, m in enumerate([0.5, 0.25, 0.125]):
        for i in range(4):
            for j in range(6):
                assert a[h, i, j] == m * (j - (i + 2))
    a = ref.alibi(6, 3, 5, symmetric=True)
    m = ref.default_alibi_slopes(6)
    for h in range(6):
        for i in range(3):
            for j in range(5):
                assert a[h, i, j] == -m[h] * abs(i - j)


def test_rotary_complex_form():
    theta = 10000.0
    x = rand(2, 3, 5, 8)
    pos = np.array([0, 3, 7, 12, 3000])
    for interleaved in (False, True):
        for rd in (8, 4, 0):
            y = ref.rotary(x, pos, theta=theta, rotary_dim=rd, interleaved=interleaved)
            for idx in np.ndindex(2, 3, 5):
                p = int(pos[idx[2]])
                xv = x[idx].astype(np.float64)
                for t in range(rd // 2):
                    a, b = (2 * t, 2 * t + 1) if interleaved else (t, t + rd // 2)
                    w = theta ** (-2.0 * t / rd)
                    z = complex(xv[a], xv[b]) * cmath.exp(1j * p * w)
                    assert abs(y[idx][a] - z.real) < 1e-12
                    assert abs(y[idx][b] - z.imag) < 1e-12
                assert np.array_equal(y[idx][rd:], xv[rd:])
    # B x L positions: each batch row uses its own positions.
    bpos = np.array([[1, 2, 3, 4, 5], [9, 0, 4, 4, 100]])
    y = ref.rotary(x, bpos, theta=500.0, rotary_dim=6)
    for b in range(2):
        assert np.allclose(y[b], ref.rotary(x[b], bpos[b], theta=500.0, rotary_dim=6),
                           rtol=0, atol=0)
    # rank-3 x with B x L positions
    x3 = rand(2, 5, 4)
    y3 = ref.rotary(x3, bpos, interleaved=True)
    for b in range(2):
        assert np.array_equal(y3[b], ref.rotary(x3[b], bpos[b], interleaved=True))


def test_shaw():
    bk = ref.Clip(2)
    q = rand(2, 3, 4, 5)
    emb = rand(bk.num_buckets, 5)
    got = ref.shaw_logits(q, emb, 7, bk)
    assert got.shape == (2, 3, 4, 7)
    for b, h, i, j in np.ndindex(*got.shape):
        want = sum(float(q[b, h, i, d]) * float(emb[int(bk.bucket(i, j)), d])
                   for d in range(5))
        assert abs(got[b, h, i, j] - want) < 1e-12
    p = rand(2, 3, 4, 7)
    emb = rand(bk.num_buckets, 6)
    got = ref.shaw_values(p, emb, bk)
    assert got.shape == (2, 3, 4, 6)
    for b, h, i, d in np.ndindex(*got.shape):
        want = sum(float(p[b, h, i, j]) * float(emb[int(bk.bucket(i, j)), d])
                   for j in range(7))
        assert abs(got[b, h, i, d] - want) < 1e-12


def test_disentangled_vs_hf_gather():
    """Against HF DeBERTa-v2's gather formulation (c2p and transposed p2c)."""
    bk = ref.Log(8, 20)
    S = bk.span
    B, H, L, D = 1, 2, 13, 4
    q, k = rand(B, H, L, D), rand(B, H, L, D)
    pq, pk = rand(H, 2 * S, D), rand(H, 2 * S, D)
    q64, k64, pq64, pk64 = (a.astype(np.float64) for a in (q, k, pq, pk))
    # HF: relative_pos = build_relative_position (log-bucketed i - j).
    i, j = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
    rel = bk.log_bucket(i - j)
    c2p_att = q64 @ pk64.transpose(0, 2, 1)[None]          # B H L 2S
    c2p_pos = np.clip(rel + S, 0, 2 * S - 1)
    c2p = np.take_along_axis(c2p_att, np.broadcast_to(c2p_pos, (B, H, L, L)), -1)
    p2c_att = k64 @ pq64.transpose(0, 2, 1)[None]          # B H Lk 2S
    p2c_pos = np.clip(-rel + S, 0, 2 * S - 1)              # HF uses -r_pos
    p2c = np.take_along_axis(p2c_att, np.broadcast_to(p2c_pos, (B, H, L, L)),
                             -1).transpose(0, 1, 3, 2)
    assert np.allclose(ref.disentangled_bias(q, k, pq, pk, bk, True, False), c2p,
                       rtol=1e-13, atol=1e-13)
    assert np.allclose(ref.disentangled_bias(q, k, pq, pk, bk, False, True), p2c,
                       rtol=1e-13, atol=1e-13)
    assert np.allclose(ref.disentangled_bias(q, k, pq, pk, bk), c2p + p2c,
                       rtol=1e-13, atol=1e-13)
    # Lq != Lk against a loop.
    k2 = rand(B, H, 9, D)
    got = ref.disentangled_bias(q, k2, pq, pk, bk)
    for b, h, ii, jj in np.ndindex(*got.shape):
        dl = int(bk.bucket(ii, jj))
        want = float(q64[b, h, ii] @ pk64[h, dl]) + \
            float(k2[b, h, jj].astype(np.float64) @ pq64[h, dl])
        assert abs(got[b, h, ii, jj] - want) < 1e-12


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------

def naive_attention(q, k, v, bias=None, key_lengths=None, q_offset=0,
                    rel_values=None, scale=None, causal=False, bucketing=None,
                    score_mod=None):
    B, H, Lq, D = q.shape
    Hkv, Lk, Dv = k.shape[1], k.shape[2], v.shape[3]
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    out = np.zeros((B, H, Lq, Dv))
    for b in range(B):
        for h in range(H):
            kh = h // (H // Hkv)
            for i in range(Lq):
                ip = i + q_offset
                scores = []
                for j in range(Lk):
                    s = scale * sum(float(q[b, h, i, d]) * float(k[b, kh, j, d])
                                    for d in range(D))
                    if bias is not None:
                        bb = bias if bias.ndim == 4 else bias[None]
                        s += float(bb[b % bb.shape[0] if bb.shape[0] > 1 else 0,
                                      h if bb.shape[1] > 1 else 0,
                                      i if bb.shape[2] > 1 else 0,
                                      j if bb.shape[3] > 1 else 0])
                    if score_mod is not None:
                        s = float(score_mod(s, b, h, ip, j))
                    masked = (causal and j > ip) or \
                        (key_lengths is not None and j >= key_lengths[b])
                    scores.append(None if masked else s)
                live = [s for s in scores if s is not None]
                if not live:
                    continue
                m = max(live)
                w = [0.0 if s is None else math.exp(s - m) for s in scores]
                z = sum(w)
                for d in range(Dv):
                    acc = sum(w[j] / z * float(v[b, kh, j, d]) for j in range(Lk))
                    if rel_values is not None:
                        acc += sum(w[j] / z *
                                   float(rel_values[int(bucketing.bucket(ip, j)), d])
                                   for j in range(Lk))
                    out[b, h, i, d] = acc
    return out


def _cmp(got, want):
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=1e-12, atol=1e-13), np.abs(got - want).max()


def test_attention_plain_and_scale():
    q, k, v = rand(2, 2, 5, 4), rand(2, 2, 7, 4), rand(2, 2, 7, 3)
    _cmp(ref.attention(q, k, v), naive_attention(q, k, v))
    _cmp(ref.attention(q, k, v, scale=0.3), naive_attention(q, k, v, scale=0.3))


def test_attention_masks_gqa_bias():
    q, k, v = rand(3, 4, 5, 4), rand(3, 2, 8, 4), rand(3, 2, 8, 6)
    kl = np.array([8, 0, 3], dtype=np.int32)
    bias3 = rand(4, 5, 8)
    bias4 = rand(3, 1, 1, 8)
    for kw in (dict(causal=True, q_offset=3), dict(key_lengths=kl),
               dict(bias=bias3, causal=True, q_offset=3, key_lengths=kl),
               dict(bias=bias4), dict(bias=rand(1, 4, 5, 1))):
        got = ref.attention(q, k, v, **kw)
        _cmp(got, naive_attention(q, k, v, **kw))
    got = ref.attention(q, k, v, key_lengths=kl)
    assert np.all(got[1] == 0.0)
    # causal with negative effective rows: q_offset=0, Lq > Lk is fine.
    got = ref.attention(q, k[:, :, :3], v[:, :, :3], causal=True)
    _cmp(got, naive_attention(q, k[:, :, :3], v[:, :, :3], causal=True))


def test_attention_score_mod_rel_values():
    q, k, v = rand(1, 2, 4, 4), rand(1, 2, 6, 4), rand(1, 2, 6, 5)
    bk = ref.Clip(2)
    rv = rand(bk.num_buckets, 5)
    t5 = ref.T5(8, 16, False)

    def mod_vec(s, b, h, i, j):
        return s - 0.5 * np.abs(i - j) - 0.1 * h.astype(np.float64) * t5.bucket(i, j)

    def mod_scalar(s, b, h, i, j):
        return s - 0.5 * abs(i - j) - 0.1 * h * int(t5.bucket(i, j))

    got = ref.attention(q, k, v, q_offset=2, causal=True, score_mod=mod_vec,
                        rel_values=rv, bucketing=bk)
    want = naive_attention(q, k, v, q_offset=2, causal=True, score_mod=mod_scalar,
                           rel_values=rv, bucketing=bk)
    _cmp(got, want)
    got = ref.attention(q, k, v, rel_values=rv, bucketing=bk,
                        key_lengths=np.array([0]))
    assert np.all(got == 0.0)


def test_attention_low_precision_inputs():
    q = rand(1, 2, 5, 8, dtype=np.float16)
    k = rand(1, 2, 5, 8, dtype=np.float16)
    v = rand(1, 2, 5, 8, dtype=np.float16)
    _cmp(ref.attention(q, k, v), naive_attention(q, k, v))


if __name__ == "__main__":
    n = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            n += 1
            print("ok", name)
    print("%d self-checks passed" % n)
