"""rpe Python package.  ``rpe.reference`` holds the NumPy reference
implementations of every rpe op (see docs/Semantics.md)."""

from . import reference  # noqa: F401
