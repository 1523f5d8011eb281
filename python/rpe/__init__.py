"""rpe: relative position encodings as compiler ops.

- ``rpe.compile(mlir_text)`` compiles a module and returns callables that take
  NumPy arrays (see rpe.compiler);
- ``rpe.reference``: NumPy implementations of every op (docs/Semantics.md);
- ``rpe.ir``: builders of rpe IR text for common layers;
- ``rpe.plot``: heatmaps of biases and attention weights (matplotlib).
"""

from . import reference  # noqa: F401
from .compiler import CompileError, DeviceArray, Module, compile  # noqa: F401

__all__ = ["compile", "CompileError", "DeviceArray", "Module", "reference"]
