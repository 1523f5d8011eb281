#!/usr/bin/env python3
"""Where rpe's GPU attention time goes (issue 9): rpe's kernels for each
RPE kind (bf16, B=4, H=16) timed alone, beside torch's bias-free
scaled_dot_product_attention, and one call of a kind for a profiler
(Nsight Compute) to read.

    python3 bench/gpu_kernel_profile.py [--lengths 2048,8192]
        [--head-dims 64,128] [--kinds none,t5,alibi,swin,shaw,deberta]
        [--repeats 5] [--variants "OPTIONS;OPTIONS;..."]
    python3 bench/gpu_kernel_profile.py --once t5 --length 2048
    python3 bench/gpu_kernel_profile.py --compile-only sm_90

Kinds, as in bench/cpu_attention_bench.py: none (bias-free), t5 (32
buckets, max distance 128), alibi (symmetric, default slopes), swin (a
window of L tokens, as square as possible), shaw (a^K + a^V, clip 16: the
SIMT kernel, rel_values keep it off the tensor cores) and deberta (c2p +
p2c, log buckets 256 / 512). Needs torch with CUDA (tensors passed without
copies); `--compile-only` fills $RPE_MODULE_CACHE on a machine without a
GPU (scripts/gpu-bundle.sh). Prints, per D, length and kind, the median
time, TFLOP/s (4·B·H·L²·D, the attention's FLOPs alone) and the time over
rpe's bias-free kernel and over SDPA's. `--variants` compiles each kind
once per string of GPU kernel options (rpe.compile's gpu_kernel_options,
e.g. "mma-threads=256"; "" is the default), to compare kernel shapes.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

B, H = 4, 16
KINDS = ("none", "t5", "alibi", "swin", "shaw", "deberta")


def swin_window(length):
    """A window height × width = L, as square as possible."""
    h = 1 << ((length.bit_length() - 1) // 2)
    return h, length // h


def module_text(kind, head_dim, length):
    from rpe import ir
    common = dict(batch=B, heads=H, lq=None, lk=None, head_dim=head_dim,
                  elem="bf16")
    if kind == "t5":
        return ir.t5_attention(**common)
    if kind == "alibi":
        return ir.alibi_attention(**common, symmetric=True)
    if kind == "swin":
        height, width = swin_window(length)
        return ir.swin_window_attention(height, width, batch=B, heads=H,
                                        head_dim=head_dim, elem="bf16")
    if kind == "shaw":
        return ir.shaw_attention(ir.Clip(16), **common)
    if kind == "deberta":
        return ir.deberta_attention(ir.Log(256, 512), **common)
    shape = (B, H, None, head_dim)
    return ir.attention(shape, shape, shape, elem="bf16", name="attn")


def compile_kind(kind, head_dim, length, chip, options=""):
    import rpe
    text = module_text(kind, head_dim, length)
    mod = rpe.compile(text, target="cuda", chip=chip,
                      gpu_kernel_options=options)
    return getattr(mod, text.func_name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="2048,8192")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--variants", default="",
                        help="GPU kernel options per variant, ';'-separated")
    parser.add_argument("--once", choices=KINDS,
                        help="one call of this kind (for a profiler)")
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--compile-only", metavar="CHIP")
    args = parser.parse_args()
    head_dims = [int(d) for d in args.head_dims.split(",")]
    lengths = [int(n) for n in args.lengths.split(",")]
    kinds = args.kinds.split(",")
    variants = [v.strip() for v in args.variants.split(";")]
    for kind in kinds:
        if kind not in KINDS:
            parser.error("unknown kind %r (kinds: %s)" % (kind, ", ".join(KINDS)))
    if args.compile_only:
        for kind in kinds:
            for d in head_dims:
                for length in (lengths if kind == "swin" else lengths[:1]):
                    for options in variants:
                        compile_kind(kind, d, length, args.compile_only,
                                     options)
        return
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        sys.exit("gpu_kernel_profile: needs a CUDA GPU (torch sees none)")
    major, minor = torch.cuda.get_device_capability()
    chip = "sm_%d%d" % (major, minor)
    dev = torch.device("cuda")
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16,
              "f32": torch.float32}

    def inputs(fn, length):
        """Random tensors for `fn`'s arguments (dynamic sizes: `length`)."""
        gen = torch.Generator(device=dev).manual_seed(length)
        return [torch.randn([length if n is None else n for n in t.shape],
                            device=dev, dtype=dtypes[t.element],
                            generator=gen) * 0.5
                for t in fn.arguments]

    def median_ms(fn, call_args):
        fn(*call_args)
        torch.cuda.synchronize()
        samples = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            fn(*call_args)
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - start) * 1e3)
        return statistics.median(samples)

    if args.once:
        fn = compile_kind(args.once, head_dims[0], args.length, chip)
        fn(*inputs(fn, args.length))
        torch.cuda.synchronize()
        return
    print("| D | L | kind | kernel options | ms | TFLOP/s | over bias-free | "
          "over SDPA | max diff vs first variant |")
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for d in head_dims:
        for length in lengths:
            q, k, v = (torch.randn(B, H, length, d, device=dev,
                                   dtype=torch.bfloat16) for _ in range(3))
            sdpa = median_ms(
                lambda: F.scaled_dot_product_attention(q, k, v), ())
            flops = 4.0 * B * H * length * length * d
            print("| %d | %d | SDPA bias-free | | %.3f | %.1f | | 1.00x | |" % (
                d, length, sdpa, flops / (sdpa * 1e-3) / 1e12), flush=True)
            first = {}  # kind -> the first variant's output
            for options in variants:
                base = None
                for kind in kinds:
                    fn = compile_kind(kind, d, length, chip, options)
                    call_args = inputs(fn, length)
                    out = torch.from_dlpack(fn(*call_args)).float()
                    diff = (out - first.setdefault(kind, out)).abs().max()
                    del out
                    t = median_ms(fn, call_args)
                    base = t if kind == "none" else base
                    print("| %d | %d | %s | %s | %.3f | %.1f | %s | %.1fx | "
                          "%.1e |" % (
                              d, length, kind, options or "default", t,
                              flops / (t * 1e-3) / 1e12,
                              "%.2fx" % (t / base) if base else "", t / sdpa,
                              diff.item()), flush=True)


if __name__ == "__main__":
    main()
