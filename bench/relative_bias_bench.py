#!/usr/bin/env python3
"""The T5 position bias on its own (what a model computes once and hands to
every layer, or returns): rpe.relative_bias by t5<32, 128, bidirectional>
into an H × L × L tensor, side by side in one process with Hugging Face's
`compute_bias` in torch (the bucket formula on L × L relative positions,
the embedding lookup, the permute to H × L × L, made contiguous) and, with
--baseline-library, the same rpe module compiled by another build of rpe
(its librpe-c.so). H = 8, 2 threads; medians of the rounds, each round
calls every implementation once in turn.

    python3 bench/relative_bias_bench.py [--lengths 512,1024,2048]
        [--rounds 15] [--baseline-library old/librpe-c.so]

torch comes from the benchmark venv (see cpu_attention_bench.py), which it
creates when missing; rpe from the build (RPE_BUILD_DIR, default build/).
"""

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import cpu_attention_bench as cb  # noqa: E402

HEADS = 8
MODULE = """
func.func @bias(%%table: tensor<32x%(H)dxf32>, %%l: index) -> tensor<%(H)dx?x?xf32> {
  %%b = rpe.relative_bias %%table sizes(%%l, %%l) by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x%(H)dxf32> -> tensor<%(H)dx?x?xf32>
  return %%b : tensor<%(H)dx?x?xf32>
}"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="512,1024,2048")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--baseline-library", default=None)
    args = parser.parse_args()
    cb.ensure_torch()
    import numpy as np
    import torch
    torch.set_num_threads(cb.THREADS)

    text = MODULE % {"H": HEADS}
    impls = {"rpe": cb._compile_rpe(text)}
    if args.baseline_library:
        impls["rpe@base"] = cb._compile_rpe(text, args.baseline_library)
    table = np.random.default_rng(0).standard_normal(
        (32, HEADS), dtype=np.float32)
    weight = torch.from_numpy(table)

    def hf_compute_bias(length):
        pos = torch.arange(length, dtype=torch.long)
        bucket = cb._torch_t5_bucket(torch, pos[None, :] - pos[:, None])
        values = torch.nn.functional.embedding(bucket, weight)
        return values.permute(2, 0, 1).contiguous()

    print("%6s %-10s %10s %10s" % ("L", "impl", "median ms", "x rpe"))
    for length in (int(n) for n in args.lengths.split(",")):
        calls = {name: (lambda m=m, n=length: m.bias(table, n))
                 for name, m in impls.items()}
        calls["torch HF"] = lambda n=length: hf_compute_bias(n)
        # Same values everywhere (checked once per length).
        reference = hf_compute_bias(length).numpy()
        for name, call in calls.items():
            out = call()
            out = out.numpy() if hasattr(out, "numpy") else out
            if not np.array_equal(out, reference):
                sys.exit("relative_bias_bench: %s differs from torch" % name)
        times = cb.interleaved_rounds(calls, args.rounds)
        rpe_ms = statistics.median(times["rpe"]) * 1e3
        for name in calls:
            ms = statistics.median(times[name]) * 1e3
            print("%6d %-10s %10.3f %10.2f" % (length, name, ms, ms / rpe_ms))


if __name__ == "__main__":
    main()
