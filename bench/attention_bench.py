#!/usr/bin/env python3
"""T5-bias attention: rpe's fused kernel vs rpe's unfused path vs the seed's
PyTorch eager module, side by side in one run.

B=1, H=8, D=64, T5 bias (32 buckets, max distance 128, bidirectional,
scale 1), L in {512, 1024, 2048, 4096, 8192}, 2 threads. For every (path, L)
a fresh child process compiles or builds the model, allocates the inputs,
warms up, then times `--repeats` calls (median reported) and records the
peak resident memory (VmHWM, reset through /proc/self/clear_refs once the
model is built) above the resident memory at that point; "beyond in+out" is
that peak minus the inputs and the output.

    python3 bench/attention_bench.py [--lengths 512,1024] [--repeats 5]
        [--paths fused,unfused,torch] [--json out.json]

PyTorch comes from PyPI (pip install torch numpy); run the script with a
Python that has it for the torch column (the rpe columns need only NumPy).
GFLOP/s counts 4·B·H·Lq·Lk·D.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

B, H, D = 1, 8, 64
NUM_BUCKETS, MAX_DISTANCE = 32, 128
THREADS = 2

MODULE = """
func.func @t5_attention(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                        %v: tensor<1x8x?x64xf32>, %table: tensor<32x8xf32>)
    -> tensor<1x8x?x64xf32> {
  %c2 = arith.constant 2 : index
  %lq = tensor.dim %q, %c2 : tensor<1x8x?x64xf32>
  %lk = tensor.dim %k, %c2 : tensor<1x8x?x64xf32>
  %bias = rpe.relative_bias %table sizes(%lq, %lk)
      by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
      : tensor<32x8xf32> -> tensor<8x?x?xf32>
  %o = rpe.attention %q, %k, %v bias(%bias : tensor<8x?x?xf32>) scale = 1.0
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
      -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
"""


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _time_calls(call, repeats):
    """Seconds of each of `repeats` calls (results dropped at once)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - t0)
        del out
    return times


def _inputs(length):
    import numpy as np
    rng = np.random.default_rng(0)
    shape = (B, H, length, D)
    # Generated in float32 directly: no float64 temporaries in the peak.
    q = rng.standard_normal(shape, dtype=np.float32)
    q *= 0.5
    k = rng.standard_normal(shape, dtype=np.float32)
    k *= 0.5
    v = rng.standard_normal(shape, dtype=np.float32)
    table = rng.standard_normal((NUM_BUCKETS, H), dtype=np.float32)
    return q, k, v, table


def _torch_model():
    """The seed's attention with a T5 relative position bias, eager PyTorch:
    bias lookup of an (Lq, Lk) bucket matrix, scores + bias, softmax,
    weights @ V (the seed's MultiHeadAttentionWithRPE.forward steps 3-7,
    with Hugging Face T5's bucketing instead of the seed's clip)."""
    import math
    import torch

    torch.set_num_threads(THREADS)

    def bucket(relative_position):  # HF T5Attention._relative_position_bucket
        num_buckets, max_distance = NUM_BUCKETS // 2, MAX_DISTANCE
        buckets = (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        large = max_exact + (torch.log(relative_position.float() / max_exact)
                             / math.log(max_distance / max_exact)
                             * (num_buckets - max_exact)).to(torch.long)
        large = torch.min(large, torch.full_like(large, num_buckets - 1))
        return buckets + torch.where(is_small, relative_position, large)

    def forward(q, k, v, table):
        length = q.shape[2]
        pos = torch.arange(length)
        index = bucket(pos[None, :] - pos[:, None])          # (L, L)
        bias = table[index].permute(2, 0, 1).unsqueeze(0)    # (1, H, L, L)
        scores = torch.matmul(q, k.transpose(-2, -1)) + bias  # T5: no scaling
        weights = torch.softmax(scores, dim=-1)
        return torch.matmul(weights, v)

    return torch, forward


def child(path, length, repeats):
    """Runs one (path, L) measurement and prints a JSON line. Memory: the
    peak resident set (VmHWM, reset through /proc/self/clear_refs once the
    model is compiled or imported) above the resident set at that point,
    minus the inputs and the output: what the attention itself needs."""
    if path == "torch":
        torch, forward = _torch_model()
        no_grad = torch.no_grad()
        no_grad.__enter__()
    else:
        import rpe
        mod = rpe.compile(MODULE, cpu="native", opt_level=3,
                          num_threads=THREADS, reference=(path == "unfused"))
    baseline = _status("VmRSS")
    _reset_peak()
    q, k, v, table = _inputs(length)
    if path == "torch":
        args = [torch.from_numpy(x) for x in (q, k, v, table)]
        call = lambda: forward(*args)  # noqa: E731
    else:
        call = lambda: mod.t5_attention(q, k, v, table)  # noqa: E731
    out = call()  # warm-up
    del out
    times = _time_calls(call, repeats)
    peak = _status("VmHWM")
    output_bytes = B * H * length * D * 4
    inputs_bytes = sum(x.nbytes for x in (q, k, v, table))
    print(json.dumps({
        "path": path, "L": length, "times": times,
        "median_s": statistics.median(times),
        "peak_above_baseline_bytes": peak - baseline,
        "extra_bytes": peak - baseline - inputs_bytes - output_bytes,
        "inputs_bytes": inputs_bytes, "output_bytes": output_bytes,
        "baseline_rss_bytes": baseline}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="512,1024,2048,4096,8192")
    parser.add_argument("--paths", default="fused,unfused,torch")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--unfused-max-length", type=int, default=4096,
                        help="skip the unfused path above this length "
                             "(it materializes several H×L×L tensors)")
    parser.add_argument("--json", help="write all measurements here")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "L"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeats < 5 and not args.child:
        parser.error("--repeats must be at least 5 (medians of >= 5 runs)")
    if args.child:
        child(args.child[0], int(args.child[1]), args.repeats)
        return

    lengths = [int(x) for x in args.lengths.split(",")]
    paths = args.paths.split(",")
    results = []
    print("T5-bias attention B=%d H=%d D=%d, %d threads, median of %d runs"
          % (B, H, D, THREADS, args.repeats))
    header = "%6s  %-8s %10s %9s %14s %16s" % (
        "L", "path", "median ms", "GFLOP/s", "peak RSS MiB",
        "beyond in+out")
    print(header)
    for length in lengths:
        flops = 4.0 * B * H * length * length * D
        row = {}
        for path in paths:
            if path == "unfused" and length > args.unfused_max_length:
                print("%6d  %-8s %10s" % (length, path, "skipped"))
                continue
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", path,
                 str(length), "--repeats", str(args.repeats)],
                capture_output=True, text=True)
            if proc.returncode != 0:
                print("%6d  %-8s failed: %s" % (length, path,
                                                proc.stderr.strip()[-300:]))
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            r["gflops"] = flops / r["median_s"] / 1e9
            results.append(r)
            row[path] = r
            print("%6d  %-8s %10.1f %9.2f %14.1f %12.1f MiB" % (
                length, path, r["median_s"] * 1e3, r["gflops"],
                r["peak_above_baseline_bytes"] / 2**20,
                r["extra_bytes"] / 2**20))
            sys.stdout.flush()
        if "fused" in row:
            for other in ("unfused", "torch"):
                if other in row:
                    print("%6d  speed-up of fused over %s: %.2fx" % (
                        length, other,
                        row[other]["median_s"] / row["fused"]["median_s"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
