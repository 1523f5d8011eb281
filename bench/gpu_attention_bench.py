#!/usr/bin/env python3
"""GPU attention benchmark (issue 9): rpe's NVPTX kernel against torch on
the same GPU, in one run. Needs an NVIDIA GPU; torch comes from PyPI into
the benchmark virtualenv (as for bench/cpu_attention_bench.py).

    python3 bench/gpu_attention_bench.py [--lengths 1024,4096] [--repeats 7]
        [--dtypes f32,f16] [--heads 8] [--head-dim 64]

For each dtype and length (B=1, T5 bias, 32 buckets, max distance 128,
bidirectional, scale 1): rpe (`rpe.compile(target="cuda")`, torch tensors
passed through __cuda_array_interface__, no copies), torch
`scaled_dot_product_attention` without a bias (its flash kernel) and with
the float T5 bias materialized (1, H, L, L), and FlexAttention with a T5
`score_mod` (torch.compile). Prints median times (ms), TFLOP/s (4·B·H·L²·D
FLOPs), rpe's speed relative to each baseline, and rpe's largest error
against SDPA with the bias. rpe's memory is the driver's (cuMemAlloc),
not torch's allocator: peak memory is not compared here.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

from cpu_attention_bench import ensure_torch  # noqa: E402


def t5_bias_table(torch, table, length, device):
    """(1, H, L, L) T5 bias, as transformers computes it (the reference)."""
    import rpe.reference as ref
    bias = ref.relative_bias(table.float().cpu().numpy(), length, length,
                             ref.T5(32, 128, True))
    return torch.as_tensor(bias, device=device)[None]


def median_ms(torch, fn, repeats):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="1024,2048,4096,8192")
    parser.add_argument("--dtypes", default="f32,f16")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=64)
    args = parser.parse_args()
    ensure_torch()
    import numpy as np
    import torch
    import torch.nn.functional as F
    import rpe
    from rpe import ir
    if not torch.cuda.is_available():
        sys.exit("gpu_attention_bench: needs a CUDA GPU (torch sees none)")
    major, minor = torch.cuda.get_device_capability()
    chip = "sm_%d%d" % (major, minor)
    dev = torch.device("cuda")
    H, D = args.heads, args.head_dim
    torch_dtype = {"f32": torch.float32, "f16": torch.float16}
    try:
        from torch.nn.attention.flex_attention import flex_attention
        flex = torch.compile(flex_attention)
    except Exception:  # noqa: BLE001 - older torch
        flex = None
    print("GPU: %s (%s), torch %s" % (torch.cuda.get_device_name(), chip,
                                      torch.__version__))
    print("| dtype | L | rpe ms | SDPA ms | SDPA+bias ms | Flex ms | rpe "
          "TFLOP/s | rpe vs SDPA | vs SDPA+bias | vs Flex | max err |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for elem in args.dtypes.split(","):
        dt = torch_dtype[elem]
        text = ir.t5_attention(batch=1, heads=H, lq=None, lk=None,
                               head_dim=D, elem=elem)
        mod = rpe.compile(text, target="cuda", chip=chip)
        fn = getattr(mod, text.func_name)
        for length in map(int, args.lengths.split(",")):
            gen = torch.Generator(device=dev).manual_seed(length)
            q, k, v = (torch.randn(1, H, length, D, device=dev, dtype=dt,
                                   generator=gen) for _ in range(3))
            table = torch.randn(32, H, device=dev, dtype=dt, generator=gen)
            bias = t5_bias_table(torch, table, length, dev).to(dt)
            out = torch.as_tensor(fn(q, k, v, table), device=dev)
            want = F.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                                  scale=1.0)
            err = (out.float() - want.float()).abs().max().item()
            t_rpe = median_ms(torch, lambda: fn(q, k, v, table), args.repeats)
            t_sdpa = median_ms(torch, lambda: F.scaled_dot_product_attention(
                q, k, v, scale=1.0), args.repeats)
            t_mask = median_ms(torch, lambda: F.scaled_dot_product_attention(
                q, k, v, attn_mask=bias, scale=1.0), args.repeats)
            t_flex = float("nan")
            if flex is not None:
                diag = bias[0]

                def score_mod(score, b, h, qi, kj):
                    return score + diag[h, qi, kj]
                try:
                    t_flex = median_ms(torch, lambda: flex(
                        q, k, v, score_mod=score_mod, scale=1.0), args.repeats)
                except Exception as e:  # noqa: BLE001
                    print("FlexAttention failed: %s" % e, file=sys.stderr)
            tflops = 4.0 * H * length * length * D / (t_rpe * 1e-3) / 1e12
            print("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.2f | %.2fx | "
                  "%.2fx | %.2fx | %.2e |" % (
                      elem, length, t_rpe, t_sdpa, t_mask, t_flex, tflops,
                      t_sdpa / t_rpe, t_mask / t_rpe, t_flex / t_rpe, err))
            del out, want, bias
            np.testing.assert_allclose(err, 0, atol=1e-2 if elem == "f16"
                                       else 1e-3)


if __name__ == "__main__":
    main()
