"""rpe.compile's module cache ($RPE_MODULE_CACHE): GPU modules compiled on a
machine with the compiler load on one without it (scripts/gpu-bundle.sh /
gpu-run.sh)."""

import os
import subprocess
import sys
import textwrap

import pytest

from rpe import _capi, ir

HAVE_TOOLKIT = (os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
                or bool(os.environ.get("CUDA_ROOT")))
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(code, **env):
    """`code` in a fresh interpreter with `env` added; (rc, out, err)."""
    full = dict(os.environ, ASAN_OPTIONS="detect_leaks=0",
                PYTHONPATH=PYTHON_DIR, **env)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, env=full)
    return result.returncode, result.stdout, result.stderr


COMPILE = """
import rpe
mod = rpe.compile(%r, target=%r, chip="sm_90")
print("functions", sorted(mod.functions))
"""


def runtime():
    """The CUDA runtime beside librpe-c.so, named on its own."""
    return os.path.join(os.path.dirname(_capi.library_path()),
                        "librpe_cuda_runtime.so")


def record_t5(tmp_path):
    """A T5 attention module for sm_90 recorded into a fresh cache: (cache
    directory, module text)."""
    cache = str(tmp_path / "modules")
    text = ir.t5_attention(batch=1, heads=2, lq=None, lk=None, head_dim=16,
                           elem="f16", name="t5")
    rc, out, err = run(COMPILE % (text, "cuda"), RPE_MODULE_CACHE=cache,
                       RPE_MODULE_CACHE_RECORD="1")
    assert rc == 0, err
    assert sorted(os.listdir(cache))[0].endswith(".json")
    assert len(os.listdir(cache)) == 2
    return cache, text


@pytest.mark.skipif(not HAVE_TOOLKIT, reason="needs the CUDA toolkit")
def test_recorded_gpu_modules_load_without_the_compiler(tmp_path):
    cache, text = record_t5(tmp_path)
    # Without librpe-c.so (the runtime named on its own): the recorded
    # module loads from the cache ...
    bare = dict(RPE_MODULE_CACHE=cache, RPE_LIBRARY="/nonexistent/librpe-c.so",
                RPE_CUDA_RUNTIME=runtime())
    rc, out, err = run(COMPILE % (text, "cuda"), **bare)
    assert rc == 0, err
    assert "functions ['t5']" in out
    # ... other text, options or targets are misses that need the compiler.
    for source, target in ((text.replace("t5", "t6"), "cuda"),
                           (text, "nvptx-emulated")):
        rc, out, err = run(COMPILE % (source, target), **bare)
        assert rc != 0 and "nonexistent/librpe-c.so" in err, (rc, err)
    assert len(os.listdir(cache)) == 2


def test_cpu_modules_are_never_cached(tmp_path):
    cache = str(tmp_path / "modules")
    text = ir.t5_attention(batch=1, heads=2, lq=4, lk=4, head_dim=8, name="t5")
    rc, out, err = run(COMPILE % (text, "cpu"), RPE_MODULE_CACHE=cache,
                       RPE_MODULE_CACHE_RECORD="1")
    assert rc == 0, err
    assert not os.path.exists(cache)


@pytest.mark.skipif(not HAVE_TOOLKIT, reason="needs the CUDA toolkit")
def test_entries_of_another_compiler_are_misses(tmp_path):
    """An entry records the librpe-c.so that compiled it: with a different
    library present (a rebuilt or upgraded rpe) it is not used but compiled
    again (and re-recorded); without any library it is still used."""
    import json
    import shutil

    cache, text = record_t5(tmp_path)
    meta = os.path.join(cache, next(n for n in os.listdir(cache)
                                    if n.endswith(".json")))
    with open(meta) as f:
        first = json.load(f)["compiler"]
    assert len(first) == 64
    # "Another compiler": the same library with one byte appended (it still
    # loads), which the cache must not take for the recorder.
    other = str(tmp_path / "librpe-c.so")
    shutil.copyfile(_capi.library_path(), other)
    with open(other, "ab") as f:
        f.write(b"\0")
    rc, out, err = run(COMPILE % (text, "cuda"), RPE_MODULE_CACHE=cache,
                       RPE_MODULE_CACHE_RECORD="1", RPE_LIBRARY=other,
                       RPE_CUDA_RUNTIME=runtime())
    assert rc == 0, err
    with open(meta) as f:
        second = json.load(f)["compiler"]
    assert second != first and len(second) == 64
    # Without a compiler the entry loads whoever recorded it.
    rc, out, err = run(COMPILE % (text, "cuda"), RPE_MODULE_CACHE=cache,
                       RPE_LIBRARY="/nonexistent/librpe-c.so",
                       RPE_CUDA_RUNTIME=runtime())
    assert rc == 0 and "functions ['t5']" in out, err
