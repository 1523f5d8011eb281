#!/usr/bin/env python3
"""Where rpe's GPU attention time goes (issue 9): rpe's tensor-core kernel
bias-free and with the T5 bias (bf16, B=4, H=16), timed alone, and one
call of it for a profiler (Nsight Compute) to read.

    python3 bench/gpu_kernel_profile.py [--lengths 2048,8192]
        [--head-dims 64,128] [--repeats 5]
    python3 bench/gpu_kernel_profile.py --once t5 --length 2048
    python3 bench/gpu_kernel_profile.py --compile-only sm_90

Needs torch with CUDA (tensors passed without copies); `--compile-only`
fills $RPE_MODULE_CACHE on a machine without a GPU (scripts/gpu-bundle.sh).
Prints, per variant and length, the median time, TFLOP/s (4·B·H·L²·D) and
the T5 kernel's time over the bias-free one.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

B, H = 4, 16
VARIANTS = ("none", "t5")


def module_text(variant, head_dim):
    from rpe import ir
    if variant == "t5":
        return ir.t5_attention(batch=B, heads=H, lq=None, lk=None,
                               head_dim=head_dim, elem="bf16")
    shape = (B, H, None, head_dim)
    return ir.attention(shape, shape, shape, elem="bf16", name="attn")


def compile_variant(variant, head_dim, chip):
    import rpe
    text = module_text(variant, head_dim)
    mod = rpe.compile(text, target="cuda", chip=chip)
    return getattr(mod, text.func_name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="2048,8192")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--once", choices=VARIANTS,
                        help="one call of this variant (for a profiler)")
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--compile-only", metavar="CHIP")
    args = parser.parse_args()
    head_dims = [int(d) for d in args.head_dims.split(",")]
    if args.compile_only:
        for variant in VARIANTS:
            for d in head_dims:
                compile_variant(variant, d, args.compile_only)
        return
    import torch
    if not torch.cuda.is_available():
        sys.exit("gpu_kernel_profile: needs a CUDA GPU (torch sees none)")
    major, minor = torch.cuda.get_device_capability()
    chip = "sm_%d%d" % (major, minor)
    dev = torch.device("cuda")

    def inputs(variant, length, d):
        gen = torch.Generator(device=dev).manual_seed(length)
        args = [torch.randn(B, H, length, d, device=dev, dtype=torch.bfloat16,
                            generator=gen) for _ in range(3)]
        if variant == "t5":
            args.append(torch.randn(32, H, device=dev, dtype=torch.bfloat16,
                                    generator=gen))
        return args

    if args.once:
        fn = compile_variant(args.once, head_dims[0], chip)
        fn(*inputs(args.once, args.length, head_dims[0]))
        torch.cuda.synchronize()
        return
    print("| D | L | bias | ms | TFLOP/s | over bias-free |")
    print("|---:|---:|---|---:|---:|---:|")
    for d in head_dims:
        fns = {v: compile_variant(v, d, chip) for v in VARIANTS}
        for length in map(int, args.lengths.split(",")):
            times = {}
            for variant in VARIANTS:
                fn, call_args = fns[variant], inputs(variant, length, d)
                fn(*call_args)
                torch.cuda.synchronize()
                samples = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    fn(*call_args)
                    torch.cuda.synchronize()
                    samples.append((time.perf_counter() - start) * 1e3)
                times[variant] = statistics.median(samples)
                flops = 4.0 * B * H * length * length * d
                print("| %d | %d | %s | %.3f | %.1f | %.2fx |" % (
                    d, length, variant, times[variant],
                    flops / (times[variant] * 1e-3) / 1e12,
                    times[variant] / times["none"]), flush=True)


if __name__ == "__main__":
    main()
