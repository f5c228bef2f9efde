"""Precision modes, named as torch.set_float32_matmul_precision names them.

- "highest": FP32 FFMA, every product and sum rounded to FP32 (the default).
- "high": 3xTF32 on tensor cores, accepted only within FP32's error bound.
- "medium": one TF32 pass on tensor cores, relative error near 1e-3.
"""

from __future__ import annotations

from typing import Optional

from . import _ext
from ._errors import invalid

NAMES = ("highest", "high", "medium")

# The process-wide mode as its code (index into NAMES); TILEMM_PRECISION sets the start value.
_current = _ext.default_precision()


def code(precision: Optional[str]) -> int:
    """The code of `precision`, or of the process-wide mode when it is None."""
    if precision is None:
        return _current
    try:
        return NAMES.index(precision)
    except ValueError:
        raise invalid("precision", f"must be 'highest', 'high' or 'medium', got {precision!r}") from None


def set_precision(precision: str) -> None:
    """Sets the precision of later tilemm.matmul calls that pass none: 'highest', 'high' or 'medium'.

    Raises InvalidArgument for any other value. The environment variable TILEMM_PRECISION sets
    the mode a process starts with.
    """
    global _current
    _current = code(precision)


def get_precision() -> str:
    """The precision tilemm.matmul uses when a call passes none."""
    return NAMES[_current]
