"""librpe_cuda_runtime: the mgpu* functions compiled --target=nvptx modules
call. Without a driver or a GPU every call fails with a clear message and a
null result, never a crash; with a GPU, memory round-trips. A module
compiled for NVPTX loads on a machine without a GPU and reports why it
cannot run."""

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rpe import _capi

LIB_DIR = os.path.dirname(_capi.library_path())
RUNTIME = os.path.join(LIB_DIR, "librpe_cuda_runtime.so")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code):
    """Runs `code` in a fresh interpreter (the runtime's error state is
    per process); returns (returncode, stdout, stderr)."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True,
                            env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    return result.returncode, result.stdout, result.stderr


PROLOGUE = """
import ctypes
rt = ctypes.CDLL(%r)
rt.rpeCudaGetLastError.restype = ctypes.c_char_p
rt.rpeCudaDeviceCount.restype = ctypes.c_int
rt.mgpuStreamCreate.restype = ctypes.c_void_p
rt.mgpuMemAlloc.restype = ctypes.c_void_p
rt.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_bool]
rt.mgpuModuleLoad.restype = ctypes.c_void_p
rt.mgpuModuleLoad.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
rt.mgpuModuleGetFunction.restype = ctypes.c_void_p
rt.mgpuModuleGetFunction.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
rt.rpeCudaLiveBytes.restype = ctypes.c_uint64
rt.rpeCudaPeakBytes.restype = ctypes.c_uint64
""" % RUNTIME


def test_runtime_has_no_link_time_driver_dependency():
    """The runtime loads libcuda.so.1 itself (dlopen): it links and loads on
    machines without a driver."""
    readelf = shutil.which("llvm-readelf") or "/usr/lib/llvm-22/bin/llvm-readelf"
    out = subprocess.run([readelf, "-d", RUNTIME], capture_output=True,
                         text=True, check=True).stdout
    assert "(NEEDED)" in out, out
    assert "libcuda" not in out, out


def test_calls_without_a_gpu_fail_cleanly_or_work_with_one():
    code = PROLOGUE + """
count = rt.rpeCudaDeviceCount()
print("count", count)
if count <= 0:
    assert rt.mgpuStreamCreate() is None
    assert rt.mgpuMemAlloc(64, None, False) is None
    assert rt.mgpuModuleGetFunction(None, b"k") is None
    rt.mgpuLaunchKernel(None, 1, 1, 1, 1, 1, 1, 0, None, None, None, 0)
    rt.mgpuMemFree(None, None)
    # Nothing was allocated.
    assert rt.rpeCudaLiveBytes() == 0 and rt.rpeCudaPeakBytes() == 0
    err = rt.rpeCudaGetLastError().decode()
    print("error", err)
    assert ("libcuda.so.1" in err) or ("no CUDA device" in err), err
    rt.rpeCudaClearError()
    # The error comes back on the next call, as the cause persists.
    assert rt.mgpuStreamCreate() is None
    assert rt.rpeCudaGetLastError().decode() == err
else:
    import numpy as np
    src = np.arange(16, dtype=np.float32)
    dst = np.zeros(16, dtype=np.float32)
    dev = rt.mgpuMemAlloc(64, None, False)
    assert dev, rt.rpeCudaGetLastError()
    rt.mgpuMemcpy(ctypes.c_void_p(dev), src.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(64), None)
    rt.mgpuMemcpy(dst.ctypes.data_as(ctypes.c_void_p), ctypes.c_void_p(dev), ctypes.c_size_t(64), None)
    rt.mgpuStreamSynchronize(None)
    # The memory counters: 64 bytes live, a peak of 64 + 1 MiB after a
    # second allocation is freed, 0 live at the end; a reset peak is what
    # is live.
    assert rt.rpeCudaLiveBytes() == 64
    other = rt.mgpuMemAlloc(1 << 20, None, False)
    rt.mgpuMemFree(ctypes.c_void_p(other), None)
    assert rt.rpeCudaLiveBytes() == 64
    assert rt.rpeCudaPeakBytes() == 64 + (1 << 20)
    rt.rpeCudaResetPeakBytes()
    assert rt.rpeCudaPeakBytes() == 64
    rt.mgpuMemFree(ctypes.c_void_p(dev), None)
    assert rt.rpeCudaLiveBytes() == 0
    assert (dst == src).all(), dst
    assert rt.rpeCudaGetLastError() == b""
    # A module that is not device code is an error with the driver's name.
    blob = b"not a cubin"
    assert rt.mgpuModuleLoad(blob, len(blob)) is None
    assert b"cuModuleLoadData" in rt.rpeCudaGetLastError()
print("ok")
"""
    rc, out, err = run_python(code)
    assert rc == 0, (out, err)
    assert out.strip().endswith("ok"), out
    if "count -1" in out or "count 0" in out:
        # The first failure was reported on stderr, with the reason.
        assert "rpe cuda runtime:" in err, err


@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
                    and not os.environ.get("CUDA_ROOT"),
                    reason="needs the CUDA toolkit (ptxas, libdevice) to compile")
def test_compiled_module_loads_and_reports_without_a_gpu(tmp_path):
    """A --target=nvptx shared library: its constructor loads the device
    code through the runtime; without a GPU that fails with a message, the
    process goes on."""
    so = str(tmp_path / "t5.so")
    compile_tool = os.path.join(os.path.dirname(LIB_DIR), "bin", "rpe-compile")
    # rpe-compile links its sanitizer runtime itself (sanitized builds): a
    # preloaded one, which the Python tests need, must not reach it.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    subprocess.run([compile_tool, os.path.join(ROOT, "examples", "t5-attention",
                                               "t5_attention.mlir"),
                    "--target=nvptx", "--emit=shared", "-o", so], check=True,
                   env=env)
    code = PROLOGUE + """
count = rt.rpeCudaDeviceCount()
rt.rpeCudaClearError()
mod = ctypes.CDLL(%r)
err = rt.rpeCudaGetLastError().decode()
print("count", count, "error", err)
if count <= 0:
    assert "libcuda.so.1" in err or "no CUDA device" in err, err
else:
    assert err == "", err
print("ok")
""" % so
    rc, out, err = run_python(code)
    assert rc == 0, (out, err)
    assert out.strip().endswith("ok"), out


@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
                    and not os.environ.get("CUDA_ROOT"),
                    reason="needs the CUDA toolkit (ptxas, libdevice) to compile")
def test_gpu_kernel_options(tmp_path, monkeypatch):
    """rpe.compile(gpu_kernel_options=...) shapes the GPU kernels (as
    rpe-compile --gpu-kernel-options; the PTX side is nvptx.test): other
    compilations than the defaults, kept apart in the module cache; bad
    options are compile errors."""
    import rpe
    from rpe import ir
    text = ir.t5_attention(batch=1, heads=2, lq=None, lk=None, head_dim=16,
                           elem="bf16")
    cache = tmp_path / "cache"
    monkeypatch.setenv("RPE_MODULE_CACHE", str(cache))
    monkeypatch.setenv("RPE_MODULE_CACHE_RECORD", "1")
    rpe.compile(text, target="cuda", chip="sm_90")
    rpe.compile(text, target="cuda", chip="sm_90",
                gpu_kernel_options="mma-threads=256 mma-tile-k=16")
    libraries = sorted(cache.glob("*.so"))
    assert len(libraries) == 2
    assert libraries[0].read_bytes() != libraries[1].read_bytes()
    with pytest.raises(rpe.CompileError, match="no such option bogus"):
        rpe.compile(text, target="cuda", gpu_kernel_options="bogus=1")
    with pytest.raises(rpe.CompileError, match="got 'chip'"):
        rpe.compile(text, target="cuda", gpu_kernel_options="chip=sm_70")
    with pytest.raises(rpe.CompileError, match="need --target=nvptx"):
        rpe.compile(text, target="cpu", gpu_kernel_options="mma-threads=256")
    with pytest.raises(TypeError, match="gpu_kernel_options must be a str"):
        rpe.compile(text, target="cuda", gpu_kernel_options=256)


class _HostAsDevice:
    """Stands in for librpe_cuda_runtime with host memory, so that the
    copy-in / call / copy-out / free logic of target="cuda" modules runs
    without a GPU (the module is the same kernels compiled for
    nvptx-emulated, which take host pointers)."""

    def __init__(self):
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        libc.free.argtypes = [ctypes.c_void_p]
        libc.memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_size_t]
        self.libc = libc
        self.live = set()
        self.freed = []
        self.streams = []
        outer = self

        class Lib:
            def rpeCudaDeviceCount(self):
                return 1

            def rpeCudaGetLastError(self):
                return b""

            def rpeCudaClearError(self):
                pass

            def mgpuMemAlloc(self, nbytes, stream, shared):
                address = libc.malloc(nbytes)
                outer.live.add(address)
                return address

            def mgpuMemcpy(self, dst, src, nbytes, stream):
                libc.memcpy(dst, src, nbytes)

            def mgpuStreamSynchronize(self, stream):
                pass

            def rpeCudaSetStream(self, stream):
                outer.streams.append(stream)

            def rpeCudaGetStream(self):
                return outer.streams[-1] if outer.streams else None

            def mgpuMemFree(self, address, stream):
                outer.freed.append(address)
                outer.live.discard(address)
                libc.free(address)

        self.lib = Lib()


def _device_module(monkeypatch, text=None):
    """The T5 example (or `text`) as a target="cuda" Module whose "device"
    is host memory (its kernels compiled for nvptx-emulated), and the fake
    runtime."""
    import rpe
    from rpe import compiler
    fake = _HostAsDevice()
    runtime = compiler._CudaRuntime.__new__(compiler._CudaRuntime)
    runtime.lib = fake.lib
    monkeypatch.setattr(compiler._CudaRuntime, "_instance", runtime)
    if text is None:
        text = open(os.path.join(ROOT, "examples", "t5-attention",
                                 "t5_attention.mlir")).read()
    emulated = rpe.compile(text, target="nvptx-emulated")
    mod = compiler.Module(emulated._library._name, [
        {"name": f.name,
         "arguments": [_desc(t) for t in f.arguments],
         "results": [_desc(t) for t in f.results],
         "shape_check": f.shape_check}
        for f in emulated.functions.values()], None, device=True)
    mod._keep = emulated  # its temporary directory holds the library
    return mod, fake


def _t5_example(seed, L):
    """Inputs of the T5 example (B=1, H=8, D=64, length L) and its NumPy
    reference output."""
    from rpe import reference as ref
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((1, 8, L, 64)).astype(np.float32)
               for _ in range(3))
    table = rng.standard_normal((32, 8)).astype(np.float32)
    bias = ref.relative_bias(table, L, L, ref.T5(32, 128, True))
    return (q, k, v, table), ref.attention(q, k, v, bias=bias, scale=1.0)


def test_device_calls_copy_in_and_out_and_free(monkeypatch):
    mod, fake = _device_module(monkeypatch)
    (q, k, v, table), want = _t5_example(3, 19)
    inputs = [a.copy() for a in (q, k, v, table)]
    got = mod.t5_attention(q, k, v, table)
    # Scale 1 on D = 64 unit-normal rows: scores ~ N(0, 64), so f32 scores
    # carry ~1e-5 absolute error; a marshalling error would be O(1).
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)
    # Inputs untouched; every device buffer (4 inputs and the result) freed.
    for a, b in zip((q, k, v, table), inputs):
        np.testing.assert_array_equal(a, b)
    assert not fake.live
    assert len(fake.freed) == 5


def test_device_calls_on_a_stream(monkeypatch):
    """stream= sets the runtime's stream for the call (a handle, or an
    object with cuda_stream / ptr) and restores the previous one; the
    default sets nothing; anything else is a TypeError, and a CPU module
    has no stream."""
    import rpe
    mod, fake = _device_module(monkeypatch)
    (q, k, v, table), want = _t5_example(4, 7)

    class TorchStream:
        cuda_stream = 0x5eed

    class CupyStream:
        ptr = 0x1234

    got = mod.t5_attention(q, k, v, table, stream=TorchStream())
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)
    assert fake.streams == [0x5eed, None]
    mod.t5_attention(q, k, v, table, stream=CupyStream())
    mod.t5_attention(q, k, v, table, stream=77)
    mod.t5_attention(q, k, v, table)
    assert fake.streams == [0x5eed, None, 0x1234, None, 77, None]
    for bad in ("s", -1, 1.5, True):
        with pytest.raises(TypeError, match="CUstream"):
            mod.t5_attention(q, k, v, table, stream=bad)
    assert not fake.live
    cpu = rpe.compile(open(os.path.join(ROOT, "examples", "t5-attention",
                                        "t5_attention.mlir")).read())
    with pytest.raises(ValueError, match="target=\"cuda\""):
        cpu.t5_attention(q, k, v, table, stream=1)


def _desc(t):
    if t.kind == "tensor":
        return {"kind": "tensor", "element": t.element,
                "shape": [-1 if d is None else d for d in t.shape]}
    return {"kind": "scalar", "type": t.element}


class _FakeDeviceTensor:
    """A "device" tensor (host memory here) seen through
    __cuda_array_interface__, as torch and cupy tensors are."""

    def __init__(self, array, strides=None):
        self.array = np.ascontiguousarray(array)
        self._strides = strides

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.array.shape, "typestr": self.array.dtype.str,
                "data": (self.array.ctypes.data, False),
                "strides": self._strides, "version": 3}


def test_device_arrays_pass_without_copies(monkeypatch):
    import gc
    import rpe
    mod, fake = _device_module(monkeypatch)
    L = 13
    (q, k, v, table), want = _t5_example(5, L)
    dq, dk, dv = (_FakeDeviceTensor(a) for a in (q, k, v))
    # Device q, k, v in place; the host table copied (one allocation).
    out = mod.t5_attention(dq, dk, dv, table)
    assert isinstance(out, rpe.DeviceArray)
    assert out.shape == (1, 8, L, 64) and out.dtype == np.float32
    iface = out.__cuda_array_interface__
    assert iface["version"] == 3 and iface["typestr"] == "<f4"
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=2e-5)
    # The table's copy is freed after the call (the emulated module
    # allocates its result with malloc, not through the fake), the result
    # when the last array using it goes.
    assert len(fake.freed) == 1 and not fake.live
    address = out.__cuda_array_interface__["data"][0]
    del out
    gc.collect()
    assert fake.freed[1:] == [address]
    # A device result feeds the next call without a copy.
    out = mod.t5_attention(dq, dk, dv, table)
    again = mod.t5_attention(out, dk, dv, table)
    assert isinstance(again, rpe.DeviceArray)
    from rpe import reference as ref
    bias = ref.relative_bias(table, L, L, ref.T5(32, 128, True))
    want2 = ref.attention(want, k, v, bias=bias, scale=1.0)
    np.testing.assert_allclose(again.numpy(), want2, rtol=1e-4, atol=2e-5)


def test_bad_device_arrays(monkeypatch):
    mod, _ = _device_module(monkeypatch)
    q = np.zeros((1, 8, 4, 64), np.float32)
    table = np.zeros((32, 8), np.float32)
    with pytest.raises(TypeError, match="expects a device array of f32"):
        mod.t5_attention(_FakeDeviceTensor(q.astype(np.float64)), q, q, table)
    with pytest.raises(ValueError, match="expects size 64 in dimension 3"):
        mod.t5_attention(_FakeDeviceTensor(q[..., :32]), q, q, table)
    with pytest.raises(ValueError, match="must be C-contiguous"):
        mod.t5_attention(_FakeDeviceTensor(q, strides=(4, 4, 4, 4)), q, q,
                         table)


class _DLManagedTensor(ctypes.Structure):
    pass


_DLTENSOR = b"dltensor"


class _FakeDLPackTensor:
    """A "device" tensor (host memory here) seen only through DLPack, with
    device type `device_type` (2: CUDA) and DLPack dtype (code, bits), as
    torch's bf16 CUDA tensors and JAX arrays are."""

    def __init__(self, array, code, bits, device_type=2):
        from rpe import compiler
        self.array = np.ascontiguousarray(array)
        self.device_type = device_type
        shape = (ctypes.c_int64 * self.array.ndim)(*self.array.shape)
        tensor = compiler._DLTensor(
            self.array.ctypes.data, compiler._DLDevice(device_type, 0),
            self.array.ndim, compiler._DLDataType(code, bits, 1),
            ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)), None, 0)
        self._keep = (shape, tensor)
        self.exported = 0

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        self.exported += 1
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._keep[1]), _DLTENSOR, None)


class _FakeTorchBF16(_FakeDLPackTensor):
    """torch 2.11's bf16 CUDA tensors: DLPack, and beside it an array
    interface whose typestr is the opaque '<V2' (older torch raised
    TypeError)."""

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.array.shape, "typestr": "<V2",
                "data": (self.array.ctypes.data, False), "strides": None,
                "version": 3}


def test_dlpack_device_arrays(monkeypatch):
    """DLPack producers in CUDA memory pass without copies: f32 and bf16
    (which __cuda_array_interface__ cannot describe); a producer in CPU
    memory is a host array; an unknown element type is refused."""
    import rpe
    from rpe import ir
    from rpe import reference as ref
    rng = np.random.default_rng(11)
    L = 9
    q, k, v = (rng.standard_normal((1, 2, L, 16)).astype(np.float32)
               for _ in range(3))
    want = ref.attention(q, k, v, causal=True)
    mod, fake = _device_module(monkeypatch, ir.attention(
        (1, 2, None, 16), (1, 2, None, 16), (1, 2, None, 16), causal=True,
        name="attn"))
    args = [_FakeDLPackTensor(a, 2, 32) for a in (q, k, v)]
    out = mod.attn(*args)
    assert isinstance(out, rpe.DeviceArray)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=2e-5)
    assert [a.exported for a in args] == [1, 1, 1]
    assert not fake.live  # nothing was copied to the "device"
    # A DLPack producer in CPU memory (device type 1) is a host array.
    host = [_FakeDLPackTensor(a, 2, 32, device_type=1) for a in (q, k, v)]
    with pytest.raises(Exception):
        mod.attn(*host)  # not a NumPy array either: refused as a host value
    assert [a.exported for a in host] == [0, 0, 0]
    with pytest.raises(TypeError, match="unsupported DLPack element type"):
        mod.attn(_FakeDLPackTensor(q, 5, 64), *args[1:])  # complex
    with pytest.raises(TypeError, match="expects a device array of f32, got f16"):
        mod.attn(_FakeDLPackTensor(q.astype(np.float16), 2, 16), *args[1:])

    # bf16: the bits of bf16 values (exactly representable inputs).
    def bf16_bits(a):
        return (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)

    qb, kb, vb = ((bf16_bits(a).astype(np.uint32) << 16).view(np.float32)
                  for a in (q, k, v))
    bmod, _ = _device_module(monkeypatch, ir.attention(
        (1, 2, None, 16), (1, 2, None, 16), (1, 2, None, 16), causal=True,
        elem="bf16", name="attn"))
    dk, dv = (_FakeDLPackTensor(bf16_bits(a), 4, 16) for a in (kb, vb))
    out = bmod.attn(_FakeDLPackTensor(bf16_bits(qb), 4, 16), dk, dv)
    # A bf16 device result: DLPack only (no array-interface typestr), a
    # float32 host copy from numpy().
    assert isinstance(out, rpe.DeviceArray) and out.element == "bf16"
    with pytest.raises(TypeError, match="bf16 has no __cuda_array_interface__"):
        out.__cuda_array_interface__
    want_b = ref.attention(qb, kb, vb, causal=True)
    np.testing.assert_allclose(out.numpy(), want_b, rtol=1e-2, atol=1e-2)
    # It feeds the next call through its own DLPack export.
    again = bmod.attn(out, dk, dv)
    np.testing.assert_allclose(
        again.numpy(), ref.attention(out.numpy(), kb, vb, causal=True),
        rtol=1e-2, atol=1e-2)
    # An opaque array-interface typestr ('<V2') defers to DLPack, which
    # names bf16 (the GPU benchmark's torch tensors were refused).
    torch_like = [_FakeTorchBF16(bf16_bits(a), 4, 16) for a in (qb, kb, vb)]
    np.testing.assert_allclose(bmod.attn(*torch_like).numpy(), want_b,
                               rtol=1e-2, atol=1e-2)
    assert [a.exported for a in torch_like] == [1, 1, 1]


def test_device_array_dlpack_export_lifetime(monkeypatch):
    """DeviceArray.__dlpack__: the capsule describes the device memory; the
    export (and the array it keeps alive) goes when an unconsumed capsule
    goes, or when a consumer calls the deleter."""
    import gc
    from rpe import compiler
    runtime = compiler._CudaRuntime.__new__(compiler._CudaRuntime)
    runtime.lib = _HostAsDevice().lib
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    arr = compiler.DeviceArray(data.ctypes.data, (2, 3), np.float32, runtime,
                               owner=data)
    assert arr.__dlpack_device__() == (2, 0)
    capsule = arr.__dlpack__()
    iface = compiler._dlpack_interface(_Exporter(capsule))
    assert iface["shape"] == (2, 3) and iface["element"] == "f32"
    assert iface["data"][0] == data.ctypes.data
    assert len(compiler._dl_exports) == 1
    del capsule, iface
    gc.collect()
    assert not compiler._dl_exports  # unconsumed: the destructor deleted it
    # A consumer renames the capsule and calls the deleter when done.
    capsule = arr.__dlpack__()
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object,
                            ctypes.c_char_p)(("PyCapsule_GetPointer",
                                              ctypes.pythonapi))
    rename = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object,
                               ctypes.c_char_p)(("PyCapsule_SetName",
                                                 ctypes.pythonapi))
    managed = compiler._DLManagedTensor.from_address(get(capsule, b"dltensor"))
    rename(capsule, b"used_dltensor")
    del capsule
    gc.collect()
    assert len(compiler._dl_exports) == 1  # consumed: still alive
    managed.deleter(ctypes.pointer(managed))
    assert not compiler._dl_exports


class _Exporter:
    """Hands out one given capsule as a CUDA DLPack export."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return self.capsule
