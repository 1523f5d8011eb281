"""Builders that emit rpe IR text for common attention layers and single ops.

Every builder returns an :class:`IR`: a ``str`` holding a ``module`` with one
public ``func.func``, ready for ``rpe.compile`` or ``rpe-opt``.  The
attributes of the returned object describe the function:

* ``ir.func_name`` -- the symbol (``name=`` argument of the builder),
* ``ir.arg_names`` / ``ir.arg_types`` -- the arguments in call order,
* ``ir.result_types`` -- the result types (always one tensor).

Conventions shared by all builders
----------------------------------
* Sizes are Python ints (static) or ``None`` (dynamic, ``?`` in the types).
  Where an op needs a dynamic size that no operand carries, the layer
  builders obtain it inside the function with ``tensor.dim``; the single-op
  builders for ``rpe.relative_bias`` / ``rpe.alibi`` / ``rpe.shaw_logits``
  take it as a trailing ``index`` argument instead.
* ``elem`` is ``"f32"``, ``"f16"`` or ``"bf16"``: the element type of every
  floating-point tensor of the function (the rpe verifiers require one element
  type per op).
* ``q_offset``: ``None``/``False`` -- absent; ``True`` -- an ``index``
  argument ``%q_offset``; an ``int`` -- an ``arith.constant`` in the body.
* ``key_lengths=True`` adds an argument ``%key_lengths : tensor<Bxi32>``.
* Argument order: the tensors named in each builder's docstring, then
  ``key_lengths`` (if any), then ``index`` scalars (``q_offset``, then
  dynamic sizes).
* Bucketing schemes are the classes of :mod:`rpe.reference` (``Clip``,
  ``T5``, ``Log``, ``Window2D``); their ``.mlir()`` gives the in-op spelling
  (``clip<max_distance = 4>``).  They are re-exported here.

Several single-function modules can be combined into one module with
:func:`merge` (give them distinct ``name=`` values), which lets one compile
serve many functions.
"""

import math

from .reference import Clip, Log, T5, Window2D

__all__ = [
    "IR", "Clip", "T5", "Log", "Window2D", "ELEMENT_TYPES",
    "tensor_type", "fmt_float", "merge",
    # op text, for generators that build functions of their own
    "alibi_text", "rotary_text",
    # single ops
    "bucket", "bucket_scalar", "relative_bias", "alibi", "rotary",
    "shaw_logits", "shaw_values", "disentangled_bias", "attention",
    # layers
    "relative_bias_attention", "t5_attention", "swin_window_attention",
    "alibi_attention", "rope_attention", "shaw_attention",
    "deberta_attention", "deberta_scale",
]

ELEMENT_TYPES = ("f32", "f16", "bf16")
BUCKETINGS = (Clip, T5, Log, Window2D)


class IR(str):
    """MLIR text of a module, with a description of its function(s).

    For a single-function module: ``func_name``, ``arg_names``,
    ``arg_types``, ``result_types``.  ``functions`` maps every function name
    to ``(arg_names, arg_types, result_types)`` (several after
    :func:`merge`)."""

    def __new__(cls, text, functions, bodies):
        self = super().__new__(cls, text)
        self.functions = dict(functions)
        self._bodies = list(bodies)
        if len(self.functions) == 1:
            (name, (an, at, rt)), = self.functions.items()
            self.func_name, self.arg_names = name, list(an)
            self.arg_types, self.result_types = list(at), list(rt)
        return self

    def signature(self, name=None):
        """``"name(arg: type, ...) -> (types)"`` for documentation."""
        name = name or self.func_name
        an, at, rt = self.functions[name]
        return "%s(%s) -> %s" % (name, ", ".join(
            "%s: %s" % a for a in zip(an, at)), ", ".join(rt))


def _module(bodies, functions):
    text = "module {\n" + "\n\n".join(bodies) + "\n}\n"
    return IR(text, functions, bodies)


def merge(*irs):
    """One module holding the functions of every given :class:`IR` (their
    function names must differ)."""
    bodies, functions = [], {}
    for ir in irs:
        for name in ir.functions:
            if name in functions:
                raise ValueError("duplicate function @%s in merge()" % name)
        functions.update(ir.functions)
        bodies.extend(ir._bodies)
    return _module(bodies, functions)


# ---------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------

def tensor_type(shape, elem):
    """``tensor<2x?x8xf32>`` for ``shape=(2, None, 8)``."""
    dims = "".join(("?" if d is None else str(int(d))) + "x" for d in shape)
    return "tensor<%s%s>" % (dims, elem)


def fmt_float(v):
    """An MLIR float literal that round-trips an f64 (always has a '.')."""
    v = float(v)
    if not math.isfinite(v):
        raise ValueError("non-finite float %r" % v)
    s = repr(v)
    if "e" in s or "E" in s:
        mant, _, exp = s.lower().partition("e")
        if "." not in mant:
            mant += ".0"
        return mant + "e" + exp
    if "." not in s:
        s += ".0"
    return s


def _check_elem(elem):
    if elem not in ELEMENT_TYPES:
        raise ValueError("elem must be one of %s, got %r" % (ELEMENT_TYPES, elem))


def _check_bucketing(b):
    if not isinstance(b, BUCKETINGS):
        raise TypeError("expected a bucketing scheme (rpe.reference.Clip, T5, "
                        "Log or Window2D), got %r" % (b,))
    return b.mlir()


class _Func:
    """Accumulates a function's arguments and body lines."""

    def __init__(self, name):
        if not name or not all(c.isalnum() or c == "_" for c in name):
            raise ValueError("bad function name %r" % name)
        self.name = name
        self.args = []          # (ssa without %, type)
        self.lines = []
        self.used = set()
        self.consts = {}

    def fresh(self, base):
        name, k = base, 0
        while name in self.used:
            k += 1
            name = "%s_%d" % (base, k)
        self.used.add(name)
        return "%" + name

    def arg(self, base, type_):
        ssa = self.fresh(base)
        self.args.append((ssa[1:], type_))
        return ssa

    def emit(self, base, text):
        ssa = self.fresh(base)
        self.lines.append("    %s = %s" % (ssa, text))
        return ssa

    def index_const(self, v):
        v = int(v)
        if v not in self.consts:
            self.consts[v] = self.emit("c%d" % v if v >= 0 else "cm%d" % -v,
                                       "arith.constant %d : index" % v)
        return self.consts[v]

    def dim(self, value, type_, d, static=None):
        """SSA value of dimension ``d`` of ``value``; a constant when static."""
        if static is not None:
            return self.index_const(static)
        return self.emit("dim", "tensor.dim %s, %s : %s"
                         % (value, self.index_const(d), type_))

    def finish(self, result, result_type):
        sig = ", ".join("%%%s: %s" % a for a in self.args)
        body = ["  func.func @%s(%s) -> %s {" % (self.name, sig, result_type)]
        body += self.lines
        body.append("    return %s : %s" % (result, result_type))
        body.append("  }")
        fns = {self.name: ([a[0] for a in self.args], [a[1] for a in self.args],
                           [result_type])}
        return _module(["\n".join(body)], fns)


def _q_offset(f, q_offset):
    """SSA value of q_offset (argument or constant), or None."""
    if q_offset is None or q_offset is False:
        return None
    if q_offset is True:
        return f.arg("q_offset", "index")
    return f.index_const(q_offset)


def _scale_tensor(f, x, shape, elem, factor, name="scaled"):
    """``factor * x`` elementwise (linalg.generic; f32 arithmetic, rounded
    back to ``elem``)."""
    t = tensor_type(shape, elem)
    dyn = [f.dim(x, t, d) for d, s in enumerate(shape) if s is None]
    empty = f.emit("empty", "tensor.empty(%s) : %s" % (", ".join(dyn), t))
    c = f.emit("factor", "arith.constant %s : f32" % fmt_float(factor))
    ids = ", ".join("d%d" % d for d in range(len(shape)))
    amap = "affine_map<(%s) -> (%s)>" % (ids, ids)
    body = ["^bb0(%%sa: %s, %%so: %s):" % (elem, elem)]
    if elem == "f32":
        body.append("      %sm = arith.mulf %sa, " + c + " : f32")
        body.append("      linalg.yield %sm : f32")
    else:
        body.append("      %%sx = arith.extf %%sa : %s to f32" % elem)
        body.append("      %sm = arith.mulf %sx, " + c + " : f32")
        body.append("      %%st = arith.truncf %%sm : f32 to %s" % elem)
        body.append("      linalg.yield %%st : %s" % elem)
    text = ("linalg.generic {indexing_maps = [%s, %s], iterator_types = [%s]} "
            "ins(%s : %s) outs(%s : %s) {\n    %s\n    } -> %s"
            % (amap, amap, ", ".join(['"parallel"'] * len(shape)), x, t, empty,
               t, "\n".join(body), t))
    return f.emit(name, text)


# ---------------------------------------------------------------------------
# Single ops
# ---------------------------------------------------------------------------

def bucket(bucketing, name="bucket"):
    """``rpe.bucket`` applied elementwise.

    ``@name(%i: tensor<?xi64>, %j: tensor<?xi64>) -> tensor<?xi64>``:
    ``out[n] = bucket(i[n], j[n])`` (positions are cast to ``index``, the
    bucket back to i64), through a ``linalg.generic``."""
    spelled = _check_bucketing(bucketing)
    f = _Func(name)
    t = "tensor<?xi64>"
    i = f.arg("i", t)
    j = f.arg("j", t)
    n = f.dim(i, t, 0)
    empty = f.emit("empty", "tensor.empty(%s) : %s" % (n, t))
    m = "affine_map<(d0) -> (d0)>"
    out = f.emit("b", (
        "linalg.generic {indexing_maps = [%s, %s, %s], iterator_types = "
        "[\"parallel\"]} ins(%s, %s : %s, %s) outs(%s : %s) {\n"
        "    ^bb0(%%a: i64, %%b: i64, %%o: i64):\n"
        "      %%ai = arith.index_cast %%a : i64 to index\n"
        "      %%bi = arith.index_cast %%b : i64 to index\n"
        "      %%k = rpe.bucket %%ai, %%bi by %s\n"
        "      %%ki = arith.index_cast %%k : index to i64\n"
        "      linalg.yield %%ki : i64\n"
        "    } -> %s") % (m, m, m, i, j, t, t, empty, t, spelled, t))
    return f.finish(out, t)


def bucket_scalar(bucketing, name="bucket_scalar"):
    """``@name(%i: index, %j: index) -> index``: ``rpe.bucket %i, %j``.

    (A scalar result: callers whose runtime returns only tensors should use
    :func:`bucket`.)"""
    spelled = _check_bucketing(bucketing)
    f = _Func(name)
    i = f.arg("i", "index")
    j = f.arg("j", "index")
    out = f.emit("b", "rpe.bucket %s, %s by %s" % (i, j, spelled))
    return f.finish(out, "index")


def relative_bias(bucketing, heads, lq, lk, elem="f32", q_offset=None,
                  name="relative_bias"):
    """``rpe.relative_bias``: ``out[h,i,j] = table[bucket(i + q_offset, j), h]``.

    ``@name(%table: tensor<NBxHxE>, [%q_offset: index], [%lq: index],
    [%lk: index]) -> tensor<HxLqxLkxE>``; ``%lq`` / ``%lk`` are present when
    ``lq`` / ``lk`` is ``None``.  ``heads=None`` makes H dynamic (taken from
    the table with ``tensor.dim``)."""
    _check_elem(elem)
    spelled = _check_bucketing(bucketing)
    f = _Func(name)
    tt = tensor_type((bucketing.num_buckets, heads), elem)
    table = f.arg("table", tt)
    off = _q_offset(f, q_offset)
    sizes = []
    if heads is None:
        sizes.append(f.dim(table, tt, 1))
    for base, v in (("lq", lq), ("lk", lk)):
        if v is None:
            sizes.append(f.arg(base, "index"))
    rt = tensor_type((heads, lq, lk), elem)
    text = "rpe.relative_bias %s" % table
    if off:
        text += " offset %s" % off
    if sizes:
        text += " sizes(%s)" % ", ".join(sizes)
    text += " by %s : %s -> %s" % (spelled, tt, rt)
    return f.finish(f.emit("bias", text), rt)


def alibi_text(off, sizes, slopes, symmetric, rt):
    """The text of one ``rpe.alibi`` op: ``off`` the q_offset SSA name or
    None, ``sizes`` the SSA names of its dynamic sizes, ``slopes`` a list of
    floats or None, ``rt`` the result type."""
    text = "rpe.alibi"
    if off:
        text += " offset %s" % off
    if sizes:
        text += " sizes(%s)" % ", ".join(str(s) for s in sizes)
    if slopes is not None:
        text += " slopes [%s]" % ", ".join(fmt_float(s) for s in slopes)
    if symmetric:
        text += " symmetric"
    return text + " : " + rt


def alibi(heads, lq, lk, symmetric=False, slopes=None, elem="f32",
          q_offset=None, name="alibi"):
    """``rpe.alibi``: ``-m_h|i' - j|`` (symmetric) or ``m_h(j - i')``.

    ``@name([%q_offset: index], [%h: index], [%lq: index], [%lk: index])
    -> tensor<HxLqxLkxE>`` (one size argument per ``None`` among heads, lq,
    lk).  ``slopes``: list of per-head slopes or ``None`` for the default."""
    _check_elem(elem)
    f = _Func(name)
    off = _q_offset(f, q_offset)
    sizes = [f.arg(base, "index") for base, v in
             (("h", heads), ("lq", lq), ("lk", lk)) if v is None]
    rt = tensor_type((heads, lq, lk), elem)
    return f.finish(f.emit("bias", alibi_text(off, sizes, slopes, symmetric, rt)), rt)


def rope_scaling_attr(scaling):
    """``rpe.rotary``'s ``scaling`` attribute for a dict with ``type`` in
    linear, llama3, yarn, dynamic and the attribute's parameters
    (transformers' ``rope_parameters`` names, ``original_max_position``)."""
    kind = scaling["type"]
    params = {
        "linear": ("factor",),
        "llama3": ("factor", "low_freq_factor", "high_freq_factor",
                   "original_max_position"),
        "yarn": ("factor", "original_max_position", "beta_fast", "beta_slow"),
        "dynamic": ("factor", "original_max_position"),
    }.get(kind)
    if params is None:
        raise ValueError("unknown RoPE scaling type %r" % (kind,))
    fields = ", ".join(
        "%s = %s" % (p, "%d" % scaling[p] if p == "original_max_position"
                     else fmt_float(scaling[p])) for p in params)
    return "#rpe.rope_%s<%s>" % (kind, fields)


def rotary_text(x, pos, xt, pt, theta, rotary_dim, interleaved, scaling=None):
    """The text of one ``rpe.rotary`` op on the SSA names ``x`` and ``pos``
    of types ``xt`` and ``pt``; None leaves an attribute at its default."""
    attrs = []
    if interleaved:
        attrs.append("interleaved")
    if rotary_dim is not None:
        attrs.append("rotary_dim = %d : i64" % rotary_dim)
    if theta is not None:
        attrs.append("theta = %s : f64" % fmt_float(theta))
    if scaling is not None:
        attrs.append("scaling = %s" % rope_scaling_attr(scaling))
    a = " {%s}" % ", ".join(attrs) if attrs else ""
    return "rpe.rotary %s, %s%s : %s, %s" % (x, pos, a, xt, pt)


def rotary(x_shape, positions_shape, elem="f32", pos_elem="i64", theta=None,
           rotary_dim=None, interleaved=False, name="rotary", scaling=None):
    """``rpe.rotary`` (RoPE).

    ``@name(%x: tensor<X...xE>, %positions: tensor<P...xI>) -> tensor<X...xE>``
    with ``x_shape = (..., L, D)`` and ``positions_shape = (L,)`` or
    ``(B, L)``; ``pos_elem`` is ``i32`` or ``i64``.  ``theta`` (default
    10000), ``rotary_dim`` (default D), ``interleaved`` (GPT-J pairs) and
    ``scaling`` (a dict, see rope_scaling_attr) are the op's attributes."""
    _check_elem(elem)
    f = _Func(name)
    xt = tensor_type(x_shape, elem)
    pt = tensor_type(positions_shape, pos_elem)
    x = f.arg("x", xt)
    pos = f.arg("positions", pt)
    y = f.emit("y", rotary_text(x, pos, xt, pt, theta, rotary_dim, interleaved,
                                 scaling))
    return f.finish(y, xt)


def shaw_logits(bucketing, batch, heads, lq, lk, head_dim, elem="f32",
                name="shaw_logits"):
    """``rpe.shaw_logits``: ``out[b,h,i,j] = sum_d q[b,h,i,d] emb[bucket(i,j), d]``.

    ``@name(%q: tensor<BxHxLqxDxE>, %emb: tensor<NBxDxE>, [%lk: index])
    -> tensor<BxHxLqxLkxE>`` (``%lk`` when ``lk`` is ``None``)."""
    _check_elem(elem)
    spelled = _check_bucketing(bucketing)
    f = _Func(name)
    qt = tensor_type((batch, heads, lq, head_dim), elem)
    et = tensor_type((bucketing.num_buckets, head_dim), elem)
    q = f.arg("q", qt)
    emb = f.arg("emb", et)
    kl = f.arg("lk", "index") if lk is None else None
    rt = tensor_type((batch, heads, lq, lk), elem)
    text = "rpe.shaw_logits %s, %s%s by %s : %s, %s -> %s" % (
        q, emb, " key_length %s" % kl if kl else "", spelled, qt, et, rt)
    return f.finish(f.emit("logits", text), rt)


def shaw_values(bucketing, batch, heads, lq, lk, value_dim, elem="f32",
                name="shaw_values"):
    """``rpe.shaw_values``: ``out[b,h,i,:] = sum_j p[b,h,i,j] emb[bucket(i,j), :]``.

    ``@name(%p: tensor<BxHxLqxLkxE>, %emb: tensor<NBxDvxE>)
    -> tensor<BxHxLqxDvxE>``."""
    _check_elem(elem)
    spelled = _check_bucketing(bucketing)
    f = _Func(name)
    pt = tensor_type((batch, heads, lq, lk), elem)
    et = tensor_type((bucketing.num_buckets, value_dim), elem)
    p = f.arg("p", pt)
    emb = f.arg("emb", et)
    rt = tensor_type((batch, heads, lq, value_dim), elem)
    text = "rpe.shaw_values %s, %s by %s : %s, %s -> %s" % (p, emb, spelled, pt, et, rt)
    return f.finish(f.emit("values", text), rt)


def _disentangled_text(q, k, pq, pk, spelled, c2p, p2c, qt, kt, pt, rt):
    if not (c2p or p2c):
        raise ValueError("disentangled_bias needs c2p or p2c")
    return "rpe.disentangled_bias %s, %s, %s, %s by %s%s%s : %s, %s, %s, %s -> %s" % (
        q, k, pq, pk, spelled, " c2p" if c2p else "", " p2c" if p2c else "",
        qt, kt, pt, pt, rt)


def disentangled_bias(bucketing, batch, heads, lq, lk, head_dim, c2p=True,
                      p2c=True, elem="f32", name="disentangled_bias"):
    """``rpe.disentangled_bias`` (DeBERTa c2p / p2c terms, unscaled).

    ``@name(%q: tensor<BxHxLqxDxE>, %k: tensor<BxHxLkxDxE>,
    %pos_q: tensor<HxNBxDxE>, %pos_k: tensor<HxNBxDxE>)
    -> tensor<BxHxLqxLkxE>``."""
    _check_elem(elem)
    spelled = _check_bucketing(bucketing)
    f = _Func(name)
    qt = tensor_type((batch, heads, lq, head_dim), elem)
    kt = tensor_type((batch, heads, lk, head_dim), elem)
    pt = tensor_type((heads, bucketing.num_buckets, head_dim), elem)
    q, k = f.arg("q", qt), f.arg("k", kt)
    pq, pk = f.arg("pos_q", pt), f.arg("pos_k", pt)
    rt = tensor_type((batch, heads, lq, lk), elem)
    return f.finish(f.emit("bias", _disentangled_text(
        q, k, pq, pk, spelled, c2p, p2c, qt, kt, pt, rt)), rt)


def _attention_text(q, k, v, qt, kt, vt, rt, bias=None, bias_type=None,
                    key_lengths=None, kl_type=None, q_offset=None,
                    rel_values=None, rv_type=None, bucketing=None,
                    causal=False, scale=None, window=None, lookahead=None):
    text = "rpe.attention %s, %s, %s" % (q, k, v)
    if bias:
        text += " bias(%s : %s)" % (bias, bias_type)
    if key_lengths:
        text += " key_lengths(%s : %s)" % (key_lengths, kl_type)
    if q_offset:
        text += " q_offset(%s)" % q_offset
    if rel_values:
        text += " rel_values(%s : %s)" % (rel_values, rv_type)
    if bucketing is not None:
        text += " by %s" % _check_bucketing(bucketing)
    if causal:
        text += " causal"
    if window is not None:
        text += " window = %d" % window
    if lookahead is not None:
        text += " lookahead = %d" % lookahead
    if scale is not None:
        text += " scale = %s" % fmt_float(scale)
    return text + " : %s, %s, %s -> %s" % (qt, kt, vt, rt)


def attention(q_shape, k_shape, v_shape, bias_shape=None, key_lengths=False,
              q_offset=None, rel_values=None, causal=False, scale=None,
              elem="f32", name="attention", window=None, lookahead=None):
    """``rpe.attention`` on its own.

    ``q_shape = (B, H, Lq, D)``, ``k_shape = (B, Hkv, Lk, D)``,
    ``v_shape = (B, Hkv, Lk, Dv)`` (any size may be ``None``);
    ``window``: ``None`` or the sliding window ``W``; ``lookahead``:
    ``None`` or how far past its position a query sees; ``bias_shape``:
    ``None`` or a rank-3 ``(H, Lq, Lk)`` / rank-4
    ``(B, H, Lq, Lk)`` shape (static 1s broadcast); ``rel_values``: a
    bucketing scheme, which adds ``%rel_values: tensor<NBxDvxE>`` and
    ``by <scheme>``.

    ``@name(%q, %k, %v, [%bias], [%rel_values], [%key_lengths: tensor<Bxi32>],
    [%q_offset: index]) -> tensor<BxHxLqxDvxE>``."""
    _check_elem(elem)
    f = _Func(name)
    qt, kt, vt = (tensor_type(s, elem) for s in (q_shape, k_shape, v_shape))
    q, k, v = f.arg("q", qt), f.arg("k", kt), f.arg("v", vt)
    bias = bt = rv = rvt = kl = klt = None
    if bias_shape is not None:
        bt = tensor_type(bias_shape, elem)
        bias = f.arg("bias", bt)
    if rel_values is not None:
        rvt = tensor_type((rel_values.num_buckets, v_shape[3]), elem)
        rv = f.arg("rel_values", rvt)
    if key_lengths:
        klt = tensor_type((q_shape[0],), "i32")
        kl = f.arg("key_lengths", klt)
    off = _q_offset(f, q_offset)
    rt = tensor_type((q_shape[0], q_shape[1], q_shape[2], v_shape[3]), elem)
    text = _attention_text(q, k, v, qt, kt, vt, rt, bias, bt, kl, klt, off, rv,
                           rvt, rel_values, causal, scale, window, lookahead)
    return f.finish(f.emit("out", text), rt)


# ---------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------

class _Layer:
    """Shared q/k/v/key_lengths/q_offset handling of the layer builders."""

    def __init__(self, name, batch, heads, kv_heads, lq, lk, head_dim,
                 value_dim, elem, key_lengths):
        _check_elem(elem)
        self.f = _Func(name)
        self.elem = elem
        self.batch, self.heads, self.lq, self.lk = batch, heads, lq, lk
        self.kv_heads = heads if kv_heads is None else kv_heads
        self.d = head_dim
        self.dv = head_dim if value_dim is None else value_dim
        self.qt = tensor_type((batch, heads, lq, head_dim), elem)
        self.kt = tensor_type((batch, self.kv_heads, lk, head_dim), elem)
        self.vt = tensor_type((batch, self.kv_heads, lk, self.dv), elem)
        self.rt = tensor_type((batch, heads, lq, self.dv), elem)
        self.want_kl = key_lengths
        f = self.f
        self.q, self.k, self.v = f.arg("q", self.qt), f.arg("k", self.kt), f.arg("v", self.vt)

    def tail_args(self, q_offset):
        """key_lengths then q_offset arguments (call after the layer's own
        tensor arguments)."""
        self.kl = self.klt = None
        if self.want_kl:
            self.klt = tensor_type((self.batch,), "i32")
            self.kl = self.f.arg("key_lengths", self.klt)
        self.off = _q_offset(self.f, q_offset)

    def lengths(self):
        """(lq, lk) SSA values for ops that need them (tensor.dim when dynamic)."""
        f = self.f
        lq = f.dim(self.q, self.qt, 2) if self.lq is None else None
        lk = f.dim(self.k, self.kt, 2) if self.lk is None else None
        return [s for s in (lq, lk) if s is not None]

    def attend(self, bias=None, bias_type=None, rel_values=None, rv_type=None,
               bucketing=None, causal=False, scale=None, q=None, k=None,
               window=None, lookahead=None):
        text = _attention_text(q or self.q, k or self.k, self.v, self.qt, self.kt,
                               self.vt, self.rt, bias, bias_type, self.kl,
                               self.klt, self.off, rel_values, rv_type,
                               bucketing, causal, scale, window, lookahead)
        return self.f.finish(self.f.emit("out", text), self.rt)


_LAYER_DOC = """
    Common keyword arguments: ``batch``, ``lq``, ``lk`` (int or ``None`` for
    ``?``), ``heads``, ``kv_heads`` (default ``heads``; fewer for GQA),
    ``head_dim``, ``value_dim`` (default ``head_dim``), ``causal``,
    ``key_lengths``, ``q_offset``, ``scale`` (default ``1/sqrt(D)`` unless
    stated), ``elem``, ``name``.  q: ``BxHxLqxD``, k: ``BxHkvxLkxD``,
    v: ``BxHkvxLkxDv``, result ``BxHxLqxDv``."""


def relative_bias_attention(bucketing, *, batch, heads, lq, lk, head_dim,
                            kv_heads=None, value_dim=None, causal=False,
                            key_lengths=False, q_offset=None, scale=None,
                            elem="f32", name="relative_bias_attention",
                            window=None, lookahead=None):
    """Attention with a learned relative bias (T5 / Transformer-XL / the
    seed's ``RelativePositionBias`` / Swin): ``rpe.relative_bias`` of a
    ``NBxH`` table -> ``rpe.attention ... bias(...)``.

    ``@name(%q, %k, %v, %table: tensor<NBxHxE>, [%key_lengths], [%q_offset])
    -> tensor<BxHxLqxDvxE>``.  With ``q_offset`` the bias is looked up at
    query positions ``i + q_offset`` and the causal mask shifts alike.
    ``window``: a sliding window ``W`` (``rpe.attention ... window = W``);
    ``lookahead``: ``A`` (``... lookahead = A``).
    """ + _LAYER_DOC
    spelled = _check_bucketing(bucketing)
    L = _Layer(name, batch, heads, kv_heads, lq, lk, head_dim, value_dim, elem,
               key_lengths)
    f = L.f
    tt = tensor_type((bucketing.num_buckets, heads), elem)
    table = f.arg("table", tt)
    L.tail_args(q_offset)
    bt = tensor_type((heads, lq, lk), elem)
    sizes = L.lengths()
    text = "rpe.relative_bias %s" % table
    if L.off:
        text += " offset %s" % L.off
    if sizes:
        text += " sizes(%s)" % ", ".join(sizes)
    text += " by %s : %s -> %s" % (spelled, tt, bt)
    bias = f.emit("bias", text)
    return L.attend(bias, bt, causal=causal, scale=scale, window=window,
                    lookahead=lookahead)


def t5_attention(num_buckets=32, max_distance=128, bidirectional=True, **kw):
    """T5 self-/cross-attention: :func:`relative_bias_attention` with
    ``T5(num_buckets, max_distance, bidirectional)`` and T5's ``scale = 1``
    (unless ``scale=`` is given).  Same signature as
    :func:`relative_bias_attention`."""
    kw.setdefault("scale", 1.0)
    kw.setdefault("name", "t5_attention")
    return relative_bias_attention(T5(num_buckets, max_distance, bidirectional), **kw)


def swin_window_attention(height, width, *, batch, heads, head_dim, elem="f32",
                          scale=None, name="swin_window_attention"):
    """Swin window attention (no shift mask): ``rpe.relative_bias`` by
    ``window2d<height, width>`` over the ``(2Wh-1)(2Ww-1) x H`` table, then
    ``rpe.attention``; ``L = Wh*Ww`` (static), ``batch`` = number of windows
    (int or ``None``).

    ``@name(%q, %k, %v: tensor<BxHxLxDxE>, %table: tensor<NBxHxE>)
    -> tensor<BxHxLxDxE>``."""
    L = height * width
    return relative_bias_attention(Window2D(height, width), batch=batch,
                                   heads=heads, lq=L, lk=L, head_dim=head_dim,
                                   elem=elem, scale=scale, name=name)


def alibi_attention(*, batch, heads, lq, lk, head_dim, kv_heads=None,
                    value_dim=None, symmetric=False, slopes=None, causal=False,
                    key_lengths=False, q_offset=None, scale=None, elem="f32",
                    name="alibi_attention"):
    """ALiBi attention: ``rpe.alibi`` (``symmetric``: ``-m|i'-j|``; else the
    directional ``m(j - i')``, normally with ``causal=True``) as the bias of
    ``rpe.attention``.  ``slopes``: explicit per-head slopes or ``None``.

    ``@name(%q, %k, %v, [%key_lengths], [%q_offset]) -> tensor<BxHxLqxDvxE>``.
    """ + _LAYER_DOC
    L = _Layer(name, batch, heads, kv_heads, lq, lk, head_dim, value_dim, elem,
               key_lengths)
    L.tail_args(q_offset)
    bt = tensor_type((heads, lq, lk), elem)
    bias = L.f.emit("bias", alibi_text(L.off, L.lengths(), slopes, symmetric, bt))
    return L.attend(bias, bt, causal=causal, scale=scale)


def rope_attention(*, batch, heads, lq, lk, head_dim, kv_heads=None,
                   value_dim=None, batch_positions=False, pos_elem="i64",
                   theta=None, rotary_dim=None, interleaved=False,
                   causal=False, key_lengths=False, q_offset=None, scale=None,
                   elem="f32", name="rope_attention"):
    """RoPE attention: ``rpe.rotary`` on q (positions ``%q_pos``) and on k
    (``%k_pos``), then plain ``rpe.attention``.

    ``@name(%q, %k, %v, %q_pos: tensor<LqxI>, %k_pos: tensor<LkxI>,
    [%key_lengths], [%q_offset]) -> tensor<BxHxLqxDvxE>``; with
    ``batch_positions`` the positions are ``BxLq`` / ``BxLk``.  ``q_offset``
    only shifts the causal mask (the rotation uses the given positions).
    """ + _LAYER_DOC
    L = _Layer(name, batch, heads, kv_heads, lq, lk, head_dim, value_dim, elem,
               key_lengths)
    f = L.f
    pre = (batch,) if batch_positions else ()
    qpt, kpt = tensor_type(pre + (lq,), pos_elem), tensor_type(pre + (lk,), pos_elem)
    qp, kp = f.arg("q_pos", qpt), f.arg("k_pos", kpt)
    L.tail_args(q_offset)
    qr = f.emit("q_rot", rotary_text(L.q, qp, L.qt, qpt, theta, rotary_dim, interleaved))
    kr = f.emit("k_rot", rotary_text(L.k, kp, L.kt, kpt, theta, rotary_dim, interleaved))
    return L.attend(causal=causal, scale=scale, q=qr, k=kr)


def shaw_attention(bucketing, *, batch, heads, lq, lk, head_dim, kv_heads=None,
                   value_dim=None, values=True, causal=False, key_lengths=False,
                   scale=None, elem="f32", name="shaw_attention"):
    """Shaw et al. relative keys and values:
    ``e_ij = scale * q_i . (k_j + a^K[bucket(i,j)])`` and
    ``out_i = sum_j p_ij (v_j + a^V[bucket(i,j)])``.  The key term is
    ``rpe.shaw_logits`` of q with ``scale * emb_k`` (scaled in the function),
    passed as a ``BxHxLqxLk`` bias; the value term is ``rel_values(emb_v) by
    <bucketing>`` of ``rpe.attention``.  No ``q_offset`` (``shaw_logits``
    has none).

    ``@name(%q, %k, %v, %emb_k: tensor<NBxDxE>, [%emb_v: tensor<NBxDvxE>],
    [%key_lengths]) -> tensor<BxHxLqxDvxE>`` (``%emb_v`` when ``values``).
    """ + _LAYER_DOC
    spelled = _check_bucketing(bucketing)
    L = _Layer(name, batch, heads, kv_heads, lq, lk, head_dim, value_dim, elem,
               key_lengths)
    f = L.f
    nb = bucketing.num_buckets
    ekt = tensor_type((nb, head_dim), elem)
    ek = f.arg("emb_k", ekt)
    ev = evt = None
    if values:
        evt = tensor_type((nb, L.dv), elem)
        ev = f.arg("emb_v", evt)
    L.tail_args(None)
    s = scale if scale is not None else 1.0 / math.sqrt(head_dim)
    eks = _scale_tensor(f, ek, (nb, head_dim), elem, s, "emb_k_scaled")
    bt = tensor_type((batch, heads, lq, lk), elem)
    klen = " key_length %s" % f.dim(L.k, L.kt, 2) if lk is None else ""
    bias = f.emit("logits", "rpe.shaw_logits %s, %s%s by %s : %s, %s -> %s"
                  % (L.q, eks, klen, spelled, L.qt, ekt, bt))
    return L.attend(bias, bt, ev, evt, bucketing if values else None,
                    causal=causal, scale=s)


def deberta_scale(head_dim, c2p=True, p2c=True):
    """DeBERTa's score scale ``1/sqrt(D * scale_factor)``, ``scale_factor =
    1 + c2p + p2c``."""
    return 1.0 / math.sqrt(head_dim * (1 + int(bool(c2p)) + int(bool(p2c))))


def deberta_attention(bucketing, *, batch, heads, lq, lk, head_dim,
                      value_dim=None, c2p=True, p2c=True, causal=False,
                      key_lengths=False, elem="f32", name="deberta_attention",
                      window=None, lookahead=None):
    """DeBERTa(-v2) disentangled attention: ``rpe.disentangled_bias`` as the
    bias and ``scale = 1/sqrt(D * (1 + c2p + p2c))`` applied to every term,
    as HF does (the position tables are multiplied by the scale inside the
    function, since ``c2p``/``p2c`` are linear in them).  ``bucketing`` is
    normally ``Log(P, M)``.  No GQA (the op needs k with H heads), no
    ``q_offset``.

    ``@name(%q, %k, %v, %pos_q: tensor<HxNBxDxE>, %pos_k: tensor<HxNBxDxE>,
    [%key_lengths]) -> tensor<BxHxLqxDvxE>``.
    """ + _LAYER_DOC
    spelled = _check_bucketing(bucketing)
    L = _Layer(name, batch, heads, None, lq, lk, head_dim, value_dim, elem,
               key_lengths)
    f = L.f
    pshape = (heads, bucketing.num_buckets, head_dim)
    pt = tensor_type(pshape, elem)
    pq, pk = f.arg("pos_q", pt), f.arg("pos_k", pt)
    L.tail_args(None)
    s = deberta_scale(head_dim, c2p, p2c)
    pqs = _scale_tensor(f, pq, pshape, elem, s, "pos_q_scaled")
    pks = _scale_tensor(f, pk, pshape, elem, s, "pos_k_scaled")
    bt = tensor_type((batch, heads, lq, lk), elem)
    bias = f.emit("bias", _disentangled_text(L.q, L.k, pqs, pks, spelled, c2p,
                                             p2c, L.qt, L.kt, pt, bt))
    return L.attend(bias, bt, causal=causal, scale=s, window=window,
                    lookahead=lookahead)
