"""ctypes binding of rpe's C API (include/rpe-c/Compiler.h, librpe-c.so)."""

import ctypes
import numbers
import os
import threading

__all__ = ["library_path", "Compiler"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidate_dirs(kind):
    """Where rpe's `kind` ("lib" or "bin") files may be, in order: the build
    named by $RPE_BUILD_DIR, the package itself (pip install: rpe/lib,
    rpe/bin), the repository's build/ next to this package (a checkout)."""
    dirs = []
    build_dir = os.environ.get("RPE_BUILD_DIR")
    if build_dir:
        dirs.append(os.path.join(build_dir, kind))
    dirs.append(os.path.join(_HERE, kind))
    dirs.append(os.path.join(_HERE, "..", "..", "build", kind))
    return dirs


def library_path():
    """Path of librpe-c.so: $RPE_LIBRARY, else the first of $RPE_BUILD_DIR/lib,
    the installed package's lib/ and the repository's build/lib."""
    explicit = os.environ.get("RPE_LIBRARY")
    if explicit:
        return explicit
    candidates = [os.path.join(d, "librpe-c.so")
                  for d in _candidate_dirs("lib")]
    for path in candidates:
        if os.path.exists(path):
            return os.path.abspath(path)
    raise ImportError(
        "librpe-c.so not found (looked in: %s); build rpe first with "
        "./scripts/build.sh, or set RPE_LIBRARY / RPE_BUILD_DIR"
        % ", ".join(os.path.abspath(p) for p in candidates))


def _c_integer(name, value, ctype):
    """`value` for a C integer field: ctypes would silently wrap one out of
    range (num_threads=2**32 + 2 became 2) and truncate a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an integer, got %r" % (name, value))
    bits = 8 * ctypes.sizeof(ctype)
    if not -(1 << (bits - 1)) <= int(value) < (1 << (bits - 1)):
        raise ValueError("%s = %d does not fit the C API's %d-bit integer"
                         % (name, value, bits))
    return int(value)


class _Options(ctypes.Structure):
    _fields_ = [("target", ctypes.c_char_p), ("emit", ctypes.c_char_p),
                ("opt_level", ctypes.c_int), ("cpu", ctypes.c_char_p),
                ("num_threads", ctypes.c_int), ("reference", ctypes.c_int),
                ("tile_q", ctypes.c_long), ("tile_k", ctypes.c_long),
                ("chip", ctypes.c_char_p), ("tensor_cores", ctypes.c_int),
                ("verify_each", ctypes.c_int),
                ("gpu_kernel_options", ctypes.c_char_p)]


class Compiler:
    """One rpe context (MLIR context) behind a lock."""

    def __init__(self):
        lib = ctypes.CDLL(library_path())
        lib.rpeVersion.restype = ctypes.c_char_p
        lib.rpeContextCreate.restype = ctypes.c_void_p
        lib.rpeContextDestroy.argtypes = [ctypes.c_void_p]
        lib.rpeCompile.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
            ctypes.c_char_p, ctypes.POINTER(_Options), ctypes.c_char_p,
            ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.rpeCompile.restype = ctypes.c_int
        lib.rpeDescribeModule.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
            ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p)]
        lib.rpeDescribeModule.restype = ctypes.c_int
        lib.rpeFreeString.argtypes = [ctypes.c_void_p]
        self._lib = lib
        self._context = lib.rpeContextCreate()
        self._lock = threading.Lock()

    def version(self):
        return self._lib.rpeVersion().decode()

    def _take_string(self, pointer):
        if not pointer.value:
            return ""
        text = ctypes.string_at(pointer.value).decode(errors="replace")
        self._lib.rpeFreeString(pointer)
        return text

    def describe(self, text, source_name):
        """(ok, json_text, diagnostics) for the public functions of text."""
        data = text.encode()
        out, diags = ctypes.c_void_p(), ctypes.c_void_p()
        with self._lock:
            rc = self._lib.rpeDescribeModule(
                self._context, data, len(data), source_name.encode(),
                ctypes.byref(out), ctypes.byref(diags))
        return rc == 0, self._take_string(out), self._take_string(diags)

    def compile(self, text, source_name, output_path, emit="shared",
                target="cpu", opt_level=2, cpu="generic", header_path=None,
                num_threads=0, reference=False, tile_q=64, tile_k=64,
                chip="sm_80", tensor_cores=True, verify_each=False,
                gpu_kernel_options=""):
        """(ok, diagnostics)."""
        data = text.encode()
        options = _Options(target.encode(), emit.encode(),
                           _c_integer("opt_level", opt_level, ctypes.c_int),
                           cpu.encode(),
                           _c_integer("num_threads", num_threads, ctypes.c_int),
                           int(bool(reference)),
                           _c_integer("tile_q", tile_q, ctypes.c_long),
                           _c_integer("tile_k", tile_k, ctypes.c_long),
                           chip.encode(), int(bool(tensor_cores)),
                           int(bool(verify_each)),
                           gpu_kernel_options.encode())
        diags = ctypes.c_void_p()
        with self._lock:
            rc = self._lib.rpeCompile(
                self._context, data, len(data), source_name.encode(),
                ctypes.byref(options), output_path.encode(),
                header_path.encode() if header_path else None,
                ctypes.byref(diags))
        return rc == 0, self._take_string(diags)


_compiler = None
_compiler_lock = threading.Lock()


def compiler():
    """The process-wide Compiler, created on first use."""
    global _compiler
    with _compiler_lock:
        if _compiler is None:
            _compiler = Compiler()
        return _compiler
