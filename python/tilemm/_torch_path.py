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
    if b.dtype is not _f32 or b.get_device() != device:
        _check(b, "b", device)
    a_shape, b_shape = a.shape, b.shape
    if len(a_shape) == 2 and len(b_shape) == 2 and a_shape[1] == b_shape[0]:
        batch, (m, k), n = 1, a_shape, b_shape[1]
        shape: tuple = (m, n)
    else:
        batch, m, n, k, shape = problem_shape(a_shape, b_shape)
    a_strides, b_strides = a.stride(), b.stride()
    a_ptr, b_ptr = a.data_ptr(), b.data_ptr()
    if out is None:
        if beta != 0.0:
            raise invalid("beta", "is applied to out=, so it needs one (got beta without out)")
        out = torch.empty(shape, dtype=_f32, device=a.device)
        c_strides = out.stride()
        c_ptr = out.data_ptr()
    else:
        if out.dtype is not _f32 or out.get_device() != device:
            _check(out, "out", device)
        if out.shape != shape:
            raise invalid("out", f"has shape {tuple(out.shape)}, but a @ b has shape {shape}")
        c_strides = out.stride()
        c_ptr = out.data_ptr()
        c_end = c_ptr + _span(shape, c_strides)
        if c_ptr < a_ptr + _span(a_shape, a_strides) and a_ptr < c_end:
            check_no_overlap(c_ptr, c_end - c_ptr, a_ptr, span_bytes(a_shape, a_strides), "a")
        if c_ptr < b_ptr + _span(b_shape, b_strides) and b_ptr < c_end:
            check_no_overlap(c_ptr, c_end - c_ptr, b_ptr, span_bytes(b_shape, b_strides), "b")
    if (batch == 1 and len(shape) == 2 and a_strides[1] == 1 and b_strides[1] == 1
            and c_strides[1] == 1 and a_strides[0] >= max(k, 1) and b_strides[0] >= max(n, 1)
            and c_strides[0] >= max(n, 1)):
        # Row-major 2-D, by far the most common call: no search over layouts.
        _gemm(0, 0, 0, m, n, k, alpha, a_ptr, a_strides[0], 0, b_ptr, b_strides[0], 0, beta,
              c_ptr, c_strides[0], 0, 1, _raw_stream(device), device, precision)
        return out
    try:
        layout, op_a, op_b, lda, sa, ldb, sb, ldc, sc = gemm_arguments(
            a_shape, a_strides, b_shape, b_strides, shape, c_strides)
    except NeedsCopy:
        return _matmul_with_copies(a, b, out, alpha, beta, precision)
    _gemm(layout, op_a, op_b, m, n, k, alpha, a_ptr, lda, sa, b_ptr, ldb, sb, beta, c_ptr, ldc, sc,
          batch, _raw_stream(device), device, precision)
    return out


def _span(shape: torch.Size, strides: tuple) -> int:
    """Bytes from a tensor's first element to one past its last (torch strides are >= 0); at
    least 4, so that the overlap test above stays an upper bound for empty tensors."""
    if len(shape) == 2:
        return 4 * (1 + max(shape[0] - 1, 0) * strides[0] + max(shape[1] - 1, 0) * strides[1])
    return 4 * (1 + sum(max(d - 1, 0) * s for d, s in zip(shape, strides)))


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
