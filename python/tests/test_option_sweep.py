"""scripts/sweep-options.py on the build under test: random combinations of
options (plausible and extreme values) for every rpe pass, both pipelines
and rpe-compile, on each `// -----` chunk of the lit inputs, with a fixed
seed. A bad option must be diagnosed: a signal, an LLVM fatal error, an
assertion, a sanitizer report, a hang or a failure without a message fails
the test (the script prints each such run).

The same with --retype: each run changes one element type of its input
(a crash hunt over the types the passes and LLVM may not handle).

RPE_OPTION_SWEEP_DRAWS sets the runs per chunk (default 1; 0 skips, as for
a quick local run). Longer sweeps: run the script with --draws and other
seeds (Decisions.md, "Options in combination").
"""

import importlib.util
import os
import random
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
SCRIPT = os.path.join(ROOT, "scripts", "sweep-options.py")
DRAWS = int(os.environ.get("RPE_OPTION_SWEEP_DRAWS", "1"))


def _tool_env():
    """Without the shared sanitizer runtime the sanitized stage preloads
    into Python (a sanitized tool links its own; two ASan runtimes
    abort)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


@pytest.mark.skipif(DRAWS == 0, reason="RPE_OPTION_SWEEP_DRAWS=0")
@pytest.mark.parametrize("mode", ["passes", "pipelines", "compile"])
def test_option_sweep(mode):
    build = os.environ.get("RPE_BUILD_DIR", os.path.join(ROOT, "build"))
    result = subprocess.run(
        [sys.executable, SCRIPT, "--build", build, "--mode", mode,
         "--draws", str(DRAWS), "--seed", "1", "--jobs", "1"],
        capture_output=True, text=True, env=_tool_env())
    summary = result.stdout.strip().splitlines()[-1:] or [result.stderr]
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr
    runs = re.match(r"(\d+) runs, (\d+) succeeded, 0 findings", summary[0])
    assert runs, summary
    # Every chunk ran, and enough of them got through to exercise the
    # passes rather than only the option checks.
    assert int(runs.group(1)) >= 250 * DRAWS
    assert int(runs.group(2)) >= int(runs.group(1)) // 5, summary


@pytest.mark.skipif(DRAWS == 0, reason="RPE_OPTION_SWEEP_DRAWS=0")
@pytest.mark.parametrize("mode", ["passes", "pipelines", "compile"])
def test_retype_sweep(mode):
    """Every run with one element type of its input changed (f32 as i0,
    f16 as f128, ...): most such inputs fail to verify, which is fine; a
    crash is not (i0 in rpe-compile, an integer linalg.softmax in
    rpe-decompose-softmax did)."""
    build = os.environ.get("RPE_BUILD_DIR", os.path.join(ROOT, "build"))
    result = subprocess.run(
        [sys.executable, SCRIPT, "--build", build, "--mode", mode,
         "--draws", str(DRAWS), "--seed", "2", "--retype", "1", "--jobs",
         "1"], capture_output=True, text=True, env=_tool_env())
    summary = result.stdout.strip().splitlines()[-1:] or [result.stderr]
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr
    runs = re.match(r"(\d+) runs, (\d+) succeeded, 0 findings", summary[0])
    assert runs, summary
    assert int(runs.group(1)) >= 250 * DRAWS
    # Most retyped inputs fail to verify; about one in ten compiles (41 to
    # 60 of 407 passes and pipelines runs, 38 of 299 rpe-compile runs, with
    # seed 2). Fewer than one in twenty would mean the retyping broke the
    # inputs wholesale and the sweep tested little beyond the verifiers.
    assert int(runs.group(2)) * 20 >= int(runs.group(1)), summary


def _load_script():
    spec = importlib.util.spec_from_file_location("sweep_options", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_retype_changes_element_types_only():
    """--retype replaces an element type wherever it stands as one (alone,
    or after a shape's x) and leaves names that contain it alone."""
    sweep = _load_script()
    text = ("func.func @attn_f32(%q: tensor<1x?xf32>, %s: f32) -> "
            "memref<4xf32> { %f32 = arith.constant 1.0 : f32 }")
    pattern = sweep.type_pattern("f32")
    assert pattern.sub("i0", text) == (
        "func.func @attn_f32(%q: tensor<1x?xi0>, %s: i0) -> "
        "memref<4xi0> { %f32 = arith.constant 1.0 : i0 }")
    changed, label = sweep.retype(random.Random(0), text)
    old, new = label.split(" as ")
    assert old == "f32" and new in sweep.RETYPE_TO and new != "f32"
    assert changed == pattern.sub(new, text)
    assert sweep.retype(random.Random(0), "func.func @f(%x: index)") is None


def test_sweep_reports_a_crash(tmp_path):
    """The script counts a tool that dies by a signal as a finding (and
    one that fails with a diagnostic as fine)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    build = os.environ.get("RPE_BUILD_DIR", os.path.join(ROOT, "build"))
    real = os.path.join(build, "bin", "rpe-opt")
    # A stand-in rpe-opt: the real one for --help, an abort for the
    # rpe-tile-attention pass, a diagnostic for everything else.
    (bin_dir / "rpe-opt").write_text(
        "#!/bin/sh\n"
        "if [ \"$1\" = --help ]; then exec %s --help; fi\n"
        "case \"$1\" in --rpe-tile-attention=*) kill -ABRT $$;; esac\n"
        "echo 'error: no' >&2; exit 1\n" % real)
    (bin_dir / "rpe-opt").chmod(0o755)
    result = subprocess.run(
        [sys.executable, SCRIPT, "--build", str(tmp_path), "--mode", "passes",
         "--seed", "3", "--jobs", "2"],
        capture_output=True, text=True, env=_tool_env())
    assert result.returncode == 1, result.stdout[-2000:]
    found = re.search(r"(\d+) runs, 0 succeeded, (\d+) findings",
                      result.stdout)
    assert found and int(found.group(2)) > 0, result.stdout[-2000:]
    assert "rpe-opt '--rpe-tile-attention=" in result.stdout
    assert "--rpe-vectorize-attention=" not in result.stdout
