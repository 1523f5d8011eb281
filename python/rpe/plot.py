"""PNG heatmaps of relative position biases and attention weights.

The seed write-up's visual checks, as functions and as ``python -m rpe plot``:

* its §3.4: the attention weights of each head as an Lq×Lk heatmap — with a
  position bias the diagonal (i = j) and its neighbours stand out;
* its §5.3: the bias of each head as a heatmap (a Toeplitz pattern: constant
  along diagonals) and the bias table against the relative distance (largest
  near 0, falling off with |distance|).

Biases and weights are computed with :mod:`rpe.reference`, or, with
``compiled=True``, by rpe-compiled code (``rpe.compile`` of a small
``rpe.relative_bias`` / ``rpe.attention`` module). Figures are drawn with
matplotlib's Agg canvas (no display, no pyplot state).

    from rpe import plot, reference as ref
    s = ref.T5(32, 128, True)
    table = plot.make_table(s, heads=4, seed=0)
    plot.save_bias_heatmap(plot.compute_bias(s, table, 64, 64), "bias.png")
    plot.save_curve(s, table, "curve.png")
"""

import argparse
import math
import os

import numpy as np

from . import reference as ref

__all__ = [
    "SCHEMES", "make_scheme", "make_table", "relative_distances",
    "compute_bias", "compute_attention_weights",
    "bias_figure", "attention_figure", "curve_figure",
    "save_bias_heatmap", "save_attention_heatmap", "save_curve",
]

SCHEMES = ("clip", "t5", "log", "window2d", "alibi")
MAX_LENGTH = 4096
MAX_HEADS = 64


# ---------------------------------------------------------------------------
# Schemes, tables and the quantities that are plotted
# ---------------------------------------------------------------------------

def make_scheme(name, max_distance=None, num_buckets=32, bidirectional=True,
                position_buckets=256, max_relative_positions=512, window=(7, 7)):
    """A bucketing scheme of :mod:`rpe.reference` from CLI-style parameters
    (``None`` for ``alibi``, which has no table). Raises ValueError for
    parameters that rpe's verifiers reject (docs/Decisions.md)."""
    if name == "clip":
        k = 8 if max_distance is None else int(max_distance)
        if not 0 <= k <= 2 ** 30:
            raise ValueError("clip: max_distance must be in [0, 2^30], got %d" % k)
        return ref.Clip(k)
    if name == "t5":
        n, m = int(num_buckets), 128 if max_distance is None else int(max_distance)
        if n < (4 if bidirectional else 2):
            raise ValueError("t5: num_buckets must be >= %d%s, got %d" % (
                4 if bidirectional else 2, " when bidirectional" if bidirectional else "", n))
        e = (n // 2 if bidirectional else n) // 2
        if not e < m <= 2 ** 30:
            raise ValueError("t5: max_distance must be > %d (num_buckets/%d) and "
                             "<= 2^30, got %d" % (e, 4 if bidirectional else 2, m))
        return ref.T5(n, m, bidirectional)
    if name == "log":
        p, m = int(position_buckets), int(max_relative_positions)
        if p == 1 or p < 0:
            raise ValueError("log: position_buckets must be 0 or >= 2, got %d" % p)
        if m < 1:
            raise ValueError("log: max_relative_positions must be >= 1, got %d" % m)
        if p > 0 and not m > p // 2 + 1:
            raise ValueError("log: max_relative_positions must be > position_buckets/2 + 1 "
                             "(= %d), got %d" % (p // 2 + 1, m))
        return ref.Log(p, m)
    if name == "window2d":
        wh, ww = (int(v) for v in window)
        if not (1 <= wh <= 64 and 1 <= ww <= 64):
            raise ValueError("window2d: window sides must be in [1, 64] for plotting, "
                             "got %dx%d" % (wh, ww))
        return ref.Window2D(wh, ww)
    if name == "alibi":
        return None
    raise ValueError("unknown scheme %r (choose from %s)" % (name, ", ".join(SCHEMES)))


def relative_distances(scheme, span=None):
    """Distances ``d = j - i`` (key - query) that show a scheme's whole range."""
    if span is None:
        if isinstance(scheme, ref.Clip):
            span = scheme.max_distance + max(4, scheme.max_distance // 2)
        elif isinstance(scheme, ref.T5):
            span = int(scheme.m * 1.5)
        elif isinstance(scheme, ref.Log):
            span = int((scheme.m if scheme.p > 0 else scheme.m) * 1.25) + 2
        elif isinstance(scheme, ref.Window2D):
            span = scheme.length - 1
        else:
            span = 32
    span = max(1, min(int(span), 1 << 20))
    return np.arange(-span, span + 1, dtype=np.int64)


def _bucket_of_distance(scheme, d):
    """bucket(i, j) with j - i = d (i = max(-d, 0), j = i + d)."""
    d = np.asarray(d, dtype=np.int64)
    i = np.maximum(-d, 0)
    return scheme.bucket(i, i + d)


def make_table(scheme, heads, seed=0, init="decay", std=1.0):
    """An NB×H bias table for ``scheme``.

    ``init="normal"``: N(0, std²) (an untrained table). ``init="decay"``: what
    the seed's §5.3 says a trained table looks like — largest at distance 0
    and falling with |distance| at a different rate per head (ALiBi-like
    slopes over each bucket's smallest |distance|), plus N(0, (std/20)²)
    noise, so that the heatmaps read as such."""
    if scheme is None:
        raise ValueError("alibi has no bias table")
    heads = int(heads)
    rng = np.random.default_rng(seed)
    nb = scheme.num_buckets
    if init == "normal":
        return (std * rng.standard_normal((nb, heads))).astype(np.float32)
    if init != "decay":
        raise ValueError("init must be 'normal' or 'decay', got %r" % (init,))
    # Smallest |distance| that lands in each bucket (buckets never reached
    # keep the largest one seen).
    if isinstance(scheme, ref.Window2D):
        n = scheme.length
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        b = scheme.bucket(i, j).ravel()
        dh = np.abs(i // scheme.ww - j // scheme.ww).ravel()
        dw = np.abs(i % scheme.ww - j % scheme.ww).ravel()
        dist = np.sqrt(dh ** 2 + dw ** 2)
    else:
        d = relative_distances(scheme, span=max(4 * nb, 2 * _scheme_reach(scheme)))
        b = _bucket_of_distance(scheme, d)
        dist = np.abs(d).astype(np.float64)
    rep = np.full(nb, np.nan)
    for bucket, value in zip(b, dist):
        if np.isnan(rep[bucket]) or value < rep[bucket]:
            rep[bucket] = value
    rep = np.where(np.isnan(rep), np.nanmax(rep), rep)
    slopes = ref.default_alibi_slopes(heads) * 8.0
    scale = np.log1p(rep)[:, None]                      # log-like fall-off
    table = std * (1.0 - slopes[None, :] * scale / max(scale.max(), 1.0) * 4.0)
    table += (std / 20.0) * rng.standard_normal((nb, heads))
    return table.astype(np.float32)


def _scheme_reach(scheme):
    if isinstance(scheme, ref.Clip):
        return scheme.max_distance + 1
    if isinstance(scheme, ref.T5):
        return scheme.m
    if isinstance(scheme, ref.Log):
        return scheme.m
    return 16


def _relative_bias_module(scheme, table):
    nb, h = table.shape
    return """
func.func @bias(%table: tensor<{nb}x{h}xf32>, %off: index, %lq: index, %lk: index)
    -> tensor<{h}x?x?xf32> {{
  %b = rpe.relative_bias %table offset %off sizes(%lq, %lk) by {s}
      : tensor<{nb}x{h}xf32> -> tensor<{h}x?x?xf32>
  return %b : tensor<{h}x?x?xf32>
}}""".format(nb=nb, h=h, s=scheme.mlir())


def _alibi_module(heads, symmetric):
    return """
func.func @bias(%off: index, %lq: index, %lk: index) -> tensor<{h}x?x?xf32> {{
  %b = rpe.alibi offset %off sizes(%lq, %lk){sym} : tensor<{h}x?x?xf32>
  return %b : tensor<{h}x?x?xf32>
}}""".format(h=heads, sym=" symmetric" if symmetric else "")


def compute_bias(scheme, table, lq, lk, q_offset=0, compiled=False, heads=None,
                 symmetric=True):
    """H×Lq×Lk bias: ``rpe.relative_bias`` of ``table`` by ``scheme``, or
    ALiBi (``scheme=None``, ``heads`` heads). ``compiled=True`` runs
    rpe-compiled code instead of :mod:`rpe.reference`."""
    if scheme is None:
        if compiled:
            from . import compile as rpe_compile
            mod = rpe_compile(_alibi_module(int(heads), symmetric))
            return np.asarray(mod.bias(int(q_offset), int(lq), int(lk)), np.float64)
        return ref.alibi(int(heads), lq, lk, symmetric=symmetric, q_offset=q_offset)
    table = np.ascontiguousarray(table, dtype=np.float32)
    if table.ndim != 2 or table.shape[0] != scheme.num_buckets:
        raise ValueError("the table must be %d x H for %r, got shape %s"
                         % (scheme.num_buckets, scheme, table.shape))
    if compiled:
        from . import compile as rpe_compile
        mod = rpe_compile(_relative_bias_module(scheme, table))
        return np.asarray(mod.bias(table, int(q_offset), int(lq), int(lk)), np.float64)
    return ref.relative_bias(table, lq, lk, scheme, q_offset=q_offset)


def compute_attention_weights(q, k, bias=None, causal=False, scale=None,
                              compiled=False):
    """Softmax weights B×H×Lq×Lk of ``rpe.attention`` (``V = I`` gives them)."""
    q = np.ascontiguousarray(q, dtype=np.float32)
    k = np.ascontiguousarray(k, dtype=np.float32)
    b, h, lq, d = q.shape
    lk = k.shape[2]
    eye = np.ascontiguousarray(np.broadcast_to(np.eye(lk, dtype=np.float32),
                                               (b, k.shape[1], lk, lk)))
    if not compiled:
        return ref.attention(q, k, eye, bias=bias, causal=causal, scale=scale)
    from . import compile as rpe_compile
    qt = "tensor<%dx%dx%dx%dxf32>" % (b, h, lq, d)
    kt = "tensor<%dx%dx%dx%dxf32>" % (b, k.shape[1], lk, d)
    vt = "tensor<%dx%dx%dx%dxf32>" % (b, k.shape[1], lk, lk)
    ot = "tensor<%dx%dx%dx%dxf32>" % (b, h, lq, lk)
    args, extra = ["%q: " + qt, "%k: " + kt, "%v: " + vt], ""
    call = [q, k, eye]
    if bias is not None:
        bias = np.ascontiguousarray(bias, dtype=np.float32)
        bt = "tensor<%sxf32>" % "x".join(str(s) for s in bias.shape)
        args.append("%bias: " + bt)
        extra += " bias(%%bias : %s)" % bt
        call.append(bias)
    if causal:
        extra += " causal"
    if scale is not None:
        extra += " scale = %r" % float(scale)
    text = """
func.func @weights({args}) -> {ot} {{
  %p = rpe.attention %q, %k, %v{extra} : {qt}, {kt}, {vt} -> {ot}
  return %p : {ot}
}}""".format(args=", ".join(args), extra=extra, qt=qt, kt=kt, vt=vt, ot=ot)
    return np.asarray(rpe_compile(text).weights(*call), np.float64)


# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------

def _figure(width, height):
    try:
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the machine
        raise ImportError("rpe.plot needs matplotlib (Debian: apt install "
                          "python3-matplotlib; pip: pip install matplotlib)") from None
    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _grid(n):
    cols = min(n, 4)
    return (n + cols - 1) // cols, cols


def _select_heads(n, heads):
    if heads is None:
        return list(range(n))
    heads = [int(h) for h in heads]
    for h in heads:
        if not 0 <= h < n:
            raise ValueError("head %d out of range [0, %d)" % (h, n))
    return heads


def _heatmaps(maps, titles, suptitle, cbar_label, cmap, q_offset=0, vmin=None,
              vmax=None):
    from matplotlib.ticker import MaxNLocator
    n = len(maps)
    rows, cols = _grid(n)
    lq, lk = maps[0].shape
    aspect = lq / max(lk, 1)
    panel = 3.0
    fig = _figure(cols * panel + 1.0, rows * panel * min(max(aspect, 0.4), 2.5) + 0.8)
    axes = fig.subplots(rows, cols, squeeze=False)
    if vmin is None:
        vmin = float(min(m.min() for m in maps))
    if vmax is None:
        vmax = float(max(m.max() for m in maps))
    if vmin == vmax:
        vmin, vmax = vmin - 0.5, vmax + 0.5
    extent = (-0.5, lk - 0.5, q_offset + lq - 0.5, q_offset - 0.5)
    image = None
    for idx, ax in enumerate(axes.flat):
        if idx >= n:
            ax.set_visible(False)
            continue
        image = ax.imshow(maps[idx], cmap=cmap, vmin=vmin, vmax=vmax,
                          interpolation="nearest", aspect="auto", extent=extent)
        ax.set_title(titles[idx], fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if idx // cols == rows - 1 or idx + cols >= n:
            ax.set_xlabel("key position j")
        if idx % cols == 0:
            ax.set_ylabel("query position i + q_offset" if q_offset else "query position i")
    fig.colorbar(image, ax=axes.ravel().tolist(), label=cbar_label, shrink=0.9)
    fig.suptitle(suptitle, fontsize=11)
    return fig


def bias_figure(bias, title=None, heads=None, q_offset=0):
    """Figure of an H×Lq×Lk (or 1×H×Lq×Lk) bias, one heatmap per head, on a
    shared colour scale."""
    bias = np.asarray(bias, dtype=np.float64)
    if bias.ndim == 4 and bias.shape[0] == 1:
        bias = bias[0]
    if bias.ndim != 3 or 0 in bias.shape:
        raise ValueError("bias must be H x Lq x Lk, got shape %s" % (bias.shape,))
    sel = _select_heads(bias.shape[0], heads)
    maps = [bias[h] for h in sel]
    titles = ["head %d" % h for h in sel]
    return _heatmaps(maps, titles, title or "relative position bias (H×Lq×Lk = %s)"
                     % "×".join(map(str, bias.shape)), "bias", "viridis", q_offset)


def _diagonal_mass(p, q_offset=0):
    lq, lk = p.shape
    i = np.arange(lq)[:, None] + q_offset
    j = np.arange(lk)[None, :]
    near = np.abs(i - j) <= 1
    return float((p * near).sum() / max(p.sum(), 1e-30))


def attention_figure(weights, title=None, batch=0, heads=None, q_offset=0):
    """Figure of attention weights (B×H×Lq×Lk or H×Lq×Lk), one heatmap per
    head of batch element ``batch``, colour scale from 0. Each title gives
    the share of the weight on |i − j| ≤ 1 (the seed's §3.4 check)."""
    p = np.asarray(weights, dtype=np.float64)
    if p.ndim == 3:
        p = p[None]
    if p.ndim != 4 or 0 in p.shape:
        raise ValueError("weights must be B x H x Lq x Lk, got shape %s" % (p.shape,))
    if not 0 <= batch < p.shape[0]:
        raise ValueError("batch %d out of range [0, %d)" % (batch, p.shape[0]))
    sel = _select_heads(p.shape[1], heads)
    maps = [p[batch, h] for h in sel]
    titles = ["head %d  (|i−j|≤1: %.0f%%)" % (h, 100 * _diagonal_mass(m, q_offset))
              for h, m in zip(sel, maps)]
    return _heatmaps(maps, titles, title or "attention weights (batch %d)" % batch,
                     "attention weight", "viridis", q_offset, vmin=0.0,
                     vmax=max(float(max(m.max() for m in maps)), 1e-12))


def curve_figure(scheme, table=None, heads=None, distances=None, title=None,
                 alibi_heads=None, symmetric=True):
    """Bias against relative distance ``d = j − i`` per head (top) and the
    bucket each distance falls in (bottom; not for ALiBi)."""
    if scheme is None:
        n = int(alibi_heads)
        d = relative_distances(None) if distances is None else np.asarray(distances, np.int64)
        slopes = ref.default_alibi_slopes(n)
        values = (-slopes[None, :] * np.abs(d)[:, None] if symmetric
                  else slopes[None, :] * d[:, None])
        buckets = None
    else:
        if isinstance(scheme, ref.Window2D):
            raise ValueError("window2d has no 1-D distance; plot its bias heatmap instead")
        table = np.asarray(table, dtype=np.float64)
        if table.ndim != 2 or table.shape[0] != scheme.num_buckets:
            raise ValueError("the table must be %d x H for %r, got shape %s"
                             % (scheme.num_buckets, scheme, table.shape))
        d = relative_distances(scheme) if distances is None else np.asarray(distances, np.int64)
        buckets = _bucket_of_distance(scheme, d)
        values = table[buckets]                            # len(d) x H
    sel = _select_heads(values.shape[1], heads)
    fig = _figure(8.0, 6.0 if buckets is not None else 4.0)
    if buckets is not None:
        ax, axb = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    else:
        ax, axb = fig.subplots(1, 1), None
    for h in sel:
        ax.plot(d, values[:, h], drawstyle="steps-mid", lw=1.4, label="head %d" % h)
    from matplotlib.ticker import MaxNLocator
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.axvline(0, color="0.6", lw=0.8, ls=":")
    ax.set_ylabel("bias")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, ncol=min(len(sel), 4), loc="best")
    if axb is not None:
        axb.plot(d, buckets, drawstyle="steps-mid", color="k", lw=1.2)
        axb.set_ylabel("bucket")
        axb.set_xlabel("relative distance d = j − i (key − query)")
        axb.grid(True, alpha=0.3)
    else:
        ax.set_xlabel("relative distance d = j − i (key − query)")
    fig.suptitle(title or ("ALiBi" if scheme is None else repr(scheme))
                 + ": bias table against distance", fontsize=11)
    return fig


def _save(fig, path):
    path = os.fspath(path)
    fig.savefig(path, format="png")
    return path


def save_bias_heatmap(bias, path, **kw):
    """Writes :func:`bias_figure` to ``path`` (PNG); returns the path."""
    return _save(bias_figure(bias, **kw), path)


def save_attention_heatmap(weights, path, **kw):
    """Writes :func:`attention_figure` to ``path`` (PNG); returns the path."""
    return _save(attention_figure(weights, **kw), path)


def save_curve(scheme, table, path, **kw):
    """Writes :func:`curve_figure` to ``path`` (PNG); returns the path."""
    return _save(curve_figure(scheme, table, **kw), path)


# ---------------------------------------------------------------------------
# python -m rpe plot ...
# ---------------------------------------------------------------------------

def _positive(lo=1, hi=None):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("must be an integer, got %r" % (text,))
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(
                "must be in [%d, %s], got %d" % (lo, hi if hi is not None else "inf", value))
        return value
    return parse


def _window(text):
    parts = text.lower().replace("×", "x").split("x")
    try:
        wh, ww = (int(p) for p in parts) if len(parts) == 2 else (int(parts[0]),) * 2
    except ValueError:
        raise argparse.ArgumentTypeError("window must be HxW (e.g. 7x7) or N, got %r" % text)
    return wh, ww


def _png_path(text):
    if not text.lower().endswith(".png"):
        raise argparse.ArgumentTypeError("output must be a .png file, got %r" % text)
    parent = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError("output directory %s does not exist" % parent)
    return text


def _heads_list(text):
    try:
        heads = [int(v) for v in text.split(",") if v.strip() != ""]
    except ValueError:
        raise argparse.ArgumentTypeError("--show-heads takes comma-separated head "
                                         "indices, got %r" % text)
    if not heads:
        raise argparse.ArgumentTypeError("--show-heads is empty")
    return heads


def add_cli(subparsers):
    """Adds ``plot`` (with ``bias``, ``attention``, ``curve``) to an argparse
    sub-parser collection."""
    plot = subparsers.add_parser(
        "plot", help="PNG heatmaps of biases / attention weights, bias-vs-distance curves",
        description="Write PNG plots of relative position biases computed by rpe "
                    "(rpe.reference, or compiled code with --compiled).")
    kinds = plot.add_subparsers(dest="kind", metavar="{bias,attention,curve}")
    kinds.required = True

    def common(p, lengths=True):
        g = p.add_argument_group("bucketing scheme")
        g.add_argument("--scheme", choices=SCHEMES, default="t5",
                       help="bucketing scheme (default: %(default)s)")
        g.add_argument("--max-distance", type=_positive(0, 2 ** 30),
                       help="clip: K (default 8); t5: max_distance (default 128)")
        g.add_argument("--num-buckets", type=_positive(2, 1 << 20),
                       default=32, help="t5: number of buckets (default: %(default)s)")
        g.add_argument("--unidirectional", action="store_true",
                       help="t5: unidirectional (decoder) buckets")
        g.add_argument("--position-buckets", type=_positive(0, 1 << 20),
                       default=256, help="log: position_buckets P (default: %(default)s)")
        g.add_argument("--max-relative-positions",
                       type=_positive(1, 1 << 20), default=512,
                       help="log: max_relative_positions M (default: %(default)s)")
        g.add_argument("--window", type=_window, default=(7, 7),
                       help="window2d: HxW (default 7x7); the length is H*W")
        g.add_argument("--directional", action="store_true",
                       help="alibi: m*(j - i) instead of -m*|i - j|")
        t = p.add_argument_group("table and sizes")
        t.add_argument("--heads", type=_positive(1, MAX_HEADS), default=4,
                       help="number of heads (default: %(default)s)")
        t.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
        t.add_argument("--init", choices=("decay", "normal"), default="decay",
                       help="random table: 'decay' (trained-looking, falls with "
                            "|distance|) or 'normal' (untrained); default: %(default)s")
        t.add_argument("--std", type=float, default=1.0,
                       help="table scale (default: %(default)s)")
        t.add_argument("--table", metavar="FILE.npy",
                       help="load the NB x H bias table from a .npy file instead")
        if lengths:
            t.add_argument("--length", type=_positive(1, MAX_LENGTH),
                           help="sequence length (Lq = Lk; default 64, H*W for window2d)")
            t.add_argument("--key-length", type=_positive(1, MAX_LENGTH),
                           help="key length Lk if different from --length")
            t.add_argument("--q-offset", type=_positive(0, 1 << 30), default=0,
                           help="query positions start here (default: %(default)s)")
            t.add_argument("--show-heads", type=_heads_list, metavar="H,H,...",
                           help="plot only these heads")
            t.add_argument("--compiled", action="store_true",
                           help="compute with rpe.compile instead of rpe.reference")
        p.add_argument("-o", "--output", type=_png_path, default=None,
                       help="output PNG (default: rpe-%s.png)" % p.prog.split()[-1])

    bias = kinds.add_parser("bias", help="heatmap of the bias, one panel per head",
                            description="Heatmap of an H x Lq x Lk relative position bias.")
    common(bias)
    att = kinds.add_parser("attention", help="heatmap of attention weights with the bias",
                           description="Heatmap of softmax(q.k^T*scale + bias) on random "
                                       "q, k (the seed's 3.4 check).")
    common(att)
    g = att.add_argument_group("attention")
    g.add_argument("--head-dim", type=_positive(1, 1024), default=16,
                   help="head dimension D (default: %(default)s)")
    g.add_argument("--batch", type=_positive(1, 64), default=1,
                   help="batch size; batch element 0 is plotted (default: %(default)s)")
    g.add_argument("--content-scale", type=float, default=1.0,
                   help="standard deviation of the random q, k (0: bias only; "
                        "default: %(default)s)")
    g.add_argument("--causal", action="store_true", help="causal mask")
    curve = kinds.add_parser("curve", help="bias table against relative distance",
                             description="Bias of each head against the relative "
                                         "distance j - i, and the bucket of each distance.")
    common(curve, lengths=False)
    curve.add_argument("--span", type=_positive(1, 1 << 20),
                       help="plot distances in [-span, span] (default: scheme-dependent)")
    curve.add_argument("--show-heads", type=_heads_list, metavar="H,H,...",
                       help="plot only these heads")
    for p in (bias, att, curve):
        p.set_defaults(func=_run, parser=p)
    return plot


def _run(args):
    parser = args.parser
    try:
        scheme = make_scheme(args.scheme, max_distance=args.max_distance,
                             num_buckets=args.num_buckets,
                             bidirectional=not args.unidirectional,
                             position_buckets=args.position_buckets,
                             max_relative_positions=args.max_relative_positions,
                             window=args.window)
    except ValueError as e:
        parser.error(str(e))
    if not math.isfinite(args.std) or args.std <= 0:
        parser.error("--std must be a positive number, got %r" % args.std)
    table = None
    if scheme is not None:
        if args.table:
            try:
                table = np.load(args.table, allow_pickle=False)
            except (OSError, ValueError) as e:
                parser.error("cannot read --table %s: %s" % (args.table, e))
            if table.ndim != 2 or table.shape[0] != scheme.num_buckets:
                parser.error("--table %s has shape %s; %r needs %d x H"
                             % (args.table, table.shape, scheme, scheme.num_buckets))
            if table.shape[1] > MAX_HEADS:
                parser.error("--table has %d heads (at most %d)" % (table.shape[1], MAX_HEADS))
            table = table.astype(np.float32)
        else:
            table = make_table(scheme, args.heads, seed=args.seed, init=args.init, std=args.std)
    elif args.table:
        parser.error("--table does not apply to --scheme alibi")
    heads_n = table.shape[1] if table is not None else args.heads
    show = getattr(args, "show_heads", None)
    if show is not None:
        bad = [h for h in show if not 0 <= h < heads_n]
        if bad:
            parser.error("--show-heads %s out of range [0, %d)"
                         % (",".join(map(str, bad)), heads_n))
    output = args.output or "rpe-%s.png" % args.kind

    if args.kind == "curve":
        if isinstance(scheme, ref.Window2D):
            parser.error("curve: window2d has no 1-D distance; use 'plot bias --scheme window2d'")
        d = None if args.span is None else np.arange(-args.span, args.span + 1)
        fig = curve_figure(scheme, table, heads=show, distances=d,
                           alibi_heads=heads_n, symmetric=not args.directional)
        _save(fig, output)
        print(output)
        return 0

    if isinstance(scheme, ref.Window2D):
        n = scheme.length
        if args.length not in (None, n) or args.key_length not in (None, n):
            parser.error("window2d: the length is fixed to H*W = %d" % n)
        if args.q_offset:
            parser.error("window2d: --q-offset does not apply")
        lq = lk = n
    else:
        lq = args.length or 64
        lk = args.key_length or lq
    try:
        bias = compute_bias(scheme, table, lq, lk, q_offset=args.q_offset,
                            compiled=args.compiled, heads=heads_n,
                            symmetric=not args.directional)
        if args.kind == "bias":
            fig = bias_figure(bias, heads=show, q_offset=args.q_offset,
                              title="%s bias%s (H×Lq×Lk = %s)" % (
                                  "ALiBi" if scheme is None else repr(scheme),
                                  ", compiled" if args.compiled else "",
                                  "×".join(map(str, bias.shape))))
        else:
            if not math.isfinite(args.content_scale) or args.content_scale < 0:
                parser.error("--content-scale must be >= 0, got %r" % args.content_scale)
            rng = np.random.default_rng(args.seed + 1)
            q = (args.content_scale * rng.standard_normal(
                (args.batch, heads_n, lq, args.head_dim))).astype(np.float32)
            k = (args.content_scale * rng.standard_normal(
                (args.batch, heads_n, lk, args.head_dim))).astype(np.float32)
            p = compute_attention_weights(q, k, bias=bias.astype(np.float32),
                                          causal=args.causal, compiled=args.compiled)
            fig = attention_figure(p, heads=show, q_offset=args.q_offset,
                                   title="attention weights with %s bias%s%s" % (
                                       "ALiBi" if scheme is None else repr(scheme),
                                       ", causal" if args.causal else "",
                                       ", compiled" if args.compiled else ""))
    except (ImportError, OSError) as e:
        # matplotlib or the rpe library (librpe-c.so) is missing or unloadable.
        raise SystemExit("rpe plot: error: %s" % e)
    except Exception as e:  # a compile failure (rpe.CompileError) or similar
        if type(e).__name__ == "CompileError":
            raise SystemExit("rpe plot: error: compilation failed:\n%s" % e)
        raise
    _save(fig, output)
    print(output)
    return 0
