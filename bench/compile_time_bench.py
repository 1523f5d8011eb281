#!/usr/bin/env python3
"""Compile time against model depth: Hugging Face T5 encoders with tiny
dimensions (d_model 32, 4 heads of 8, d_ff 64, vocabulary 64; random weights
from a config) at L = 96 and 2, 12 and 24 layers, exported by torch-mlir
(rpe.torch_import.export), then `rpe-compile --emit=shared` (wall time,
median of --repeats runs; the MLIR pipeline and LLVM's share from
--emit=llvm and --emit=obj) and the sizes of the LLVM IR and the library.

    python3 bench/compile_time_bench.py [--layers 2,12,24] [--repeats 3]
        [--json out.json]

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
    args = parser.parse_args()
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
