"""From shapes and element strides to the arguments of tilemm::gemm_strided_batched.

Pure Python, no array library: what every input path (torch, CuPy, DLPack) shares, and what the
CPU tests check. A matrix view is row-major when its column stride is 1 and column-major when
its row stride is 1; the layout of the call is C's, and an operand stored the other way is passed
as its transpose (blas.hpp's Op::transpose), so no view that has a unit stride is copied here.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

from ._errors import invalid

ROW_MAJOR = 0
COLUMN_MAJOR = 1

Shape = Sequence[int]


class NeedsCopy(Exception):
    """The named operand has no unit stride (or overlapping rows): copy it to a dense one."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def problem_shape(a_shape: Shape, b_shape: Shape) -> Tuple[int, int, int, int, Tuple[int, ...]]:
    """(batch, M, N, K, result shape) of a @ b, or InvalidArgument naming a or b."""
    na, nb = len(a_shape), len(b_shape)
    if na not in (2, 3):
        raise invalid("a", f"must be 2-D or 3-D, got {na}-D")
    if nb not in (2, 3):
        raise invalid("b", f"must be 2-D or 3-D, got {nb}-D")
    m, k = a_shape[-2], a_shape[-1]
    kb, n = b_shape[-2], b_shape[-1]
    if k != kb:
        raise invalid("b", f"has {kb} rows, but a has {k} columns "
                      f"(a is {tuple(a_shape)}, b is {tuple(b_shape)})")
    if na == 2 and nb == 2:
        return 1, m, n, k, (m, n)
    ba = a_shape[0] if na == 3 else 1
    bb = b_shape[0] if nb == 3 else 1
    if ba != bb and ba != 1 and bb != 1:
        raise invalid("b", f"has a batch of {bb}, which does not match a's batch of {ba}")
    batch = max(ba, bb)
    return batch, m, n, k, (batch, m, n)


def _orientations(rows: int, cols: int, s_row: int, s_col: int) -> Tuple[Optional[int], Optional[int]]:
    """(leading dimension as row-major or None, leading dimension as column-major or None)."""
    row_ld = col_ld = None
    if cols <= 1 or s_col == 1:
        ld = s_row if rows > 1 else max(cols, 1)
        if ld >= max(cols, 1):
            row_ld = ld
    if rows <= 1 or s_row == 1:
        ld = s_col if cols > 1 else max(rows, 1)
        if ld >= max(rows, 1):
            col_ld = ld
    return row_ld, col_ld


def _operand(layout: int, rows: int, cols: int, s_row: int, s_col: int, name: str) -> Tuple[int, int]:
    """(op, leading dimension) of an operand in the call's layout: op 0 when it is stored in that
    layout, 1 when it is stored the other way (passed as its transpose)."""
    as_row, as_col = _orientations(rows, cols, s_row, s_col)
    same, other = (as_row, as_col) if layout == ROW_MAJOR else (as_col, as_row)
    if same is not None:
        return 0, same
    if other is not None:
        return 1, other
    raise NeedsCopy(name)


def _batch_stride(shape: Shape, strides: Sequence[int], name: str) -> int:
    if len(shape) == 2 or shape[0] == 1:
        return 0  # one matrix for every batch
    if strides[0] < 0:
        raise NeedsCopy(name)
    return strides[0]


def gemm_arguments(
    a_shape: Shape, a_strides: Sequence[int],
    b_shape: Shape, b_strides: Sequence[int],
    c_shape: Shape, c_strides: Sequence[int],
) -> Tuple[int, int, int, int, int, int, int, int, int]:
    """(layout, op_a, op_b, lda, stride_a, ldb, stride_b, ldc, stride_c) for these views.

    Raises NeedsCopy naming the first operand ('out', 'a' or 'b') that no layout describes.
    """
    m, n = c_shape[-2], c_shape[-1]
    k = a_shape[-1]
    c_row, c_col = _orientations(m, n, c_strides[-2], c_strides[-1])
    if c_row is not None:
        layout, ldc = ROW_MAJOR, c_row
    elif c_col is not None:
        layout, ldc = COLUMN_MAJOR, c_col
    else:
        raise NeedsCopy("out")
    stride_c = c_strides[0] if len(c_shape) == 3 else 0
    if len(c_shape) == 3 and c_shape[0] > 1 and stride_c <= 0:
        raise NeedsCopy("out")

    op_a, lda = _operand(layout, m, k, a_strides[-2], a_strides[-1], "a")
    op_b, ldb = _operand(layout, k, n, b_strides[-2], b_strides[-1], "b")
    return (layout, op_a, op_b, lda, _batch_stride(a_shape, a_strides, "a"),
            ldb, _batch_stride(b_shape, b_strides, "b"), ldc, stride_c)


def span_bytes(shape: Shape, strides: Sequence[int]) -> int:
    """Bytes from a float32 view's first element to one past its last (0 for an empty view)."""
    if any(d == 0 for d in shape):
        return 0
    return 4 * (1 + sum((d - 1) * abs(s) for d, s in zip(shape, strides)))


def check_no_overlap(out_ptr: int, out_span: int, other_ptr: int, other_span: int, other: str) -> None:
    """InvalidArgument naming 'out' when out's memory range meets an input's."""
    if out_span and other_span and out_ptr < other_ptr + other_span and other_ptr < out_ptr + out_span:
        raise invalid("out", f"its memory overlaps {other}'s: the result would be read while "
                      "it is written")
