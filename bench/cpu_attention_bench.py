#!/usr/bin/env python3
"""CPU attention, side by side in one run: rpe's vector kernel with every RPE
kind against PyTorch's scaled_dot_product_attention (bias-free and with a
float T5 mask), FlexAttention with a T5 score_mod (torch.compile), the seed's
eager module, and the machine's FMA peak.

fp32, B=1, H=8, D=64, 2 threads, L in {256, ..., 8192}; every (implementation,
L) runs in a fresh child process that builds the model, allocates inputs,
warms up, then times --repeats calls (median) and records the peak resident
memory during them above the level after the warm-up (freed memory trimmed
back to the system first), minus the output ("extra"); for rpe above the
level before the warm-up, since its libraries keep freed temporaries for
the next call (and compile before it).
Decode shapes (--decode): B=8, H=32, Hkv=8, D=128, Lq in {1, 4, 16} against
Lk in {1024, 8192} with q_offset = Lk - Lq, causal, rpe vs SDPA (GQA, mask
aligned to the bottom right).

    python3 bench/cpu_attention_bench.py [--lengths 256,...] [--repeats 5]
        [--impls a,b,...] [--no-decode] [--json out.json] [--plot out.png]
        [--markdown out.md] [--isa avx2] [--window W]
    python3 bench/cpu_attention_bench.py --interleave ROUNDS
        [--impls rpe_...] [--lengths ...] [--baseline-library old/librpe-c.so]
        [--baseline-env VAR=VALUE]

--interleave measures rpe against itself in one process (every
implementation compiled once, called in turn): the cost of a term over the
bias-free kernel, or with --baseline-library, of one build over another
(e.g. a `git worktree` of an earlier commit built with
-DRPE_BUILD_TESTS=OFF), or with --baseline-env VAR=VALUE, of the same
build with a runtime setting against the default (each implementation
compiled twice: each library's runtime reads RPE_HUGE_PAGES and
RPE_ALLOC_CACHE_MB once, during its first calls, so the second copy's
first calls run with VAR=VALUE set), as medians of per-round time
ratios. Among its
--impls, rpe_decode stands for the decode shapes above (Lq in {1, 2, 4,
16} against Lk = each of --lengths), and rpe_t5_decode for a T5 decoder's
self-attention with a key cache on them (T5_DECODE: unidirectional T5
bias, causal, q_offset = Lk - Lq). Three more rpe implementations split
DeBERTa's cost (not in the default set): rpe_deberta_c2p and
rpe_deberta_p2c (one term each), and rpe_deberta_far (both terms with
Log(4, 8) buckets, saturated 8 positions from the diagonal: nearly every
tile is a far tile, and the projections are 8 buckets wide);
rpe_deberta_padded is DeBERTa with key_lengths = L / 2 (a padded batch:
half of each sequence's keys masked; its GFLOP/s count the keys it
sees). rpe_deberta_causal is DeBERTa with a causal mask; its peers,
sdpa_deberta_causal and flex_deberta_causal (the torch DeBERTa baselines
with the causal mask, FlexAttention's as a block mask that skips the
masked blocks), are not in the default set either, nor are
rpe_deberta_padded's, sdpa_deberta_padded and flex_deberta_padded (keys
j >= L / 2 masked the same two ways).

PyTorch is needed for the torch columns: when the running Python cannot
import it, the script creates a virtual environment
(RPE_BENCH_VENV, default ~/.cache/rpe-bench-venv), pip-installs torch, numpy
and matplotlib from PyPI into it, and re-runs itself there. The rpe columns
need the build (build/lib/librpe-c.so; RPE_BUILD_DIR to change).

GFLOP/s counts the two matmuls, 4·B·H·Lq·Lk·D, for non-causal runs and half
of it for causal ones (the work a causal kernel has to do); the FMA peak is
measured by a C probe (independent FMA chains per thread: 16 with AVX-512,
12 with AVX2, as many as stay in registers; compiled with cc -O3
-march=native -fopenmp), before and after the timed calls: the higher figure
counts (on a shared virtual machine a probe can lose its second core for the
whole probe, reading half the peak).
--isa avx2 runs as on an AVX2 host: rpe compiled for x86-64-v3, torch's
kernels (ATen, inductor's C++ for FlexAttention) restricted to AVX2 through
ATEN_CPU_CAPABILITY=avx2, the probe built with -march=x86-64-v3.
"""

import argparse
import ctypes
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

from attention_bench import (  # noqa: E402
    _reset_peak, _status, _time_calls, _torch_model)

# --heads (kept in the environment for the child processes) sets H.
B, H, D = 1, int(os.environ.get("RPE_BENCH_HEADS", "8")), 64
THREADS = 2
# Least warm-up of a fresh process before its timed calls (see child()).
WARMUP_SECONDS = 0.25
LENGTHS = (256, 512, 1024, 2048, 4096, 8192)
DECODE = dict(batch=8, heads=32, kv_heads=8, head_dim=128)
# --interleave's rpe_t5_decode: T5 has no grouped kv heads.
T5_DECODE = dict(batch=1, heads=32, head_dim=128)
# --isa avx2 (kept in the environment for the child processes): an AVX2
# host emulated on an AVX-512 one. rpe compiles for x86-64-v3 (AVX2, FMA),
# the FMA probe too, and torch's kernels (ATen and inductor's C++ code for
# FlexAttention) dispatch to AVX2 through ATEN_CPU_CAPABILITY.
ISA = os.environ.get("RPE_BENCH_ISA", "native")
# How every rpe implementation is compiled (the host's vector width).
RPE_OPTIONS = dict(cpu="x86-64-v3" if ISA == "avx2" else "native",
                   opt_level=3, num_threads=THREADS)
DECODE_LQ = (1, 2, 4, 16)
DECODE_LK = (1024, 8192)

RPE_IMPLS = ("rpe_none", "rpe_t5", "rpe_t5_hf", "rpe_clip", "rpe_alibi",
             "rpe_swin", "rpe_shaw", "rpe_deberta", "rpe_none_causal",
             "rpe_t5_causal")
# Implementations whose child needs torch (rpe_t5_hf: exported by torch-mlir).
NEEDS_TORCH = ("rpe_t5_hf",)
TORCH_IMPLS = ("sdpa_none", "sdpa_t5_mask", "flex_t5", "seed_eager",
               "sdpa_deberta", "flex_deberta")
# Torch implementations not in the default set.
TORCH_EXTRA_IMPLS = ("sdpa_deberta_causal", "flex_deberta_causal",
                     "sdpa_deberta_padded", "flex_deberta_padded",
                     "sdpa_window", "flex_window", "sdpa_local", "flex_local")
# Mistral-style sliding-window attention (causal, keys i - W < j <= i): rpe's
# `causal window = W`, SDPA with the boolean band mask, FlexAttention with
# the band as a block mask (it skips the blocks outside). Not in the
# default set: --impls rpe_none_causal,rpe_none_window,sdpa_window,...
# The window W: --window (default 512).
WINDOW = int(os.environ.get("RPE_BENCH_WINDOW", "512"))
# ModernBERT-style bidirectional local attention, |i - j| <= W / 2 (as many
# keys per row as the sliding window): rpe's `window = W/2 + 1 lookahead =
# W/2`, SDPA with the boolean band mask, FlexAttention with a block mask.
# Not in the default set: --impls rpe_none_local,sdpa_local,flex_local.
HALF = WINDOW // 2
LABELS = {
    "rpe_none": "rpe bias-free", "rpe_t5": "rpe T5",
    "rpe_t5_hf": "rpe T5 from transformers", "rpe_clip": "rpe clip",
    "rpe_alibi": "rpe ALiBi", "rpe_swin": "rpe Swin 2-D",
    "rpe_shaw": "rpe Shaw a^K+a^V", "rpe_deberta": "rpe DeBERTa c2p+p2c",
    "rpe_deberta_c2p": "rpe DeBERTa c2p", "rpe_deberta_p2c": "rpe DeBERTa p2c",
    "rpe_deberta_far": "rpe DeBERTa, Log(4, 8) buckets",
    "rpe_none_causal": "rpe bias-free causal", "rpe_t5_causal": "rpe T5 causal",
    "rpe_deberta_causal": "rpe DeBERTa c2p+p2c causal",
    "rpe_deberta_padded": "rpe DeBERTa c2p+p2c, key_lengths = L/2",
    "sdpa_none": "SDPA bias-free", "sdpa_t5_mask": "SDPA + T5 float mask",
    "flex_t5": "FlexAttention T5", "seed_eager": "seed eager T5",
    "sdpa_deberta": "SDPA + DeBERTa mask (HF gathers)",
    "flex_deberta": "FlexAttention DeBERTa",
    "sdpa_deberta_causal": "SDPA + DeBERTa causal mask (HF gathers)",
    "flex_deberta_causal": "FlexAttention DeBERTa causal (block mask)",
    "sdpa_deberta_padded": "SDPA + DeBERTa mask, keys ≥ L/2 masked",
    "flex_deberta_padded": "FlexAttention DeBERTa, keys ≥ L/2 (block mask)",
    "rpe_none_window": "rpe sliding window %d" % WINDOW,
    "sdpa_window": "SDPA + sliding-window bool mask",
    "flex_window": "FlexAttention sliding window (block mask)",
    "rpe_none_local": "rpe local window ±%d" % HALF,
    "sdpa_local": "SDPA + local-window bool mask",
    "flex_local": "FlexAttention local window (block mask)",
}
# DeBERTa's buckets in every implementation: Log(256, 512), as DeBERTa-v3.
DEBERTA_BUCKETS, DEBERTA_MAX_POSITION = 256, 512


# --------------------------------------------------------------------------
# Child side: one measurement.

def _band(impl, i, j):
    """Whether query i sees key j (torch tensors) in the band of a *_window
    (causal, i - W < j <= i) or *_local (|i - j| <= W / 2) implementation."""
    if impl.endswith("_window"):
        return (j <= i) & (i - j < WINDOW)
    return (i - j <= HALF) & (j - i <= HALF)


def _swin_window(length):
    """A window height × width = L, as square as possible."""
    h = 1 << ((length.bit_length() - 1) // 2)
    return h, length // h


def _rpe_module(impl, length):
    """The MLIR text of an rpe implementation (function @attn)."""
    from rpe import ir
    common = dict(batch=B, heads=H, lq=None, lk=None, head_dim=D)
    if impl == "rpe_none_window":
        return _plain(True, window=WINDOW)
    if impl == "rpe_none_local":
        return _plain(False, window=HALF + 1, lookahead=HALF)
    causal = impl.endswith("_causal")
    kind = impl[len("rpe_"):].replace("_causal", "")
    if kind == "none":
        return _plain(causal)
    if kind == "t5":
        return ir.t5_attention(**common, causal=causal, name="attn")
    if kind == "clip":
        return ir.relative_bias_attention(ir.Clip(128), **common, name="attn")
    if kind == "alibi":
        return ir.alibi_attention(**common, symmetric=True, name="attn")
    if kind == "swin":
        hgt, wid = _swin_window(length)
        return ir.swin_window_attention(hgt, wid, batch=B, heads=H,
                                        head_dim=D, name="attn")
    if kind == "shaw":
        return ir.shaw_attention(ir.Clip(16), **common, name="attn")
    if kind in ("deberta", "deberta_c2p", "deberta_p2c", "deberta_far",
                "deberta_padded"):
        bucketing = ir.Log(4, 8) if kind == "deberta_far" else \
            ir.Log(DEBERTA_BUCKETS, DEBERTA_MAX_POSITION)
        return ir.deberta_attention(bucketing, **common,
                                    c2p=kind != "deberta_p2c",
                                    p2c=kind != "deberta_c2p", causal=causal,
                                    key_lengths=kind == "deberta_padded",
                                    name="attn")
    raise ValueError(impl)


def _plain(causal, batch=B, heads=H, kv_heads=H, head_dim=D, q_offset=False,
           window=None, lookahead=None):
    qt = "tensor<%dx%dx?x%dxf32>" % (batch, heads, head_dim)
    kt = "tensor<%dx%dx?x%dxf32>" % (batch, kv_heads, head_dim)
    off_arg = ", %off: index" if q_offset else ""
    opts = (" q_offset(%off)" if q_offset else "") + (" causal" if causal else "")
    if window:
        opts += " window = %d" % window
    if lookahead:
        opts += " lookahead = %d" % lookahead
    return """func.func @attn(%%q: %s, %%k: %s, %%v: %s%s) -> %s {
  %%o = rpe.attention %%q, %%k, %%v%s : %s, %s, %s -> %s
  return %%o : %s
}
""" % (qt, kt, kt, off_arg, qt, opts, qt, kt, kt, qt, qt)


def _arg_arrays(types, length, rng):
    import numpy as np
    arrays = []
    for t in types:
        shape = [int(s) if s != "?" else length
                 for s in t[len("tensor<"):-1].split("x")[:-1]]
        if t.endswith("xi32>"):
            # key_lengths (rpe_deberta_padded): half of every sequence is
            # padding.
            arrays.append(np.full(shape, length // 2, dtype=np.int32))
            continue
        a = rng.standard_normal(shape, dtype=np.float32)
        a *= 0.5
        arrays.append(a)
    return arrays


def _torch_t5_bucket(torch, relative_position, num_buckets=32,
                     max_distance=128):
    import math
    half = num_buckets // 2
    buckets = (relative_position > 0).to(torch.long) * half
    rel = torch.abs(relative_position)
    max_exact = half // 2
    is_small = rel < max_exact
    large = max_exact + (torch.log(rel.float().clamp(min=1) / max_exact)
                         / math.log(max_distance / max_exact)
                         * (half - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, half - 1))
    return buckets + torch.where(is_small, rel, large)


def _torch_deberta_bucket(torch, relative_position, bucket_size=DEBERTA_BUCKETS,
                          max_position=DEBERTA_MAX_POSITION):
    """transformers' make_log_bucket_position (DeBERTa-v2/v3), as a long
    tensor: the position itself within bucket_size / 2 of 0, log-spaced
    beyond."""
    import math
    rel = relative_position.to(torch.float64)
    mid = bucket_size // 2
    small = (rel < mid) & (rel > -mid)
    abs_pos = torch.where(small, torch.full_like(rel, mid - 1), rel.abs())
    log_pos = torch.ceil(torch.log(abs_pos / mid)
                         / math.log((max_position - 1) / mid)
                         * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, rel, log_pos * rel.sign()).to(torch.long)


def _torch_deberta_tables(torch, length):
    """DeBERTa's inputs besides q, k, v: the position tables of the keys
    and queries per head (the rel embeddings after key_proj / query_proj,
    2·span × D), the scale 1/sqrt(3D), and the table index of every
    distance i - j + (L - 1), bucket + span clamped into the table."""
    span = DEBERTA_BUCKETS
    pos_k, pos_q = (torch.randn(H, 2 * span, D) * 0.5 for _ in range(2))
    dist = torch.arange(-(length - 1), length)
    index = (_torch_deberta_bucket(torch, dist) + span).clamp(0, 2 * span - 1)
    return pos_k, pos_q, (3 * D) ** -0.5, index


def _torch_deberta_call(torch, impl, q, k, v, pos_k, pos_q, s, dist_index,
                        compiled=True):
    """A call of DeBERTa attention in torch, as users write it.
    sdpa_deberta: transformers' disentangled_attention_bias: each call
    projects q and k onto the position tables and gathers c2p and p2c (L × L
    per head), then SDPA takes their sum as a float mask. flex_deberta:
    FlexAttention, the projections in each call (they depend on q and k)
    into buffers its score_mod gathers from (one compiled kernel;
    `compiled=False` runs it eagerly). The `_causal` variants mask key
    j > i: SDPA adds a −inf mask (built once, outside the call) to the
    bias, FlexAttention takes a causal block mask (built once), which
    skips the blocks above the diagonal. The `_padded` variants mask keys
    j >= L / 2 (rpe_deberta_padded's key_lengths), the same two ways: SDPA
    through a −inf padding mask (as transformers turns an attention_mask
    into an additive one), FlexAttention through a block mask that skips
    the padded blocks. bench/check_deberta_baselines.py compares all six
    with rpe."""
    import torch.nn.functional as F
    b, h, length, _ = q.shape
    pos = torch.arange(length)
    causal = impl.endswith("_causal")
    padded = impl.endswith("_padded")
    # Keys a query sees: all, j <= i, or j < L / 2.
    if causal:
        def visible(q_idx, kv_idx):
            return q_idx >= kv_idx
    elif padded:
        def visible(q_idx, kv_idx):
            return kv_idx < length // 2
    else:
        visible = None
    if impl.startswith("sdpa_deberta"):
        rows = pos[:, None] - pos[None, :] + (length - 1)
        c2p_pos = dist_index[rows].expand(b, h, length, length)
        # p2c_pos[j, i]: the table index of the distance i - j.
        p2c_pos = dist_index[rows.t()].expand(b, h, length, length)
        masked = torch.zeros(length, length)
        if visible:
            masked.masked_fill_(~visible(pos[:, None], pos[None, :]),
                                float("-inf"))

        def call():
            with torch.no_grad():
                c2p = torch.gather(q @ pos_k.transpose(-1, -2), -1, c2p_pos)
                p2c = torch.gather(k @ pos_q.transpose(-1, -2), -1, p2c_pos)
                bias = (c2p + p2c.transpose(-1, -2)) * s
                if visible:
                    bias += masked
                return F.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                                      scale=s)
        return call
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    shift = length - 1
    block_mask = create_block_mask(
        lambda b, h, q_idx, kv_idx: visible(q_idx, kv_idx), None, None,
        length, length, device="cpu") if visible else None
    c2p = torch.empty(b, h, length, pos_k.shape[-2])
    p2c = torch.empty_like(c2p)
    pos_k_t = (pos_k * s).transpose(-1, -2)
    pos_q_t = (pos_q * s).transpose(-1, -2)

    def score_mod(score, b, h, q_idx, kv_idx):
        at = dist_index[q_idx - kv_idx + shift]
        return score + c2p[b, h, q_idx, at] + p2c[b, h, kv_idx, at]
    flex = torch.compile(flex_attention, dynamic=False) if compiled else \
        flex_attention

    def call():
        with torch.no_grad():
            torch.matmul(q, pos_k_t, out=c2p)
            torch.matmul(k, pos_q_t, out=p2c)
            return flex(q, k, v, score_mod=score_mod, block_mask=block_mask,
                        scale=s)
    return call


def _t5_hf_module(length):
    """T5's attention core as transformers writes it (T5Attention.compute_bias
    with bidirectional log buckets, scores = q·kᵀ + position_bias, softmax in
    float, ·v), exported by torch-mlir at this static length: the MLIR text
    a user gets from `python -m rpe import-torch`. Function @attn(q, k, v)."""
    import torch
    from transformers import T5Config
    from transformers.models.t5.modeling_t5 import T5Attention
    from rpe.torch_import import export

    config = T5Config(d_model=H * D, d_kv=D, num_heads=H,
                      relative_attention_num_buckets=32,
                      relative_attention_max_distance=128)
    torch.manual_seed(0)
    t5 = T5Attention(config, has_relative_attention_bias=True).eval()

    class Core(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.t5 = t5

        def forward(self, q, k, v):
            scores = torch.matmul(q, k.transpose(3, 2))
            scores = scores + self.t5.compute_bias(q.shape[2], k.shape[2])
            weights = torch.nn.functional.softmax(scores.float(), dim=-1)
            return torch.matmul(weights.type_as(scores), v)

    q = torch.zeros(B, H, length, D)
    return export(Core(), (q, q, q), func_name="attn")


def _compile_rpe(text, library=None, threads=None):
    """rpe.compile(text) as the benchmark compiles it (with `threads`: for
    that many threads); with `library`, by that librpe-c.so (another build
    of rpe) in a child process, and loaded here: modules of two builds side
    by side in one process."""
    import rpe
    if threads is not None:
        return rpe.compile(text, **dict(RPE_OPTIONS, num_threads=threads))
    if library is None:
        return rpe.compile(text, **RPE_OPTIONS)
    from rpe.compiler import Module
    tmp = tempfile.mkdtemp(prefix="rpe-bench-")
    src, out = os.path.join(tmp, "module.mlir"), os.path.join(tmp, "module.so")
    with open(src, "w") as f:
        f.write(text)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__),
                           "--compile-only", src, out],
                          env=dict(os.environ, RPE_LIBRARY=library),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("cpu_attention_bench: compiling with %s failed:\n%s"
                 % (library, proc.stderr))
    functions = json.loads(proc.stdout.strip().splitlines()[-1])
    return Module(out, functions, tmp)


def _compile_only(src, out):
    """--compile-only: compiles `src` to the shared library `out` and prints
    its functions (the C API's description) as JSON."""
    import rpe
    from rpe import _capi
    with open(src) as f:
        text = f.read()
    rpe.compile(text, output=out, **RPE_OPTIONS)
    ok, description, diagnostics = _capi.compiler().describe(text, src)
    if not ok:
        sys.exit(diagnostics)
    print(json.dumps(json.loads(description)["functions"]))


def _build(impl, length, dec, library=None, threads=None):
    """Returns (call, output_bytes): `call()` runs the implementation once;
    rpe implementations are compiled by `library` when given, for `threads`
    threads when given (not the decode shapes, nor rpe_t5_hf)."""
    import numpy as np
    rng = np.random.default_rng(0)
    if impl == "rpe_t5_hf":
        import rpe
        # Exported in another process: torch's thread pools must not share
        # the cores with the timed calls.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t5_hf.mlir")
            subprocess.run([sys.executable, os.path.abspath(__file__),
                            "--export-t5-hf", str(length), path], check=True)
            with open(path) as f:
                text = f.read()
        mod = rpe.compile(text, **RPE_OPTIONS)
        fn = mod.attn
        args = _arg_arrays(["tensor<%dx%dx?x%dxf32>" % (B, H, D)] * 3, length,
                           rng)
        return (lambda: fn(*args)), args[0].nbytes
    if impl.startswith("rpe_"):
        import rpe
        if dec and impl == "rpe_t5":
            from rpe import ir
            lq, lk = dec
            b, hh, d = (T5_DECODE[x] for x in ("batch", "heads", "head_dim"))
            text = ir.t5_attention(bidirectional=False, batch=b, heads=hh,
                                   lq=None, lk=None, head_dim=d, causal=True,
                                   q_offset=True, name="attn")
            mod = _compile_rpe(str(text), library)
            q = rng.standard_normal((b, hh, lq, d), dtype=np.float32)
            k = rng.standard_normal((b, hh, lk, d), dtype=np.float32)
            v = rng.standard_normal((b, hh, lk, d), dtype=np.float32)
            table = rng.standard_normal((32, hh), dtype=np.float32)
            fn = mod.attn
            return (lambda: fn(q, k, v, table, lk - lq)), q.nbytes
        if dec:
            lq, lk = dec
            text = _plain(True, batch=DECODE["batch"], heads=DECODE["heads"],
                          kv_heads=DECODE["kv_heads"],
                          head_dim=DECODE["head_dim"], q_offset=True)
            mod = _compile_rpe(text, library)
            b, hh, hk, d = (DECODE[x] for x in
                            ("batch", "heads", "kv_heads", "head_dim"))
            q = rng.standard_normal((b, hh, lq, d), dtype=np.float32)
            k = rng.standard_normal((b, hk, lk, d), dtype=np.float32)
            v = rng.standard_normal((b, hk, lk, d), dtype=np.float32)
            fn = mod.attn
            return (lambda: fn(q, k, v, lk - lq)), q.nbytes
        text = _rpe_module(impl, length)
        mod = _compile_rpe(text, library, threads)
        fn = mod.attn
        types = text.arg_types if hasattr(text, "arg_types") else \
            ["tensor<%dx%dx?x%dxf32>" % (B, H, D)] * 3
        args = _arg_arrays(types, length, rng)
        return (lambda: fn(*args)), args[0].nbytes

    import torch
    import torch.nn.functional as F
    torch.set_num_threads(THREADS)
    if dec:
        from torch.nn.attention.bias import causal_lower_right
        lq, lk = dec
        b, hh, hk, d = (DECODE[x] for x in
                        ("batch", "heads", "kv_heads", "head_dim"))
        q = torch.randn(b, hh, lq, d)
        k = torch.randn(b, hk, lk, d)
        v = torch.randn(b, hk, lk, d)
        mask = causal_lower_right(lq, lk)

        def call():
            with torch.no_grad():
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                      enable_gqa=True)
        return call, q.numel() * 4
    q, k, v = (torch.randn(B, H, length, D) * 0.5 for _ in range(3))
    table = torch.randn(32, H)
    pos = torch.arange(length)
    if impl == "sdpa_none":
        def call():
            with torch.no_grad():
                return F.scaled_dot_product_attention(q, k, v)
    elif impl == "sdpa_t5_mask":
        # The float mask (1, H, L, L) is built once, outside the timing.
        index = _torch_t5_bucket(torch, pos[None, :] - pos[:, None])
        mask = table[index].permute(2, 0, 1).unsqueeze(0).contiguous()

        def call():
            with torch.no_grad():
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                      scale=1.0)
    elif impl == "flex_t5":
        from torch.nn.attention.flex_attention import flex_attention
        # The bias per (head, distance) is precomputed (2L-1 entries per
        # head): the score_mod only gathers, as a tuned user would write it.
        dist = torch.arange(-(length - 1), length)
        rel = table[_torch_t5_bucket(torch, dist)].t().contiguous()
        shift = length - 1

        def score_mod(score, b, h, q_idx, kv_idx):
            return score + rel[h, kv_idx - q_idx + shift]
        flex = torch.compile(flex_attention, dynamic=False)

        def call():
            with torch.no_grad():
                return flex(q, k, v, score_mod=score_mod, scale=1.0)
    elif impl in ("sdpa_window", "sdpa_local"):
        # The boolean band mask (L, L) is built once, outside the timing.
        mask = _band(impl, pos[:, None], pos[None, :])

        def call():
            with torch.no_grad():
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    elif impl in ("flex_window", "flex_local"):
        from torch.nn.attention.flex_attention import (create_block_mask,
                                                       flex_attention)

        def band(b, h, q_idx, kv_idx):
            return _band(impl, q_idx, kv_idx)
        block_mask = create_block_mask(band, None, None, length, length,
                                       device="cpu")
        flex = torch.compile(flex_attention, dynamic=False)

        def call():
            with torch.no_grad():
                return flex(q, k, v, block_mask=block_mask)
    elif impl.startswith(("sdpa_deberta", "flex_deberta")):
        call = _torch_deberta_call(torch, impl, q, k, v,
                                   *_torch_deberta_tables(torch, length))
    elif impl == "seed_eager":
        _, forward = _torch_model()

        def call():
            with torch.no_grad():
                return forward(q, k, v, table)
    else:
        raise ValueError(impl)
    return call, q.numel() * 4


def child(impl, length, repeats, dec):
    call, out_bytes = _build(impl, length, dec)
    # rpe's libraries keep freed temporaries for the next call (their
    # allocation cache): the level to measure from is before the first call
    # (rpe compiles in _build); torch's first call compiles FlexAttention,
    # so for torch it is after the warm-up.
    measure_from_start = impl.startswith("rpe")
    if measure_from_start:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        _reset_peak()
        base = _status("VmRSS")
    # Warm-up (compiles FlexAttention): two calls, and more until a quarter
    # of a second has passed — on a VM the second core sometimes takes tens
    # of calls of a short size to join (rpe T5 at L = 256: ~1.05 ms for the
    # first 25 calls of a process, 0.5 ms after).
    start = time.perf_counter()
    for n in itertools.count():
        call()
        if n >= 1 and time.perf_counter() - start >= WARMUP_SECONDS:
            break
    if not measure_from_start:
        # Hand memory freed by the warm-up back to the system, so that
        # buffers a call allocates again count in the peak instead of
        # reusing the heap.
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        _reset_peak()
        base = _status("VmRSS")
    times = _time_calls(call, repeats)
    extra = max(0, _status("VmHWM") - base - out_bytes)
    print(json.dumps({"times": times, "extra": extra}))


def interleaved_rounds(calls, rounds, repeats=1):
    """Calls every implementation of `calls` (name -> callable) in turn,
    `rounds` times, `repeats` calls per turn of which the fastest counts:
    name -> its round times in seconds. The machine's drift falls on all
    of them alike (bench/activation_bench.py, relative_bias_bench.py)."""
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            times[name].append(min(_time_calls(call, repeats)))
    return times


def _with_env(setting, call):
    """call() with `setting` ("VAR=VALUE") in the environment, restored
    afterwards."""
    var, value = setting.split("=", 1)
    old = os.environ.get(var)
    os.environ[var] = value
    try:
        return call()
    finally:
        if old is None:
            del os.environ[var]
        else:
            os.environ[var] = old


def interleave(impls, lengths, rounds, baseline=None, one_thread=False,
               baseline_env=None):
    """Every rpe implementation compiled once per length in this process
    (and again by the `baseline` librpe-c.so, as "<impl>@base"; with
    `baseline_env` = "VAR=VALUE", again by this build, as "<impl>@env",
    whose warm-up calls run with VAR=VALUE set: the library's runtime reads
    it then; with `one_thread`, again for one thread, as "<impl>@1t"),
    warmed up, then
    called in turn `rounds` times. Prints, per variant, the min and median
    time, the median over rounds of its time / rpe_none's time of the same
    build in the same round (the cost of a term) and, with a baseline, of
    its time / the baseline's (the cost of a change), with one_thread of
    its time / its one-thread time (1 / the threads' speedup), with
    baseline_env of its time / the @env variant's: ratios with the
    machine's drift cancelled."""
    results = []
    for length in lengths:
        variants = []
        for impl in impls:
            # rpe_decode and rpe_t5_decode: the decode shapes, Lq in
            # DECODE_LQ against Lk = length.
            decode = {"rpe_decode": "rpe_none", "rpe_t5_decode": "rpe_t5"}
            builds = [(impl, impl, None)] if impl not in decode else \
                [("%s_q%d" % (impl, lq), decode[impl], (lq, length))
                 for lq in DECODE_LQ]
            for name, kind, dec in builds:
                variants.append((name, _build(kind, length, dec)[0]))
                if baseline:
                    variants.append((name + "@base",
                                     _build(kind, length, dec, baseline)[0]))
                if baseline_env:
                    variants.append((name + "@env",
                                     _build(kind, length, dec)[0]))
                if one_thread and not dec and impl != "rpe_t5_hf":
                    variants.append((name + "@1t",
                                     _build(kind, length, dec, None, 1)[0]))
        for name, call in variants:
            if name.endswith("@env"):
                _with_env(baseline_env, call)
                _with_env(baseline_env, call)
            else:
                call()
                call()
        times = {name: [] for name, _ in variants}
        for _ in range(rounds):
            for name, call in variants:
                times[name].extend(_time_calls(call, 1))
        for name, _ in variants:
            impl, variant = (name.split("@") + [""])[:2]
            row = {"L": length, "variant": name,
                   "min_ms": 1e3 * min(times[name]),
                   "median_ms": 1e3 * statistics.median(times[name])}
            decoded = impl.startswith(("rpe_decode", "rpe_t5_decode"))
            refs = {} if decoded else \
                {"over_none": "rpe_none" + ("@" + variant if variant else "")}
            if baseline and not variant:
                refs["over_base"] = impl + "@base"
            if baseline_env and not variant:
                refs["over_env"] = impl + "@env"
            if one_thread and not variant:
                refs["over_1t"] = impl + "@1t"
            text = ""
            for key, ref in refs.items():
                if ref in times and ref != name:
                    row[key] = statistics.median(
                        a / b for a, b in zip(times[name], times[ref]))
                    text += "  %.3f x %s" % (row[key], ref)
            results.append(row)
            print("%5d %-22s min %9.2f ms  median %9.2f ms%s" % (
                length, name, row["min_ms"], row["median_ms"], text),
                flush=True)
    return results


# --------------------------------------------------------------------------
# Parent side.

PEAK_C = r"""
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
/* Independent FMA chains per thread: enough to cover the FMA latency on
   every pipe (4-5 cycles x 2 pipes), few enough to stay in registers with
   x and y: 16 of the 32 zmm registers, 12 of the 16 ymm ones (16 chains
   spill three of them to the stack with AVX2, and the store-to-load
   latency then bounds the loop: 129 instead of 230 GFLOP/s on a Zen 4). */
#if defined(__AVX512F__)
typedef __m512 V;
#define FMA _mm512_fmadd_ps
#define SET _mm512_set1_ps
#define LANES 16
#define CHAINS 16
static float sum(V x) { return _mm512_reduce_add_ps(x); }
#else
typedef __m256 V;
#define FMA _mm256_fmadd_ps
#define SET _mm256_set1_ps
#define LANES 8
#define CHAINS 12
static float sum(V x) { float t[8]; _mm256_storeu_ps(t, x); return t[0]; }
#endif
int main(int argc, char **argv) {
  long iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    double t0 = omp_get_wtime();
    float total = 0;
#pragma omp parallel reduction(+ : total)
    {
      V x = SET(0.999f), y = SET(1e-4f);
      V a0 = SET(0), a1 = SET(1), a2 = SET(2), a3 = SET(3), a4 = SET(4),
        a5 = SET(5), a6 = SET(6), a7 = SET(7), a8 = SET(8), a9 = SET(9),
        a10 = SET(10), a11 = SET(11);
#if CHAINS == 16
      V a12 = SET(12), a13 = SET(13), a14 = SET(14), a15 = SET(15);
#endif
      for (long i = 0; i < iters; ++i) {
        a0 = FMA(a0, x, y); a1 = FMA(a1, x, y); a2 = FMA(a2, x, y);
        a3 = FMA(a3, x, y); a4 = FMA(a4, x, y); a5 = FMA(a5, x, y);
        a6 = FMA(a6, x, y); a7 = FMA(a7, x, y); a8 = FMA(a8, x, y);
        a9 = FMA(a9, x, y); a10 = FMA(a10, x, y); a11 = FMA(a11, x, y);
#if CHAINS == 16
        a12 = FMA(a12, x, y); a13 = FMA(a13, x, y); a14 = FMA(a14, x, y);
        a15 = FMA(a15, x, y);
#endif
      }
      total += sum(a0) + sum(a1) + sum(a2) + sum(a3) + sum(a4) + sum(a5) +
               sum(a6) + sum(a7) + sum(a8) + sum(a9) + sum(a10) + sum(a11);
#if CHAINS == 16
      total += sum(a12) + sum(a13) + sum(a14) + sum(a15);
#endif
    }
    double s = omp_get_wtime() - t0;
    double gf = 2.0 * CHAINS * LANES * iters * omp_get_max_threads() / s / 1e9;
    if (gf > best) best = gf;
    if (total == 42) puts("");
  }
  printf("%d %.1f\n", LANES, best);
  return 0;
}
"""


def fma_peak():
    """(lanes, GFLOP/s) of the FMA probe on THREADS threads."""
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "peak.c"), os.path.join(tmp, "peak")
        with open(src, "w") as f:
            f.write(PEAK_C)
        march = "x86-64-v3" if ISA == "avx2" else "native"
        subprocess.run(["cc", "-O3", "-march=" + march, "-fopenmp", src,
                        "-o", exe], check=True)
        env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
        lanes, gf = subprocess.run([exe], check=True, capture_output=True,
                                   text=True, env=env).stdout.split()
        return int(lanes), float(gf)


def ensure_torch():
    try:
        import torch  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("RPE_BENCH_IN_VENV"):
        sys.exit("cpu_attention_bench: torch is still missing in the venv")
    venv = os.environ.get("RPE_BENCH_VENV",
                          os.path.expanduser("~/.cache/rpe-bench-venv"))
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print("creating %s (torch, numpy, matplotlib from PyPI)" % venv,
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "torch", "numpy",
                    "matplotlib", "torch-mlir", "transformers"], check=True)
    env = dict(os.environ, RPE_BENCH_IN_VENV="1")
    os.execve(python, [python] + sys.argv, env)


def run_child(impl, length, repeats, dec=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", impl,
           str(length), "--repeats", str(repeats)]
    if dec:
        cmd += ["--decode-shape", "%d,%d" % dec]
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:]
        return {"error": tail[0] if tail else "exit %d" % proc.returncode}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def flops(impl, lq, lk, b=B, h=H, d=D, causal=None):
    if impl.endswith("_window"):
        # The (i, j) pairs of the band: row i sees min(i + 1, W) keys.
        w = min(WINDOW, lq)
        return 4.0 * b * h * d * (w * (w + 1) / 2 + (lq - w) * w)
    if impl.endswith("_local"):
        # Row i sees the keys max(i - HALF, 0) .. min(i + HALF, L - 1).
        return 4.0 * b * h * d * sum(min(i + HALF, lk - 1) - max(i - HALF, 0) + 1
                                     for i in range(lq))
    f = 4.0 * b * h * lq * lk * d
    if causal if causal is not None else impl.endswith("_causal"):
        f /= 2
    if "_padded" in impl:  # key_lengths = L / 2
        f /= 2
    return f


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    parser.add_argument("--impls", default=",".join(RPE_IMPLS + TORCH_IMPLS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-decode", action="store_true")
    parser.add_argument("--eager-max-length", type=int, default=8192,
                        help="skip the seed's eager module above this L")
    parser.add_argument("--json")
    parser.add_argument("--plot")
    parser.add_argument("--markdown")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--decode-shape", help=argparse.SUPPRESS)
    parser.add_argument("--export-t5-hf", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--compile-only", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--interleave", type=int, metavar="ROUNDS",
                        help="rpe implementations only: compile each once "
                        "per length in one process and call them in turn "
                        "ROUNDS times (see interleave())")
    parser.add_argument("--one-thread", action="store_true",
                        help="with --interleave: also compile every "
                        "implementation for one thread and report the "
                        "threads' time / its time")
    parser.add_argument("--baseline-library", metavar="LIBRPE_C",
                        help="with --interleave: also compile every "
                        "implementation with this librpe-c.so (another "
                        "build) and report new / baseline time ratios")
    parser.add_argument("--baseline-env", metavar="VAR=VALUE",
                        help="with --interleave: also compile every "
                        "implementation again, make that copy's first calls "
                        "with VAR=VALUE in the environment (a runtime "
                        "setting such as RPE_HUGE_PAGES=0) and report "
                        "default / VAR=VALUE time ratios")
    parser.add_argument("--isa", choices=("native", "avx2"),
                        help="avx2: run as on an AVX2 host (rpe for "
                        "x86-64-v3, torch with ATEN_CPU_CAPABILITY=avx2, the "
                        "probe with -march=x86-64-v3); default: the host's")
    parser.add_argument("--heads", type=int, default=None,
                        help="attention heads of the B = 1, D = 64 shapes "
                        "(default 8; an odd count does not split evenly "
                        "among the threads)")
    parser.add_argument("--window", type=int, default=None,
                        help="the sliding window of rpe_none_window, "
                        "sdpa_window and flex_window (default 512); the "
                        "*_local implementations see W / 2 keys either way")
    args = parser.parse_args()
    if args.window is not None and args.window != WINDOW:
        if args.window < 1:
            parser.error("--window must be positive")
        os.environ["RPE_BENCH_WINDOW"] = str(args.window)
        os.execv(sys.executable, [sys.executable] + sys.argv)
    if args.heads is not None and args.heads != H:
        if args.heads < 1:
            parser.error("--heads must be positive")
        os.environ["RPE_BENCH_HEADS"] = str(args.heads)
        os.execv(sys.executable, [sys.executable] + sys.argv)
    if args.isa and args.isa != ISA:
        # Children and a re-run in the venv inherit the environment.
        os.environ["RPE_BENCH_ISA"] = args.isa
        if args.isa == "avx2":
            os.environ["ATEN_CPU_CAPABILITY"] = "avx2"
        else:
            os.environ.pop("ATEN_CPU_CAPABILITY", None)
        os.execv(sys.executable, [sys.executable] + sys.argv)
    if args.compile_only:
        _compile_only(*args.compile_only)
        return
    if args.interleave:
        impls = [i for i in args.impls.split(",") if i.startswith("rpe_")]
        if "rpe_none" not in impls and not args.baseline_library:
            impls.insert(0, "rpe_none")
        os.environ["OMP_NUM_THREADS"] = str(THREADS)
        if args.baseline_env and "=" not in args.baseline_env:
            parser.error("--baseline-env wants VAR=VALUE, got %r"
                         % args.baseline_env)
        results = interleave(impls, [int(x) for x in args.lengths.split(",")],
                             args.interleave, args.baseline_library,
                             args.one_thread, args.baseline_env)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"threads": THREADS, "isa": ISA,
                           "rounds": args.interleave,
                           "baseline": args.baseline_library,
                           "baseline_env": args.baseline_env,
                           "rows": results}, f, indent=1)
        return
    if args.export_t5_hf:
        with open(args.export_t5_hf[1], "w") as f:
            f.write(_t5_hf_module(int(args.export_t5_hf[0])))
        return
    if args.child:
        dec = tuple(map(int, args.decode_shape.split(","))) \
            if args.decode_shape else None
        child(args.child[0], int(args.child[1]), args.repeats, dec)
        return
    impls = args.impls.split(",")
    if any(i in TORCH_IMPLS + TORCH_EXTRA_IMPLS + NEEDS_TORCH
           for i in impls) or \
            not args.no_decode:
        ensure_torch()

    lanes, peak = fma_peak()
    print("FMA peak (%d lanes, %d threads): %.1f GFLOP/s" %
          (lanes, THREADS, peak), flush=True)
    results = {"peak": peak, "lanes": lanes, "threads": THREADS, "isa": ISA,
               "repeats": args.repeats, "rows": [], "decode": []}
    lengths = [int(x) for x in args.lengths.split(",")]
    for length in lengths:
        for impl in impls:
            if impl == "seed_eager" and length > args.eager_max_length:
                continue
            r = run_child(impl, length, args.repeats)
            row = {"impl": impl, "L": length}
            if "error" in r:
                row["error"] = r["error"]
                print("%5d %-22s error: %s" % (length, impl, r["error"]),
                      flush=True)
            else:
                t = statistics.median(r["times"])
                row.update(ms=t * 1e3, gflops=flops(impl, length, length) / t
                           / 1e9, extra_mib=r["extra"] / 2**20,
                           times=r["times"])
                print("%5d %-22s %9.2f ms %8.1f GF/s %5.1f%% peak %7.1f MiB"
                      % (length, impl, row["ms"], row["gflops"],
                         100 * row["gflops"] / peak, row["extra_mib"]),
                      flush=True)
            results["rows"].append(row)
    if not args.no_decode:
        for lk in DECODE_LK:
            for lq in DECODE_LQ:
                for impl in ("rpe_decode", "sdpa_decode"):
                    r = run_child("rpe_none" if impl == "rpe_decode"
                                  else "sdpa_none", 0, args.repeats, (lq, lk))
                    row = {"impl": impl, "Lq": lq, "Lk": lk}
                    if "error" in r:
                        row["error"] = r["error"]
                    else:
                        t = statistics.median(r["times"])
                        row.update(ms=t * 1e3, extra_mib=r["extra"] / 2**20,
                                   times=r["times"])
                    print("decode Lq=%2d Lk=%5d %-12s %s" %
                          (lq, lk, impl, "%.3f ms" % row["ms"] if "ms" in row
                           else row["error"]), flush=True)
                    results["decode"].append(row)
    # The probe again: a neighbour on the host can halve one probe's figure.
    lanes, peak_after = fma_peak()
    print("FMA peak after the runs: %.1f GFLOP/s" % peak_after, flush=True)
    results["peak_probes"] = [peak, peak_after]
    results["peak"] = max(peak, peak_after)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    table = markdown(results, lengths, impls)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    if args.plot:
        plot(results, lengths, impls, args.plot)


def markdown(results, lengths, impls):
    rows = {(r["impl"], r["L"]): r for r in results["rows"]}

    def header(first):
        return ["| %s | " % first + " | ".join("L=%d" % n for n in lengths)
                + " |", "|---|" + "---:|" * len(lengths)]

    def cell(impl, n, key, fmt):
        r = rows.get((impl, n))
        return "—" if r is None or key not in r else fmt(r[key])

    def time_ratio(a, b, n, fmt):
        """time(b) / time(a) at length n."""
        ra, rb = rows.get((a, n)), rows.get((b, n))
        if not ra or not rb or "ms" not in ra or "ms" not in rb:
            return "—"
        return fmt % (rb["ms"] / ra["ms"])

    peak = results["peak"]
    out = ["GFLOP/s (%% of the %.0f GFLOP/s FMA peak); causal rows count "
           "half the FLOPs." % peak, ""] + header("implementation")
    for impl in impls:
        out.append("| %s | %s |" % (LABELS.get(impl, impl), " | ".join(
            cell(impl, n, "gflops",
                 lambda g: "%.1f (%.0f%%)" % (g, 100 * g / peak))
            for n in lengths)))
    out += ["", "Speed ratios (time of the second / time of the first; > 1: "
            "the first is faster):", ""] + header("ratio")
    for a, b in [("rpe_t5", "sdpa_none"), ("rpe_t5", "sdpa_t5_mask"),
                 ("rpe_t5", "flex_t5"), ("rpe_t5", "seed_eager"),
                 ("rpe_none", "sdpa_none"), ("rpe_t5_hf", "rpe_t5"),
                 ("rpe_deberta", "sdpa_deberta"),
                 ("rpe_deberta", "flex_deberta"),
                 ("rpe_deberta_causal", "sdpa_deberta_causal"),
                 ("rpe_deberta_causal", "flex_deberta_causal"),
                 ("rpe_deberta_padded", "sdpa_deberta_padded"),
                 ("rpe_deberta_padded", "flex_deberta_padded"),
                 ("rpe_none_window", "sdpa_window"),
                 ("rpe_none_window", "flex_window"),
                 ("rpe_none_local", "sdpa_local"),
                 ("rpe_none_local", "flex_local")]:
        if a not in impls or b not in impls:
            continue
        out.append("| %s vs %s | %s |" % (LABELS[a], LABELS[b], " | ".join(
            time_ratio(a, b, n, "%.2f×") for n in lengths)))
    out += ["", "Cost over rpe bias-free (time ratio):", ""] + header("term")
    for impl in ("rpe_t5", "rpe_clip", "rpe_alibi", "rpe_swin", "rpe_shaw",
                 "rpe_deberta"):
        if impl in impls:
            out.append("| %s | %s |" % (LABELS[impl], " | ".join(
                time_ratio("rpe_none", impl, n, "%.3f") for n in lengths)))
    for a, b, label in [("rpe_t5", "rpe_t5_causal", "T5 causal / T5"),
                        ("rpe_deberta", "rpe_deberta_causal",
                         "DeBERTa causal / DeBERTa"),
                        ("rpe_deberta", "rpe_deberta_padded",
                         "DeBERTa keys < L/2 / DeBERTa"),
                        ("rpe_none", "rpe_none_window",
                         "sliding window %d / bias-free" % WINDOW),
                        ("rpe_none", "rpe_none_local",
                         "local window ±%d / bias-free" % HALF)]:
        if a in impls and b in impls:
            out.append("| %s | %s |" % (label, " | ".join(
                time_ratio(a, b, n, "%.3f") for n in lengths)))
    out += ["", "Extra memory (MiB): peak resident memory during the timed "
            "calls above the level after the warm-up (heap trimmed), minus "
            "the output:",
            ""] + header("implementation")
    for impl in impls:
        out.append("| %s | %s |" % (LABELS.get(impl, impl), " | ".join(
            cell(impl, n, "extra_mib", lambda m: "%.1f" % m)
            for n in lengths)))
    if results["decode"]:
        out += ["", "Decode (B=8, H=32, Hkv=8, D=128, causal, q_offset = Lk − "
                "Lq), ms:", "", "| Lq | Lk | rpe | SDPA | rpe vs SDPA |",
                "|---:|---:|---:|---:|---:|"]
        dec = {(r["impl"], r["Lq"], r["Lk"]): r for r in results["decode"]}
        for lk in DECODE_LK:
            for lq in DECODE_LQ:
                a, b = dec.get(("rpe_decode", lq, lk)), \
                    dec.get(("sdpa_decode", lq, lk))
                if not a or not b or "ms" not in a or "ms" not in b:
                    continue
                out.append("| %d | %d | %.3f | %.3f | %.2f× |" % (
                    lq, lk, a["ms"], b["ms"], b["ms"] / a["ms"]))
    return "\n".join(out) + "\n"


def plot(results, lengths, impls, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for impl in impls:
        pts = [(r["L"], r["gflops"]) for r in results["rows"]
               if r["impl"] == impl and "gflops" in r]
        if pts:
            xs, ys = zip(*pts)
            style = "-o" if impl.startswith("rpe") else "--s"
            ax.plot(xs, ys, style, label=LABELS.get(impl, impl), markersize=4)
    ax.axhline(results["peak"], color="k", linestyle=":",
               label="FMA peak (%d threads)" % results["threads"])
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths)
    ax.set_xticklabels([str(n) for n in lengths])
    ax.set_xlabel("sequence length L (B=1, H=8, D=64, fp32)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("CPU attention, %d threads" % results["threads"])
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
