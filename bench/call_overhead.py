#!/usr/bin/env python3
"""What a call through rpe's Python API costs on top of the compiled
function: for the benchmark's bias-free and T5 attentions at a tiny length
(B = 1, H = 8, D = 64, L = 16 by default, where the kernel takes a few
microseconds), the best of several timings of

  - the call, `fn(*arrays)`: argument checks and descriptors, the shape
    check, the function, the result handed to NumPy (and freed with it);
  - the compiled function alone, called through ctypes with descriptors
    made once, its result freed right after.

Their difference is the wrapper's overhead per call. No torch needed.

  python3 bench/call_overhead.py [--length 16] [--calls 500]
"""

import argparse
import ctypes
import os
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import numpy as np  # noqa: E402

import cpu_attention_bench as cab  # noqa: E402
import rpe  # noqa: E402
from rpe import compiler  # noqa: E402


def measure(impl, length, calls):
    text = cab._rpe_module(impl, length)
    fn = getattr(rpe.compile(str(text), **cab.RPE_OPTIONS), "attn")
    types = getattr(text, "arg_types",
                    ["tensor<%dx%dx?x%dxf32>" % (cab.B, cab.H, cab.D)] * 3)
    args = cab._arg_arrays(types, length, np.random.default_rng(0))
    fn(*args)
    keep = []
    c_args = [fn._convert_argument(i, t, v, keep)
              for i, (t, v) in enumerate(zip(fn.arguments, args))]
    results = fn._result_struct()

    def alone():
        fn._symbol(ctypes.addressof(results), *c_args)
        compiler._libc.free(ctypes.cast(results.r0.allocated, ctypes.c_void_p).value)

    best = {}
    for name, call in (("call", lambda: fn(*args)), ("alone", alone)):
        best[name] = min(timeit.repeat(call, number=calls, repeat=7)) / calls
    return len(args), best["call"], best["alone"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    print("impl       arguments   call us  function us  overhead us")
    for impl in ("rpe_none", "rpe_t5"):
        n, call, alone = measure(impl, args.length, args.calls)
        print("%-10s %9d %9.1f %12.1f %12.1f" % (
            impl, n, 1e6 * call, 1e6 * alone, 1e6 * (call - alone)))


if __name__ == "__main__":
    main()
