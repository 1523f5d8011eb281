"""Seeded randomized differential suite: compiled rpe (``rpe.compile``, CPU)
against the NumPy reference ``rpe.reference``.

Every test is one configuration: an op or a layer built with ``rpe.ir``,
random inputs drawn from a per-configuration seed, the compiled result and
the reference result.  Configurations cover every op and every bucketing
scheme: odd and prime lengths, Lq != Lk, q_offset (also negative), causal,
key_lengths with zero-length rows, GQA, dynamic (``?``) batch / length /
head / head-dim sizes, distances far beyond the tables (L up to 300 with
clip K = 4, T5 with small max_distance, windows outside the window),
positions up to +-2^61 for ``rpe.bucket``, and f16 / bf16 variants.
A configuration's function is shared by many configurations (dynamic
shapes); the generators assert that they all need the same function.

``bucket-*-overflow`` configurations check positions whose difference
exceeds 2^62 or overflows int64: Semantics.md says differences saturate at
+-2^62, in the lowering as in the folder.

Tolerances (``np.testing.assert_allclose``): f32 ``rtol=1e-5, atol=1e-6``;
f16 ``rtol=4e-3, atol=2e-3``; bf16 ``rtol=1e-2, atol=1e-2`` (integers:
exact).  An f32 ``rpe.attention`` whose scores reach a magnitude S gets
``atol = max(1e-6, 2 u S max|v|)`` (u = 2^-24): rounding a score to f32
moves its exponential by up to u S relative, so its output by up to
u S max|v|, whatever the order of the sums (with S = 23, scale 2 at
D = 16, a configuration's error was 1.4e-6, and that of the f64
reference with its scores rounded to f32 alone 6.4e-7).  For f16/bf16 the inputs are exactly representable and the
reference rounds every intermediate tensor that the compiled function
materializes in the reduced type (a bias, rotated q/k, a scaled table) the
same way, so these tolerances only cover f32-vs-f64 arithmetic and the
final rounding.

To keep compilation cheap, configurations share compiled modules: most
functions have dynamic shapes and are called with many shapes, and several
functions are merged into one module (``rpe.ir.merge``).  Modules are
compiled lazily, once, on first use.

The largest observed errors per op are printed at the end of the session
and written as JSON to ``$RPE_DIFF_ERRORS`` (default:
``differential_errors.json`` in pytest's cache directory,
``.pytest_cache/``), with, per op: the number of configurations, the largest
absolute error, the largest error relative to the configuration's largest
reference magnitude, and the largest ``|err| / (atol + rtol*|want|)``
(the fraction of the tolerance used; <= 1 passes).

Run: ``PYTHONPATH=python /usr/bin/python3 -m pytest -q python/tests/test_differential.py``
"""

import ctypes
import json
import math
import mmap
import os
import random
import re
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE)))

import rpe  # noqa: E402
from rpe import ir  # noqa: E402
from rpe import reference as ref  # noqa: E402
from rpe.reference import Clip, Log, T5, Window2D  # noqa: E402

# Another seed draws other configurations and inputs: RPE_DIFF_SEED=N.
SEED = int(os.environ.get("RPE_DIFF_SEED", "20240607"))

TOL = {"f32": (1e-5, 1e-6), "f16": (4e-3, 2e-3), "bf16": (1e-2, 1e-2),
       "int": (0.0, 0.0)}

# ---------------------------------------------------------------------------
# Bucketing schemes under test (every scheme, edge parameters included)
# ---------------------------------------------------------------------------

BK_CLIP = [Clip(0), Clip(1), Clip(4), Clip(7), Clip(64)]
BK_T5 = [T5(32, 128, True), T5(32, 128, False), T5(8, 12, True),
         T5(8, 12, False), T5(16, 20, True), T5(4, 3, True), T5(2, 2, False),
         T5(64, 1000, True), T5(6, 5, False),
         # j - i = -104 sits on a bucket boundary that a 1-ulp-off f32 log
         # (NumPy's SIMD log) moves: HF gives 96.
         T5(128, 169, False)]
BK_LOG = [Log(256, 512), Log(8, 20), Log(0, 5), Log(0, 1), Log(2, 3),
          Log(16, 100), Log(64, 65), Log(4, 4)]
BK_WIN = [Window2D(7, 7), Window2D(2, 3), Window2D(1, 1), Window2D(1, 5),
          Window2D(4, 1), Window2D(3, 2)]
BK_ALL = BK_CLIP + BK_T5 + BK_LOG + BK_WIN
# A smaller set with every family for the ops with more expensive configs.
BK_SOME = [Clip(0), Clip(4), T5(32, 128, True), T5(8, 12, False),
           T5(4, 3, True), Log(256, 512), Log(8, 20), Log(0, 5),
           Window2D(2, 3), Window2D(7, 7), Window2D(4, 1)]

# Lengths: odd, prime, powers of two, up to 300.
LENS_SMALL = [1, 2, 3, 5, 6, 7, 11, 13, 16, 17]
LENS = LENS_SMALL + [23, 31, 32, 37, 53, 64, 97, 127, 131]
LENS_LONG = [211, 257, 293, 300]
OFFSETS = [0, 1, 3, 17, 100, 997, 4096]


def bk_id(b):
    if isinstance(b, Clip):
        return "clip%d" % b.max_distance
    if isinstance(b, T5):
        return "t5_%d_%d_%s" % (b.n, b.m, "bi" if b.bidirectional else "uni")
    if isinstance(b, Log):
        return "log%d_%d" % (b.p, b.m)
    return "win%dx%d" % (b.wh, b.ww)


# ---------------------------------------------------------------------------
# Inputs and reduced-precision rounding
# ---------------------------------------------------------------------------

def round_bf16(x):
    """float64/32 -> nearest bf16 value (ties to even), as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def as_elem(x, elem):
    """``x`` rounded to ``elem`` (what a tensor of that type holds), float64."""
    x = np.asarray(x, dtype=np.float64)
    if elem == "f32":
        return x.astype(np.float32).astype(np.float64)
    if elem == "f16":
        return x.astype(np.float16).astype(np.float64)
    if elem == "bf16":
        return round_bf16(x).astype(np.float64)
    raise ValueError(elem)


def rand(rng, shape, elem="f32", lo=-1.0, hi=1.0):
    """Uniform values in [lo, hi) rounded to ``elem`` (see rand_like)."""
    return rand_like(rng.uniform(lo, hi, size=shape), elem)


def rand_like(x, elem):
    """``x`` rounded to ``elem``, as the array to pass: float32 for f32 and
    bf16 (bf16 values, which rpe.compile passes exactly), float16 for f16."""
    if elem == "f32":
        return np.asarray(x, dtype=np.float32)
    if elem == "f16":
        return np.asarray(x, dtype=np.float16)
    return round_bf16(x)


def key_lengths(rng, b, lk, zero=True, lo=0):
    """Per-batch key lengths in [lo, lk]; one is lk, and with ``zero`` one
    (if B > 1) or, by a coin flip, the only one (B = 1) is 0 (a fully masked
    row)."""
    lo = min(max(lo, 0), lk)  # callers pass lk - 16, negative for short keys
    kl = rng.integers(lo, lk + 1, size=b).astype(np.int32)
    if b and lk > 64 and rng.random() < 0.5:
        # Around a multiple of 64 (the CPU pipeline's default key tile).
        kl[rng.integers(0, b)] = min(lk, max(lo, int(rng.choice([63, 64, 65, 128, 129]))))
    if b:
        kl[rng.integers(0, b)] = lk
        if zero and (b > 1 or rng.random() < 0.5):
            kl[rng.integers(0, b)] = 0
    return kl


# ---------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------

class Case:
    """One configuration: ``make(rng) -> (args, want, elem)`` or
    ``(args, want, elem, atol)`` with an absolute tolerance of its own."""

    def __init__(self, op, cid, module, func, make, marks=()):
        self.op, self.id, self.module, self.func = op, cid, module, func
        self.make = make
        self.marks = marks
        self.seed = (zlib.crc32(cid.encode()) ^ SEED) & 0xFFFFFFFF


CASES = []
_IDS = set()
R = random.Random(SEED)     # draws the configurations themselves


def add(op, cid, module, func, make, marks=()):
    cid = "%s-%s" % (op, cid)
    assert cid not in _IDS, cid
    _IDS.add(cid)
    CASES.append(Case(op, cid, module, func, make, marks))


def pick(seq):
    return seq[R.randrange(len(seq))]


def chunks(items, n):
    return [items[i:i + n] for i in range(0, len(items), n)]


# -- rpe.bucket ----------------------------------------------------------------

def _bucket_near(b):
    def make(rng):
        i, j = np.meshgrid(np.arange(-9, 334), np.arange(-9, 334), indexing="ij")
        i, j = i.ravel().astype(np.int64), j.ravel().astype(np.int64)
        return (i, j), b.bucket(i, j), "int"
    return make


def _bucket_far(b):
    def make(rng):
        n = 20000
        i = rng.integers(-2 ** 61, 2 ** 61, size=n, dtype=np.int64)
        mag = np.exp2(rng.uniform(0, 60.9, size=n)).astype(np.int64)
        d = np.where(rng.random(n) < 0.5, -mag, mag)
        j = np.clip(i + d, -2 ** 61, 2 ** 61)
        # Window tokens near the window and random far pairs too.
        k = n // 4
        i[:k] = rng.integers(-3 * b.num_buckets - 50, 3 * b.num_buckets + 50, size=k)
        j[:k] = rng.integers(-3 * b.num_buckets - 50, 3 * b.num_buckets + 50, size=k)
        return (i, j), b.bucket(i, j), "int"
    return make


def _bucket_extreme(b):
    def make(rng):
        n = 4000
        hi = rng.integers(2 ** 62, 2 ** 63 - 1, size=n, dtype=np.int64)
        lo = rng.integers(-2 ** 63, -2 ** 62, size=n, dtype=np.int64)
        # Differences in (2^62, 2^63) that do not overflow int64 either.
        big = rng.integers(2 ** 62 + 1, 2 ** 63 - 1, size=n, dtype=np.int64)
        i = np.concatenate([hi, lo, big, np.zeros(n, np.int64),
                            [2 ** 63 - 1, -2 ** 63, 2 ** 62, 2 ** 63 - 1, 0]])
        j = np.concatenate([lo, hi, np.zeros(n, np.int64), -big,
                            [-2 ** 63, 2 ** 63 - 1, -2 ** 62, 0, -2 ** 63 + 1]])
        return (i.astype(np.int64), j.astype(np.int64)), b.bucket(i, j), "int"
    return make


def gen_bucket():
    for group in chunks(BK_ALL, 10):
        mod = ir.merge(*[ir.bucket(b, name="bucket_" + bk_id(b)) for b in group])
        for b in group:
            fn = "bucket_" + bk_id(b)
            add("bucket", bk_id(b) + "-near", mod, fn, _bucket_near(b))
            add("bucket", bk_id(b) + "-far", mod, fn, _bucket_far(b))
            add("bucket", bk_id(b) + "-overflow", mod, fn, _bucket_extreme(b))


# -- rpe.relative_bias -----------------------------------------------------------

def _rb_make(b, h, lq, lk, off, elem, call_sizes):
    """call_sizes: which of (q_offset, lq, lk) are passed as arguments."""
    def make(rng):
        table = rand(rng, (b.num_buckets, h), elem)
        args = [table] + [v for v, use in zip((off, lq, lk), call_sizes) if use]
        want = ref.relative_bias(table, lq, lk, b, q_offset=off)
        return args, want, elem
    return make


def gen_relative_bias():
    # Dynamic Lq / Lk and a q_offset argument: one function per scheme.
    for group in chunks(BK_ALL, 10):
        heads = {bk_id(b): R.randint(1, 4) for b in group}
        mod = ir.merge(*[ir.relative_bias(b, heads[bk_id(b)], None, None,
                                          q_offset=True, name="rb_" + bk_id(b))
                         for b in group])
        for b in group:
            h = heads[bk_id(b)]
            shapes = [(pick(LENS), pick(LENS), pick(OFFSETS)),
                      (pick(LENS_SMALL), pick(LENS_LONG), 0)]
            if isinstance(b, (Clip, T5)) or b == BK_LOG[0]:
                shapes.append((pick(LENS_LONG), pick(LENS_LONG), pick(OFFSETS)))
            if not isinstance(b, Window2D):
                # q_offset near the int64 bounds (clamped to +-2^62: no
                # position arithmetic may wrap). Fixed, not drawn: the
                # draws of the other configurations stay as they were.
                shapes += [(5, 7, 2 ** 63 - 1), (6, 3, -2 ** 63)]
            for lq, lk, off in shapes:
                add("relative_bias", "%s-H%d-%dx%d-off%d" % (bk_id(b), h, lq, lk, off),
                    mod, "rb_" + bk_id(b),
                    _rb_make(b, h, lq, lk, off, "f32", (True, True, True)))
    # Static shapes (window2d: L = Wh*Ww), dynamic H, constant q_offset, f16/bf16.
    fns, cases = [], []
    for n, (b, h, lq, lk, off, elem) in enumerate([
            (Window2D(7, 7), 3, 49, 49, None, "f32"),
            (Window2D(2, 3), 2, 6, 6, 4, "f32"),
            (Clip(4), 2, 7, 300, None, "f32"),
            (T5(32, 128, True), 4, 13, 29, 211, "f32"),
            (Log(256, 512), 2, 37, 41, None, "f32"),
            (Clip(3), 2, 5, 6, None, "f16"),
            (T5(8, 12, True), 3, 11, 9, 2, "f16"),
            (Log(8, 20), 2, 12, 13, None, "bf16"),
            (Window2D(2, 2), 2, 4, 4, None, "bf16")]):
        name = "rb_static%d" % n
        fns.append(ir.relative_bias(b, h, lq, lk, elem=elem, q_offset=off, name=name))
        cases.append(("%s-static-%s-%dx%d-off%s" % (bk_id(b), elem, lq, lk, off or 0),
                      name, _rb_make(b, h, lq, lk, off or 0, elem, (False, False, False))))
    # Dynamic heads (from the table) with dynamic Lk.
    name = "rb_dynheads"
    b = T5(16, 20, True)
    fns.append(ir.relative_bias(b, None, 9, None, name=name))
    for h in (1, 5):
        cases.append(("%s-dynH%d" % (bk_id(b), h), name,
                      _rb_make(b, h, 9, 131, 0, "f32", (False, False, True))))
    mod = ir.merge(*fns)
    for cid, name, make in cases:
        add("relative_bias", cid, mod, name, make)


# -- rpe.alibi ---------------------------------------------------------------------

def _alibi_make(h, lq, lk, off, symmetric, slopes, elem, args):
    def make(rng):
        want = ref.alibi(h, lq, lk, slopes=slopes, symmetric=symmetric, q_offset=off)
        return list(args), want, elem
    return make


def gen_alibi():
    fns = [ir.alibi(None, None, None, symmetric=True, q_offset=True, name="alibi_sym"),
           ir.alibi(None, None, None, symmetric=False, q_offset=True, name="alibi_dir")]
    cases = []
    for sym, fn in ((True, "alibi_sym"), (False, "alibi_dir")):
        for _ in range(10):
            h = pick([1, 2, 3, 4, 5, 6, 7, 8, 12, 16])
            lq, lk, off = pick(LENS), pick(LENS + LENS_LONG), pick(OFFSETS + [-5])
            cases.append(("%s-H%d-%dx%d-off%d" % (fn, h, lq, lk, off), fn,
                          _alibi_make(h, lq, lk, off, sym, None, "f32",
                                      (off, h, lq, lk))))
    for n, (h, sym) in enumerate(((3, True), (5, False), (8, False), (2, True))):
        slopes = [round(R.uniform(0.01, 1.0), 6) for _ in range(h)]
        name = "alibi_slopes%d" % n
        fns.append(ir.alibi(h, None, None, symmetric=sym, slopes=slopes,
                            q_offset=True, name=name))
        lq, lk, off = pick(LENS), pick(LENS), pick(OFFSETS)
        cases.append(("%s-H%d-%dx%d-off%d" % (name, h, lq, lk, off), name,
                      _alibi_make(h, lq, lk, off, sym, slopes, "f32", (off, lq, lk))))
    for n, (h, lq, lk, sym, elem, off) in enumerate((
            (6, 7, 7, True, "f32", None), (4, 1, 300, False, "f32", 299),
            (8, 5, 9, True, "f16", None), (3, 11, 11, False, "f16", 2),
            (4, 6, 13, True, "bf16", None), (12, 3, 8, False, "bf16", 5))):
        name = "alibi_static%d" % n
        fns.append(ir.alibi(h, lq, lk, symmetric=sym, elem=elem, q_offset=off, name=name))
        cases.append(("%s-%s-H%d-%dx%d" % (name, elem, h, lq, lk), name,
                      _alibi_make(h, lq, lk, off or 0, sym, None, elem, ())))
    mod = ir.merge(*fns)
    for cid, name, make in cases:
        add("alibi", cid, mod, name, make)


# -- rpe.rotary --------------------------------------------------------------------

def _rotary_make(x_shape, pos_shape, pos_dtype, pos_range, theta, rd, inter, elem,
                 scaling=None):
    def make(rng):
        x = rand(rng, x_shape, elem)
        pos = rng.integers(pos_range[0], pos_range[1] + 1, size=pos_shape).astype(pos_dtype)
        want = ref.rotary(x, pos, theta=10000.0 if theta is None else theta,
                          rotary_dim=rd, interleaved=inter, scaling=scaling)
        return [x, pos], want, elem
    return make


def gen_rotary():
    # (name, x_shape with None, D, pos layout, pos dtype, theta, rotary_dim, interleaved)
    specs = [
        ("rot_half", (None, 2, None, 16), "L", "i64", None, None, False),
        ("rot_inter", (None, 3, None, 16), "L", "i64", 500.0, 8, True),
        ("rot_partial", (None, 2, None, 12), "L", "i32", None, 6, False),
        ("rot_bpos", (None, 2, None, 8), "BL", "i32", None, None, False),
        ("rot_bpos_inter", (None, 1, None, 10), "BL", "i64", 1.0e6, None, True),
        ("rot_rank3", (None, None, 32), "L", "i64", 5.0e5, 32, False),
        ("rot_rank3_bpos", (None, None, 6), "BL", "i64", 10.0, 4, True),
        ("rot_rank2", (None, 16), "L", "i64", None, None, True),
        ("rot_rank5", (None, 2, 2, None, 8), "BL", "i64", None, None, False),
        ("rot_r0", (None, 2, None, 8), "L", "i64", None, 0, False),
        ("rot_dynD", (None, 2, None, None), "L", "i64", None, None, False),
    ]
    fns, cases = [], []
    for name, xs, layout, pe, theta, rd, inter in specs:
        ps = (xs[0], xs[-2]) if layout == "BL" else (xs[-2],)
        fns.append(ir.rotary(xs, ps, pos_elem=pe, theta=theta, rotary_dim=rd,
                             interleaved=inter, name=name))
        for k in range(3 if name != "rot_r0" else 1):
            shape = []
            for d, s in enumerate(xs):
                if s is not None:
                    shape.append(s)
                elif d == len(xs) - 1:
                    shape.append(pick([2, 8, 14]))   # dynamic D (even)
                elif d == len(xs) - 2:
                    shape.append(pick(LENS))
                else:
                    shape.append(pick([1, 2, 3]))
            shape = tuple(shape)
            ps_rt = (shape[0], shape[-2]) if layout == "BL" else (shape[-2],)
            prange = [(0, 64), (-100, 5000), (0, 10 ** 6)][k]
            cases.append(("%s-%s-pos%d" % (name, "x".join(map(str, shape)), prange[1]),
                          name, _rotary_make(shape, ps_rt, np.int32 if pe == "i32" else np.int64,
                                             prange, theta, rd, inter, "f32")))
    for n, (xs, elem, inter) in enumerate((((1, 2, 7, 8), "f16", False),
                                          ((2, 3, 5, 16), "f16", True),
                                          ((1, 2, 9, 8), "bf16", False),
                                          ((2, 11, 4), "bf16", True))):
        name = "rot_%s%d" % (elem, n)
        fns.append(ir.rotary(xs, (xs[-2],), elem=elem, interleaved=inter, name=name))
        cases.append(("%s-%s" % (name, "x".join(map(str, xs))), name,
                      _rotary_make(xs, (xs[-2],), np.int64, (0, 2000), None, None,
                                   inter, elem)))
    # RoPE scalings (small original lengths: both regimes of llama3/YaRN and
    # dynamic NTK's growth show up at the positions drawn).
    scalings = [
        {"type": "linear", "factor": 4.0},
        {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
         "high_freq_factor": 4.0, "original_max_position": 64},
        {"type": "yarn", "factor": 4.0, "original_max_position": 64,
         "beta_fast": 32.0, "beta_slow": 1.0},
        {"type": "dynamic", "factor": 2.0, "original_max_position": 48},
    ]
    for sc in scalings:
        for tag, xs, layout, theta, rd, inter in (
                ("half", (None, 2, None, 16), "L", None, None, False),
                ("part", (None, 2, None, 12), "BL", 500.0, 8, True),
                ("dynD", (None, 2, None, None), "L", None, None, False)):
            name = "rot_%s_%s" % (sc["type"], tag)
            ps = (xs[0], xs[-2]) if layout == "BL" else (xs[-2],)
            fns.append(ir.rotary(xs, ps, theta=theta, rotary_dim=rd, interleaved=inter,
                                 name=name, scaling=sc))
            for prange in ((0, 40), (-20, 3000)):
                shape = tuple(s if s is not None else
                              pick([2, 8, 14]) if d == len(xs) - 1 else
                              pick(LENS) if d == len(xs) - 2 else pick([1, 2])
                              for d, s in enumerate(xs))
                ps_rt = (shape[0], shape[-2]) if layout == "BL" else (shape[-2],)
                cases.append(("%s-%s-pos%d" % (name, "x".join(map(str, shape)), prange[1]),
                              name, _rotary_make(shape, ps_rt, np.int64, prange, theta, rd,
                                                 inter, "f32", sc)))
    for group in chunks(list(range(len(fns))), 8):
        mod = ir.merge(*[fns[i] for i in group])
        names = set(fns[i].func_name for i in group)
        for cid, name, make in cases:
            if name in names:
                add("rotary", cid, mod, name, make)


# -- rpe.shaw_logits / rpe.shaw_values -----------------------------------------------

def _shaw_logits_make(b, B, h, lq, lk, d, elem, dyn_lk):
    def make(rng):
        q = rand(rng, (B, h, lq, d), elem)
        emb = rand(rng, (b.num_buckets, d), elem)
        want = ref.shaw_logits(q, emb, lk, b)
        return [q, emb] + ([lk] if dyn_lk else []), want, elem
    return make


def _shaw_values_make(b, B, h, lq, lk, d, elem):
    def make(rng):
        # Rows of probabilities, as attention gives them (rows of unnormalized
        # values in [0, 1] would sum ~Lk/2-sized terms that cancel to small
        # results, an input that no f32 summation gets to 1e-5 relative).
        p = rng.uniform(0.0, 1.0, size=(B, h, lq, lk))
        p = rand_like(p / np.maximum(p.sum(-1, keepdims=True), 1e-30), elem)
        emb = rand(rng, (b.num_buckets, d), elem)
        want = ref.shaw_values(p, emb, b)
        return [p, emb], want, elem
    return make


def gen_shaw():
    fl, fv, cl, cv = [], [], [], []
    for b in BK_SOME:
        h, d = R.randint(1, 3), pick([4, 8, 16])
        nl, nv = "shawl_" + bk_id(b), "shawv_" + bk_id(b)
        fl.append(ir.shaw_logits(b, None, h, None, None, d, name=nl))
        fv.append(ir.shaw_values(b, None, h, None, None, d, name=nv))
        for k in range(2):
            B = pick([1, 2, 3])
            lq, lk = (pick(LENS), pick(LENS)) if k == 0 else (pick(LENS_SMALL), pick(LENS_LONG))
            cl.append(("%s-B%dH%d-%dx%d-D%d" % (bk_id(b), B, h, lq, lk, d), nl,
                       _shaw_logits_make(b, B, h, lq, lk, d, "f32", True)))
            lq, lk = (pick(LENS), pick(LENS)) if k == 0 else (pick(LENS_LONG), pick(LENS_SMALL))
            cv.append(("%s-B%dH%d-%dx%d-D%d" % (bk_id(b), B, h, lq, lk, d), nv,
                       _shaw_values_make(b, B, h, lq, lk, d, "f32")))
    for n, (b, B, h, lq, lk, d, elem) in enumerate((
            (Window2D(2, 3), 2, 2, 6, 6, 8, "f32"),
            (Clip(4), 1, 2, 7, 11, 16, "f32"),
            (T5(8, 12, True), 1, 2, 5, 9, 8, "f16"),
            (Log(8, 20), 2, 1, 12, 7, 4, "bf16"))):
        nl, nv = "shawl_static%d" % n, "shawv_static%d" % n
        fl.append(ir.shaw_logits(b, B, h, lq, lk, d, elem=elem, name=nl))
        fv.append(ir.shaw_values(b, B, h, lq, lk, d, elem=elem, name=nv))
        tag = "%s-static-%s-%dx%d" % (bk_id(b), elem, lq, lk)
        cl.append((tag, nl, _shaw_logits_make(b, B, h, lq, lk, d, elem, False)))
        cv.append((tag, nv, _shaw_values_make(b, B, h, lq, lk, d, elem)))
    for op, fns, cases in (("shaw_logits", fl, cl), ("shaw_values", fv, cv)):
        for group in chunks(fns, 8):
            mod = ir.merge(*group)
            names = set(f.func_name for f in group)
            for cid, name, make in cases:
                if name in names:
                    add(op, cid, mod, name, make)


# -- rpe.disentangled_bias -------------------------------------------------------------

def _disent_make(b, B, h, lq, lk, d, c2p, p2c, elem):
    def make(rng):
        q, k = rand(rng, (B, h, lq, d), elem), rand(rng, (B, h, lk, d), elem)
        pq = rand(rng, (h, b.num_buckets, d), elem)
        pk = rand(rng, (h, b.num_buckets, d), elem)
        want = ref.disentangled_bias(q, k, pq, pk, b, c2p=c2p, p2c=p2c)
        return [q, k, pq, pk], want, elem
    return make


def gen_disentangled():
    specs = [(Log(256, 512), True, True), (Log(8, 20), True, False),
             (Log(8, 20), False, True), (Log(0, 5), True, True),
             (Log(4, 4), True, True), (Log(64, 65), True, False),
             (Clip(4), True, True), (T5(16, 20, True), True, True),
             (Window2D(2, 3), False, True)]
    fns, cases = [], []
    for n, (b, c2p, p2c) in enumerate(specs):
        h, d = R.randint(1, 3), pick([4, 8, 16])
        name = "disent%d_%s" % (n, bk_id(b))
        fns.append(ir.disentangled_bias(b, None, h, None, None, d, c2p=c2p,
                                        p2c=p2c, name=name))
        for k in range(3 if isinstance(b, Log) else 2):
            B = pick([1, 2])
            lq, lk = [(pick(LENS), pick(LENS)), (pick(LENS_SMALL), pick(LENS_LONG)),
                      (pick(LENS_LONG), pick(LENS))][k]
            cases.append(("%s-%s%s-B%dH%d-%dx%d" % (bk_id(b), "c2p" if c2p else "",
                                                   "p2c" if p2c else "", B, h, lq, lk),
                          name, _disent_make(b, B, h, lq, lk, d, c2p, p2c, "f32")))
    for n, (b, elem) in enumerate(((Log(8, 20), "f16"), (Log(256, 512), "bf16"))):
        name = "disent_static%d" % n
        fns.append(ir.disentangled_bias(b, 1, 2, 9, 11, 8, elem=elem, name=name))
        cases.append(("%s-static-%s" % (bk_id(b), elem), name,
                      _disent_make(b, 1, 2, 9, 11, 8, True, True, elem)))
    for group in chunks(fns, 8):
        mod = ir.merge(*group)
        names = set(f.func_name for f in group)
        for cid, name, make in cases:
            if name in names:
                add("disentangled_bias", cid, mod, name, make)


# -- rpe.attention ------------------------------------------------------------------

class Attn:
    """A configuration of ``rpe.attention`` (runtime sizes and options)."""

    def __init__(self, B, H, Hkv, lq, lk, d, dv, bias=None, kl=False, off=None,
                 rv=None, causal=False, scale=None, elem="f32", zero_rows=True,
                 window=None, lookahead=None):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def tag(self):
        t = "B%dH%dkv%d-%dx%d-D%dDv%d" % (self.B, self.H, self.Hkv, self.lq,
                                         self.lk, self.d, self.dv)
        if self.bias:
            t += "-bias" + "x".join("?" if s is None else str(s) for s in self.bias)
        if self.kl:
            t += "-kl"
        if self.off is not None:
            t += "-off%d" % self.off
        if self.rv is not None:
            t += "-rv_" + bk_id(self.rv)
        if self.causal:
            t += "-causal"
        if self.window is not None:
            t += "-win%d" % self.window
        if self.lookahead is not None:
            t += "-la%d" % self.lookahead
        if self.scale is not None:
            t += "-scale%g" % self.scale
        return t + ("" if self.elem == "f32" else "-" + self.elem)


def _attn_make(c, has_off_arg):
    def make(rng):
        e = c.elem
        q = rand(rng, (c.B, c.H, c.lq, c.d), e, -1.5, 1.5)
        k = rand(rng, (c.B, c.Hkv, c.lk, c.d), e, -1.5, 1.5)
        v = rand(rng, (c.B, c.Hkv, c.lk, c.dv), e)
        args, kw = [q, k, v], {}
        if c.bias is not None:
            full = (c.B, c.H, c.lq, c.lk)[4 - len(c.bias):]
            shape = tuple(1 if s == 1 else f for s, f in zip(c.bias, full))
            bias = rand(rng, shape, e, -2.0, 2.0)
            args.append(bias)
            kw["bias"] = bias
        if c.rv is not None:
            rv = rand(rng, (c.rv.num_buckets, c.dv), e)
            args.append(rv)
            kw.update(rel_values=rv, bucketing=c.rv)
        if c.kl:
            kl = key_lengths(rng, c.B, c.lk, c.zero_rows)
            args.append(kl)
            kw["key_lengths"] = kl
        if c.off is not None:
            if has_off_arg:
                args.append(c.off)
            kw["q_offset"] = c.off
        if c.lk == 0:
            # No keys: every row is fully masked, which gives 0
            # (rpe.reference.attention cannot take a max over Lk = 0).
            want = np.zeros((c.B, c.H, c.lq, c.dv))
        else:
            want = ref.attention(q, k, v, causal=c.causal, scale=c.scale,
                                 window=c.window, lookahead=c.lookahead, **kw)
        return args, want, e, score_atol(q, k, v, c.scale, kw.get("bias"), e)
    return make


def score_atol(q, k, v, scale, bias, elem):
    """The absolute tolerance of an attention output whose scores
    ``scale * q k^T + bias`` are computed in f32 (see the module's
    docstring): 2 u S max|v|, at least the f32 default."""
    rtol, atol = TOL[elem]
    if elem != "f32" or q.size == 0 or k.size == 0 or v.size == 0:
        return atol
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    if scale is None:
        scale = 1.0 / math.sqrt(max(q.shape[-1], 1))
    group = q.shape[1] // k.shape[1]
    scores = scale * np.einsum("bhid,bhjd->bhij", q, np.repeat(k, group, axis=1))
    if bias is not None:
        scores = scores + np.asarray(bias, np.float64)
    magnitude = float(np.abs(scores).max()) * float(np.abs(v).max())
    return max(atol, 2.0 * 2.0 ** -24 * magnitude)


def _attn_func(name, c, dyn, off_arg=True):
    """An ``rpe.attention`` function for configuration ``c``; ``dyn``: the
    set of dims among B H Hkv Lq Lk D Dv written as ``?``."""
    def s(key, v):
        return None if key in dyn else v
    qs = (s("B", c.B), s("H", c.H), s("Lq", c.lq), s("D", c.d))
    ks = (s("B", c.B), s("Hkv", c.Hkv), s("Lk", c.lk), s("D", c.d))
    vs = (s("B", c.B), s("Hkv", c.Hkv), s("Lk", c.lk), s("Dv", c.dv))
    bias = None
    if c.bias is not None:
        full = (qs[0], qs[1], qs[2], ks[2])[4 - len(c.bias):]
        bias = tuple(1 if b == 1 else f for b, f in zip(c.bias, full))
    off = None if c.off is None else (True if off_arg else c.off)
    return ir.attention(qs, ks, vs, bias_shape=bias, key_lengths=c.kl,
                        q_offset=off, rel_values=c.rv, causal=c.causal,
                        scale=c.scale, elem=c.elem, name=name,
                        window=c.window, lookahead=c.lookahead)


def _rand_heads():
    hkv = pick([1, 1, 2, 3])
    return hkv * pick([1, 2, 4]), hkv


def gen_attention():
    fns, cases = [], []

    def variant(name, dyn, confs, off_arg=True):
        fns.append(_attn_func(name, confs[0], dyn, off_arg))
        for c in confs[1:]:   # one function serves every configuration
            assert _attn_func(name, c, dyn, off_arg) == fns[-1], (name, c.tag())
        for c in confs:
            cases.append((name + "-" + c.tag(), name, _attn_make(c, off_arg)))

    ALL = {"B", "H", "Hkv", "Lq", "Lk", "D", "Dv"}
    # Everything dynamic (runtime GQA group size and runtime default scale).
    confs = []
    for _ in range(8):
        H, Hkv = _rand_heads()
        confs.append(Attn(pick([1, 2, 3]), H, Hkv, pick(LENS), pick(LENS),
                          pick([1, 4, 8, 16, 32]), pick([1, 3, 8, 16])))
    variant("attn_dyn", ALL, confs)
    # Dynamic everything + causal + q_offset (also negative: rows fully masked).
    confs = []
    for off in (0, 0, 3, 17, -2, -40):
        H, Hkv = _rand_heads()
        confs.append(Attn(pick([1, 2]), H, Hkv, pick(LENS), pick(LENS), 8, 8,
                          off=off, causal=True))
    confs.append(Attn(1, 2, 2, 5, 300, 8, 8, off=295, causal=True))
    confs.append(Attn(1, 2, 1, 300, 300, 8, 8, off=0, causal=True))
    variant("attn_causal_off", ALL, confs)
    # key_lengths (zero-length rows) with dynamic B and L, GQA static.
    confs = [Attn(B, 4, 2, lq, lk, 16, 8, kl=True) for B, lq, lk in
             ((1, 7, 13), (2, 1, 31), (3, 17, 5), (4, 37, 64), (2, 131, 257))]
    variant("attn_kl", {"B", "Lq", "Lk"}, confs)
    # Rank-3 bias, causal, q_offset argument.
    confs = [Attn(B, 4, 4, lq, lk, 8, 8, bias=(4, None, None), off=off, causal=True)
             for B, lq, lk, off in ((1, 7, 11, 4), (2, 13, 13, 0), (1, 3, 97, 94),
                                    (2, 31, 23, 1))]
    variant("attn_bias3", {"B", "Lq", "Lk"}, confs)
    # Rank-4 bias + key_lengths + GQA.
    confs = [Attn(B, 6, 2, lq, lk, 8, 4, bias=(None, 6, None, None), kl=True)
             for B, lq, lk in ((1, 5, 7), (3, 11, 2), (2, 64, 53))]
    variant("attn_bias4_kl", {"B", "Lq", "Lk"}, confs)
    # Broadcast biases (static 1s).
    confs = [Attn(B, 3, 3, lq, lk, 4, 4, bias=(1, 3, 1, None)) for B, lq, lk in
             ((2, 5, 9), (1, 17, 3))]
    variant("attn_bias_bcast4", {"B", "Lq", "Lk"}, confs)
    confs = [Attn(B, 4, 2, lq, lk, 8, 8, bias=(1, None, None), causal=True)
             for B, lq, lk in ((1, 9, 9), (2, 13, 7))]
    variant("attn_bias_bcast3", {"B", "Lq", "Lk"}, confs)
    # rel_values (Shaw value term) by every family, with options.
    for n, b in enumerate((Clip(4), Clip(0), T5(16, 20, True), T5(8, 12, False),
                           Log(8, 20), Log(0, 5), Window2D(2, 3), Window2D(3, 2))):
        confs = []
        for k in range(3):
            H, Hkv = _rand_heads()
            lq, lk = (pick(LENS), pick(LENS)) if k < 2 else (pick(LENS_SMALL), pick(LENS_LONG))
            confs.append(Attn(pick([1, 2]), H, Hkv, lq, lk, 8, 6, rv=b,
                              off=[0, R.randint(0, 50), pick(OFFSETS)][k],
                              causal=n % 2 == 1, kl=True))
        variant("attn_rv_" + bk_id(b), ALL, confs)
    # Sliding windows (Mistral's: causal, window W): W = 1 (the diagonal
    # only), 5, 100 (past Lk too) and a window without causal; lengths that
    # are multiples of no tile, q_offset (negative: rows with no key; large:
    # decode rows, whose windows start at different keys: no key_lengths
    # there, which could mask them all), key_lengths, GQA. Drawn from no
    # random stream (the other
    # configurations stay as they were); one function per (W, causal), the
    # sizes dynamic, to compile few modules.
    for W, causal, kl, confs in (
            (1, True, False, ((1, 2, 2, 37, 37, 0), (2, 4, 2, 70, 70, 3))),
            (5, True, False, ((2, 4, 2, 70, 70, 0), (1, 3, 1, 131, 131, 0),
                             (1, 4, 4, 5, 300, 295), (2, 8, 2, 1, 131, 130),
                             (2, 4, 1, 64, 97, -10))),
            (100, True, True, ((1, 2, 2, 45, 45, 0), (2, 2, 1, 300, 300, 0))),
            (9, False, True, ((1, 6, 3, 29, 53, 3), (1, 2, 2, 250, 250, 0)))):
        variant("attn_window%d" % W, {"B", "H", "Hkv", "Lq", "Lk"},
                [Attn(B, H, Hkv, lq, lk, 8, 8, off=off, causal=causal,
                      window=W, kl=kl) for B, H, Hkv, lq, lk, off in confs])
    # Lookahead (keys up to A positions ahead): ModernBERT's bidirectional
    # window |i - j| <= A (window A + 1), with A = 3 and 64 (a vector or key
    # tile), and a lookahead alone; q_offset (negative: rows whose first
    # keys are masked; large: decode rows), key_lengths, GQA, lengths that
    # are multiples of no tile. Drawn from no random stream.
    for A, W, kl, confs in (
            (3, 4, False, ((1, 2, 2, 37, 37, 0), (2, 4, 2, 70, 97, -10),
                           (2, 8, 2, 1, 131, 60), (1, 3, 1, 131, 131, 0))),
            (64, 65, True, ((1, 4, 4, 300, 300, 0), (2, 4, 1, 131, 131, 0),
                            (1, 2, 2, 5, 300, 200))),
            (10, None, True, ((1, 6, 3, 29, 53, 3), (1, 2, 2, 250, 250, 0),
                              (2, 4, 2, 3, 200, -5)))):
        variant("attn_lookahead%d" % A, {"B", "H", "Hkv", "Lq", "Lk"},
                [Attn(B, H, Hkv, lq, lk, 8, 8, off=off, window=W, lookahead=A,
                      kl=kl) for B, H, Hkv, lq, lk, off in confs])
    # Explicit scale, static shapes.
    variant("attn_scale", set(), [Attn(2, 2, 2, 5, 7, 8, 8, scale=0.3)])
    variant("attn_scale_dyn", {"Lq", "Lk"}, [Attn(1, 4, 1, 9, 300, 16, 16, scale=2.0),
                                            Attn(1, 4, 1, 23, 3, 16, 16, scale=2.0)])
    # Every option at once.
    confs = []
    for k in range(5):
        H, Hkv = _rand_heads()
        confs.append(Attn(pick([1, 2, 3]), H, Hkv, pick(LENS), pick(LENS + LENS_LONG),
                          8, 8, bias=(None, None, None, None), kl=True,
                          off=pick(OFFSETS[:5]), rv=Clip(3), causal=True,
                          scale=0.4))
    variant("attn_everything", ALL, confs)
    # Static everything, constant q_offset.
    variant("attn_static_off", set(), [Attn(2, 4, 2, 3, 6, 4, 5, bias=(4, 3, 6), kl=True,
                                            off=3, causal=True)], off_arg=False)
    # f16 / bf16.
    variant("attn_f16", {"B", "Lq", "Lk"}, [
        Attn(1, 2, 2, 5, 5, 8, 8, causal=True, elem="f16"),
        Attn(2, 2, 2, 7, 33, 8, 8, causal=True, elem="f16")])
    variant("attn_f16_bias_kl", {"B", "Lq", "Lk"}, [
        Attn(2, 4, 2, 7, 33, 8, 8, bias=(4, None, None), kl=True, elem="f16")])
    variant("attn_bf16", {"B", "Lq", "Lk"}, [
        Attn(1, 2, 2, 3, 5, 4, 4, bias=(2, None, None), elem="bf16")])
    variant("attn_bf16_kl", {"B", "Lq", "Lk"}, [
        Attn(2, 2, 1, 9, 17, 8, 8, bias=(2, None, None), kl=True, elem="bf16")])
    variant("attn_rv_f16", set(), [Attn(1, 2, 1, 6, 9, 8, 4, rv=T5(8, 12, True),
                                        causal=True, off=2, elem="f16")])
    # f16 with D a multiple of 16 and Dv of 8: the GPU path's tensor-core
    # kernel (64-row blocks, 32-key tiles, 16x8x16 contracts); lengths that
    # are multiples of no tile, GQA, causal with q_offset (negative: rows
    # with no key), key_lengths (0 included), rank-3 bias, D = 128 (32-row
    # blocks).
    variant("attn_f16_tc", {"B", "Lq", "Lk"}, [
        Attn(1, 4, 2, 5, 37, 32, 16, causal=True, off=32, kl=True, elem="f16"),
        Attn(2, 4, 2, 70, 70, 32, 16, causal=True, off=0, kl=True, elem="f16"),
        Attn(1, 4, 2, 131, 97, 32, 16, causal=True, off=-20, kl=True, elem="f16"),
        Attn(2, 4, 2, 1, 300, 32, 16, causal=True, off=299, kl=True, elem="f16")])
    # With a window: the tensor-core and register kernels start at the
    # aligned tile of the block's first window start.
    variant("attn_f16_tc_window", {"B", "Lq", "Lk"}, [
        Attn(1, 4, 2, 131, 131, 32, 16, causal=True, off=0, kl=True,
             window=40, elem="f16"),
        Attn(2, 4, 2, 70, 97, 32, 16, causal=True, off=27, kl=True,
             window=40, elem="f16"),
        Attn(1, 4, 2, 3, 300, 32, 16, causal=True, off=297, kl=True,
             window=40, elem="f16")])
    # With a lookahead: the blocks' key ends past their last row, the
    # register kernel's unmasked tiles below the shifted diagonal (q_offset
    # -10: a 64-key tile ends one key past a warp's first row's reach).
    variant("attn_f16_tc_lookahead", {"B", "Lq", "Lk"}, [
        Attn(1, 4, 2, 131, 131, 32, 16, off=0, kl=True, window=41,
             lookahead=40, elem="f16"),
        Attn(2, 4, 2, 70, 97, 32, 16, off=-10, kl=True, window=41,
             lookahead=40, elem="f16")])
    variant("attn_f16_tc_bias", {"B", "Lq", "Lk"}, [
        Attn(2, 3, 3, 33, 65, 16, 8, bias=(3, None, None), elem="f16"),
        Attn(1, 3, 3, 64, 17, 16, 8, bias=(3, None, None), elem="f16")])
    variant("attn_bf16_tc", {"B", "Lq", "Lk"}, [
        Attn(2, 4, 1, 37, 70, 32, 16, causal=True, off=33, kl=True, elem="bf16"),
        Attn(1, 4, 1, 130, 45, 32, 16, causal=True, off=-3, kl=True, elem="bf16")])
    variant("attn_bf16_tc_d256", {"Lq", "Lk"}, [
        Attn(1, 2, 1, 40, 33, 256, 256, causal=True, elem="bf16")])
    variant("attn_f16_tc_wide", {"Lq", "Lk"}, [
        Attn(1, 2, 1, 45, 77, 128, 128, causal=True, elem="f16"),
        Attn(1, 2, 1, 150, 200, 128, 128, causal=True, elem="f16")])
    # Empty key / query sequences.
    variant("attn_empty", ALL, [Attn(1, 2, 2, 4, 0, 8, 8), Attn(2, 2, 1, 0, 5, 8, 8)])
    # ... with static sizes (a static 0 in k's shape made the vector kernel's
    # read-only buffer an invalid allocation), GQA, key_lengths, causal.
    variant("attn_empty_static_k", set(), [Attn(1, 4, 2, 4, 0, 8, 8, kl=True,
                                                causal=True)])
    variant("attn_empty_static_q", set(), [Attn(2, 2, 1, 0, 5, 8, 8)])
    variant("attn_empty_static_qk", set(), [Attn(1, 2, 2, 0, 0, 8, 8)])
    # q_offset near the int64 bounds, causal (nothing masked / everything
    # masked), with rel_values and key_lengths: clamped to +-2^62, so the
    # fused kernels' positions (row + q_offset, Lk - 1 - q_offset) do not
    # wrap (they did: wrong rows for 2^63 - 1).
    variant("attn_off_extreme", ALL, [
        Attn(1, 2, 1, 5, 9, 8, 8, off=off, causal=True, rv=Clip(3), kl=True)
        for off in (2 ** 63 - 1, 2 ** 63 - 3, 2 ** 62 + 5, -2 ** 63,
                    -2 ** 62 - 5)])
    # D = 0: empty dot products, a uniform softmax (the default scale is
    # 1/sqrt(max(D, 1)); the reference lowering gave inf · 0 = nan).
    variant("attn_d0", set(), [Attn(1, 2, 1, 5, 7, 0, 4, causal=True)])
    variant("attn_d0_dyn", {"D", "Lk"}, [Attn(2, 2, 2, 3, 6, 0, 3),
                                       Attn(2, 2, 2, 3, 1, 5, 3)])

    for group in chunks(fns, 8):
        mod = ir.merge(*group)
        names = set(f.func_name for f in group)
        for cid, name, make in cases:
            if name in names:
                add("attention", cid, mod, name, make)


# -- Layers ------------------------------------------------------------------------

def _qkv(rng, B, H, Hkv, lq, lk, d, dv, elem):
    q = rand(rng, (B, H, lq, d), elem, -1.5, 1.5)
    k = rand(rng, (B, Hkv, lk, d), elem, -1.5, 1.5)
    v = rand(rng, (B, Hkv, lk, dv), elem)
    return q, k, v


class Layer:
    def __init__(self, B, H, Hkv, lq, lk, d, dv=None, kl=False, off=None,
                 causal=False, window=None, lookahead=None):
        self.B, self.H, self.Hkv, self.lq, self.lk = B, H, Hkv, lq, lk
        self.d, self.dv = d, d if dv is None else dv
        self.kl, self.off, self.causal = kl, off, causal
        self.window, self.lookahead = window, lookahead

    def tag(self):
        t = "B%dH%dkv%d-%dx%d-D%d" % (self.B, self.H, self.Hkv, self.lq, self.lk, self.d)
        if self.kl:
            t += "-kl"
        if self.off is not None:
            t += "-off%d" % self.off
        if self.causal:
            t += "-causal"
        if self.window is not None:
            t += "-win%d" % self.window
        if self.lookahead is not None:
            t += "-la%d" % self.lookahead
        return t


def _rba_make(b, c, scale, elem):
    def make(rng):
        q, k, v = _qkv(rng, c.B, c.H, c.Hkv, c.lq, c.lk, c.d, c.dv, elem)
        table = rand(rng, (b.num_buckets, c.H), elem, -2.0, 2.0)
        args, kw = [q, k, v, table], {}
        if c.kl:
            kw["key_lengths"] = key_lengths(rng, c.B, c.lk)
            args.append(kw["key_lengths"])
        off = 0
        if c.off is not None:
            off = c.off
            args.append(off)
        bias = as_elem(ref.relative_bias(table, c.lq, c.lk, b, q_offset=off), elem)
        want = ref.attention(q, k, v, bias=bias, q_offset=off, causal=c.causal,
                             scale=scale, window=c.window,
                             lookahead=c.lookahead, **kw)
        return args, want, elem
    return make


def gen_relative_bias_attention():
    fns, cases = [], []
    specs = [  # (bucketing, heads, kv_heads, head_dim, causal, kl, q_offset)
        (Clip(4), 4, 2, 8, False, True, False),
        (Clip(0), 2, 2, 8, True, False, True),
        (T5(32, 128, True), 4, 4, 16, False, True, False),
        (T5(32, 128, False), 4, 1, 8, True, True, True),
        (T5(8, 12, True), 2, 2, 8, False, False, True),
        (Log(256, 512), 3, 3, 8, False, True, False),
        (Log(8, 20), 4, 2, 4, True, False, True),
        (Log(0, 5), 2, 1, 8, False, True, True),
        (Window2D(2, 3), 2, 2, 8, False, True, True),   # lengths beyond the window
        (Window2D(7, 7), 3, 3, 8, True, False, False),
        # Widths that are multiples of the CPU kernel's vector width (8, 16):
        # its rows read the window table as contiguous vectors.
        (Window2D(3, 16), 2, 1, 8, True, True, False),
        (Window2D(5, 8), 2, 2, 8, False, False, True),
    ]
    for b, H, Hkv, d, causal, kl, off in specs:
        name = "rba_" + bk_id(b)
        fns.append(ir.relative_bias_attention(
            b, batch=None, heads=H, kv_heads=Hkv, lq=None, lk=None, head_dim=d,
            causal=causal, key_lengths=kl, q_offset=off or None, name=name))
        shapes = [(pick([1, 2]), pick(LENS), pick(LENS)),
                  (pick([1, 2]), pick(LENS), pick(LENS)),
                  (1, pick(LENS_SMALL + [300]), pick(LENS_LONG))]
        if isinstance(b, Window2D) and b.wh == 7:
            shapes[0] = (2, 49, 49)
        for B, lq, lk in shapes:
            o = pick(OFFSETS) if off else None
            c = Layer(B, H, Hkv, lq, lk, d, kl=kl, off=o, causal=causal)
            cases.append(("relative_bias_attention", bk_id(b) + "-" + c.tag(), name,
                          _rba_make(b, c, None, "f32")))
    # T5 attention (scale 1): static and dynamic.
    fns.append(ir.t5_attention(batch=1, heads=2, lq=5, lk=7, head_dim=4, name="t5_static"))
    c = Layer(1, 2, 2, 5, 7, 4)
    cases.append(("t5_attention", "static-" + c.tag(), "t5_static",
                  _rba_make(T5(32, 128, True), c, 1.0, "f32")))
    fns.append(ir.t5_attention(16, 24, False, batch=None, heads=4, lq=None, lk=None,
                               head_dim=8, causal=True, q_offset=True, name="t5_decoder"))
    for B, lq, lk, o in ((2, 1, 300, 299), (1, 37, 37, 0), (1, 16, 64, 48)):
        c = Layer(B, 4, 4, lq, lk, 8, off=o, causal=True)
        cases.append(("t5_attention", "decoder-" + c.tag(), "t5_decoder",
                      _rba_make(T5(16, 24, False), c, 1.0, "f32")))
    # T5 decoder with a sliding window: the T5 diagonal tabulated and read
    # only in the window's band.
    fns.append(ir.t5_attention(32, 128, False, batch=None, heads=4, kv_heads=2,
                               lq=None, lk=None, head_dim=8, causal=True,
                               q_offset=True, key_lengths=True, window=50,
                               name="t5_window"))
    for B, lq, lk, o in ((2, 1, 300, 299), (1, 131, 131, 0), (2, 37, 97, 60)):
        c = Layer(B, 4, 2, lq, lk, 8, kl=True, off=o, causal=True, window=50)
        cases.append(("t5_attention", "window-" + c.tag(), "t5_window",
                      _rba_make(T5(32, 128, False), c, 1.0, "f32")))
    # A bidirectional T5 encoder with ModernBERT's local window (|i - j| <=
    # 40): both halves of the T5 diagonal, read only in the band.
    fns.append(ir.t5_attention(32, 128, True, batch=None, heads=4, lq=None,
                               lk=None, head_dim=8, key_lengths=True,
                               window=41, lookahead=40, name="t5_local"))
    for B, lq, lk in ((2, 131, 131), (1, 300, 300), (1, 7, 200)):
        c = Layer(B, 4, 4, lq, lk, 8, kl=True, window=41, lookahead=40)
        cases.append(("t5_attention", "local-" + c.tag(), "t5_local",
                      _rba_make(T5(32, 128, True), c, 1.0, "f32")))
    # Swin window attention (static windows).
    for n, (wh, ww, H, d, elem, Bs) in enumerate(((7, 7, 3, 8, "f32", (1, 4)),
                                                  (2, 3, 2, 8, "f32", (3,)),
                                                  (3, 16, 2, 8, "f32", (2,)),
                                                  (2, 32, 2, 16, "f32", (1,)),
                                                  (4, 4, 2, 8, "f16", (2,)),
                                                  (2, 2, 4, 4, "bf16", (2,)))):
        name = "swin%d" % n
        fns.append(ir.swin_window_attention(wh, ww, batch=None, heads=H, head_dim=d,
                                            elem=elem, name=name))
        for B in Bs:
            c = Layer(B, H, H, wh * ww, wh * ww, d)
            cases.append(("swin_window_attention",
                          "%dx%d-%s-%s" % (wh, ww, elem, c.tag()), name,
                          _rba_make(Window2D(wh, ww), c, None, elem)))
    # Reduced precision relative-bias attention.
    for elem in ("f16", "bf16"):
        name = "rba_%s" % elem
        b = T5(8, 12, True)
        fns.append(ir.relative_bias_attention(b, batch=None, heads=2, kv_heads=1,
                                              lq=None, lk=None, head_dim=8,
                                              causal=True, key_lengths=True,
                                              elem=elem, name=name))
        c = Layer(2, 2, 1, 9, 21, 8, kl=True, causal=True)
        cases.append(("relative_bias_attention", "%s-%s-%s" % (bk_id(b), elem, c.tag()),
                      name, _rba_make(b, c, None, elem)))
    # f16 / bf16 T5 and Swin attention with D = 16 and 32: the GPU path's
    # tensor-core kernel with the Toeplitz table in its score step.
    fns.append(ir.relative_bias_attention(T5(32, 128, True), batch=None, heads=2,
                                          lq=None, lk=None, head_dim=16,
                                          key_lengths=True, elem="bf16",
                                          name="rba_t5_bf16_tc"))
    c = Layer(2, 2, 2, 50, 77, 16, kl=True)
    cases.append(("relative_bias_attention", "t5-bf16-tc-" + c.tag(), "rba_t5_bf16_tc",
                  _rba_make(T5(32, 128, True), c, None, "bf16")))
    fns.append(ir.relative_bias_attention(T5(32, 128, False), batch=None, heads=4,
                                          kv_heads=2, lq=None, lk=None, head_dim=32,
                                          causal=True, key_lengths=True, q_offset=True,
                                          elem="f16", name="rba_t5_f16_tc"))
    for B, lq, lk, o in ((2, 19, 83, 64), (1, 130, 130, 0)):
        c = Layer(B, 4, 2, lq, lk, 32, kl=True, off=o, causal=True)
        cases.append(("relative_bias_attention", "t5-f16-tc-" + c.tag(), "rba_t5_f16_tc",
                      _rba_make(T5(32, 128, False), c, None, "f16")))
    fns.append(ir.swin_window_attention(4, 4, batch=None, heads=2, head_dim=16,
                                        elem="f16", name="swin_f16_tc"))
    c = Layer(3, 2, 2, 16, 16, 16)
    cases.append(("swin_window_attention", "4x4-f16-tc-" + c.tag(), "swin_f16_tc",
                  _rba_make(Window2D(4, 4), c, None, "f16")))
    for group in chunks(fns, 8):
        mod = ir.merge(*group)
        names = set(f.func_name for f in group)
        for op, cid, name, make in cases:
            if name in names:
                add(op, cid, mod, name, make)


def _alibi_attn_make(c, symmetric, slopes, elem):
    def make(rng):
        q, k, v = _qkv(rng, c.B, c.H, c.Hkv, c.lq, c.lk, c.d, c.dv, elem)
        args, kw = [q, k, v], {}
        if c.kl:
            # Non-zero lengths keep the last 16 keys (see gen_alibi_attention).
            kw["key_lengths"] = key_lengths(rng, c.B, c.lk, lo=c.lk - 16)
            args.append(kw["key_lengths"])
        off = c.off or 0
        if c.off is not None:
            args.append(off)
        bias = as_elem(ref.alibi(c.H, c.lq, c.lk, slopes=slopes, symmetric=symmetric,
                                 q_offset=off), elem)
        want = ref.attention(q, k, v, bias=bias, q_offset=off, causal=c.causal, **kw)
        return args, want, elem
    return make


def gen_alibi_attention():
    fns, cases = [], []
    specs = [  # name, H, Hkv, symmetric, slopes, causal, kl, off, elem
        ("alibi_attn_sym", 4, 4, True, None, False, True, False, "f32"),
        ("alibi_attn_causal", 8, 2, False, None, True, True, True, "f32"),
        ("alibi_attn_h6", 6, 3, False, None, True, False, True, "f32"),
        ("alibi_attn_slopes", 3, 1, True, [0.5, 0.125, 0.03125], False, False, False, "f32"),
        ("alibi_attn_f16", 4, 2, False, None, True, True, False, "f16"),
    ]
    for name, H, Hkv, sym, slopes, causal, kl, off, elem in specs:
        fns.append(ir.alibi_attention(batch=None, heads=H, kv_heads=Hkv, lq=None,
                                      lk=None, head_dim=8, symmetric=sym,
                                      slopes=slopes, causal=causal, key_lengths=kl,
                                      q_offset=off or None, elem=elem, name=name))
        shapes = [(pick([1, 2]), pick(LENS), pick(LENS)),
                  (1, pick(LENS_SMALL), pick(LENS_LONG)),
                  (2, pick(LENS_LONG), pick(LENS_LONG))]
        for B, lq, lk in (shapes if elem == "f32" else shapes[:2]):
            # Keys include the queries' positions (self-attention / decoding
            # with a cache): lq <= lk and q_offset in [0, lk - lq].  Query
            # positions far beyond every key would give every score of a row
            # a large ALiBi term (-m*distance), where f32 scores themselves
            # cannot be accurate to 1e-5 (the op alone is tested with such
            # distances above).  For the same reason key_lengths that are
            # not 0 keep at least the keys within 16 positions of the end:
            # a row whose every remaining key is ~150 positions away has
            # scores ~ -75 (m = 1/2), whose f32 rounding alone moves the
            # output by ~2e-6 (observed: 1.4x the f32 tolerance, matching
            # an emulation of f32 scores).
            lq, lk = min(lq, lk), max(lq, lk)
            o = (lk - lq if R.random() < 0.5 else R.randint(0, lk - lq)) if off else None
            c = Layer(B, H, Hkv, lq, lk, 8, kl=kl, off=o, causal=causal)
            cases.append((name + "-" + c.tag(), name, _alibi_attn_make(c, sym, slopes, elem)))
    mod = ir.merge(*fns)
    for cid, name, make in cases:
        add("alibi_attention", cid, mod, name, make)


def _rope_attn_make(c, bpos, pdt, theta, rd, inter, elem):
    def make(rng):
        q, k, v = _qkv(rng, c.B, c.H, c.Hkv, c.lq, c.lk, c.d, c.dv, elem)
        off = c.off or 0
        pre = (c.B,) if bpos else ()
        qp = (np.arange(c.lq) + off + rng.integers(0, 1000, size=pre + (1,))).astype(pdt) \
            if bpos else (np.arange(c.lq) + off).astype(pdt)
        kp = (np.arange(c.lk) + rng.integers(0, 1000, size=pre + (1,))).astype(pdt) \
            if bpos else np.arange(c.lk).astype(pdt)
        if bpos:
            qp = np.broadcast_to(qp, pre + (c.lq,)).copy()
            kp = np.broadcast_to(kp, pre + (c.lk,)).copy()
        args, kw = [q, k, v, qp, kp], {}
        if c.kl:
            kw["key_lengths"] = key_lengths(rng, c.B, c.lk)
            args.append(kw["key_lengths"])
        if c.off is not None:
            args.append(off)
        th = 10000.0 if theta is None else theta
        qr = as_elem(ref.rotary(q, qp, theta=th, rotary_dim=rd, interleaved=inter), elem)
        kr = as_elem(ref.rotary(k, kp, theta=th, rotary_dim=rd, interleaved=inter), elem)
        want = ref.attention(qr, kr, v, q_offset=off, causal=c.causal, **kw)
        return args, want, elem
    return make


def gen_rope_attention():
    fns, cases = [], []
    specs = [  # name, H, Hkv, d, bpos, pos dtype, theta, rotary_dim, interleaved, causal, kl, off, elem
        ("rope_llama", 4, 4, 16, False, np.int64, None, None, False, True, False, True, "f32"),
        ("rope_gqa", 8, 2, 8, False, np.int64, 5.0e5, None, False, True, True, True, "f32"),
        ("rope_gptj", 2, 2, 16, True, np.int32, None, 8, True, False, True, False, "f32"),
        ("rope_partial", 3, 1, 12, True, np.int64, 1000.0, 4, False, True, False, True, "f32"),
        ("rope_bf16", 2, 1, 8, False, np.int64, None, None, False, True, False, False, "bf16"),
    ]
    for name, H, Hkv, d, bpos, pdt, theta, rd, inter, causal, kl, off, elem in specs:
        fns.append(ir.rope_attention(batch=None, heads=H, kv_heads=Hkv, lq=None, lk=None,
                                     head_dim=d, batch_positions=bpos,
                                     pos_elem="i32" if pdt == np.int32 else "i64",
                                     theta=theta, rotary_dim=rd, interleaved=inter,
                                     causal=causal, key_lengths=kl,
                                     q_offset=off or None, elem=elem, name=name))
        shapes = [(pick([1, 2]), pick(LENS), pick(LENS)),
                  (1, pick(LENS_SMALL), pick(LENS_LONG)),
                  (2, pick(LENS), pick(LENS))]
        for B, lq, lk in (shapes if elem == "f32" else shapes[:2]):
            o = (max(lk - lq, 0) if R.random() < 0.5 else pick(OFFSETS)) if off else None
            c = Layer(B, H, Hkv, lq, lk, d, kl=kl, off=o, causal=causal)
            cases.append((name + "-" + c.tag(), name,
                          _rope_attn_make(c, bpos, pdt, theta, rd, inter, elem)))
    mod = ir.merge(*fns)
    for cid, name, make in cases:
        add("rope_attention", cid, mod, name, make)


def _shaw_attn_make(b, c, values, elem):
    def make(rng):
        q, k, v = _qkv(rng, c.B, c.H, c.Hkv, c.lq, c.lk, c.d, c.dv, elem)
        ek = rand(rng, (b.num_buckets, c.d), elem)
        args, kw = [q, k, v, ek], {}
        if values:
            ev = rand(rng, (b.num_buckets, c.dv), elem)
            args.append(ev)
            kw.update(rel_values=ev, bucketing=b)
        if c.kl:
            kw["key_lengths"] = key_lengths(rng, c.B, c.lk)
            args.append(kw["key_lengths"])
        s = 1.0 / math.sqrt(c.d)
        # The function scales emb_k by f32(s) in f32, rounded to elem.
        eks = as_elem(np.float32(ek.astype(np.float32)) * np.float32(s), elem)
        logits = as_elem(ref.shaw_logits(q, eks, c.lk, b), elem)
        want = ref.attention(q, k, v, bias=logits, causal=c.causal, scale=s, **kw)
        return args, want, elem
    return make


def gen_shaw_attention():
    fns, cases = [], []
    specs = [  # bucketing, H, Hkv, d, dv, values, causal, kl, elem
        (Clip(4), 2, 2, 8, 8, True, False, False, "f32"),
        (Clip(2), 4, 2, 8, 6, True, True, True, "f32"),
        (T5(16, 20, True), 2, 1, 8, 8, False, False, True, "f32"),
        (Log(8, 20), 3, 3, 4, 4, True, True, False, "f32"),
        (Window2D(2, 2), 2, 2, 8, 8, True, False, True, "f32"),
        (Clip(3), 2, 2, 8, 8, True, True, True, "f16"),
    ]
    for b, H, Hkv, d, dv, values, causal, kl, elem in specs:
        name = "shaw_attn_%s_%s" % (bk_id(b), elem)
        fns.append(ir.shaw_attention(b, batch=None, heads=H, kv_heads=Hkv, lq=None,
                                     lk=None, head_dim=d, value_dim=dv, values=values,
                                     causal=causal, key_lengths=kl, elem=elem, name=name))
        shapes = [(pick([1, 2]), pick(LENS), pick(LENS)),
                  (1, pick(LENS_SMALL), pick(LENS_LONG))]
        for B, lq, lk in shapes:
            c = Layer(B, H, Hkv, lq, lk, d, dv, kl=kl, causal=causal)
            cases.append((name + "-" + c.tag(), name, _shaw_attn_make(b, c, values, elem)))
    mod = ir.merge(*fns)
    for cid, name, make in cases:
        add("shaw_attention", cid, mod, name, make)


def _deberta_make(b, c, c2p, p2c, elem):
    def make(rng):
        q, k, v = _qkv(rng, c.B, c.H, c.H, c.lq, c.lk, c.d, c.dv, elem)
        pq = rand(rng, (c.H, b.num_buckets, c.d), elem)
        pk = rand(rng, (c.H, b.num_buckets, c.d), elem)
        args, kw = [q, k, v, pq, pk], {}
        if c.kl:
            kw["key_lengths"] = key_lengths(rng, c.B, c.lk)
            args.append(kw["key_lengths"])
        s = ir.deberta_scale(c.d, c2p, p2c)
        pqs = as_elem(pq.astype(np.float32) * np.float32(s), elem)
        pks = as_elem(pk.astype(np.float32) * np.float32(s), elem)
        bias = as_elem(ref.disentangled_bias(q, k, pqs, pks, b, c2p=c2p, p2c=p2c), elem)
        want = ref.attention(q, k, v, bias=bias, causal=c.causal, scale=s,
                             window=c.window, lookahead=c.lookahead, **kw)
        return args, want, elem
    return make


def gen_deberta_attention():
    fns, cases = [], []
    specs = [  # bucketing, H, d, c2p, p2c, causal, kl, elem
        (Log(256, 512), 2, 16, True, True, False, True, "f32"),
        (Log(8, 20), 3, 8, True, False, False, False, "f32"),
        (Log(8, 20), 2, 8, False, True, True, True, "f32"),
        (Log(0, 5), 2, 8, True, True, False, False, "f32"),
        (Log(4, 4), 1, 4, True, True, True, False, "f32"),
        (Log(8, 20), 2, 8, True, True, False, True, "bf16"),
        (Log(256, 512), 2, 16, True, True, True, False, "f32"),
    ]
    for n, (b, H, d, c2p, p2c, causal, kl, elem) in enumerate(specs):
        name = "deberta%d_%s_%s" % (n, bk_id(b), elem)
        fns.append(ir.deberta_attention(b, batch=None, heads=H, lq=None, lk=None,
                                        head_dim=d, c2p=c2p, p2c=p2c, causal=causal,
                                        key_lengths=kl, elem=elem, name=name))
        shapes = [(pick([1, 2]), pick(LENS), pick(LENS)),
                  (1, pick(LENS_SMALL), pick(LENS_LONG))]
        if b.num_buckets >= 128:
            # The CPU pipeline computes c2p per block of 2048 query rows
            # (rpe-split-attention-heads), p2c per block for the keys of
            # its band, and both only for the buckets of the block's
            # distances (bucket-columns): all 512 buckets, the lower ones
            # only (Lk > Lq), and two blocks, the last partial, whose
            # rows see only the saturated bucket (i - j >= 1749 > 512).
            shapes.append((1, 1100, pick([700, 1300])))
            shapes.append((1, 300, 2100))
            shapes.append((1, 2100, 300))
        for B, lq, lk in shapes:
            c = Layer(B, H, H, lq, lk, d, kl=kl, causal=causal)
            cases.append((name + "-" + c.tag(), name, _deberta_make(b, c, c2p, p2c, elem)))
    # Causal DeBERTa with a sliding window (the tables cover the keys of the
    # blocks' bands).
    name = "deberta_window"
    b = Log(256, 512)
    fns.append(ir.deberta_attention(b, batch=None, heads=2, lq=None, lk=None,
                                    head_dim=16, causal=True, key_lengths=True,
                                    window=70, name=name))
    for B, lq, lk in ((2, 131, 131), (1, 300, 2100), (1, 2100, 2100)):
        c = Layer(B, 2, 2, lq, lk, 16, kl=True, causal=True, window=70)
        cases.append((name + "-" + c.tag(), name,
                      _deberta_make(b, c, True, True, "f32")))
    # DeBERTa encoder with a bidirectional window |i - j| <= 60.
    name = "deberta_local"
    fns.append(ir.deberta_attention(b, batch=None, heads=2, lq=None, lk=None,
                                    head_dim=16, window=61, lookahead=60,
                                    name=name))
    for B, lq, lk in ((2, 131, 131), (1, 2100, 2100)):
        c = Layer(B, 2, 2, lq, lk, 16, window=61, lookahead=60)
        cases.append((name + "-" + c.tag(), name,
                      _deberta_make(b, c, True, True, "f32")))
    mod = ir.merge(*fns)
    for cid, name, make in cases:
        add("deberta_attention", cid, mod, name, make)


for _gen in (gen_bucket, gen_relative_bias, gen_alibi, gen_rotary, gen_shaw,
             gen_disentangled, gen_attention, gen_relative_bias_attention,
             gen_alibi_attention, gen_rope_attention, gen_shaw_attention,
             gen_deberta_attention):
    _gen()


# ---------------------------------------------------------------------------
# Compilation cache, error record, the test
# ---------------------------------------------------------------------------

_COMPILED = {}


# Modules with rpe.attention run through three lowerings: the default fused
# and tiled kernel (64x64 tiles), the same kernel with 5x7 tiles (many
# ragged tiles, skipped causal and key_lengths tiles), and the unfused
# reference path. Other ops have one lowering.
PATHS = {
    "fused": {},
    "tiles5x7": {"tile_q": 5, "tile_k": 7},
    "reference": {"reference": True},
    # Two OpenMP threads: rpe-split-attention-heads runs attentions with
    # per-head gather tables (DeBERTa, Shaw) with their heads in parallel
    # when the heads split evenly (H = 2), else one head after another
    # with the threads inside it (H = 1, 3); modules without such tables
    # stay out of this path (see paths_for).
    "threads": {"num_threads": 2},
    # The kernels rpe-nvptx-pipeline builds (SIMT attention, one thread per
    # element elsewhere), one thread per block, run on the CPU.
    "gpu": {"target": "nvptx-emulated"},
    # f16 / bf16 attention: the register-resident tensor-core kernel
    # (FlashAttention-2 form), its lanes emulated; small blocks and tiles
    # (two 16-row tiles per warp, 16 keys) for many ragged ones.
    "gpu-registers": {"target": "nvptx-emulated",
                      "gpu_kernel_options":
                      "mma-registers=1 mma-block-rows=32 mma-tile-k=16"},
}
# On a machine with an NVIDIA GPU, scripts/test-gpu.sh sets RPE_TEST_CUDA=1:
# every configuration also runs through rpe-nvptx-pipeline on the GPU
# (RPE_TEST_CUDA_CHIP, default sm_80).
if os.environ.get("RPE_TEST_CUDA"):
    PATHS["cuda"] = {"target": "cuda",
                     "chip": os.environ.get("RPE_TEST_CUDA_CHIP", "sm_80")}
    PATHS["cuda-registers"] = dict(PATHS["cuda"],
                                   gpu_kernel_options="mma-registers=1")


# RPE_DIFF_SKIP_PATHS=a,b leaves lowering paths out (the sanitized CI stage
# leaves out "gpu" and "reference", which stage 1 runs: they would add
# minutes of compilation under ASan; the GPU passes also run there through
# lit and the model tests).
for _skipped in filter(None, os.environ.get("RPE_DIFF_SKIP_PATHS", "").split(",")):
    PATHS.pop(_skipped, None)


_REGISTER_PATHS = ("gpu-registers", "cuda-registers")


def paths_for(case):
    if "rpe.attention" in case.module:
        # The register kernel takes 16-bit attention only.
        sixteen = re.search(r"x(b?)f16>", case.module)
        tables = re.search(r"rpe\.(disentangled_bias|shaw_logits)", case.module)
        return [p for p in PATHS if (sixteen or p not in _REGISTER_PATHS)
                and (tables or p != "threads")]
    return [p for p in PATHS if p in ("fused", "gpu", "cuda")]


def compiled(text, path="fused"):
    """rpe.compile(text) for a lowering path, once per (text, path); a
    failure is remembered and re-raised for every configuration of it."""
    key = (text, path)
    if key not in _COMPILED:
        try:
            _COMPILED[key] = rpe.compile(text, **dict({"target": "cpu"}, **PATHS[path]))
        except Exception as e:  # noqa: BLE001 - re-raised per configuration
            _COMPILED[key] = e
    mod = _COMPILED[key]
    if isinstance(mod, Exception):
        raise mod
    return mod


class ErrorLog:
    def __init__(self):
        self.ops = {}

    def record(self, op, elem, cid, got, want, rtol, atol):
        key = op if elem in ("f32", "int") else "%s[%s]" % (op, elem)
        e = self.ops.setdefault(key, {"configurations": 0, "max_abs_error": 0.0,
                                      "max_scaled_error": 0.0,
                                      "max_tolerance_used": 0.0, "worst": None})
        e["configurations"] += 1
        if got.shape != want.shape or want.size == 0:
            return
        err = np.abs(np.asarray(got, np.float64) - want)
        peak = float(np.abs(want).max())
        mabs = float(err.max())
        used = float((err / (atol + rtol * np.abs(want))).max()) if (atol or rtol) \
            else float(mabs > 0)
        e["max_abs_error"] = max(e["max_abs_error"], mabs)
        if peak > 0:
            e["max_scaled_error"] = max(e["max_scaled_error"], mabs / peak)
        if used >= e["max_tolerance_used"]:
            e["max_tolerance_used"], e["worst"] = used, cid


_LOG = ErrorLog()


@pytest.fixture(scope="session", autouse=True)
def _error_summary(request):
    yield
    if not _LOG.ops:
        return
    path = os.environ.get("RPE_DIFF_ERRORS")
    if not path:
        cache = getattr(request.config, "cache", None)   # None with -p no:cacheprovider
        folder = str(cache.mkdir("rpe")) if cache is not None else tempfile.gettempdir()
        path = os.path.join(folder, "differential_errors.json")
    with open(path, "w") as f:
        json.dump({"seed": SEED, "ops": _LOG.ops}, f, indent=1, sort_keys=True)
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["", "largest observed errors per op (compiled vs rpe.reference):",
             "%-28s %5s %12s %12s %9s" % ("op", "n", "max |err|", "|err|/max|w|",
                                          "tol used")]
    for op in sorted(_LOG.ops):
        e = _LOG.ops[op]
        lines.append("%-28s %5d %12.3e %12.3e %9.3f" % (
            op, e["configurations"], e["max_abs_error"], e["max_scaled_error"],
            e["max_tolerance_used"]))
    lines.append("written to %s" % path)
    capman = request.config.pluginmanager.get_plugin("capturemanager")
    if tr is not None and capman is not None:
        with capman.global_and_fixture_disabled():
            for line in lines:
                tr.write_line(line)
    else:  # pragma: no cover
        print("\n".join(lines))


def _compile_group(case, path):
    """The configurations that share a compiled module (one (text, path)),
    as one xdist group: run with ``--dist loadgroup`` (scripts/run-suite.sh),
    pytest-xdist sends them to one worker, which compiles the module once
    (with plain ``-n``, every worker that gets one of them compiles it)."""
    key = "%s\0%s" % (path, case.module)
    return pytest.mark.xdist_group("differential-%08x"
                                   % zlib.crc32(key.encode()))


def _params():
    return [pytest.param(c, path, id=c.id if path == "fused"
                         else "%s-%s" % (c.id, path),
                         marks=list(c.marks) + [_compile_group(c, path)])
            for c in CASES for path in paths_for(c)]


_PAGE = mmap.PAGESIZE
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def guarded(a):
    """A copy of array `a` that ends where an inaccessible page begins: a
    compiled kernel that reads past the end of an input faults (SIGSEGV)
    instead of reading the neighbour's data. The generated code is not
    instrumented, so this is what catches its out-of-bounds reads (in the
    sanitized configuration too)."""
    if not isinstance(a, np.ndarray) or a.nbytes == 0:
        return a
    a = np.ascontiguousarray(a)
    pages = -(-a.nbytes // _PAGE)
    m = mmap.mmap(-1, (pages + 1) * _PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    if _LIBC.mprotect(base + pages * _PAGE, _PAGE, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed")
    out = np.frombuffer(m, dtype=a.dtype, count=a.size,
                        offset=pages * _PAGE - a.nbytes).reshape(a.shape)
    out[...] = a
    return out


def test_guarded_arrays_fault_past_the_end():
    """The guard page is really there (in a child process, which dies)."""
    code = ("import numpy as np, sys; sys.path.insert(0, %r); "
            "from test_differential import guarded; "
            "g = guarded(np.zeros(3, np.float32)); "
            "import ctypes; ctypes.c_float.from_address("
            "g.ctypes.data + 12).value" % os.path.dirname(__file__))
    result = subprocess.run([sys.executable, "-c", code],
                            env=dict(os.environ, ASAN_OPTIONS="handle_segv=0"),
                            capture_output=True)
    assert result.returncode == -11, result


@pytest.mark.parametrize("case,path", _params())
def test_differential(case, path):
    mod = compiled(case.module, path)
    rng = np.random.default_rng(case.seed)
    made = case.make(rng)
    args, want, elem = made[:3]
    got = getattr(mod, case.func)(*[guarded(a) for a in args])
    assert isinstance(got, np.ndarray), type(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol, atol = TOL[elem]
    if len(made) > 3:
        atol = made[3]
    if not case.marks:
        _LOG.record(case.op, elem, case.id, got, want.astype(np.float64), rtol, atol)
    if elem == "int":
        bad = np.nonzero(got != want)[0]
        assert bad.size == 0, "%d of %d buckets differ; first (i, j, got, want): %s" % (
            bad.size, got.size, [(int(args[0][n]), int(args[1][n]), int(got[n]),
                                  int(want[n])) for n in bad[:5]])
        return
    assert np.all(np.isfinite(got)), "non-finite values in the compiled result"
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol,
                               atol=atol, err_msg=case.id)


def test_configuration_count():
    """The suite covers at least 300 configurations (besides the expected
    failures) and every op."""
    ops = {c.op for c in CASES if not c.marks}
    assert len([c for c in CASES if not c.marks]) >= 300
    for op in ("bucket", "relative_bias", "alibi", "rotary", "shaw_logits",
               "shaw_values", "disentangled_bias", "attention"):
        assert op in ops, op
