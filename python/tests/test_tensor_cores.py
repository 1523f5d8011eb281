"""The tensor-core attention kernel of the GPU path (issue 9): the
``tensor_cores`` switch of rpe.compile reaches the NVPTX pipeline (mma.sync
in the PTX or not), and both kernels, emulated on the CPU, agree with a
NumPy reference for f16 and bf16."""

import os

import numpy as np
import pytest

import rpe
from rpe import _capi, ir

HAVE_TOOLKIT = (os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
                or bool(os.environ.get("CUDA_ROOT")))


def reference(q, k, v, causal):
    """softmax(q·kᵀ/√D, causal mask)·v in float64; GQA by head groups."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        lq, lk = s.shape[-2:]
        s = np.where(np.arange(lk)[None, :] > np.arange(lq)[:, None], -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def module(elem):
    return ir.attention((2, 4, None, 32), (2, 2, None, 32), (2, 2, None, 16),
                        causal=True, elem=elem, name="attn")


@pytest.mark.parametrize("elem", ["f16", "bf16"])
@pytest.mark.parametrize("tensor_cores", [True, False])
def test_emulated_kernels_match_numpy(elem, tensor_cores):
    mod = rpe.compile(module(elem), target="nvptx-emulated",
                      tensor_cores=tensor_cores)
    rng = np.random.default_rng(7)
    dtype = {"f16": np.float16, "bf16": None}[elem]
    for length in (3, 45, 100):
        args = [rng.uniform(-1.5, 1.5, shape).astype(np.float32)
                for shape in ((2, 4, length, 32), (2, 2, length, 32),
                              (2, 2, length, 16))]
        if dtype is not None:
            args = [a.astype(dtype) for a in args]
        else:  # bf16: values exactly representable (8 significant bits)
            args = [(a.view(np.uint32) & 0xFFFF0000).view(np.float32)
                    for a in args]
        got = np.asarray(mod.attn(*args), np.float64)
        want = reference(*args, causal=True)
        tol = 4e-3 if elem == "f16" else 2e-2
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.skipif(not HAVE_TOOLKIT, reason="needs the CUDA toolkit")
@pytest.mark.parametrize("elem", ["f16", "bf16"])
def test_switch_reaches_the_nvptx_pipeline(tmp_path, elem):
    text = module(elem)
    comp = _capi.compiler()
    found = {}
    for tensor_cores in (True, False):
        ptx = str(tmp_path / ("on.ptx" if tensor_cores else "off.ptx"))
        ok, diagnostics = comp.compile(text, "<test>", ptx, emit="ptx",
                                       target="nvptx", chip="sm_80",
                                       tensor_cores=tensor_cores)
        assert ok, diagnostics
        with open(ptx) as f:
            found[tensor_cores] = f.read().count(
                "mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32" % (elem, elem))
    assert found[True] > 0 and found[False] == 0, found
