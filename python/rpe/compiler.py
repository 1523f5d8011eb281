"""Compile rpe modules and call their functions on NumPy arrays.

    mod = rpe.compile(mlir_text)          # raises rpe.CompileError
    out = mod.my_function(q, k, v, 7)     # NumPy arrays and Python scalars

Each public ``func.func`` of the module becomes a method. Tensor arguments
take C-contiguous NumPy arrays of the matching dtype (other layouts are
copied; a wrong dtype, rank, static size or argument count raises); bf16
tensors take float32 arrays, rounded to bf16, and come back as float32.
Integer and index scalars take Python ints, float scalars Python floats.
A function returns one NumPy array (or scalar), or a tuple for several
results. Inputs are never written to.

    mod = rpe.compile(mlir_text, target="cuda", chip="sm_90")

compiles for an NVIDIA GPU (rpe-nvptx-pipeline; the CUDA toolkit must be
installed to compile). Calls take and return NumPy arrays as above: the
arrays are copied to device memory, the results copied back. Without a GPU
(or driver) a call raises RuntimeError with the runtime's reason. Arguments
may instead be device arrays: objects with ``__cuda_array_interface__``
or a DLPack export in CUDA memory
(torch and cupy tensors, or rpe.DeviceArray) are passed without a copy; a
call with any device argument returns its results as rpe.DeviceArray
(device memory, ``__cuda_array_interface__`` for torch.as_tensor /
cupy.asarray, ``.numpy()`` to copy back).
``target="nvptx-emulated"`` runs the same GPU kernels, one thread per block,
as loops on the CPU (to test them without a GPU).
"""

import ctypes
import functools
import hashlib
import json
import math
import os
import shutil
import tempfile
import weakref

import numpy as np

from . import _capi

__all__ = ["CompileError", "DeviceArray", "Module", "Function", "compile"]


class CompileError(RuntimeError):
    """Compilation failed; ``diagnostics`` holds MLIR's messages."""

    def __init__(self, diagnostics):
        super().__init__(diagnostics.strip() or "compilation failed")
        self.diagnostics = diagnostics


_NUMPY = {"f32": np.float32, "f16": np.float16, "f64": np.float64,
          "bf16": np.uint16, "i8": np.int8, "i16": np.int16, "i32": np.int32,
          "i64": np.int64, "i1": np.bool_}
_SCALARS = {"index": ctypes.c_int64, "i64": ctypes.c_int64,
            "i32": ctypes.c_int32, "i16": ctypes.c_int16, "i8": ctypes.c_int8,
            "i1": ctypes.c_bool, "f32": ctypes.c_float, "f64": ctypes.c_double}
_C_ELEMENT = {"f32": ctypes.c_float, "f16": ctypes.c_uint16,
              "bf16": ctypes.c_uint16, "f64": ctypes.c_double,
              "i8": ctypes.c_int8, "i16": ctypes.c_int16,
              "i32": ctypes.c_int32, "i64": ctypes.c_int64,
              "i1": ctypes.c_bool}

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]

_descriptor_types = {}


def _descriptor(element, rank):
    """ctypes struct of a memref descriptor (MLIR's C interface layout).
    The two pointers are c_void_p: they read as ints (None when null) and
    take ints, with no ctypes pointer objects per call."""
    key = (element, rank)
    if key not in _descriptor_types:
        fields = [("allocated", ctypes.c_void_p),
                  ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _descriptor_types[key] = type(
            "MemRef_%s_%dd" % (element, rank), (ctypes.Structure,),
            {"_fields_": fields})
    return _descriptor_types[key]


def _row_major(shape):
    """The strides, in elements, of a row-major array of `shape`."""
    strides, n = [], 1
    for size in reversed(shape):
        strides.append(n)
        n *= size
    return tuple(reversed(strides))


def _to_bf16_bits(array):
    """float32 -> bf16 bit patterns (round to nearest even)."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)
    rounded = bits + (0x7FFF + ((bits >> 16) & 1))
    out = (rounded >> 16).astype(np.uint16)
    nan = np.isnan(array)
    out[nan] = 0x7FC0
    return out


def _from_bf16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class _Type:
    """One argument or result type from the module description."""

    def __init__(self, desc):
        self.kind = desc["kind"]
        if self.kind == "tensor":
            self.element = desc["element"]
            self.shape = [None if d < 0 else d for d in desc["shape"]]
        else:
            self.element = desc["type"]
            self.shape = None
        self.supported = (self.element in _C_ELEMENT if self.kind == "tensor"
                          else self.element in _SCALARS)
        if self.kind == "tensor" and self.supported:
            # What a call needs of it, once.
            self.dtype = np.dtype(_NUMPY[self.element])
            self.descriptor = _descriptor(self.element, len(self.shape))

    def fits(self, shape):
        """Whether an array of `shape` has this tensor type's rank and
        static sizes."""
        return len(shape) == len(self.shape) and all(
            want is None or want == got
            for want, got in zip(self.shape, shape))

    def __str__(self):
        if self.kind != "tensor":
            return self.element
        dims = "x".join("?" if d is None else str(d) for d in self.shape)
        return "tensor<%s%s%s>" % (dims, "x" if dims else "", self.element)


class Function:
    """A compiled entry point; call it with NumPy arrays and scalars."""

    def __init__(self, module, name, arguments, results, shape_check=None):
        self._module = module
        self.name = name
        self.arguments = arguments
        self.results = results
        # {"function": name, "messages": [printf formats]} from
        # rpe-insert-shape-checks: run before every call.
        self.shape_check = shape_check
        self._symbol = None
        self._check_symbol = None

    def signature(self):
        return "%s(%s) -> (%s)" % (
            self.name, ", ".join(map(str, self.arguments)),
            ", ".join(map(str, self.results)))

    def __repr__(self):
        return "<rpe function %s>" % self.signature()

    def _prepare(self):
        if self._symbol is not None:
            return
        for t in self.arguments + self.results:
            if not t.supported:
                raise TypeError("%s: type %s cannot be passed from Python"
                                % (self.name, t))
        symbol = getattr(self._module._library, "_mlir_ciface_" + self.name)
        ctypes_args = []
        self._result_struct = None
        scalar_result = (len(self.results) == 1
                         and self.results[0].kind == "scalar")
        if self.results and not scalar_result:
            fields = [("r%d" % i, self._result_ctype(t))
                      for i, t in enumerate(self.results)]
            self._result_struct = type("Results", (ctypes.Structure,),
                                       {"_fields_": fields})
            ctypes_args.append(ctypes.c_void_p)
        for t in self.arguments:
            ctypes_args.append(ctypes.c_void_p if t.kind == "tensor"
                               else _SCALARS[t.element])
        symbol.argtypes = ctypes_args
        symbol.restype = _SCALARS[self.results[0].element] if scalar_result \
            else None
        if self.shape_check:
            check = getattr(self._module._library,
                            "_mlir_ciface_" + self.shape_check["function"])
            arg_types = ctypes_args[1:] if self._result_struct else ctypes_args
            check.argtypes = [ctypes.c_void_p] + list(arg_types)
            check.restype = None
            self._check_symbol = check
        self._symbol = symbol

    @staticmethod
    def _result_ctype(t):
        if t.kind == "tensor":
            return _descriptor(t.element, len(t.shape))
        return _SCALARS[t.element]

    def _convert_argument(self, index, t, value, keep):
        if t.kind == "tensor" and type(value) is np.ndarray \
                and t.element != "bf16" and value.dtype == t.dtype \
                and value.flags.c_contiguous and t.fits(value.shape):
            # The common case, without the checks' strings: a C-contiguous
            # array of the right dtype and shape.
            return self._descriptor_of(t, value, keep)
        where = "%s: argument %d (%s)" % (self.name, index, t)
        if t.kind == "scalar":
            if isinstance(value, np.ndarray) and value.ndim > 0:
                raise TypeError("%s expects a scalar, got an array of shape %s"
                                % (where, value.shape))
            if t.element.startswith("f"):
                if not isinstance(value, (int, float, np.integer,
                                          np.floating)):
                    raise TypeError("%s expects a float, got %s"
                                    % (where, type(value).__name__))
                return float(value)
            if not isinstance(value, (int, np.integer, bool, np.bool_)):
                raise TypeError("%s expects an integer, got %s"
                                % (where, type(value).__name__))
            return int(value)
        if not isinstance(value, np.ndarray):
            raise TypeError("%s expects a NumPy array, got %s"
                            % (where, type(value).__name__))
        if value.ndim != len(t.shape):
            raise ValueError("%s expects rank %d, got an array of shape %s"
                             % (where, len(t.shape), value.shape))
        for dim, (want, got) in enumerate(zip(t.shape, value.shape)):
            if want is not None and want != got:
                raise ValueError("%s expects size %d in dimension %d, got "
                                 "shape %s" % (where, want, dim, value.shape))
        if t.element == "bf16":
            if value.dtype != np.float32:
                raise TypeError("%s expects a float32 array (rounded to "
                                "bf16), got dtype %s" % (where, value.dtype))
            value = _to_bf16_bits(value)
        else:
            want = np.dtype(_NUMPY[t.element])
            if value.dtype != want:
                raise TypeError("%s expects dtype %s, got %s"
                                % (where, want, value.dtype))
            value = np.ascontiguousarray(value)
        return self._descriptor_of(t, value, keep)

    @staticmethod
    def _descriptor_of(t, value, keep):
        """The address of a descriptor of the C-contiguous array `value`;
        `value` and the descriptor go to `keep`, in that order."""
        keep.append(value)
        pointer = value.ctypes.data
        if value.ndim:
            itemsize = value.itemsize
            desc = t.descriptor(pointer, pointer, 0, value.shape,
                                tuple(st // itemsize for st in value.strides))
        else:
            desc = t.descriptor(pointer, pointer, 0)
        keep.append(desc)
        return ctypes.addressof(desc)

    def __call__(self, *args, stream=None):
        """Runs the function. ``stream`` (target="cuda" modules): the CUDA
        stream to run on, as a CUstream handle (int) or an object with one
        (``torch.cuda.Stream``'s ``cuda_stream``, CuPy's ``ptr``); the call
        still returns when its work on that stream is done."""
        if len(args) != len(self.arguments):
            raise TypeError("%s takes %d arguments (%s), got %d"
                            % (self.name, len(self.arguments),
                               ", ".join(map(str, self.arguments)), len(args)))
        if stream is not None and not self._module._device:
            raise ValueError("%s: stream= is for modules compiled with "
                             "target=\"cuda\"" % self.name)
        self._prepare()
        keep = []
        if self._module._device:
            return self._call_on_stream(args, _stream_handle(stream))
        c_args = [self._convert_argument(i, t, v, keep)
                  for i, (t, v) in enumerate(zip(self.arguments, args))]
        self._check_sizes(c_args)
        input_buffers = {d.allocated for d in keep
                         if isinstance(d, ctypes.Structure)}
        if self._result_struct is None:
            value = self._symbol(*c_args)
            return value if self.results else None
        results = self._result_struct()
        self._symbol(ctypes.addressof(results), *c_args)
        owners = {}
        outputs = []
        for i, t in enumerate(self.results):
            field = getattr(results, "r%d" % i)
            if t.kind == "scalar":
                outputs.append(field)
                continue
            address = field.allocated
            if not address or address in input_buffers or t.element == "bf16":
                # Not ours to keep (an input, or converted): copy it out.
                outputs.append(self._to_numpy(t, field, copy=True))
                if address and address not in input_buffers \
                        and address not in owners:
                    owners[address] = None
                    _libc.free(address)
                continue
            # The library malloc'ed this buffer for us: hand it to NumPy
            # without a copy; it is freed when the last array using it goes.
            owner = owners.get(address)
            if owner is None:
                owner = owners[address] = _Buffer(address,
                                                  self._module._release)
            outputs.append(self._to_numpy(t, field, owner=owner))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _device_descriptor(self, index, t, value, iface, keep):
        """A memref descriptor of a device array argument (no copy), from
        its array interface `iface`."""
        where = "%s: argument %d (%s)" % (self.name, index, t)
        shape = tuple(iface["shape"])
        element = iface.get("element") or _element_of(iface["typestr"])
        if element != t.element:
            raise TypeError("%s expects a device array of %s, got %s"
                            % (where, t.element,
                               element or "typestr " + iface["typestr"]))
        if len(shape) != len(t.shape):
            raise ValueError("%s expects rank %d, got a device array of "
                             "shape %s" % (where, len(t.shape), shape))
        for dim, (want, got) in enumerate(zip(t.shape, shape)):
            if want is not None and want != got:
                raise ValueError("%s expects size %d in dimension %d, got "
                                 "shape %s" % (where, want, dim, shape))
        itemsize = iface.get("itemsize") or np.dtype(iface["typestr"]).itemsize
        dense = tuple(int(np.prod(shape[d + 1:])) * itemsize
                      for d in range(len(shape)))
        strides = iface.get("strides")
        if strides is not None and any(
                n > 1 and st != e for n, st, e in zip(shape, strides, dense)):
            raise ValueError("%s: device arrays must be C-contiguous, got "
                             "strides %s" % (where, tuple(strides)))
        desc = t.descriptor()
        desc.allocated = desc.aligned = iface["data"][0]
        desc.offset = 0
        for d in range(len(shape)):
            desc.sizes[d] = shape[d]
            desc.strides[d] = dense[d] // itemsize
        keep.append(value)
        keep.append(iface)  # a DLPack capsule lives until the call is done
        keep.append(desc)
        return ctypes.addressof(desc)

    def _call_on_stream(self, args, stream):
        """_call_on_device with the runtime's stream set to `stream` (0:
        a stream per launch) for the call, and restored after."""
        if not stream:
            return self._call_on_device(args)
        lib = _CudaRuntime.get().lib
        previous = lib.rpeCudaGetStream()
        lib.rpeCudaSetStream(stream)
        try:
            return self._call_on_device(args)
        finally:
            lib.rpeCudaSetStream(previous)

    def _call_on_device(self, args):
        """Copies NumPy arguments to the device (device arrays are used in
        place), runs the shape check and the function there, and returns
        the results as NumPy copies, or as DeviceArrays when an argument
        was a device array. Every buffer the call made is freed."""
        cuda = _CudaRuntime.get()
        if cuda.lib.rpeCudaDeviceCount() <= 0:
            cuda.check("%s needs a CUDA GPU" % self.name)
            raise RuntimeError("%s needs a CUDA GPU; none was found"
                               % self.name)
        keep, copies, c_args = [], [], []
        # Each argument's interface once (a DLPack export each time).
        ifaces = [_device_interface(a) if t.kind == "tensor" else None
                  for t, a in zip(self.arguments, args)]
        on_device = any(iface is not None for iface in ifaces)
        try:
            for i, (t, value) in enumerate(zip(self.arguments, args)):
                if ifaces[i] is not None:
                    c_args.append(self._device_descriptor(i, t, value,
                                                          ifaces[i], keep))
                    continue
                c_args.append(self._convert_argument(i, t, value, keep))
                if t.kind != "tensor":
                    continue
                array, desc = keep[-2], keep[-1]
                dev = cuda.to_device(array)
                copies.append(dev)
                desc.allocated = desc.aligned = dev
            inputs = set(copies) | {
                d.allocated for d in keep if isinstance(d, ctypes.Structure)}
            # The shape check of a GPU module reads key lengths (and other
            # values it checks) on the device.
            self._check_sizes(c_args)
            cuda.check("%s: the shape check failed on the GPU" % self.name)
            if self._result_struct is None:
                value = self._symbol(*c_args)
                cuda.check("%s failed on the GPU" % self.name)
                return value if self.results else None
            results = self._result_struct()
            self._symbol(ctypes.addressof(results), *c_args)
            cuda.check("%s failed on the GPU" % self.name)
            outputs, owners = [], {}
            for i, t in enumerate(self.results):
                field = getattr(results, "r%d" % i)
                if t.kind == "scalar":
                    outputs.append(field)
                    continue
                address = field.allocated
                fresh = address and address not in inputs
                if on_device and fresh:
                    outputs.append(self._device_array(cuda, t, field, address,
                                                      owners))
                    continue
                outputs.append(self._device_to_numpy(cuda, t, field))
                if fresh and address not in owners:
                    owners[address] = None
                    cuda.free(address)
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        finally:
            for dev in copies:
                cuda.free(dev)

    @staticmethod
    def _device_array(cuda, t, desc, address, owners):
        """A DeviceArray over a result buffer the call allocated (shared by
        results that alias it)."""
        rank = len(t.shape)
        shape = tuple(desc.sizes[d] for d in range(rank))
        dtype = np.dtype(_NUMPY[t.element])
        base = desc.aligned + desc.offset * dtype.itemsize
        owner = owners.get(address)
        if owner is None:
            owner = owners[address] = DeviceArray(address, (0,), dtype, cuda,
                                                  element=t.element)
        return DeviceArray(base, shape, dtype, cuda, owner=owner,
                           element=t.element)

    @staticmethod
    def _layout(t, desc):
        """(shape, strides in elements, dtype) of a result descriptor."""
        rank = len(t.shape)
        shape = tuple(desc.sizes[d] for d in range(rank)) if rank else ()
        strides = tuple(desc.strides[d] for d in range(rank)) if rank else ()
        return shape, strides, np.dtype(_NUMPY[t.element])

    @staticmethod
    def _device_to_numpy(cuda, t, desc):
        shape, strides, dtype = Function._layout(t, desc)
        rank = len(shape)
        count = int(np.prod(shape)) if shape else 1
        out = np.empty(shape, dtype=dtype)
        if count:
            # Results are dense row-major buffers, possibly at an offset.
            expected = tuple(int(np.prod(shape[d + 1:])) for d in range(rank))
            if any(s > 1 and st != e
                   for s, st, e in zip(shape, strides, expected)):
                raise RuntimeError("result %s has a strided layout %s"
                                   % (t, strides))
            base = desc.aligned + desc.offset * dtype.itemsize
            cuda.to_host(base, count * dtype.itemsize, out)
        if t.element == "bf16":
            return _from_bf16_bits(out)
        return out

    def _check_sizes(self, c_args):
        """Runs the shape check: ValueError naming the argument, the
        dimension and both sizes when the arguments do not fit the ops."""
        if self._check_symbol is None:
            return
        out = (ctypes.c_int64 * 4)()
        self._check_symbol(ctypes.addressof(out), *c_args)
        code = out[0]
        if code == 0:
            return
        messages = self.shape_check["messages"]
        if not 1 <= code <= len(messages):
            raise ValueError("%s: argument sizes rejected (check %d)"
                             % (self.name, code))
        text = messages[code - 1].replace("%lld", "%d")
        raise ValueError("%s: %s" % (self.name, text % tuple(
            out[1:1 + text.count("%d")])))

    @staticmethod
    def _to_numpy(t, desc, copy=False, owner=None):
        shape, strides, dtype = Function._layout(t, desc)
        if math.prod(shape) == 0:
            out = np.empty(shape, dtype=dtype)
        else:
            base = desc.aligned + desc.offset * dtype.itemsize
            span = 1 + sum((s - 1) * abs(st) for s, st in zip(shape, strides))
            buffer = (ctypes.c_uint8 * (span * dtype.itemsize)).from_address(
                base)
            if owner is not None:
                buffer._rpe_owner = owner  # keeps the allocation alive
            flat = np.frombuffer(buffer, dtype=dtype)
            if strides == _row_major(shape):
                out = flat.reshape(shape)  # the usual result
            else:
                out = np.lib.stride_tricks.as_strided(
                    flat, shape=shape,
                    strides=tuple(st * dtype.itemsize for st in strides))
            if copy:
                out = out.copy()
        if t.element == "bf16":
            return _from_bf16_bits(out)
        return out


class _CudaRuntime:
    """librpe_cuda_runtime, which compiled --target=nvptx libraries link."""

    _instance = None

    def __init__(self):
        path = os.environ.get("RPE_CUDA_RUNTIME") or os.path.join(
            os.path.dirname(_capi.library_path()), "librpe_cuda_runtime.so")
        lib = ctypes.CDLL(path)
        lib.rpeCudaGetLastError.restype = ctypes.c_char_p
        lib.rpeCudaDeviceCount.restype = ctypes.c_int
        lib.mgpuMemAlloc.restype = ctypes.c_void_p
        lib.mgpuMemAlloc.argtypes = [ctypes.c_uint64, ctypes.c_void_p,
                                     ctypes.c_bool]
        lib.mgpuMemFree.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.mgpuMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_size_t, ctypes.c_void_p]
        lib.mgpuStreamSynchronize.argtypes = [ctypes.c_void_p]
        lib.rpeCudaSetStream.argtypes = [ctypes.c_void_p]
        lib.rpeCudaGetStream.restype = ctypes.c_void_p
        self.lib = lib

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def check(self, what):
        """Raises RuntimeError if a runtime call failed (and clears it)."""
        error = self.lib.rpeCudaGetLastError()
        if error:
            self.lib.rpeCudaClearError()
            raise RuntimeError("%s: %s" % (what, error.decode()))

    def to_device(self, array):
        """A device copy of a contiguous array (None for an empty one)."""
        if array.nbytes == 0:
            return None
        dev = self.lib.mgpuMemAlloc(array.nbytes, None, False)
        self.check("cannot allocate %d bytes of device memory" % array.nbytes)
        self.lib.mgpuMemcpy(dev, array.ctypes.data, array.nbytes, None)
        self.lib.mgpuStreamSynchronize(None)
        self.check("cannot copy to the device")
        return dev

    def to_host(self, address, nbytes, out):
        if nbytes:
            self.lib.mgpuMemcpy(out.ctypes.data, address, nbytes, None)
            self.lib.mgpuStreamSynchronize(None)
            self.check("cannot copy from the device")
        return out

    def free(self, address):
        if address:
            self.lib.mgpuMemFree(address, None)


def _stream_handle(stream):
    """The CUstream handle (int, 0 for none) of `stream`: None, an int, or
    an object with ``cuda_stream`` (torch) or ``ptr`` (CuPy)."""
    if stream is None:
        return 0
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            stream = getattr(stream, attr)
            break
    if isinstance(stream, bool) or not isinstance(stream, int) or stream < 0:
        raise TypeError("stream must be a CUstream handle (int) or have "
                        "cuda_stream / ptr, got %r" % (stream,))
    return stream


_TYPESTR = {"f32": "<f4", "f16": "<f2", "f64": "<f8", "i8": "|i1",
            "i16": "<i2", "i32": "<i4", "i64": "<i8", "i1": "|b1"}


def _element_of(typestr):
    """rpe's element type for an array-interface typestr, or None."""
    return next((e for e, s in _TYPESTR.items()
                 if np.dtype(s) == np.dtype(typestr)), None)


class DeviceArray:
    """A result in device memory (target="cuda" calls with device
    arguments). Exposes ``__cuda_array_interface__`` (version 3; not for
    bf16, which it cannot describe) and DLPack (``__dlpack__``, e.g.
    ``torch.from_dlpack``); the memory is freed when the last reference
    (a DLPack consumer's too) goes. ``element`` is rpe's element type;
    ``dtype`` the NumPy one (uint16 bits for bf16)."""

    def __init__(self, address, shape, dtype, runtime, owner=None,
                 element=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.element = element or _element_of(self.dtype)
        self._address = address
        self._runtime = runtime
        self._owner = owner
        if owner is None and address:
            self._finalizer = weakref.finalize(self, runtime.free, address)

    @property
    def nbytes(self):
        return int(np.prod(self.shape)) * self.dtype.itemsize \
            if self.shape else self.dtype.itemsize

    @property
    def __cuda_array_interface__(self):
        if self.element == "bf16":
            raise TypeError("bf16 has no __cuda_array_interface__ typestr: "
                            "use DLPack (torch.from_dlpack)")
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self._address or 0, False), "strides": None,
                "version": 3}

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, the runtime's device

    def __dlpack__(self, stream=None, **kwargs):
        """An unversioned DLPack capsule ("dltensor") of this array. The
        runtime's calls are synchronous, so no stream needs to wait."""
        return _dlpack_export(self)

    def numpy(self):
        """A host copy (float32 for bf16)."""
        out = np.empty(self.shape, dtype=self.dtype)
        out = self._runtime.to_host(self._address, out.nbytes, out)
        return _from_bf16_bits(out) if self.element == "bf16" else out

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self):
        return "<rpe.DeviceArray shape=%s dtype=%s>" % (self.shape,
                                                        self.dtype)


def _device_interface(value):
    """The __cuda_array_interface__ of `value`, or the same dictionary read
    from its DLPack capsule (CUDA memory: torch's bf16 tensors, which have
    no array-interface typestr, JAX arrays), or None. An opaque typestr
    ('<V2': torch 2.11's bf16) defers to DLPack, which names the type."""
    try:
        iface = getattr(value, "__cuda_array_interface__")
    except (AttributeError, TypeError):  # older torch's bf16: TypeError
        iface = None
    if iface is not None and np.dtype(iface["typestr"]).kind != "V":
        return iface
    return _dlpack_interface(value) or iface


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


# DLPack device types of CUDA memory (kDLCUDA, kDLCUDAManaged) and element
# types ((code, bits) -> rpe element: kDLInt 0, kDLUInt 1, kDLFloat 2,
# kDLBfloat 4, kDLBool 6).
_DL_CUDA = (2, 13)
_DL_ELEMENTS = {(2, 32): "f32", (2, 16): "f16", (2, 64): "f64",
                (4, 16): "bf16", (0, 8): "i8", (0, 16): "i16", (0, 32): "i32",
                (0, 64): "i64", (6, 8): "i1", (1, 8): "i1"}
# The capsule functions with prototypes of our own (ctypes.pythonapi's are
# shared with every other user): on objects, and on raw pointers (a
# capsule's destructor must not take references to the dying capsule).
def _python_api(name, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_is_valid = _python_api("PyCapsule_IsValid", ctypes.c_int,
                                ctypes.py_object, ctypes.c_char_p)
_capsule_pointer = _python_api("PyCapsule_GetPointer", ctypes.c_void_p,
                               ctypes.py_object, ctypes.c_char_p)
_raw_capsule_is_valid = _python_api("PyCapsule_IsValid", ctypes.c_int,
                                    ctypes.c_void_p, ctypes.c_char_p)
_raw_capsule_pointer = _python_api("PyCapsule_GetPointer", ctypes.c_void_p,
                                   ctypes.c_void_p, ctypes.c_char_p)


class _DLManagedTensor(ctypes.Structure):
    pass


_DL_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor),
                             ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _DL_DELETER)]
_DL_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DL_CODES = {e: c for c, e in _DL_ELEMENTS.items() if c != (1, 8)}
# Exports alive: address of the DLManagedTensor -> what it keeps (the
# structure, its shape, the DeviceArray owning the memory).
_dl_exports = {}


@_DL_DELETER
def _dl_delete(managed):
    _dl_exports.pop(ctypes.addressof(managed.contents), None)


@_DL_CAPSULE_DESTRUCTOR
def _dl_capsule_destructor(capsule):
    # A capsule still named "dltensor" was never consumed: delete its
    # tensor (a consumer renames it "used_dltensor" and calls the deleter).
    if _raw_capsule_is_valid(capsule, b"dltensor"):
        _dl_exports.pop(_raw_capsule_pointer(capsule, b"dltensor"), None)


_capsule_new = _python_api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p,
                           ctypes.c_char_p, _DL_CAPSULE_DESTRUCTOR)


def _dlpack_export(array):
    rank = len(array.shape)
    shape = (ctypes.c_int64 * max(rank, 1))(*array.shape)
    code, bits = _DL_CODES[array.element]
    managed = _DLManagedTensor(
        _DLTensor(array._address, _DLDevice(2, 0), rank,
                  _DLDataType(code, bits, 1),
                  ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)), None, 0),
        None, _dl_delete)
    address = ctypes.addressof(managed)
    _dl_exports[address] = (managed, shape, array)
    return _capsule_new(address, b"dltensor", _dl_capsule_destructor)


def _dlpack_interface(value):
    """An array-interface dictionary for a DLPack producer in CUDA memory
    (None for other objects). The capsule is kept in the dictionary: it is
    not consumed, so the producer's deleter runs when it goes, after the
    call."""
    device = getattr(value, "__dlpack_device__", None)
    if device is None or not hasattr(value, "__dlpack__"):
        return None
    device_type = int(device()[0])
    if device_type not in _DL_CUDA:
        return None
    capsule = value.__dlpack__()
    if not _capsule_is_valid(capsule, b"dltensor"):
        raise TypeError("rpe: a DLPack capsule named 'dltensor' was expected "
                        "(unversioned DLPack)")
    # DLManagedTensor starts with its DLTensor.
    tensor = _DLTensor.from_address(
        _capsule_pointer(capsule, b"dltensor"))
    code = (tensor.dtype.code, tensor.dtype.bits)
    element = _DL_ELEMENTS.get(code) if tensor.dtype.lanes == 1 else None
    if element is None:
        raise TypeError("rpe: unsupported DLPack element type (code %d, %d "
                        "bits, %d lanes)" % (code[0], code[1],
                                             tensor.dtype.lanes))
    itemsize = max(1, tensor.dtype.bits // 8)
    shape = tuple(tensor.shape[d] for d in range(tensor.ndim))
    strides = None
    if tensor.strides:
        strides = tuple(tensor.strides[d] * itemsize
                        for d in range(tensor.ndim))
    return {"shape": shape, "element": element, "itemsize": itemsize,
            "typestr": _TYPESTR.get(element, "|V%d" % itemsize),
            "strides": strides,
            "data": ((tensor.data or 0) + tensor.byte_offset, False),
            "version": 3, "capsule": capsule}


class _Buffer:
    """A malloc'ed result buffer, freed when no array refers to it (through
    `release`, default free())."""

    def __init__(self, address, release=None):
        self._finalizer = weakref.finalize(self, release or _libc.free,
                                           address)


class Module:
    """A compiled module: its public functions are attributes."""

    def __init__(self, library_path, functions, workdir, device=False):
        self._device = device
        if device:
            # Loaded first, so that a failure to load the device code in the
            # library's constructor is reported by the call, not lost.
            _CudaRuntime.get()
        try:
            self._library = ctypes.CDLL(library_path)
        except OSError as error:
            raise CompileError("cannot load the compiled library %s: %s"
                               % (library_path, error)) from None
        # Result buffers go back to the library's allocation cache (CPU
        # libraries built by this rpe export rpe_free_buffer), else free().
        self._release = getattr(self._library, "rpe_free_buffer", None)
        if self._release is not None:
            self._release.argtypes = [ctypes.c_void_p]
            self._release.restype = None
        self._workdir = workdir
        self.functions = {}
        for f in functions:
            fn = Function(self, f["name"],
                          [_Type(a) for a in f["arguments"]],
                          [_Type(r) for r in f["results"]],
                          f.get("shape_check"))
            self.functions[fn.name] = fn
        if workdir:
            self._cleanup = weakref.finalize(self, shutil.rmtree, workdir,
                                             True)

    def __getattr__(self, name):
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError("module has no public function %r (it has: %s)"
                             % (name, ", ".join(sorted(functions)) or "none"))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.functions))

    def __repr__(self):
        return "<rpe module: %s>" % ", ".join(
            f.signature() for f in self.functions.values())


class _ModuleCache:
    """Compiled GPU modules kept by a hash of their text and options
    ($RPE_MODULE_CACHE), so that a machine without the compiler (a bare GPU
    machine: no LLVM, no librpe-c.so) runs modules compiled elsewhere.
    With $RPE_MODULE_CACHE_RECORD=1, compile() stores what it compiles;
    otherwise it only loads (a miss compiles as usual). Only the GPU
    targets: their host code is generic x86-64, where CPU modules are
    compiled for the host's own vector width. Each entry records the
    compiler that made it (a sha256 of librpe-c.so): where a compiler is
    present, an entry of another one is a miss, so a rebuilt or upgraded
    rpe never runs modules compiled by the old one; a machine without the
    compiler takes the entries as they are."""

    def __init__(self, directory, record):
        self.directory, self.record = directory, record

    @classmethod
    def for_target(cls, target, output):
        directory = os.environ.get("RPE_MODULE_CACHE")
        if not directory or output is not None or target not in ("cuda",
                                                                 "nvptx"):
            return None
        return cls(directory, os.environ.get("RPE_MODULE_CACHE_RECORD") == "1")

    @staticmethod
    def key(text, name, **options):
        blob = json.dumps([text, name, options], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def _paths(self, key):
        base = os.path.join(self.directory, key)
        return base + ".so", base + ".json"

    @staticmethod
    def compiler_id():
        """sha256 of the librpe-c.so that compile() would use, or None
        where there is none."""
        try:
            path = _capi.library_path()
            stat = os.stat(path)
        except (ImportError, OSError):
            return None
        return _file_digest(path, stat.st_size, stat.st_mtime_ns)

    def load(self, key):
        library, meta = self._paths(key)
        if not (os.path.exists(library) and os.path.exists(meta)):
            return None
        with open(meta) as f:
            entry = json.load(f)
        current = self.compiler_id()
        if current is not None and entry.get("compiler") != current:
            return None
        return library, entry["functions"]

    def store(self, key, library, functions):
        os.makedirs(self.directory, exist_ok=True)
        target, meta = self._paths(key)
        shutil.copyfile(library, target)
        with open(meta, "w") as f:
            json.dump({"functions": functions,
                       "compiler": self.compiler_id()}, f)


@functools.lru_cache(maxsize=4)
def _file_digest(path, size, mtime_ns):
    """sha256 of a file (by path, size and mtime: read once per change)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def compile(mlir_text, target="cpu", opt_level=2, cpu="native",
            name="<rpe.compile>", output=None, num_threads=0, reference=False,
            tile_q=64, tile_k=64, chip="sm_80", tensor_cores=True,
            verify_each=False, gpu_kernel_options=""):
    """Compiles MLIR text (rpe and upstream dialects) for ``target`` into a
    shared library and loads it. ``output`` keeps the library at that path
    (otherwise a temporary directory, removed with the module).
    ``cpu``: "native" (the host, the default: its vector width), "generic"
    or an LLVM CPU name; ``num_threads``: OpenMP threads for attention (0:
    sequential; at most 1024);
    ``reference``: the unfused reference lowering instead of the fused,
    tiled kernel; ``tile_q``/``tile_k``: attention tile sizes (CPU target; the
    GPU kernel's tiles are its own).
    ``target="cuda"`` (or "nvptx") compiles for an NVIDIA GPU of
    architecture ``chip``; ``target="nvptx-emulated"`` runs the GPU kernels
    on the CPU, one thread per block. ``tensor_cores`` (GPU targets): f16
    and bf16 attention with head dimensions that are multiples of 16 (D)
    and 8 (Dv) runs on tensor cores (mma.sync, sm_80 and later); False
    keeps the SIMT kernel. ``gpu_kernel_options`` (GPU targets): the GPU kernels'
    shapes as rpe-nvptx-pipeline options, e.g. "mma-threads=256
    mma-tile-k=16" (block-rows, tile-k, mma-threads, mma-block-rows,
    mma-tile-k, mma-registers, mma-stage-views, mma-lazy-rescale,
    block-size, thread-tile-rows, thread-tile-columns; the emulation keeps one thread
    per block whatever the thread counts say). ``verify_each``: verify the IR after every
    pass (a debugging aid; the input and the lowered result are always
    verified)."""
    if not isinstance(mlir_text, str):
        raise TypeError("rpe.compile expects MLIR text (str), got %s"
                        % type(mlir_text).__name__)
    if output is not None:
        output = os.fspath(output)      # a str or a path-like object
    # The C API takes C strings: anything but a str raised AttributeError
    # from .encode(), and ctypes cut a string at its first NUL.
    for arg, value in (("target", target), ("cpu", cpu), ("name", name),
                       ("chip", chip), ("gpu_kernel_options", gpu_kernel_options),
                       ("output", output)):
        if arg == "output" and value is None:
            continue
        if not isinstance(value, str):
            raise TypeError("rpe.compile: %s must be a str, got %s"
                            % (arg, type(value).__name__))
        if "\0" in value:
            raise ValueError("rpe.compile: %s contains a NUL character: %r"
                             % (arg, value))
    device = target in ("cuda", "nvptx")
    cache = _ModuleCache.for_target(target, output)
    key = None
    if cache:
        key = cache.key(mlir_text, name, target=target, opt_level=opt_level,
                        cpu=cpu, num_threads=num_threads, reference=reference,
                        tile_q=tile_q, tile_k=tile_k, chip=chip,
                        tensor_cores=tensor_cores,
                        **({"gpu_kernel_options": gpu_kernel_options}
                           if gpu_kernel_options else {}))
        hit = cache.load(key)
        if hit:
            return Module(hit[0], hit[1], None, device=device)
    comp = _capi.compiler()
    ok, description, diagnostics = comp.describe(mlir_text, name)
    if not ok:
        raise CompileError(diagnostics)
    functions = json.loads(description)["functions"]
    workdir = None
    if output is None:
        workdir = tempfile.mkdtemp(prefix="rpe-")
        output = os.path.join(workdir, "module.so")
    ok, diagnostics = comp.compile(mlir_text, name, output, emit="shared",
                                   target="nvptx" if device else target,
                                   opt_level=opt_level, cpu=cpu,
                                   num_threads=num_threads,
                                   reference=reference, tile_q=tile_q,
                                   tile_k=tile_k, chip=chip,
                                   tensor_cores=tensor_cores,
                                   verify_each=verify_each,
                                   gpu_kernel_options=gpu_kernel_options)
    if not ok:
        if workdir:
            shutil.rmtree(workdir, True)
        raise CompileError(diagnostics)
    if cache and cache.record:
        cache.store(key, output, functions)
    try:
        return Module(output, functions, workdir, device=device)
    except BaseException:
        if workdir:
            shutil.rmtree(workdir, True)
        raise
