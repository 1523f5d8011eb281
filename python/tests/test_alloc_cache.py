"""The allocation cache that compiled CPU libraries link
(librpe_cpu_runtime.a, RPE_ALLOC_CACHE_MB): a function whose temporaries are
large does not take fresh pages from the kernel in every call, and computes
the same results as with the cache off."""

import os
import resource

import numpy as np
import pytest

import rpe

# exp(x)ᵀ summed along rows: the exp and the transpose are kernels of their
# own (rpe-outline-kernels), so a 16 MiB temporary lives between them and
# is freed before the function returns.
MODULE = """
func.func @%s(%%x: tensor<2048x2048xf32>) -> tensor<2048xf32> {
  %%e = tensor.empty() : tensor<2048x2048xf32>
  %%exp = linalg.exp ins(%%x : tensor<2048x2048xf32>) outs(%%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %%t = tensor.empty() : tensor<2048x2048xf32>
  %%tr = linalg.transpose ins(%%exp : tensor<2048x2048xf32>) outs(%%t : tensor<2048x2048xf32>) permutation = [1, 0]
  %%z = arith.constant 0.0 : f32
  %%r0 = tensor.empty() : tensor<2048xf32>
  %%r1 = linalg.fill ins(%%z : f32) outs(%%r0 : tensor<2048xf32>) -> tensor<2048xf32>
  %%r = linalg.reduce ins(%%tr : tensor<2048x2048xf32>) outs(%%r1 : tensor<2048xf32>) dimensions = [1]
    (%%a: f32, %%b: f32) {
      %%s = arith.addf %%a, %%b : f32
      linalg.yield %%s : f32
    }
  return %%r : tensor<2048xf32>
}
"""

TEMPORARY_PAGES = 2048 * 2048 * 4 // 4096


def _faults_per_call(fn, x, calls=4):
    fn(x)
    fn(x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        result = fn(x)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    return (after - before) / calls, result


# In a child process with small pages only and glibc mmap'ing every block
# of 1 MiB or more (a fixed threshold: without it glibc's dynamic one may
# keep the temporaries in its heap or not, depending on what ran before),
# so that without the cache every call faults its temporaries in again.
_CHILD = """
import json, os, resource, sys
import numpy as np
sys.path.insert(0, %(tests)r)
import rpe
from test_alloc_cache import MODULE, _faults_per_call
x = np.random.default_rng(0).standard_normal((2048, 2048),
                                             dtype=np.float32) * 0.1
os.environ["RPE_ALLOC_CACHE_MB"] = "0"
off, r_off = _faults_per_call(rpe.compile(MODULE %% "uncached").uncached, x)
del os.environ["RPE_ALLOC_CACHE_MB"]
on, r_on = _faults_per_call(rpe.compile(MODULE %% "cached").cached, x)
expected = np.exp(x.astype(np.float64)).T.sum(axis=1)
print(json.dumps({"off": off, "on": on, "same": bool((r_on == r_off).all()),
                  "error": float(np.max(np.abs(r_off - expected)
                                        / np.abs(expected)))}))
"""


def test_temporaries_reuse_their_pages():
    import json
    import subprocess
    import sys
    # 4 KiB pages (RPE_HUGE_PAGES=0): with huge ones the temporary is 8
    # faults, cached or not.
    env = dict(os.environ, RPE_HUGE_PAGES="0",
               GLIBC_TUNABLES="glibc.malloc.mmap_threshold=1048576")
    env.pop("RPE_ALLOC_CACHE_MB", None)
    proc = subprocess.run(
        [sys.executable, "-c",
         _CHILD % {"tests": os.path.dirname(os.path.abspath(__file__))}],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["error"] < 1e-5 and r["same"], r
    # Without the cache every call faults in the 16 MiB temporaries again
    # (the measurement can tell); with it, nearly nothing.
    assert r["off"] > 0.8 * TEMPORARY_PAGES, r
    assert r["on"] < 0.1 * TEMPORARY_PAGES, r


# A 16 MiB result: NumPy gives it back through the library's
# rpe_free_buffer (into its allocation cache) when the last array using it
# goes; arrays still alive keep their buffers.
OUTPUT_MODULE = """
func.func @%s(%%x: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %%e = tensor.empty() : tensor<2048x2048xf32>
  %%y = linalg.exp ins(%%x : tensor<2048x2048xf32>) outs(%%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %%y : tensor<2048x2048xf32>
}
"""


def test_results_go_back_to_the_library():
    x = np.random.default_rng(1).standard_normal((2048, 2048),
                                                 dtype=np.float32) * 0.1
    module = rpe.compile(OUTPUT_MODULE % "out")
    fn = module.out
    release = module._release
    assert release is not None, "the library exports no rpe_free_buffer"
    released = []

    def counting(address):
        released.append(address)
        release(address)

    module._release = counting
    first = fn(x)
    second = fn(2 * x)
    view = fn(3 * x)[5:7]
    assert released == []
    third = fn(x)
    np.testing.assert_allclose(first, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(second, np.exp(2 * x), rtol=1e-6)
    np.testing.assert_allclose(view, np.exp(3 * x[5:7]), rtol=1e-6)
    np.testing.assert_array_equal(third, first)
    data = first.__array_interface__["data"][0]
    del first
    # The allocation (the aligned data lies up to 64 bytes into it).
    assert len(released) == 1 and 0 <= data - released[0] < 64
    # The next result may take that buffer; the live ones are untouched.
    fourth = fn(3 * x)
    np.testing.assert_allclose(fourth, np.exp(3 * x), rtol=1e-6)
    np.testing.assert_allclose(second, np.exp(2 * x), rtol=1e-6)
    np.testing.assert_allclose(third, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(view, np.exp(3 * x[5:7]), rtol=1e-6)
    del second, third, fourth, view
    assert len(released) == 5


def test_bad_cache_size_is_reported(tmp_path):
    """RPE_ALLOC_CACHE_MB that is not a number of MiB: a message on stderr
    naming it, the default size, and the right results."""
    import subprocess
    import sys
    script = tmp_path / "run.py"
    script.write_text(
        "import numpy as np, rpe\n"
        "f = rpe.compile(%r).bad_env\n"
        "x = np.full((2048, 2048), 0.5, np.float32)\n"
        "y = f(x)\n"
        "assert np.allclose(y, np.exp(x))\n" % (OUTPUT_MODULE % "bad_env"))
    for value in ("lots", "-5", "12MB"):
        env = dict(os.environ, RPE_ALLOC_CACHE_MB=value)
        proc = subprocess.run([sys.executable, str(script)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert ("rpe: RPE_ALLOC_CACHE_MB='%s' is not a number of MiB" % value
                in proc.stderr), proc.stderr


# The bytes of the mappings advised for huge pages (VmFlags "hg") after a
# few calls of MODULE, whose 16 MiB temporary stays in the cache.
_HUGE_CHILD = """
import sys
import numpy as np
sys.path.insert(0, %(tests)r)
import rpe
from test_alloc_cache import MODULE
x = np.full((2048, 2048), 0.25, np.float32)
f = rpe.compile(MODULE %% "huge").huge
for _ in range(3):
    r = f(x)
assert np.allclose(r, 2048 * np.exp(0.25), rtol=1e-4), r[:4]
size, total = 0, 0
for line in open("/proc/self/smaps"):
    head = line.split()[0]
    if "-" in head and not head.endswith(":"):
        start, end = (int(v, 16) for v in head.split("-"))
        size = end - start
    elif line.startswith("VmFlags:") and " hg" in line:
        total += size
print(total)
"""


def test_large_temporaries_ask_for_huge_pages():
    """A library's blocks of 2 MiB or more are advised for transparent huge
    pages (the DeBERTa tables' column walks miss the TLB on 4 KiB pages),
    unless RPE_HUGE_PAGES=0: the advised mappings of a process grow by the
    16 MiB temporary."""
    import subprocess
    import sys
    if not os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"):
        pytest.skip("the kernel has no transparent huge pages")
    advised = {}
    tests = os.path.dirname(os.path.abspath(__file__))
    for value in ("1", "0"):
        env = dict(os.environ, RPE_HUGE_PAGES=value)
        proc = subprocess.run(
            [sys.executable, "-c", _HUGE_CHILD % {"tests": tests}],
            env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        advised[value] = int(proc.stdout.strip().splitlines()[-1])
    assert advised["1"] - advised["0"] >= 16 << 20, advised
