#!/usr/bin/env python3
"""Checks that cpu_attention_bench.py's torch DeBERTa baselines
(sdpa_deberta: transformers' gathers and SDPA with the float mask;
flex_deberta: FlexAttention gathering from the projections in its
score_mod; both also causal, and with keys j >= L / 2 masked) compute what
rpe's deberta_attention computes, causal, with key_lengths = L / 2, or
neither, on the same
inputs (the benchmark's B, H, D; L = 300, not a multiple of any tile).
Prints the largest absolute difference of each and exits 1 above 1e-4.
Needs torch (run it with the benchmark's virtual environment:
~/.cache/rpe-bench-venv/bin/python) and the build (build/lib/librpe-c.so).
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import cpu_attention_bench as cb  # noqa: E402
import rpe  # noqa: E402
from rpe import ir  # noqa: E402

TOLERANCE = 1e-4


def main():
    length = 300
    torch.manual_seed(0)
    b, h, d = cb.B, cb.H, cb.D
    q, k, v = (torch.randn(b, h, length, d) * 0.5 for _ in range(3))
    pos_k, pos_q, s, dist_index = cb._torch_deberta_tables(torch, length)
    results = {}
    for mask in ("", "_causal", "_padded"):
        padded = mask == "_padded"
        text = ir.deberta_attention(
            ir.Log(cb.DEBERTA_BUCKETS, cb.DEBERTA_MAX_POSITION), batch=b,
            heads=h, lq=None, lk=None, head_dim=d, causal=mask == "_causal",
            key_lengths=padded, name="attn")
        args = [q.numpy(), k.numpy(), v.numpy(), pos_q.numpy(),
                pos_k.numpy()]
        if padded:
            args.append(np.full(b, length // 2, dtype=np.int32))
        out = rpe.compile(text).attn(*args)
        for impl in ("sdpa_deberta", "flex_deberta"):
            impl += mask
            call = cb._torch_deberta_call(torch, impl, q, k, v, pos_k, pos_q,
                                          s, dist_index, compiled=False)
            results[impl] = float(np.abs(call().numpy() - out).max())
    bad = False
    for impl, diff in results.items():
        print("%s: max |torch - rpe| = %.3g" % (impl, diff))
        bad |= not diff <= TOLERANCE
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
