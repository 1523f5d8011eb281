#!/usr/bin/env python3
"""Matmuls outside attention: rpe's register-blocked contraction kernel
(rpe-vectorize-contractions, through rpe.compile of a zero fill and a
linalg.matmul with dynamic shapes, A · B into a new C) side by side with torch.matmul (oneDNN/MKL) and NumPy
(its BLAS) in one run, with the machine's FMA peak (the probe of
cpu_attention_bench.py). fp32, 2 threads, median of --repeats calls after
one warm-up, all implementations interleaved in one process (--rounds
rounds, default 3, median of the round medians; OMP_WAIT_POLICY=passive,
OPENBLAS_THREAD_TIMEOUT=4).

Shapes: the projections and MLPs of the whole-model benchmark (L × 512
times 512 × 512, 512 × 2048, 2048 × 512) and a DeBERTa position table
(L × 64 times 64 × 512).

    python3 bench/matmul_bench.py [--lengths 512,2048] [--repeats 7]
        [--rounds 3] [--baseline-library old/librpe-c.so]

With --baseline-library, the same module compiled by another build of rpe
runs in the same rounds too ("rpe@base"), and the table gives rpe / base
time ratios (the cost of a change).

torch comes from the benchmark venv of cpu_attention_bench.py
(RPE_BENCH_VENV, created when missing); rpe from the build (RPE_BUILD_DIR,
default build/)."""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from cpu_attention_bench import (THREADS, _compile_rpe, ensure_torch,  # noqa
                                 fma_peak)

# A · B into a new, zero-filled C: the form of the models' projections, and
# what torch.matmul and NumPy compute (an `outs(%c)` argument would add a
# copy of C, since arguments are read-only).
MATMUL = """
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
"""


def shapes(lengths):
    for m in lengths:
        for k, n in ((512, 512), (512, 2048), (2048, 512), (64, 512)):
            yield m, n, k


def median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", default="512,2048")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-library", metavar="LIBRPE_C",
                        help="also run the module as this librpe-c.so (another "
                        "build) compiles it")
    args = parser.parse_args()
    # Three thread pools (rpe's OpenMP, torch's, NumPy's BLAS) share the
    # cores: passive waiting keeps one library's idle threads from spinning
    # on the cores the next call needs. Set before the libraries load.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))
    # NumPy's OpenBLAS threads are not OpenMP ones: after each call they
    # spin for about 2^28 cycles unless told otherwise, and the next
    # implementation in the round (rpe@base, right after NumPy) ran at half
    # speed. 4: spin 2^4 cycles, then sleep.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    ensure_torch()
    import numpy as np
    import torch
    torch.set_num_threads(THREADS)
    os.environ.setdefault("RPE_BUILD_DIR", os.path.join(ROOT, "build"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import rpe
    lanes, peak = fma_peak()
    print("FMA peak (%d lanes, %d threads): %.1f GFLOP/s" % (lanes, THREADS,
                                                          peak))
    lib = rpe.compile(MATMUL, cpu="native", opt_level=3, num_threads=THREADS)
    base = (_compile_rpe(MATMUL, os.path.abspath(args.baseline_library))
            if args.baseline_library else None)
    rng = np.random.default_rng(0)
    rows = []
    for m, n, k in shapes([int(x) for x in args.lengths.split(",")]):
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        got = lib.mm(a, b)
        want = a.astype(np.float64) @ b.astype(np.float64)
        err = float(np.abs(got - want).max() / np.abs(want).max())
        fns = {"rpe": lambda: lib.mm(a, b),
               "torch": lambda: torch.matmul(ta, tb),
               "numpy": lambda: a @ b}
        if base:
            base_err = float(np.abs(base.mm(a, b) - want).max() /
                             np.abs(want).max())
            err = max(err, base_err)
            fns["rpe@base"] = lambda: base.mm(a, b)
        times = {name: [] for name in fns}
        for _ in range(args.rounds):  # interleaved rounds
            for name, fn in fns.items():
                times[name].append(median_time(fn, args.repeats))
        gf = {name: 2.0 * m * n * k / statistics.median(t) / 1e9
              for name, t in times.items()}
        rows.append((m, n, k, gf, err))
        print("%5d x %5d x %5d  rpe %6.1f  torch %6.1f  numpy %6.1f%s GFLOP/s"
              "  (rpe error %.1e)"
              % (m, n, k, gf["rpe"], gf["torch"], gf["numpy"],
                 "  rpe@base %6.1f" % gf["rpe@base"] if base else "", err),
              flush=True)
    print()
    print("| M × N × K | rpe GFLOP/s (% peak) | torch.matmul | NumPy | "
          "rpe / torch |" + (" rpe@base | rpe / base time |" if base else ""))
    print("|---|---:|---:|---:|---:|" + ("---:|---:|" if base else ""))
    for m, n, k, gf, _ in rows:
        print("| %d × %d × %d | %.1f (%.0f %%) | %.1f | %.1f | %.2f× |"
              % (m, n, k, gf["rpe"], 100 * gf["rpe"] / peak, gf["torch"],
                 gf["numpy"], gf["rpe"] / gf["torch"]) +
              (" %.1f | %.3f |" % (gf["rpe@base"], gf["rpe@base"] / gf["rpe"])
               if base else ""))


if __name__ == "__main__":
    main()
