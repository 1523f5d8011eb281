#!/usr/bin/env python3
"""Cost of keeping rpe.rotary as its own op next to the fused attention:
causal attention alone vs rotary(q), rotary(k) + the same attention, in one
run (L=1024, H=8, D=64, 2 threads, median of 7 calls after a warm-up).

    python3 bench/rotary_overhead.py [--length 1024]
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))

import numpy as np  # noqa: E402

import rpe  # noqa: E402

TYPES = "tensor<1x8x%(L)dx64xf32>"
ATTENTION = """
func.func @f(%%q: %(T)s, %%k: %(T)s, %%v: %(T)s, %%p: tensor<%(L)dxi64>) -> %(T)s {
  %%o = rpe.attention %%q, %%k, %%v causal : %(T)s, %(T)s, %(T)s -> %(T)s
  return %%o : %(T)s
}"""
ROTARY = """
func.func @f(%%q: %(T)s, %%k: %(T)s, %%v: %(T)s, %%p: tensor<%(L)dxi64>) -> %(T)s {
  %%qr = rpe.rotary %%q, %%p : %(T)s, tensor<%(L)dxi64>
  %%kr = rpe.rotary %%k, %%p : %(T)s, tensor<%(L)dxi64>
  %%o = rpe.attention %%qr, %%kr, %%v causal : %(T)s, %(T)s, %(T)s -> %(T)s
  return %%o : %(T)s
}"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    subst = {"L": args.length, "T": TYPES % {"L": args.length}}
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 8, args.length, 64), dtype=np.float32)
    p = np.arange(args.length, dtype=np.int64)
    for name, src in (("attention", ATTENTION),
                      ("rotary(q), rotary(k) + attention", ROTARY)):
        mod = rpe.compile(src % subst, cpu="native", opt_level=3,
                          num_threads=2)
        mod.f(q, q, q, p)
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            mod.f(q, q, q, p)
            times.append(time.perf_counter() - t0)
        print("%-36s median %.1f ms" % (name, statistics.median(times) * 1e3))


if __name__ == "__main__":
    main()
