#!/usr/bin/env python3
"""Compile time against model depth: Hugging Face T5 encoders with tiny
dimensions (d_model 32, 4 heads of 8, d_ff 64, vocabulary 64; random weights
from a config) at L = 96 and 2, 12 and 24 layers, exported by torch-mlir
(rpe.torch_import.export), then `rpe-compile --emit=shared` (wall time,
median of --repeats runs; the MLIR pipeline and LLVM's share from
--emit=llvm and --emit=obj) and the sizes of the LLVM IR and the library.

    python3 bench/compile_time_bench.py [--layers 2,12,24] [--repeats 3]
        [--json out.json]
    python3 bench/compile_time_bench.py --attention [--repeats 5]
        [--baseline-compiler old/bin/rpe-compile] [--json out.json]

--attention compiles the attention module of each rpe kind of
cpu_attention_bench.py (`rpe-compile --emit=shared --mcpu=native`), and the
whole set as one module, with this build and, given, another build's
rpe-compile, alternating, median of --repeats runs: CPU seconds of the
compiler process (less noisy than wall time on a shared machine) and the
library's text size. Needs no torch.

torch, torch-mlir and transformers come from a virtual environment as in
cpu_attention_bench.py (RPE_BENCH_VENV, created when missing); rpe-compile
from the build (RPE_BUILD_DIR, default build/).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python", "tools"))

LENGTH = 96


def export_t5(layers, path):
    import torch
    from transformers import T5Config, T5EncoderModel
    from export_torch_models import LastHidden
    from rpe.torch_import import export
    torch.manual_seed(0)
    config = T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64,
                      num_layers=layers, num_heads=4,
                      relative_attention_num_buckets=32,
                      relative_attention_max_distance=128, dropout_rate=0.0,
                      feed_forward_proj="relu")
    config._attn_implementation = "eager"
    model = LastHidden(T5EncoderModel(config).eval())
    ids = torch.randint(0, 64, (1, LENGTH))
    with open(path, "w") as f:
        f.write(export(model, (ids,), func_name="t5_encoder"))


def cpu_seconds(cmd):
    """CPU time (user + system) of one run of `cmd`."""
    before = os.times()
    subprocess.run(cmd, check=True, capture_output=True)
    after = os.times()
    return (after.children_user - before.children_user +
            after.children_system - before.children_system)


def text_bytes(library):
    out = subprocess.run(["size", library], check=True, capture_output=True,
                         text=True).stdout.splitlines()[-1]
    return int(out.split()[0])


def attention_modules():
    """(name, MLIR text) per rpe kind of cpu_attention_bench, and "all": the
    kinds' functions in one module."""
    import re
    from cpu_attention_bench import RPE_IMPLS, _rpe_module
    mods = []
    for impl in RPE_IMPLS:
        if impl == "rpe_t5_hf":
            continue  # needs torch
        mods.append((impl, str(_rpe_module(impl, 1024))))
    funcs = []
    for name, text in mods:
        body = text.strip()
        if body.startswith("module {"):  # the functions of the module
            body = body[len("module {"):body.rindex("}")]
        funcs.append(re.sub(r"func\.func @attn\b", "func.func @" + name,
                            body))
    mods.append(("all", "\n".join(funcs)))
    return mods


def compare_attention(args):
    build = os.environ.get("RPE_BUILD_DIR", os.path.join(ROOT, "build"))
    compilers = [("new", os.path.join(build, "bin", "rpe-compile"))]
    if args.baseline_compiler:
        compilers.append(("base", args.baseline_compiler))
    rows = []
    print("| module | " + " | ".join(
        "%s CPU s | %s text KiB" % (n, n) for n, _ in compilers) +
        (" | new / base |" if len(compilers) == 2 else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in attention_modules():
            src = os.path.join(tmp, name + ".mlir")
            with open(src, "w") as f:
                f.write(text)
            times = {n: [] for n, _ in compilers}
            sizes = {}
            for _ in range(args.repeats):
                for n, compiler in compilers:
                    lib = os.path.join(tmp, "%s-%s.so" % (name, n))
                    times[n].append(cpu_seconds(
                        [compiler, src, "--mcpu=native", "--emit=shared",
                         "-o", lib]))
                    sizes[n] = text_bytes(lib)
            row = {"module": name}
            cells = []
            for n, _ in compilers:
                row[n + "_cpu_s"] = statistics.median(times[n])
                row[n + "_text_bytes"] = sizes[n]
                cells.append("%.2f | %.0f" % (row[n + "_cpu_s"],
                                              sizes[n] / 1024))
            line = "| %s | %s |" % (name, " | ".join(cells))
            if len(compilers) == 2:
                row["ratio"] = statistics.median(
                    a / b for a, b in zip(times["new"], times["base"]))
                line += " %.2f |" % row["ratio"]
            rows.append(row)
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def timed(cmd, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="2,12,24")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--attention", action="store_true")
    parser.add_argument("--baseline-compiler", metavar="RPE_COMPILE")
    args = parser.parse_args()
    if args.attention:
        return compare_attention(args)
    from cpu_attention_bench import ensure_torch
    ensure_torch()
    build = os.environ.get("RPE_BUILD_DIR", os.path.join(ROOT, "build"))
    compiler = os.path.join(build, "bin", "rpe-compile")
    rows = []
    print("| layers | MLIR KiB | shared (s) | to LLVM IR (s) | to object (s)"
          " | LLVM IR MiB | library KiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in [int(x) for x in args.layers.split(",")]:
            src = os.path.join(tmp, "t5_%d.mlir" % layers)
            export_t5(layers, src)
            out = {e: os.path.join(tmp, "t5_%d.%s" % (layers, e))
                   for e in ("so", "ll", "o")}
            base = [compiler, src, "--mcpu=native"]
            row = {"layers": layers,
                   "mlir_bytes": os.path.getsize(src),
                   "shared_s": timed(base + ["--emit=shared", "-o",
                                             out["so"]], args.repeats),
                   "llvm_s": timed(base + ["--emit=llvm", "-o", out["ll"]],
                                   args.repeats),
                   "obj_s": timed(base + ["--emit=obj", "-o", out["o"]],
                                  args.repeats)}
            row["llvm_bytes"] = os.path.getsize(out["ll"])
            row["library_bytes"] = os.path.getsize(out["so"])
            rows.append(row)
            print("| %d | %.0f | %.2f | %.2f | %.2f | %.1f | %.0f |" % (
                layers, row["mlir_bytes"] / 1024, row["shared_s"],
                row["llvm_s"], row["obj_s"], row["llvm_bytes"] / 2**20,
                row["library_bytes"] / 1024), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
