#!/usr/bin/env python3
"""Where an rpe attention kernel's time goes, by `perf record`: one of
cpu_attention_bench.py's rpe implementations, compiled as the benchmark
compiles it but into a library that stays on disk (its symbols: the
kernels and their OpenMP bodies), called for SECONDS under
`perf record -e cpu-clock`; then each symbol's share of the samples, and
for the hottest ones the share of their hottest 512-byte code windows
(the register-block loops stand out: compare a term's kernel with the
bias-free one's).

    python3 bench/profile_kernel.py rpe_deberta 2048 [--seconds 8]
        [--isa avx2] [--windows 6] [--out DIR]

Needs perf (linux-perf) and the build (RPE_BUILD_DIR, default build/).
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_calls(impl, length, seconds, library):
    """--calls: compiles `impl` at `length` into `library` and calls it for
    `seconds` (the process perf records)."""
    import numpy as np
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
    import cpu_attention_bench as cb
    import rpe
    text = cb._rpe_module(impl, length)
    mod = rpe.compile(text, output=library, **cb.RPE_OPTIONS)
    types = getattr(text, "arg_types", None) or \
        ["tensor<%dx%dx?x%dxf32>" % (cb.B, cb.H, cb.D)] * 3
    args = cb._arg_arrays(types, length, np.random.default_rng(0))
    fn = mod.attn
    for _ in range(3):
        fn(*args)
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        fn(*args)
        calls += 1
    print("%s L=%d: %.2f ms per call under perf (%d calls)"
          % (impl, length, (time.perf_counter() - start) / calls * 1e3, calls))


def symbol_shares(data, dso):
    """[(percent, symbol)] of `dso`'s symbols in perf.data `data`."""
    out = subprocess.run(
        ["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym",
         "--stdio"], capture_output=True, text=True, check=True).stdout
    shares = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[\.\]\s+(.+)$", line)
        if m and m.group(2) == dso:
            shares.append((float(m.group(1)), m.group(3).strip()))
    return shares


def code_windows(data, symbol, width=512):
    """{window start: percent of `symbol`'s samples} from perf annotate."""
    out = subprocess.run(
        ["perf", "annotate", "-i", data, "--stdio", "-s", symbol],
        capture_output=True, text=True).stdout
    windows = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+) :\s+([0-9a-f]+):", line)
        if m:
            windows[int(m.group(2), 16) // width * width] += float(m.group(1))
    return windows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("impl")
    parser.add_argument("length", type=int)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--isa", choices=("native", "avx2"), default="native")
    parser.add_argument("--windows", type=int, default=6)
    parser.add_argument("--out", help="keep the library and perf.data here")
    parser.add_argument("--calls", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--library", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.calls:
        return run_calls(a.impl, a.length, a.seconds, a.library)
    out = a.out or tempfile.mkdtemp(prefix="rpe-profile-")
    os.makedirs(out, exist_ok=True)
    library = os.path.join(out, a.impl + ".so")
    data = os.path.join(out, a.impl + ".perf.data")
    env = dict(os.environ, RPE_BENCH_ISA=a.isa)
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", data,
                    sys.executable, os.path.abspath(__file__), a.impl,
                    str(a.length), "--seconds", str(a.seconds), "--calls",
                    "--library", library], env=env, check=True)
    dso = os.path.basename(library)
    shares = symbol_shares(data, dso)
    total = sum(p for p, _ in shares)
    print("%s: %.1f %% of all samples (the rest: compiling, libomp, "
          "Python)" % (dso, total))
    for percent, symbol in shares:
        if percent >= 0.5:
            print("  %6.2f %%  %s" % (percent, symbol))
    for percent, symbol in shares[:3]:
        if percent < 5:
            break
        windows = code_windows(data, symbol)
        top = sorted(windows.items(), key=lambda w: -w[1])[:a.windows]
        print("%s: its hottest %d code windows of 512 B hold %.1f %% of its "
              "samples: %s" % (symbol, len(top), sum(v for _, v in top),
                               ", ".join("%#x %.1f" % w for w in top)))
    print("(library and perf.data in %s)" % out)


if __name__ == "__main__":
    main()
