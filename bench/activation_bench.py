#!/usr/bin/env python3
"""Elementwise activations outside attention: SiLU (`x / (1 + exp(-x))`, as
torch-mlir writes LLaMA's) and GELU's tanh form (GPT-2, T5 v1.1) over an
L × 4096 f32 tensor, compiled by rpe (one linalg.generic each), side by
side in one process with torch's `F.silu` and `F.gelu(approximate="tanh")`
and, with --baseline-library, the same modules compiled by another build
of rpe (its librpe-c.so). 2 threads; each round calls every implementation
`--repeats` times in turn and keeps the fastest call; medians of the
rounds. The outputs are checked against torch in float64 first.

    python3 bench/activation_bench.py [--lengths 512,2048] [--rounds 15]
        [--repeats 5] [--baseline-library old/librpe-c.so]

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

WIDTH = 4096
BODIES = {
    "silu": """
    %0 = arith.negf %in : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %one, %1 : f32
    %3 = arith.divf %in, %2 : f32
    linalg.yield %3 : f32""",
    "gelu_tanh": """
    %sq = arith.mulf %in, %in : f32
    %cu = arith.mulf %sq, %in : f32
    %0 = arith.mulf %cu, %k : f32
    %1 = arith.addf %in, %0 : f32
    %2 = arith.mulf %1, %c : f32
    %3 = math.tanh %2 : f32
    %4 = arith.addf %one, %3 : f32
    %5 = arith.mulf %in, %4 : f32
    %6 = arith.mulf %5, %half : f32
    linalg.yield %6 : f32""",
}
MODULE = """
func.func @%(name)s(%%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %%c0 = arith.constant 0 : index
  %%c1 = arith.constant 1 : index
  %%n = tensor.dim %%x, %%c0 : tensor<?x?xf32>
  %%m = tensor.dim %%x, %%c1 : tensor<?x?xf32>
  %%e = tensor.empty(%%n, %%m) : tensor<?x?xf32>
  %%one = arith.constant 1.0 : f32
  %%half = arith.constant 0.5 : f32
  %%c = arith.constant 0.797884583 : f32
  %%k = arith.constant 0.044715 : f32
  %%r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                         affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%%x : tensor<?x?xf32>) outs(%%e : tensor<?x?xf32>) {
  ^bb0(%%in: f32, %%out: f32):%(body)s
  } -> tensor<?x?xf32>
  return %%r : tensor<?x?xf32>
}"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="512,2048")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline-library", default=None)
    args = parser.parse_args()
    cb.ensure_torch()
    import numpy as np
    import torch
    torch.set_num_threads(cb.THREADS)
    torch_fns = {
        "silu": torch.nn.functional.silu,
        "gelu_tanh": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
    }

    print("%-10s %6s %-10s %10s %10s %12s" % ("op", "L", "impl", "median ms",
                                             "x rpe", "max abs err"))
    for name, body in BODIES.items():
        text = MODULE % {"name": name, "body": body}
        impls = {"rpe": getattr(cb._compile_rpe(text), name)}
        if args.baseline_library:
            impls["rpe@base"] = getattr(
                cb._compile_rpe(text, args.baseline_library), name)
        for length in (int(n) for n in args.lengths.split(",")):
            x = np.random.default_rng(length).standard_normal(
                (length, WIDTH), dtype=np.float32) * 4
            tx = torch.from_numpy(x)
            want = torch_fns[name](tx.double()).numpy()
            calls = {impl: (lambda f=f: f(x)) for impl, f in impls.items()}
            calls["torch"] = lambda f=torch_fns[name]: f(tx)
            errors = {}
            for impl, call in calls.items():
                out = call()
                out = out.numpy() if hasattr(out, "numpy") else out
                errors[impl] = float(np.abs(out - want).max())
                if errors[impl] > 1e-5:
                    sys.exit("activation_bench: %s %s is off by %g"
                             % (impl, name, errors[impl]))
            times = cb.interleaved_rounds(calls, args.rounds, args.repeats)
            rpe_ms = statistics.median(times["rpe"]) * 1e3
            for impl in calls:
                ms = statistics.median(times[impl]) * 1e3
                print("%-10s %6d %-10s %10.3f %10.2f %12.2e"
                      % (name, length, impl, ms, ms / rpe_ms, errors[impl]),
                      flush=True)


if __name__ == "__main__":
    main()
