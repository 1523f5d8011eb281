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


@pytest.mark.parametrize("cpu", CPUS + ["generic"])
@pytest.mark.parametrize("bucketing", [ir.Log(256, 512), ir.Log(8, 20),
                                       ir.Log(4, 4)])
def test_deberta_key_rows(cpu, bucketing):
    """DeBERTa's p2c term reads key j's table row at the buckets of a row
    vector: one row load and a permute (vpermps) at 8 and 16 lanes when the
    row holds a vector (Log(4, 4): 8 columns, less than 16), gathers at 4
    lanes (generic x86-64). Lengths that leave partial tiles, and more than
    one block of 512 query rows."""
    text = ir.deberta_attention(bucketing, batch=None, heads=2, lq=None,
                                lk=None, head_dim=8, name="deb")
    fn = rpe.compile(text, cpu=cpu).deb
    rng = np.random.default_rng(bucketing.num_buckets)
    s = ir.deberta_scale(8, True, True)
    for lq, lk in [(37, 70), (100, 131), (600, 530)]:
        q, k, v, _ = _inputs(rng, 1, 2, lq, lk, 8, 1)
        pq, pk = (rng.standard_normal((2, bucketing.num_buckets, 8))
                  .astype(np.float32) for _ in range(2))
        bias = ref.disentangled_bias(q, k, pq * np.float32(s),
                                     pk * np.float32(s), bucketing)
        want = ref.attention(q, k, v, bias=bias, scale=s)
        np.testing.assert_allclose(fn(q, k, v, pq, pk), want, rtol=1e-4,
                                   atol=1e-5, err_msg="lq=%d lk=%d" % (lq, lk))


ROW_READ = """
func.func @rows(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                %v: tensor<1x2x?x8xf32>, %t: tensor<1x2x?x32xf32>)
    -> tensor<1x2x?x8xf32> {
  %o = rpe.attention %q, %k, %v : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>,
      tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bk = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 64, bidirectional = true>
    %g = tensor.extract %t[%b, %h, %ROW, %bk] : tensor<1x2x?x32xf32>
    %r = arith.addf %s, %g : f32
    rpe.yield %r : f32
  }
  return %o : tensor<1x2x?x8xf32>
}
"""


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("row", ["j", "i"])
def test_row_reads_buckets_that_jump(cpu, row):
    """Table rows read at the buckets of a key (a key's row: p2c) or of a
    query row (c2p: per row, W keys at a time, transposed) whose buckets
    jump (T5's bidirectional buckets: by 16 between i = j and i = j + 1):
    no window for the vectors across the diagonal, which the run-time check
    sends to the gather. Lengths that leave partial tiles and key vectors."""
    fn = rpe.compile(ROW_READ.replace("%ROW", "%" + row), cpu=cpu).rows
    rb = ref.T5(32, 64, True)
    rng = np.random.default_rng(5)
    for lq, lk in [(40, 40), (100, 170), (70, 83)]:
        q, k, v, _ = _inputs(rng, 1, 2, lq, lk, 8, 1)
        t = rng.standard_normal((1, 2, max(lq, lk), 32)).astype(np.float32)
        i = np.arange(lq)[:, None]
        j = np.arange(lk)[None, :]
        bk = rb.bucket(i, j)
        at = j if row == "j" else i

        def score_mod(s, b, h, ip, jp):
            return s + t[0][:, at, bk]

        want = ref.attention(q, k, v, score_mod=score_mod)
        np.testing.assert_allclose(fn(q, k, v, t[:, :, :(lk if row == "j" else lq)]),
                                   want, rtol=RTOL, atol=ATOL,
                                   err_msg="lq=%d lk=%d" % (lq, lk))


@pytest.mark.parametrize("c2p", [True, False])
def test_deberta_key_band_edges(c2p):
    """rpe-split-attention-heads computes p2c per block of 2048 query rows
    for the keys the block's buckets tell apart (M = 512 for Log(256, 512))
    and reads the saturated column of the others' side: Lq = 2600 (two
    blocks), Lk = 3200 has keys before the second block's band and after
    both bands. With and without c2p (then the blocks are p2c's alone)."""
    bucketing = ir.Log(256, 512)
    text = ir.deberta_attention(bucketing, batch=None, heads=2, lq=None,
                                lk=None, head_dim=8, c2p=c2p, name="deb")
    fn = rpe.compile(text, num_threads=2).deb
    rng = np.random.default_rng(11)
    s = ir.deberta_scale(8, c2p, True)
    lq, lk = 2600, 3200
    q, k, v, _ = _inputs(rng, 1, 2, lq, lk, 8, 1)
    pq, pk = (rng.standard_normal((2, 512, 8)).astype(np.float32)
              for _ in range(2))
    bias = ref.disentangled_bias(q, k, pq * np.float32(s), pk * np.float32(s),
                                 bucketing, c2p=c2p)
    want = ref.attention(q, k, v, bias=bias, scale=s)
    np.testing.assert_allclose(fn(q, k, v, pq, pk), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("heads,threads,causal", [
    (2, 2, False), (3, 2, False), (3, 4, False), (3, 2, True),
    (3, 4, True)])
def test_deberta_threads(heads, threads, causal):
    """rpe-split-attention-heads on several threads. H = 2 on 2 threads
    splits evenly: the heads in parallel, each thread its head's blocks of
    1024 query rows and their tables (the groups and the kernel's tiles on
    the head's thread, rpe-serialize-nested-foralls). H = 3 does not: with
    B = 1 on 2 threads each thread takes one head whole and one of the two
    halves of the third (560 rows at Lq = 1100; 1056 rows, two blocks, at
    2100); on 4 threads each takes 3 of the 12 quarters (16 rows at Lq = 37
    and 5, the last ones empty); with B = 2 on 2 threads every pair goes
    whole (B·H = 6, known at run time only). Causal with H = 3: the parts
    end where the rows' work (min(i + 1, Lk) keys) is equal, with Lq below
    and above Lk (then the last rows all see Lk keys). Lengths that leave
    partial groups, tiles and position-table lines, and more than one
    block."""
    bucketing = ir.Log(256, 512)
    text = ir.deberta_attention(bucketing, batch=None, heads=heads, lq=None,
                                lk=None, head_dim=8, causal=causal,
                                name="deb")
    fn = rpe.compile(text, num_threads=threads).deb
    rng = np.random.default_rng(heads * 10 + threads)
    s = ir.deberta_scale(8, True, True)
    shapes = [(1, 5, 9), (1, 37, 70), (1, 130, 129), (2, 130, 129),
              (1, 1100, 1030)]
    if heads == 3 and threads == 2:
        shapes += [(1, 2100, 1500)] if causal else [(1, 2100, 2000)]
    if causal:
        shapes.append((1, 300, 40))
    for batch, lq, lk in shapes:
        q, k, v, _ = _inputs(rng, batch, heads, lq, lk, 8, 1)
        pq, pk = (rng.standard_normal((heads, 512, 8)).astype(np.float32)
                  for _ in range(2))
        bias = ref.disentangled_bias(q, k, pq * np.float32(s),
                                     pk * np.float32(s), bucketing)
        want = ref.attention(q, k, v, bias=bias, scale=s, causal=causal)
        np.testing.assert_allclose(
            fn(q, k, v, pq, pk), want, rtol=1e-4, atol=1e-5,
            err_msg="batch=%d lq=%d lk=%d" % (batch, lq, lk))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("causal", [False, True])
def test_deberta_key_lengths(threads, causal):
    """The tables' bucket columns leave out the keys that key_lengths
    masks: a c2p row computes the buckets of its distances to keys
    [0, len - 1] only, a group of p2c band keys that are all masked one
    line of columns. Lengths 0, short (the band's later groups all masked),
    a partial tile and Lk, with Lq > Lk, Lq < Lk and two query blocks (the
    second's rows see only the saturated bucket)."""
    bucketing = ir.Log(256, 512)
    text = ir.deberta_attention(bucketing, batch=None, heads=3, lq=None,
                                lk=None, head_dim=8, causal=causal,
                                key_lengths=True, name="deb")
    fn = rpe.compile(text, num_threads=threads).deb
    rng = np.random.default_rng(7 + threads + 2 * causal)
    s = ir.deberta_scale(8, True, True)
    for lq, lk in [(600, 900), (1100, 700), (2100, 1300)]:
        lengths = np.array([0, 37, lk - 5, lk], dtype=np.int32)
        q, k, v, _ = _inputs(rng, len(lengths), 3, lq, lk, 8, 1)
        pq, pk = (rng.standard_normal((3, 512, 8)).astype(np.float32)
                  for _ in range(2))
        bias = ref.disentangled_bias(q, k, pq * np.float32(s),
                                     pk * np.float32(s), bucketing)
        want = ref.attention(q, k, v, bias=bias, scale=s, causal=causal,
                             key_lengths=lengths)
        np.testing.assert_allclose(
            fn(q, k, v, pq, pk, lengths), want, rtol=1e-4, atol=1e-5,
            err_msg="lq=%d lk=%d" % (lq, lk))


def test_deberta_many_heads_sequential():
    """512 (batch, head) pairs one after another on one thread: the
    kernel's stack scratch is taken once for the call, not once per head
    and block (scf.for frees no stack per iteration: this overflowed the
    8 MiB main stack and crashed before rpe-hoist-forall-allocas hoisted
    past the loops)."""
    bucketing = ir.Log(256, 512)
    text = ir.deberta_attention(bucketing, batch=None, heads=64, lq=None,
                                lk=None, head_dim=8, name="deb")
    fn = rpe.compile(text).deb
    rng = np.random.default_rng(64)
    s = ir.deberta_scale(8, True, True)
    q, k, v, _ = _inputs(rng, 8, 64, 40, 33, 8, 1)
    pq, pk = (rng.standard_normal((64, 512, 8)).astype(np.float32)
              for _ in range(2))
    bias = ref.disentangled_bias(q, k, pq * np.float32(s), pk * np.float32(s),
                                 bucketing)
    want = ref.attention(q, k, v, bias=bias, scale=s)
    np.testing.assert_allclose(fn(q, k, v, pq, pk), want, rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("cpu", CPUS + ["generic"])
def test_softmax_exp_accuracy(cpu):
    """The kernel's exp, seen through two keys: row i scores 0 and x_i, the
    values are 0 and 1, so the output is e/(1 + e) with e = exp(x_i) for
    x_i in [-64, 0] (0 below: the kernel flushes exp(x) < exp(-64) = 1.6e-28,
    which is below 2^-24 of any row sum). Compared with float64: within 3
    ulp of the f32 result (exp within about 1 ulp, the sum and the
    division each within one more rounding)."""
    text = ir.attention((None,) * 4, (None,) * 4, (None,) * 4, scale=1.0,
                        name="attn")
    attn = rpe.compile(text, cpu=cpu).attn
    x = np.concatenate([np.linspace(-70.0, 0.0, 30001),
                        -np.logspace(-30, np.log10(64.0), 10000),
                        [0.0, -64.0, np.nextafter(np.float32(-64.0),
                                                  np.float32(0.0)),
                         np.nextafter(np.float32(-64.0), np.float32(-65.0))]])
    x = x.astype(np.float32)
    d = 4
    q = np.zeros((1, 1, x.size, d), np.float32)
    q[0, 0, :, 0] = x
    k = np.zeros((1, 1, 2, d), np.float32)
    k[0, 0, 1, 0] = 1.0
    v = np.zeros((1, 1, 2, d), np.float32)
    v[0, 0, 1, :] = 1.0
    out = attn(q, k, v)[0, 0].astype(np.float64)
    e = np.exp(x.astype(np.float64))
    want = np.where(x < -64.0, 0.0, e / (1.0 + e))
    for c in range(d):
        np.testing.assert_array_equal(out[:, c], out[:, 0])
    out = out[:, 0]
    np.testing.assert_array_equal(out[x < -64.0], 0.0)
    ulp = np.spacing(want.astype(np.float32)).astype(np.float64)
    err = np.abs(out - want) / ulp
    worst = int(np.argmax(err))
    assert err.max() <= 3.0, (x[worst], out[worst], want[worst], err.max())


# (B, H, Hkv, Lq, Lk, D, Dv): the decode kernel for 1, 2, 4 and 8 packed
# rows (Lq · H/Hkv: 1, 2, 3, 4, 5, 8), the grouped tiles past it (12);
# head dimensions that are and are not multiples of the vector width, key
# counts that are multiples of no tile, no key at all.
DECODE_SHAPES = [(2, 4, 4, 1, 77, 16, 16), (1, 8, 4, 1, 130, 12, 20),
                 (2, 6, 2, 1, 300, 32, 8), (1, 8, 2, 1, 64, 64, 64),
                 (2, 5, 1, 1, 33, 24, 40), (1, 4, 1, 2, 129, 16, 16),
                 (2, 6, 2, 4, 17, 8, 8), (1, 2, 2, 1, 0, 16, 16)]


@pytest.mark.parametrize("cpu", CPUS + ["generic"])
@pytest.mark.parametrize("shape", DECODE_SHAPES,
                         ids=lambda s: "B%dH%dkv%d-%dx%d-D%dDv%d" % s)
def test_decode_kernel(cpu, shape):
    """The decode kernel (vectors along the head dimension and along keys)
    against the NumPy reference: causal with q_offset at the end of the
    keys, within them and before them (rows that see no key: 0), and
    key_lengths with a 0 among them."""
    b, h, hkv, lq, lk, d, dv = shape
    text = ir.attention((b, h, lq, d), (b, hkv, None, d), (b, hkv, None, dv),
                        key_lengths=True, q_offset=True, causal=True,
                        name="attn")
    attn = rpe.compile(text, cpu=cpu).attn
    rng = np.random.default_rng(sum(shape))
    q = rng.standard_normal((b, h, lq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, lk, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, lk, dv)).astype(np.float32)
    for lengths in ([lk] * b, [max(lk - 7, 0), 0][:b] + [lk] * (b - 2)):
        kl = np.array(lengths, np.int32)
        for off in (lk - lq, lk // 2, -1):
            # No key (the reference does not take Lk = 0): rows of 0.
            want = np.zeros((b, h, lq, dv)) if lk == 0 else ref.attention(
                q, k, v, key_lengths=kl, q_offset=off, causal=True)
            np.testing.assert_allclose(attn(q, k, v, kl, off), want,
                                       rtol=RTOL, atol=ATOL)
