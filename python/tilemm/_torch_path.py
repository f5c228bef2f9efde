"""tilemm.matmul on torch tensors: the call path that matters most, kept short.

It reads shapes, strides, data pointers and the current stream straight from the tensors (no
DLPack capsule), allocates the result with torch (so torch's caching allocator serves it, ordered
on the current stream) and calls the extension once. Nothing here synchronizes.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _ext
from ._errors import invalid
from ._layout import NeedsCopy, check_no_overlap, gemm_arguments, problem_shape, span_bytes

_f32 = torch.float32
_raw_stream = torch._C._cuda_getCurrentRawStream  # the current stream's handle, as inductor reads it
_gemm = _ext.gemm


def _check(x: torch.Tensor, name: str, device: int) -> None:
    if x.dtype is not _f32:
        raise invalid(name, f"must be float32, got {x.dtype}")
    d = x.get_device()
    if d < 0:
        raise invalid(name, f"must be on a CUDA device, got a tensor on {x.device}")
    if d != device:
        raise invalid(name, f"is on cuda:{d}, but a is on cuda:{device}")


def matmul(a: torch.Tensor, b: torch.Tensor, out: Optional[torch.Tensor], alpha: float,
           beta: float, precision: int) -> torch.Tensor:
    """alpha * a @ b (+ beta * out) with tilemm on torch's current stream of a's device."""
    if a.dtype is not _f32:
        raise invalid("a", f"must be float32, got {a.dtype}")
    device = a.get_device()
    if device < 0:
        raise invalid("a", f"must be on a CUDA device, got a tensor on {a.device}")
    _check(b, "b", device)
    batch, m, n, k, shape = problem_shape(a.shape, b.shape)
    if out is None:
        if beta != 0.0:
            raise invalid("beta", "is applied to out=, so it needs one (got beta without out)")
        out = torch.empty(shape, dtype=_f32, device=a.device)
    else:
        _check(out, "out", device)
        if tuple(out.shape) != shape:
            raise invalid("out", f"has shape {tuple(out.shape)}, but a @ b has shape {shape}")
        out_span = span_bytes(out.shape, out.stride())
        check_no_overlap(out.data_ptr(), out_span, a.data_ptr(), span_bytes(a.shape, a.stride()), "a")
        check_no_overlap(out.data_ptr(), out_span, b.data_ptr(), span_bytes(b.shape, b.stride()), "b")
    try:
        layout, op_a, op_b, lda, sa, ldb, sb, ldc, sc = gemm_arguments(
            a.shape, a.stride(), b.shape, b.stride(), shape, out.stride())
    except NeedsCopy:
        return _matmul_with_copies(a, b, out, alpha, beta, precision)
    _gemm(layout, op_a, op_b, m, n, k, alpha, a.data_ptr(), lda, sa, b.data_ptr(), ldb, sb,
          beta, out.data_ptr(), ldc, sc, batch, _raw_stream(device), device, precision)
    return out


def _matmul_with_copies(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, alpha: float,
                        beta: float, precision: int) -> torch.Tensor:
    """The same for views that no layout describes: dense copies of those, on the same stream."""
    if out.dim() == 3 and out.shape[0] > 1 and out.stride(0) == 0:
        raise invalid("out", "repeats one matrix over its batch (batch stride 0): it cannot hold "
                             "a result per batch")
    dense_out = out if _has_unit_stride(out) else out.contiguous()
    result = matmul(_dense(a), _dense(b), dense_out, alpha, beta, precision)
    if result is not out:
        out.copy_(result)
    return out


def _dense(x: torch.Tensor) -> torch.Tensor:
    return x if _has_unit_stride(x) else x.contiguous()


def _has_unit_stride(x: torch.Tensor) -> bool:
    """Whether gemm_arguments describes x's matrices as they are (row- or column-major)."""
    rows, cols = x.shape[-2], x.shape[-1]
    s_row, s_col = x.stride(-2), x.stride(-1)
    row_major = (cols <= 1 or s_col == 1) and (rows <= 1 or s_row >= max(cols, 1))
    col_major = (rows <= 1 or s_row == 1) and (cols <= 1 or s_col >= max(rows, 1))
    return row_major or col_major
