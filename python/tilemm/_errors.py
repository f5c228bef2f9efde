"""The package's exceptions (defined by the extension, so that C++ errors map onto them)."""

from __future__ import annotations

from ._ext import Error, InvalidArgument

__all__ = ["Error", "InvalidArgument", "invalid"]


def invalid(argument: str, why: str) -> InvalidArgument:
    """An InvalidArgument worded as the C++ library words it: it names the argument first."""
    return InvalidArgument(f"tilemm: invalid argument '{argument}': {why}")
