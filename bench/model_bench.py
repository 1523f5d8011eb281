#!/usr/bin/env python3
"""Whole models, side by side in one run: Hugging Face models with random
weights from a config (no downloads) compiled ahead of time by rpe (exported
by torch-mlir, `rpe.compile`) against transformers eager and
`torch.compile` on the same machine.

Models (fp32, batch 1): a 4-layer T5 encoder (d_model 512, 8 heads of 64,
d_ff 2048, ReLU, bidirectional relative bias) and a 4-layer LLaMA-style
decoder (hidden 512, 8 heads, 2 kv heads, intermediate 1536, RoPE, causal),
both with eager attention, at L in {512, 2048}; with --models modernbert a
6-layer ModernBERT encoder (hidden 512, 8 heads, intermediate 1536, local
attention |i - j| <= 64 in four layers of six, RoPE). --impls sdpa adds
transformers with its SDPA attention (what it picks by default; the masks
of local layers as boolean L x L tensors). Every (model, L,
implementation) runs in a fresh child process with 2 threads: build (export
and compile, or torch.compile's warm-up), then --repeats timed calls
(median). rpe's output is checked against eager (max |difference| relative
to max |output|, printed), and so is the peak memory one more call adds
over what the process holds before it (heap trimmed; /proc's VmHWM) —
for rpe over what it holds before its first call, as its libraries keep
freed temporaries for the next call.

    python3 bench/model_bench.py [--models t5,llama] [--lengths 512,2048]
        [--repeats 5] [--json out.json]

torch, torch-mlir and transformers come from the virtual environment of
cpu_attention_bench.py (created when missing); rpe from the build
(RPE_BUILD_DIR, default build/; RPE_LIBRARY names another librpe-c.so,
e.g. an older build for an A/B).
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

THREADS = 2
IMPLS = ("rpe", "eager", "compile")


def make_model(name, attention="eager"):
    """The model `name` with random weights (seed 0) and transformers'
    `attention` implementation."""
    import torch
    torch.manual_seed(0)
    if name == "modernbert":
        from transformers import ModernBertConfig, ModernBertModel
        config = ModernBertConfig(vocab_size=1024, hidden_size=512,
                                  intermediate_size=1536, num_hidden_layers=6,
                                  num_attention_heads=8, local_attention=128,
                                  global_attn_every_n_layers=3,
                                  max_position_embeddings=8192, pad_token_id=0,
                                  bos_token_id=1, eos_token_id=2,
                                  cls_token_id=1, sep_token_id=2)
        config._attn_implementation = attention
        model = ModernBertModel(config).eval()
    elif name == "t5":
        from transformers import T5Config, T5EncoderModel
        config = T5Config(vocab_size=1024, d_model=512, d_kv=64, d_ff=2048,
                          num_layers=4, num_heads=8, dropout_rate=0.0,
                          feed_forward_proj="relu")
        config._attn_implementation = attention
        model = T5EncoderModel(config).eval()
    elif name == "llama":
        from transformers import LlamaConfig, LlamaModel
        config = LlamaConfig(vocab_size=1024, hidden_size=512,
                             intermediate_size=1536, num_hidden_layers=4,
                             num_attention_heads=8, num_key_value_heads=2,
                             max_position_embeddings=4096)
        config._attn_implementation = attention
        model = LlamaModel(config).eval()
    else:
        raise ValueError(name)
    from export_torch_models import LastHidden
    return LastHidden(model).eval()


def child(name, length, impl, repeats):
    import numpy as np
    import torch
    torch.set_num_threads(THREADS)
    model = make_model(name, "sdpa" if impl == "sdpa" else "eager")
    # Token ids from 3 on (ModernBERT's 0-2 are pad / bos / eos).
    ids = torch.randint(3, 1024, (1, length))
    with torch.no_grad():
        want = model(ids).numpy()
    start = time.perf_counter()
    if impl == "rpe":
        import rpe
        from rpe.torch_import import export
        text = export(model, (ids,), func_name="model")
        del model
        mod = rpe.compile(text, cpu="native", opt_level=3,
                          num_threads=THREADS)
        ids_np = ids.numpy()

        def call():
            return mod.model(ids_np)
    elif impl in ("eager", "sdpa"):
        def call():
            with torch.no_grad():
                return model(ids).numpy()
    else:
        compiled = torch.compile(model)

        def call():
            with torch.no_grad():
                return compiled(ids).numpy()
    # rpe's libraries keep freed temporaries for the next call (their
    # allocation cache), so its memory is measured from before the first
    # call (rpe compiled above); torch.compile compiles in the first call,
    # so for torch one more call is measured after the others.
    before_first = start_peak() if impl == "rpe" else None
    got = call()  # warm-up (compiles torch.compile)
    build = time.perf_counter() - start
    call()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    if before_first is not None:
        # The first call's output is still held (got): not the call's.
        peak = status("VmHWM:")
        peak_mib = None if peak is None else \
            peak - before_first - got.nbytes / 2**20
    else:
        peak_mib = peak_memory(call)
    print(json.dumps({"times": times, "build_s": build, "rel_error": error,
                      "peak_mib": peak_mib}))


def status(key):
    """A /proc/self/status field in MiB, or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def start_peak():
    """Trims the heap, resets the kernel's peak counter and returns the
    resident MiB to measure from (None where Linux does not offer that)."""
    import ctypes
    import gc
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return None
    return status("VmRSS:")


def peak_memory(call):
    """MiB of resident memory one more call adds at its peak, over what the
    process holds before it (heap trimmed, the kernel's peak counter reset
    through /proc/self/clear_refs); None where Linux does not offer that."""
    before = start_peak()
    if before is None:
        return None
    call()
    peak = status("VmHWM:")
    return None if peak is None else peak - before


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="t5,llama")
    parser.add_argument("--lengths", default="512,2048")
    parser.add_argument("--impls", default=",".join(IMPLS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2], args.repeats)
        return
    from cpu_attention_bench import ensure_torch
    ensure_torch()
    rows = []
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    for name in args.models.split(","):
        for length in [int(x) for x in args.lengths.split(",")]:
            for impl in args.impls.split(","):
                proc = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--child",
                     name, str(length), impl, "--repeats", str(args.repeats)],
                    capture_output=True, text=True, env=env)
                row = {"model": name, "L": length, "impl": impl}
                if proc.returncode != 0:
                    tail = (proc.stderr or proc.stdout).strip().splitlines()
                    row["error"] = tail[-1] if tail else "exit %d" % \
                        proc.returncode
                    print("%-6s %5d %-8s error: %s" % (name, length, impl,
                                                       row["error"]),
                          flush=True)
                else:
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                    row.update(ms=statistics.median(r["times"]) * 1e3,
                               build_s=r["build_s"],
                               rel_error=r["rel_error"], times=r["times"],
                               peak_mib=r["peak_mib"])
                    print("%-6s %5d %-8s %9.1f ms  build %6.1f s  error %.1e"
                          "  peak +%s MiB"
                          % (name, length, impl, row["ms"], row["build_s"],
                             row["rel_error"],
                             "%.1f" % row["peak_mib"]
                             if row["peak_mib"] is not None else "?"),
                          flush=True)
                rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    by = {(r["model"], r["L"], r["impl"]): r for r in rows}
    impls = args.impls.split(",")
    names = {"rpe": "rpe", "eager": "eager", "compile": "torch.compile",
             "sdpa": "SDPA"}
    print("\n| model | L | %s | %s |" % (
        " | ".join("%s (ms)" % names[i] for i in impls),
        " | ".join("%s / %s" % (names[i], names[impls[0]])
                   for i in impls[1:])))
    print("|---|---:|" + "---:|" * (2 * len(impls) - 1))
    for name in args.models.split(","):
        for length in [int(x) for x in args.lengths.split(",")]:
            ms = [by.get((name, length, i), {}).get("ms") for i in impls]
            cells = ["%.1f" % m if m else "—" for m in ms]
            ratios = ["%.2f×" % (m / ms[0]) if m and ms[0] else "—"
                      for m in ms[1:]]
            print("| %s | %d | %s | %s |" % (name, length, " | ".join(cells),
                                             " | ".join(ratios)))


if __name__ == "__main__":
    main()
