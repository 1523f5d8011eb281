#!/usr/bin/env python3
"""GPU attention benchmark (issue 9): rpe's NVPTX kernels against torch on
the same GPU, in one run. Needs an NVIDIA GPU; torch comes from PyPI into
the benchmark virtualenv (as for bench/cpu_attention_bench.py).

    python3 bench/gpu_attention_bench.py [--lengths 1024,...,16384]
        [--dtypes bf16,f16] [--batch 4] [--heads 16] [--head-dims 64,128]
        [--causal both|yes|no] [--repeats 7]
        [--gpu-kernel-options "mma-registers=1"]

For each dtype, head dimension, causal flag and length (T5 bias, 32
buckets, max distance 128, bidirectional, scale 1): rpe
(`rpe.compile(target="cuda")`: f16 and bf16 take the tensor-core kernel;
torch tensors passed through __cuda_array_interface__, no copies), torch
`scaled_dot_product_attention` without a bias (its flash kernel) and with
the float T5 bias materialized (1, H, L, L) (plus the causal mask), and
FlexAttention with a T5 `score_mod` that gathers a per-(head, distance)
table (torch.compile; a causal block mask when causal). Prints median times
(ms), TFLOP/s (4·B·H·L²·D FLOPs, halved when causal), rpe's speed relative
to each baseline, and rpe's largest error against SDPA with the bias,
relative to the output's largest magnitude. rpe's memory is the driver's
(cuMemAlloc), not torch's allocator: peak memory is not compared here.
"""

import argparse
import ctypes
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

from cpu_attention_bench import ensure_torch  # noqa: E402


def t5_bucket(torch, rel, num_buckets=32, max_distance=128):
    """transformers' T5 `_relative_position_bucket` (bidirectional) on a
    tensor of distances j - i."""
    n = num_buckets // 2
    ret = (rel > 0).long() * n
    rel = rel.abs()
    max_exact = n // 2
    large = max_exact + (torch.log(rel.float().clamp(min=1) / max_exact)
                         / math.log(max_distance / max_exact)
                         * (n - max_exact)).long()
    large = torch.clamp(large, max=n - 1)
    return ret + torch.where(rel < max_exact, rel, large)


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


def peak_mib(torch, fn, runtime):
    """Extra device memory of one call (MiB, output included): torch's
    allocator for torch, librpe_cuda_runtime's counters for rpe."""
    torch.cuda.synchronize()
    if runtime is not None:
        runtime.rpeCudaResetPeakBytes()
        base = runtime.rpeCudaLiveBytes()
        result = fn()
        torch.cuda.synchronize()
        peak = runtime.rpeCudaPeakBytes() - base
    else:
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        result = fn()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
    del result
    return peak / 2**20


def plot(rows, path):
    """TFLOP/s against L per implementation, one panel per (dtype, D,
    causal)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    configs = sorted({r["config"] for r in rows})
    fig, axes = plt.subplots(1, len(configs), figsize=(4.5 * len(configs), 4),
                             squeeze=False)
    for ax, config in zip(axes[0], configs):
        mine = [r for r in rows if r["config"] == config]
        impls = list(dict.fromkeys(k for r in mine for k in r["tflops"]))
        for n, impl in enumerate(impls):
            points = [(r["L"], r["tflops"][impl]) for r in mine
                      if r["tflops"].get(impl, float("nan")) ==
                      r["tflops"].get(impl, float("nan"))]
            if points:
                ax.plot(*zip(*points), marker="o", color="C%d" % n,
                        label=impl)
        ax.set_xscale("log", base=2)
        ax.set_title(config)
        ax.set_xlabel("L")
        ax.set_ylabel("TFLOP/s")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="1024,2048,4096,8192,16384")
    parser.add_argument("--dtypes", default="bf16,f16")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--causal", choices=("both", "yes", "no"),
                        default="both")
    parser.add_argument("--plot", help="write a PNG of TFLOP/s against L")
    parser.add_argument("--gpu-kernel-options", default="",
                        help="rpe.compile's gpu_kernel_options for rpe's "
                        "modules, e.g. \"mma-registers=1\"; several "
                        "';'-separated variants are timed side by side "
                        "(\";mma-registers=1\": the default and that)")
    parser.add_argument("--compile-only", metavar="CHIP",
                        help="only compile rpe's modules for CHIP (no GPU, "
                        "no torch): fills $RPE_MODULE_CACHE for a machine "
                        "without the compiler (scripts/gpu-bundle.sh)")
    args = parser.parse_args()
    causal_flags = {"both": (False, True), "yes": (True,), "no": (False,)}
    variants = [v.strip() for v in args.gpu_kernel_options.split(";")]
    if args.compile_only:
        import rpe
        from rpe import ir
        for elem in args.dtypes.split(","):
            for D in map(int, args.head_dims.split(",")):
                for causal in causal_flags[args.causal]:
                    for options in variants:
                        rpe.compile(ir.t5_attention(
                            batch=args.batch, heads=args.heads, lq=None,
                            lk=None, head_dim=D, causal=causal, elem=elem),
                            target="cuda", chip=args.compile_only,
                            gpu_kernel_options=options)
        return
    ensure_torch()
    import torch
    import torch.nn.functional as F
    import rpe
    from rpe import ir
    if not torch.cuda.is_available():
        sys.exit("gpu_attention_bench: needs a CUDA GPU (torch sees none)")
    major, minor = torch.cuda.get_device_capability()
    chip = "sm_%d%d" % (major, minor)
    dev = torch.device("cuda")
    B, H = args.batch, args.heads
    torch_dtype = {"f32": torch.float32, "f16": torch.float16,
                   "bf16": torch.bfloat16}
    tolerance = {"f32": 1e-4, "f16": 1e-2, "bf16": 3e-2}
    try:
        from torch.nn.attention.flex_attention import (create_block_mask,
                                                       flex_attention)
        flex = torch.compile(flex_attention)
    except Exception:  # noqa: BLE001 - older torch
        flex = None
    print("GPU: %s (%s), torch %s, B=%d, H=%d" % (
        torch.cuda.get_device_name(), chip, torch.__version__, B, H))
    print("| dtype | D | causal | L | rpe kernel options | rpe ms | SDPA ms | "
          "SDPA+bias ms | Flex ms | rpe TFLOP/s | rpe vs SDPA | "
          "vs SDPA+bias | vs Flex | rel err | rpe MiB | SDPA MiB | "
          "SDPA+bias MiB | Flex MiB |")
    print("|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
          "---:|---:|---:|---:|")
    from rpe.compiler import _CudaRuntime
    runtime = _CudaRuntime.get().lib
    runtime.rpeCudaLiveBytes.restype = ctypes.c_uint64
    runtime.rpeCudaPeakBytes.restype = ctypes.c_uint64
    failures, rows = [], []
    for elem in args.dtypes.split(","):
        dt = torch_dtype[elem]
        for D in map(int, args.head_dims.split(",")):
            for causal in causal_flags[args.causal]:
                text = ir.t5_attention(batch=B, heads=H, lq=None, lk=None,
                                       head_dim=D, causal=causal, elem=elem)
                fns = [getattr(rpe.compile(text, target="cuda", chip=chip,
                                           gpu_kernel_options=options),
                               text.func_name) for options in variants]
                for length in map(int, args.lengths.split(",")):
                    gen = torch.Generator(device=dev).manual_seed(length)
                    q, k, v = (torch.randn(B, H, length, D, device=dev,
                                           dtype=dt, generator=gen) * 0.5
                               for _ in range(3))
                    table = torch.randn(32, H, device=dev, dtype=dt,
                                        generator=gen)
                    pos = torch.arange(length, device=dev)
                    dist = torch.arange(-(length - 1), length, device=dev)
                    rel = table[t5_bucket(torch, dist)].t().contiguous()
                    shift = length - 1
                    bias = rel[:, pos[None, :] - pos[:, None] + shift]
                    if causal:
                        bias = bias.masked_fill(
                            pos[None, :] > pos[:, None], float("-inf"))
                    bias = bias.unsqueeze(0)
                    want = F.scaled_dot_product_attention(
                        q, k, v, attn_mask=bias, scale=1.0)
                    errs = []
                    for fn in fns:
                        out = torch.from_dlpack(fn(q, k, v, table))
                        errs.append(((out.float() - want.float()).abs().max()
                                     / want.float().abs().max()).item())
                        del out

                    def call_sdpa():
                        return F.scaled_dot_product_attention(
                            q, k, v, is_causal=causal, scale=1.0)

                    def call_mask():
                        return F.scaled_dot_product_attention(
                            q, k, v, attn_mask=bias, scale=1.0)
                    t_rpes, mem_rpes = [], []
                    for fn in fns:
                        def call_rpe(fn=fn):
                            return fn(q, k, v, table)
                        t_rpes.append(median_ms(torch, call_rpe, args.repeats))
                        mem_rpes.append(peak_mib(torch, call_rpe, runtime))
                    t_sdpa = median_ms(torch, call_sdpa, args.repeats)
                    t_mask = median_ms(torch, call_mask, args.repeats)
                    # The mask's own (1, H, L, L) memory is outside the call.
                    mem = {"SDPA": peak_mib(torch, call_sdpa, None),
                           "SDPA+bias": peak_mib(torch, call_mask, None),
                           "Flex": float("nan")}
                    bias = want = None
                    t_flex = float("nan")
                    if flex is not None:
                        def score_mod(score, b, h, q_idx, kv_idx):
                            return score + rel[h, kv_idx - q_idx + shift]
                        block_mask = None
                        if causal:
                            block_mask = create_block_mask(
                                lambda b, h, qi, kj: qi >= kj, None, None,
                                length, length, device=dev)
                        def call_flex():
                            return flex(q, k, v, score_mod=score_mod,
                                        block_mask=block_mask, scale=1.0)
                        try:
                            t_flex = median_ms(torch, call_flex, args.repeats)
                            mem["Flex"] = peak_mib(torch, call_flex, None)
                        except Exception as e:  # noqa: BLE001
                            print("FlexAttention failed: %s" % e,
                                  file=sys.stderr)
                    flops = 4.0 * B * H * length * length * D
                    if causal:
                        flops /= 2
                    times = {}
                    for options, t_rpe, err, mem_rpe in zip(
                            variants, t_rpes, errs, mem_rpes):
                        print("| %s | %d | %s | %d | %s | %.3f | %.3f | %.3f | "
                              "%.3f | %.1f | %.2fx | %.2fx | %.2fx | %.1e | "
                              "%.0f | %.0f | %.0f | %.0f |" % (
                                  elem, D, "yes" if causal else "no", length,
                                  options or "default", t_rpe, t_sdpa, t_mask,
                                  t_flex, flops / (t_rpe * 1e-3) / 1e12,
                                  t_sdpa / t_rpe, t_mask / t_rpe,
                                  t_flex / t_rpe, err, mem_rpe, mem["SDPA"],
                                  mem["SDPA+bias"], mem["Flex"]),
                              flush=True)
                        times["rpe" + (" " + options if options else "")] = \
                            t_rpe
                        if not err <= tolerance[elem]:
                            failures.append((elem, D, causal, length, options,
                                             err))
                    times.update({"SDPA": t_sdpa, "SDPA+bias": t_mask,
                                  "Flex": t_flex})
                    rows.append({
                        "config": "%s D=%d%s" % (elem, D,
                                                 " causal" if causal else ""),
                        "L": length,
                        "tflops": {k: flops / (t * 1e-3) / 1e12
                                   for k, t in times.items()}})
    if args.plot and rows:
        plot(rows, args.plot)
    if failures:
        sys.exit("gpu_attention_bench: rpe differs from SDPA beyond the "
                 "tolerance: %s" % failures)


if __name__ == "__main__":
    main()
