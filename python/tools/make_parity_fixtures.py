#!/usr/bin/env python3
"""Write the golden parity fixtures in python/tests/fixtures/ from the REAL
implementations: the seed write-up's PyTorch classes (copied below), and
Hugging Face transformers' T5, DeBERTa-v2, LLaMA and Swin code (imported).

python/tests/test_parity.py compares rpe (NumPy reference and compiled code)
against these files with NumPy only; torch is needed only here.

Set-up (outside the repository; only PyPI needs to be reachable):

    python3 -m venv /tmp/parity-venv
    /tmp/parity-venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu \
        || /tmp/parity-venv/bin/pip install torch
    /tmp/parity-venv/bin/pip install transformers numpy
    /tmp/parity-venv/bin/python python/tools/make_parity_fixtures.py

Every fixture is an ``.npz`` (``np.savez_compressed``, no pickled objects)
holding NumPy arrays plus ``meta``: a JSON string with the torch,
transformers, NumPy and Python versions, the source of the implementation
and the configuration. The script is deterministic: fixed seeds, one CPU
thread, float32, and zip entries without time stamps, so that running it
twice with the same versions writes identical files.

Written against transformers 5.x (the API it was run with is in ``meta``);
a missing or changed API stops the script with a clear message rather than
silently writing a different fixture.
"""

import argparse
import inspect
import json
import os
import platform
import sys

import numpy as np

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import transformers
except ImportError as e:  # pragma: no cover - set-up error
    sys.exit("make_parity_fixtures.py needs torch and transformers (%s); "
             "see the set-up in this script's docstring" % e)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures")


# ===========================================================================
# The seed's classes, §3.2 and §3.3 of
# shared/seed/000_6c6eab2b12f29348.txt ("Transformer相对位置编码原理与PyTorch实现详解").
# Copied verbatim; the seed's text lost its punctuation when it was flattened
# (``=``, ``+``, ``,``, quotes and line breaks), which is restored here and
# nothing else is changed.
# ===========================================================================

class RelativePositionBias(nn.Module):
    """
    相对位置偏置模块（标量偏置版）。
    为每个注意力头学习一套独立的、基于相对距离的标量偏置。
    """
    def __init__(self, num_heads, max_relative_distance=32):
        super().__init__()
        self.num_heads = num_heads
        self.max_relative_distance = max_relative_distance
        # 可学习的偏置参数表。长度为 (2 * max_relative_distance + 1)
        # 索引0对应相对距离 -max_relative_distance，索引中间对应距离0。
        self.relative_position_bias_table = nn.Parameter(
            torch.zeros(2 * max_relative_distance + 1, num_heads)
        )
        # 初始化偏置参数，通常用较小的值
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def forward(self, seq_len):
        """
        根据序列长度生成用于添加到注意力分数上的偏置矩阵。
        参数:
            seq_len: 当前序列的实际长度。
        返回:
            bias: 形状为 (1, num_heads, seq_len, seq_len) 的偏置矩阵。
        """
        # 1. 生成相对位置索引矩阵
        # 例如，seq_len=3，得到的index_matrix是
        # [[0, -1, -2],
        #  [1,  0, -1],
        #  [2,  1,  0]]
        # 这个矩阵的每个元素 M[i, j] = i - j
        range_vec = torch.arange(seq_len)
        index_matrix = range_vec[:, None] - range_vec[None, :]  # (seq_len, seq_len)

        # 2. 将索引裁剪到预设的最大相对距离范围内
        # 超出范围的索引统一设置为最大或最小值，使其能够从表中查到值（通常是0或边缘值）
        index_matrix = torch.clamp(index_matrix, -self.max_relative_distance, self.max_relative_distance)

        # 3. 将负索引映射到正索引，以便查表（因为我们的参数表索引是从0开始的）
        # 原始索引范围是 [-max, max]，映射后范围是 [0, 2*max]
        index_matrix = index_matrix + self.max_relative_distance

        # 4. 从可学习的参数表中查找偏置值
        # self.relative_position_bias_table 形状: (2*max+1, num_heads)
        # index_matrix 形状: (seq_len, seq_len)
        # 通过 index_matrix 索引，得到形状为 (seq_len, seq_len, num_heads) 的偏置
        bias = self.relative_position_bias_table[index_matrix]  # (seq_len, seq_len, num_heads)

        # 5. 调整维度顺序，变为 (1, num_heads, seq_len, seq_len)
        # 这样可以直接加到每个batch、每个头的注意力分数上
        bias = bias.permute(2, 0, 1).contiguous()  # (num_heads, seq_len, seq_len)
        bias = bias.unsqueeze(0)  # (1, num_heads, seq_len, seq_len)
        return bias


class MultiHeadAttentionWithRPE(nn.Module):
    def __init__(self, d_model, num_heads, max_relative_distance=32, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads

        # 定义Q, K, V的线性变换层
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

        # 定义相对位置偏置模块
        self.relative_position_bias = RelativePositionBias(num_heads, max_relative_distance)

        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        """
        参数:
            x: 输入张量，形状 (batch_size, seq_len, d_model)
            mask: 可选的注意力掩码，形状 (batch_size, seq_len) 或 (batch_size, seq_len, seq_len)
        返回:
            output: 注意力输出，形状 (batch_size, seq_len, d_model)
            attn_weights: 注意力权重，形状 (batch_size, num_heads, seq_len, seq_len)
        """
        batch_size, seq_len, _ = x.shape

        # 1. 线性投影得到Q, K, V
        Q = self.w_q(x)  # (batch, seq_len, d_model)
        K = self.w_k(x)
        V = self.w_v(x)

        # 2. 重塑为多头格式 (batch, seq_len, num_heads, head_dim) -> (batch, num_heads, seq_len, head_dim)
        Q = Q.view(batch_size, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
        K = K.view(batch_size, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
        V = V.view(batch_size, seq_len, self.num_heads, self.head_dim).transpose(1, 2)

        # 3. 计算缩放点积注意力分数（内容部分）
        # (batch, num_heads, seq_len, head_dim) @ (batch, num_heads, head_dim, seq_len) -> (batch, num_heads, seq_len, seq_len)
        attn_scores = torch.matmul(Q, K.transpose(-2, -1)) / (self.head_dim ** 0.5)

        # 4. 获取相对位置偏置并加到注意力分数上（核心步骤）
        relative_bias = self.relative_position_bias(seq_len)  # (1, num_heads, seq_len, seq_len)
        attn_scores = attn_scores + relative_bias

        # 5. 应用注意力掩码（如因果掩码用于解码器，或填充掩码）
        if mask is not None:
            # mask需要扩展维度以匹配attn_scores的形状
            # 假设mask形状为 (batch_size, seq_len) 或 (batch_size, 1, seq_len)
            mask = mask.unsqueeze(1).unsqueeze(2)  # 变为 (batch, 1, 1, seq_len) 用于广播
            attn_scores = attn_scores.masked_fill(mask == 0, float('-inf'))

        # 6. 应用softmax得到注意力权重
        attn_weights = F.softmax(attn_scores, dim=-1)
        attn_weights = self.dropout(attn_weights)

        # 7. 加权求和值向量
        # (batch, num_heads, seq_len, seq_len) @ (batch, num_heads, seq_len, head_dim) -> (batch, num_heads, seq_len, head_dim)
        context = torch.matmul(attn_weights, V)

        # 8. 重塑回原始维度并做输出投影
        context = context.transpose(1, 2).contiguous().view(batch_size, seq_len, self.d_model)
        output = self.w_o(context)

        return output, attn_weights


# ===========================================================================
# Helpers
# ===========================================================================

def versions():
    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def np32(t):
    return t.detach().cpu().to(torch.float32).numpy().copy()


def np64i(t):
    return t.detach().cpu().to(torch.int64).numpy().copy()


def require(module, name):
    obj = getattr(module, name, None)
    if obj is None:
        sys.exit("transformers %s has no %s.%s; this script was written for "
                 "transformers 5.x (see the fixtures' meta for the version "
                 "used)" % (transformers.__version__, module.__name__, name))
    return obj


def signature(fn):
    return "%s%s" % (fn.__qualname__, inspect.signature(fn))


class Writer:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.written = []

    def save(self, name, source, config, **arrays):
        meta = {"fixture": name, "source": source, "config": config,
                "versions": versions(),
                "generator": "python/tools/make_parity_fixtures.py"}
        for key, value in arrays.items():
            assert isinstance(value, np.ndarray), (name, key, type(value))
            assert value.dtype != object, (name, key)
        path = os.path.join(self.out_dir, name + ".npz")
        np.savez_compressed(path, meta=np.array(json.dumps(meta, sort_keys=True)),
                            **arrays)
        self.written.append(path)
        print("%-40s %7d bytes  %s" % (os.path.relpath(path), os.path.getsize(path),
                                       ", ".join(sorted(arrays))))


def seed_all(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)


def capture_input(module):
    """Forward pre-hook that records the (first) input of ``module``."""
    box = {}

    def hook(_mod, args):
        box["x"] = args[0].detach().clone()
    handle = module.register_forward_pre_hook(hook)
    return box, handle


# ===========================================================================
# Fixtures
# ===========================================================================

def seed_fixture(w):
    """The seed's §3.1 set-up and §3.4 forward pass, in eval mode."""
    # §3.1, verbatim order: seeds, sizes, x.
    torch.manual_seed(42)
    np.random.seed(42)
    batch_size = 2
    seq_len = 10
    d_model = 16
    num_heads = 4
    head_dim = d_model // num_heads
    x = torch.randn(batch_size, seq_len, d_model)
    # §3.4: the layer; eval() so that the dropout (p=0.1) is off.
    mha_rpe = MultiHeadAttentionWithRPE(d_model=16, num_heads=4, max_relative_distance=5)
    mha_rpe.eval()
    K = mha_rpe.relative_position_bias.max_relative_distance

    box, handle = capture_input(mha_rpe.w_o)
    with torch.no_grad():
        output, attn_weights = mha_rpe(x)
        context = box["x"]
        # Padding mask (1 = keep) of the seed's forward: the second sequence
        # has 7 real tokens.
        lengths = torch.tensor([10, 7])
        mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).to(torch.long)
        output_m, attn_weights_m = mha_rpe(x, mask=mask)
        context_m = box["x"]
        bias = mha_rpe.relative_position_bias(seq_len)
        q = mha_rpe.w_q(x).view(batch_size, seq_len, num_heads, head_dim).transpose(1, 2)
        k = mha_rpe.w_k(x).view(batch_size, seq_len, num_heads, head_dim).transpose(1, 2)
        v = mha_rpe.w_v(x).view(batch_size, seq_len, num_heads, head_dim).transpose(1, 2)
    handle.remove()

    def heads(c):  # (B, L, d_model) -> (B, H, L, D)
        return np32(c.view(batch_size, seq_len, num_heads, head_dim).transpose(1, 2))

    lin = {}
    for n in ("w_q", "w_k", "w_v", "w_o"):
        layer = getattr(mha_rpe, n)
        lin[n + "_weight"] = np32(layer.weight)
        lin[n + "_bias"] = np32(layer.bias)
    w.save("seed_mha_rpe",
           "seed §3.2 RelativePositionBias + §3.3 MultiHeadAttentionWithRPE "
           "(copied into make_parity_fixtures.py), §3.1/§3.4 set-up, eval()",
           {"batch_size": batch_size, "seq_len": seq_len, "d_model": d_model,
            "num_heads": num_heads, "head_dim": head_dim,
            "max_relative_distance": K, "dropout": 0.1, "mode": "eval",
            "seed": 42, "mask_lengths": [10, 7]},
           x=np32(x), table=np32(mha_rpe.relative_position_bias.relative_position_bias_table),
           bias=np32(bias), q=np32(q), k=np32(k), v=np32(v),
           attn_weights=np32(attn_weights), context=heads(context), output=np32(output),
           mask=np64i(mask), attn_weights_masked=np32(attn_weights_m),
           context_masked=heads(context_m), output_masked=np32(output_m),
           max_relative_distance=np.array(K, dtype=np.int64), **lin)

    # RelativePositionBias on its own, with its default max distance 32 and a
    # sequence longer than the table (distances clipped on both sides).
    seed_all(7)
    rpb = RelativePositionBias(num_heads=3)
    rpb.eval()
    L = 41
    with torch.no_grad():
        b = rpb(L)
    w.save("seed_relative_position_bias",
           "seed §3.2 RelativePositionBias (default max_relative_distance=32)",
           {"num_heads": 3, "max_relative_distance": 32, "seq_len": L, "seed": 7},
           table=np32(rpb.relative_position_bias_table), bias=np32(b),
           max_relative_distance=np.array(32, dtype=np.int64),
           seq_len=np.array(L, dtype=np.int64))


T5_BUCKET_CONFIGS = [
    # (num_buckets, max_distance, bidirectional)
    (32, 128, True), (32, 128, False),      # T5 defaults (encoder / decoder)
    (8, 20, True), (8, 20, False),
    (16, 12, True), (64, 256, True), (6, 10, False),
    (7, 16, True), (5, 9, False),           # odd bucket counts
    # Configurations where HF's float32 steps and float64 math give different
    # buckets (at the distances in T5_BOUNDARY_POSITIONS): they pin the f32
    # order of operations of Semantics.md.
    (32, 939, False), (64, 939, True), (128, 169, False), (128, 441, False),
]
T5_BOUNDARY_POSITIONS = [104, 168, 728]


def far_positions():
    far = [129, 200, 255, 256, 257, 500, 1000, 1023, 1024, 4096, 10 ** 5,
           10 ** 6, 2 ** 24 + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 40, 2 ** 53 + 1, 2 ** 62]
    return np.array(sorted(set(far + [-f for f in far])), dtype=np.int64)


def t5_fixtures(w):
    from transformers import T5Config
    from transformers.models.t5 import modeling_t5
    T5Attention = require(modeling_t5, "T5Attention")
    bucket_fn = T5Attention._relative_position_bucket

    b = np.array(T5_BOUNDARY_POSITIONS, dtype=np.int64)
    n = np.unique(np.concatenate([np.arange(-300, 301, dtype=np.int64), -b, b,
                                  far_positions()]))
    rel = torch.from_numpy(n)
    buckets = []
    for nb, md, bidi in T5_BUCKET_CONFIGS:
        buckets.append(np64i(bucket_fn(rel.clone(), bidirectional=bidi,
                                       num_buckets=nb, max_distance=md)))
    w.save("t5_relative_position_bucket",
           "transformers T5Attention._relative_position_bucket: %s" % signature(bucket_fn),
           {"configs": [list(c) for c in T5_BUCKET_CONFIGS],
            "relative_position": "memory_position - query_position = j - i"},
           relative_position=n,
           configs=np.array([[a, b, int(c)] for a, b, c in T5_BUCKET_CONFIGS], dtype=np.int64),
           buckets=np.stack(buckets))

    # compute_bias and the self-attention forward of a small random T5 layer.
    arrays, cfgs = {}, {}
    for tag, is_decoder, lq, lk, past in (("enc", False, 37, 37, 0),
                                          ("dec", True, 6, 19, 13)):
        seed_all(1 if tag == "enc" else 2)
        config = T5Config(d_model=16, d_kv=4, num_heads=4, d_ff=32,
                          relative_attention_num_buckets=16,
                          relative_attention_max_distance=20,
                          is_decoder=is_decoder, dropout_rate=0.0)
        config._attn_implementation = "eager"
        att = T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
        att.eval()
        with torch.no_grad():
            nn.init.normal_(att.relative_attention_bias.weight, std=1.0)
            bias = att.compute_bias(lq, lk, past_seen_tokens=past)
        arrays[tag + "_weight"] = np32(att.relative_attention_bias.weight)
        arrays[tag + "_bias"] = np32(bias)
        cfgs[tag] = {"d_model": 16, "d_kv": 4, "num_heads": 4,
                     "relative_attention_num_buckets": 16,
                     "relative_attention_max_distance": 20,
                     "is_decoder": is_decoder, "bidirectional": not is_decoder,
                     "query_length": lq, "key_length": lk,
                     "past_seen_tokens": past}
        arrays[tag + "_params"] = np.array([16, 20, int(not is_decoder), lq, lk, past],
                                           dtype=np.int64)
        if tag == "enc":
            # Encoder self-attention: scores = q k^T (no scaling) + bias.
            B = 2
            hidden = torch.randn(B, lq, 16)
            boxes = {}
            hooks = []
            for n_ in ("q", "k", "v"):
                def make(n_):
                    def hook(_m, _a, out):
                        boxes[n_] = out.detach().clone()
                    return hook
                hooks.append(getattr(att, n_).register_forward_hook(make(n_)))
            ctx_box, h = capture_input(att.o)
            hooks.append(h)
            with torch.no_grad():
                out, pos_bias, attn_w = att(hidden)
            for h in hooks:
                h.remove()
            for n_ in ("q", "k", "v"):
                arrays["enc_" + n_] = np32(boxes[n_].view(B, lq, 4, 4).transpose(1, 2))
            arrays["enc_hidden"] = np32(hidden)
            arrays["enc_context"] = np32(ctx_box["x"].view(B, lq, 4, 4).transpose(1, 2))
            arrays["enc_attn_weights"] = np32(attn_w)
            arrays["enc_position_bias"] = np32(pos_bias)
    w.save("t5_attention_bias",
           "transformers T5Attention.compute_bias (%s) and T5Attention.forward "
           "(eager, encoder self-attention)" % signature(T5Attention.compute_bias),
           cfgs, **arrays)


DEBERTA_BUCKET_CONFIGS = [
    # (position_buckets, max_relative_positions)
    (256, 512),                  # DeBERTa-v3 base/large
    (8, 32), (16, 20), (6, 10), (7, 12), (2, 4), (64, 128),
    # Where NumPy's float32 log (off by one ulp on some inputs) gives another
    # bucket than torch.log: they pin the correctly rounded logf.
    (6, 148), (8, 7), (16, 13), (64, 388), (256, 337),
]


def deberta_fixtures(w):
    from transformers import DebertaV2Config
    from transformers.models.deberta_v2 import modeling_deberta_v2 as md
    make_log_bucket_position = require(md, "make_log_bucket_position")
    build_relative_position = require(md, "build_relative_position")
    DisentangledSelfAttention = require(md, "DisentangledSelfAttention")

    r = np.concatenate([np.arange(-700, 701, dtype=np.int64), far_positions()])
    rel = torch.from_numpy(r)
    lbs = []
    for p, m in DEBERTA_BUCKET_CONFIGS:
        lb = make_log_bucket_position(rel.clone(), p, m)
        lbs.append(np64i(lb))     # build_relative_position's .to(torch.long)
    arrays = {"relative_position": r,
              "configs": np.array(DEBERTA_BUCKET_CONFIGS, dtype=np.int64),
              "log_bucket": np.stack(lbs)}
    # build_relative_position with bucket_size/max_position (-1: no buckets).
    rp_cfgs = [(20, 20, 8, 32), (7, 33, 8, 16), (33, 7, 6, 10), (9, 15, -1, -1),
               (40, 40, 256, 512)]
    for idx, (lq, lk, p, m) in enumerate(rp_cfgs):
        ql, kl = torch.zeros(1, lq, 1), torch.zeros(1, lk, 1)
        arrays["build_relative_position_%d" % idx] = np64i(
            build_relative_position(ql, kl, bucket_size=p, max_position=m))
    arrays["build_relative_position_configs"] = np.array(rp_cfgs, dtype=np.int64)
    w.save("deberta_v2_log_bucket",
           "transformers deberta_v2 %s and %s" % (
               signature(make_log_bucket_position), signature(build_relative_position)),
           {"make_log_bucket_position": [list(c) for c in DEBERTA_BUCKET_CONFIGS],
            "build_relative_position": [
                {"query_size": a, "key_size": b, "bucket_size": c, "max_position": d}
                for a, b, c, d in rp_cfgs],
            "relative_position": "query_position - key_position = i - j"},
           **arrays)

    # Disentangled attention: (a) DeBERTa-v3 style, log buckets, c2p|p2c,
    # share_att_key, self-attention with the full forward; (b) no log
    # buckets (position_buckets=-1), c2p only, separate pos_key_proj,
    # Lq != Lk (disentangled_attention_bias called directly).
    arrays, cfgs = {}, {}
    for tag, kw, lq, lk in (
            ("a", dict(position_buckets=8, max_relative_positions=32,
                       pos_att_type="p2c|c2p", share_att_key=True), 20, 20),
            ("b", dict(position_buckets=-1, max_relative_positions=12,
                       pos_att_type="c2p", share_att_key=False), 6, 15)):
        seed_all(11 if tag == "a" else 12)
        config = DebertaV2Config(hidden_size=16, num_attention_heads=2,
                                 relative_attention=True,
                                 hidden_dropout_prob=0.0,
                                 attention_probs_dropout_prob=0.0, **kw)
        att = DisentangledSelfAttention(config)
        att.eval()
        H, D, B = 2, 8, 2
        span = att.pos_ebd_size
        rel_embeddings = torch.randn(2 * span, 16)
        hq = torch.randn(B, lq, 16)
        hk = hq if lq == lk else torch.randn(B, lk, 16)
        scale_factor = 1 + len(att.pos_att_type)
        with torch.no_grad():
            ql = att.transpose_for_scores(att.query_proj(hq), H)
            kl = att.transpose_for_scores(att.key_proj(hk), H)
            vl = att.transpose_for_scores(att.value_proj(hk), H)
            rel_att = att.disentangled_attention_bias(ql, kl, None, rel_embeddings,
                                                      scale_factor)
            re = rel_embeddings[0:span * 2, :].unsqueeze(0)
            if att.share_att_key:
                pk_proj, pq_proj = att.key_proj, att.query_proj
            else:
                pk_proj = att.pos_key_proj
                pq_proj = getattr(att, "pos_query_proj", None)
            pk = att.transpose_for_scores(pk_proj(re), H)
            pq = att.transpose_for_scores(pq_proj(re), H) if "p2c" in att.pos_att_type else None
            arrays[tag + "_pos_key_proj_weight"] = np32(pk_proj.weight)
            arrays[tag + "_pos_key_proj_bias"] = np32(pk_proj.bias)
            if pq is not None:
                arrays[tag + "_pos_query_proj_weight"] = np32(pq_proj.weight)
                arrays[tag + "_pos_query_proj_bias"] = np32(pq_proj.bias)
            if lq == lk:
                mask = torch.ones(B, 1, lq, lk, dtype=torch.long)
                ctx, probs = att(hq, mask, output_attentions=True,
                                 rel_embeddings=rel_embeddings)
                arrays[tag + "_context"] = np32(ctx.view(B, lq, H, D).transpose(1, 2))
                arrays[tag + "_attn_weights"] = np32(probs)
        arrays[tag + "_q"] = np32(ql.view(B, H, lq, D))
        arrays[tag + "_k"] = np32(kl.view(B, H, lk, D))
        arrays[tag + "_v"] = np32(vl.view(B, H, lk, D))
        arrays[tag + "_rel_embeddings"] = np32(rel_embeddings)
        arrays[tag + "_pos_key"] = np32(pk)
        if pq is not None:
            arrays[tag + "_pos_query"] = np32(pq)
        arrays[tag + "_bias"] = np32(rel_att.view(B, H, lq, lk))
        arrays[tag + "_params"] = np.array(
            [max(kw["position_buckets"], 0), kw["max_relative_positions"],
             int("c2p" in att.pos_att_type), int("p2c" in att.pos_att_type),
             scale_factor, lq, lk], dtype=np.int64)
        cfgs[tag] = dict(kw, hidden_size=16, num_attention_heads=H, head_dim=D,
                         batch=B, query_length=lq, key_length=lk,
                         att_span=span, scale_factor=scale_factor,
                         bias_scale="1/sqrt(head_dim*scale_factor) in f32")
    w.save("deberta_v2_disentangled",
           "transformers DisentangledSelfAttention.disentangled_attention_bias "
           "(%s) and .forward (eager)" % signature(
               DisentangledSelfAttention.disentangled_attention_bias),
           cfgs, **arrays)


def llama_fixtures(w):
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as ml
    LlamaRotaryEmbedding = require(ml, "LlamaRotaryEmbedding")
    apply_rotary_pos_emb = require(ml, "apply_rotary_pos_emb")
    arrays, cfgs = {}, {}
    for tag, head_dim, theta, pos in (
            ("a", 8, 10000.0, [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12, 13]]),
            ("b", 16, 500000.0, [[0, 3, 1, 2, 40, 63, 17], [120, 121, 122, 123, 124, 125, 126]]),
            ("far", 8, 10000.0, [[2040, 2041, 2042, 2043, 2044, 2045, 2046],
                                 [4095, 4096, 3000, 1500, 1000, 999, 777]])):
        seed_all(21)
        H = 2
        config = LlamaConfig(hidden_size=H * head_dim, num_attention_heads=H,
                             num_key_value_heads=H, head_dim=head_dim,
                             max_position_embeddings=8192,
                             rope_parameters={"rope_type": "default", "rope_theta": theta})
        rope = LlamaRotaryEmbedding(config)
        position_ids = torch.tensor(pos, dtype=torch.long)
        B, L = position_ids.shape
        q = torch.randn(B, H, L, head_dim)
        k = torch.randn(B, H, L, head_dim)
        with torch.no_grad():
            cos, sin = rope(q, position_ids)
            q_embed, k_embed = apply_rotary_pos_emb(q, k, cos, sin)
        arrays.update({tag + "_q": np32(q), tag + "_k": np32(k),
                       tag + "_position_ids": np64i(position_ids),
                       tag + "_cos": np32(cos), tag + "_sin": np32(sin),
                       tag + "_q_embed": np32(q_embed), tag + "_k_embed": np32(k_embed),
                       tag + "_theta": np.array(theta)})
        cfgs[tag] = {"head_dim": head_dim, "rope_theta": theta, "rope_type": "default",
                     "num_heads": H, "position_ids": pos}
    w.save("llama_rope",
           "transformers LlamaRotaryEmbedding.forward + %s" % signature(apply_rotary_pos_emb),
           cfgs, **arrays)


ROPE_SCALINGS = {
    # tag: (rope_parameters beyond rope_type/rope_theta, rpe's scaling dict,
    #       max_position_embeddings)
    "linear": ({"factor": 4.0}, {"type": "linear", "factor": 4.0}, 2048),
    "llama3": ({"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 512},
               {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                "high_freq_factor": 4.0, "original_max_position": 512}, 4096),
    # max_position_embeddings = factor * original: transformers derives the
    # factor from their ratio when `factor` is missing; keep them consistent.
    "yarn": ({"factor": 4.0, "original_max_position_embeddings": 512,
              "beta_fast": 32.0, "beta_slow": 1.0},
             {"type": "yarn", "factor": 4.0, "original_max_position": 512,
              "beta_fast": 32.0, "beta_slow": 1.0}, 2048),
    # transformers' dynamic NTK takes max_position_embeddings as the original
    # length.
    "dynamic": ({"factor": 2.0}, {"type": "dynamic", "factor": 2.0,
                                  "original_max_position": 256}, 256),
}


def rope_scaling_fixtures(w):
    """LlamaRotaryEmbedding with each scaling, fresh per case (rpe.rotary is
    stateless: transformers' dynamic NTK module keeps the longest length it
    has seen), positions below and beyond the original length."""
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama as ml
    LlamaRotaryEmbedding = require(ml, "LlamaRotaryEmbedding")
    apply_rotary_pos_emb = require(ml, "apply_rotary_pos_emb")
    arrays, cfgs = {}, {}
    for kind, (params, scaling, max_pos) in ROPE_SCALINGS.items():
        for case, head_dim, theta, pos in (
                ("short", 16, 10000.0, [[0, 1, 2, 3, 4, 5, 6, 7],
                                        [100, 101, 102, 103, 104, 105, 106, 107]]),
                ("long", 32, 500000.0, [[200, 511, 512, 513, 1000, 1500, 2047, 3000],
                                        [3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008]])):
            tag = kind + "_" + case
            seed_all(41)
            H = 2
            rope_parameters = dict(params, rope_type=kind, rope_theta=theta)
            config = LlamaConfig(hidden_size=H * head_dim, num_attention_heads=H,
                                 num_key_value_heads=H, head_dim=head_dim,
                                 max_position_embeddings=max_pos,
                                 rope_parameters=rope_parameters)
            rope = LlamaRotaryEmbedding(config)
            position_ids = torch.tensor(pos, dtype=torch.long)
            B, L = position_ids.shape
            q = torch.randn(B, H, L, head_dim)
            with torch.no_grad():
                cos, sin = rope(q, position_ids)
                q_embed, _ = apply_rotary_pos_emb(q, q, cos, sin)
            arrays.update({tag + "_q": np32(q), tag + "_position_ids": np64i(position_ids),
                           tag + "_q_embed": np32(q_embed),
                           tag + "_theta": np.array(theta)})
            cfgs[tag] = {"head_dim": head_dim, "rope_parameters": rope_parameters,
                         "max_position_embeddings": max_pos, "rpe_scaling": scaling,
                         "position_ids": pos,
                         "attention_scaling": float(rope.attention_scaling)}
    w.save("llama_rope_scaling",
           "transformers LlamaRotaryEmbedding.forward (rope_type linear, llama3, yarn, "
           "dynamic) + %s" % signature(apply_rotary_pos_emb), cfgs, **arrays)


def swin_fixtures(w):
    from transformers import SwinConfig
    from transformers.models.swin import modeling_swin as ms
    # transformers 5 splits the old SwinSelfAttention into SwinAttention and
    # SwinRelativePositionBias (relative_position_index buffer, stored flat,
    # and relative_position_bias_table).
    SwinAttention = require(ms, "SwinAttention")
    SwinRelativePositionBias = require(ms, "SwinRelativePositionBias")
    arrays, cfgs = {}, {}

    # (a) a 7x7 window attention layer, eager attention, forward pass.
    seed_all(31)
    ws, H, hidden = 7, 2, 16
    D = hidden // H
    config = SwinConfig(embed_dim=hidden, window_size=ws, qkv_bias=True,
                        attention_probs_dropout_prob=0.0)
    config._attn_implementation = "eager"
    att = SwinAttention(config, hidden_size=hidden, num_attention_heads=H, window_size=ws)
    att.eval()
    rpb = att.relative_position_bias
    with torch.no_grad():
        nn.init.normal_(rpb.relative_position_bias_table, std=1.0)
    B, L = 2, ws * ws
    x = torch.randn(B, L, hidden)
    boxes, hooks = {}, []
    for n_ in ("q_proj", "k_proj", "v_proj"):
        def make(n_):
            def hook(_m, _a, out):
                boxes[n_] = out.detach().clone()
            return hook
        hooks.append(getattr(att, n_).register_forward_hook(make(n_)))
    ctx_box, h = capture_input(att.o_proj)
    hooks.append(h)
    with torch.no_grad():
        bias = rpb()
        _out, attn_w = att(x)
    for h in hooks:
        h.remove()
    arrays.update({
        "a_relative_position_index": np64i(rpb.relative_position_index).reshape(L, L).astype(np.int32),
        "a_table": np32(rpb.relative_position_bias_table),
        "a_bias": np32(bias),
        "a_q": np32(boxes["q_proj"].view(B, L, H, D).transpose(1, 2)),
        "a_k": np32(boxes["k_proj"].view(B, L, H, D).transpose(1, 2)),
        "a_v": np32(boxes["v_proj"].view(B, L, H, D).transpose(1, 2)),
        "a_attn_weights": np32(attn_w),
        "a_context": np32(ctx_box["x"].view(B, L, H, D).transpose(1, 2)),
        "a_window": np.array([ws, ws], dtype=np.int64),
        "a_scaling": np.array(att.scaling)})
    cfgs["a"] = {"class": "SwinAttention", "window_size": [ws, ws], "num_heads": H,
                 "hidden_size": hidden, "head_dim": D, "windows": B,
                 "scaling": att.scaling}

    # (b) a non-square window (height 3, width 5) straight from the bias module.
    seed_all(32)
    rpb = SwinRelativePositionBias(3, (3, 5))
    with torch.no_grad():
        nn.init.normal_(rpb.relative_position_bias_table, std=1.0)
        bias = rpb()
    arrays.update({
        "b_relative_position_index": np64i(rpb.relative_position_index).reshape(15, 15).astype(np.int32),
        "b_table": np32(rpb.relative_position_bias_table),
        "b_bias": np32(bias),
        "b_window": np.array([3, 5], dtype=np.int64)})
    cfgs["b"] = {"class": "SwinRelativePositionBias", "window_size": [3, 5],
                 "num_heads": 3}
    w.save("swin_window_bias",
           "transformers swin SwinRelativePositionBias (relative_position_index, "
           "relative_position_bias_table, forward) and SwinAttention.forward (eager)",
           cfgs, **arrays)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help="output directory (default: %(default)s)")
    ap.add_argument("--only", help="comma-separated fixture groups to write "
                    "(seed, t5, deberta, llama, rope_scaling, swin; default: all)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    torch.use_deterministic_algorithms(True)
    w = Writer(args.out)
    groups = {"seed": seed_fixture, "t5": t5_fixtures, "deberta": deberta_fixtures,
              "llama": llama_fixtures, "rope_scaling": rope_scaling_fixtures,
              "swin": swin_fixtures}
    only = args.only.split(",") if args.only else list(groups)
    for name in only:
        if name not in groups:
            sys.exit("make_parity_fixtures.py: unknown group %r (known: %s)"
                     % (name, ", ".join(groups)))
        groups[name](w)
    total = sum(os.path.getsize(p) for p in w.written)
    print("%d fixtures, %d bytes in all (torch %s, transformers %s)" % (
        len(w.written), total, torch.__version__, transformers.__version__))


if __name__ == "__main__":
    main()
