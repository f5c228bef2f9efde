"""The mapping of shapes and strides to gemm_strided_batched's arguments (no GPU needed)."""

import pytest

tilemm = pytest.importorskip("tilemm")
from tilemm._layout import (COLUMN_MAJOR, ROW_MAJOR, NeedsCopy, check_no_overlap,  # noqa: E402
                            gemm_arguments, problem_shape, span_bytes)


def args_for(a, sa, b, sb, c, sc):
    return dict(zip(("layout", "op_a", "op_b", "lda", "stride_a", "ldb", "stride_b", "ldc", "stride_c"),
                    gemm_arguments(a, sa, b, sb, c, sc)))


def test_row_major_operands_need_no_transpose():
    r = args_for((5, 3), (3, 1), (3, 4), (4, 1), (5, 4), (4, 1))
    assert (r["layout"], r["op_a"], r["op_b"], r["lda"], r["ldb"], r["ldc"]) == (ROW_MAJOR, 0, 0, 3, 4, 4)


def test_transposed_views_are_passed_as_transposes_with_their_storage_leading_dimension():
    # a = x.T with x (3, 5) row-major: a is (5, 3) with strides (1, 5)
    r = args_for((5, 3), (1, 5), (3, 4), (1, 3), (5, 4), (4, 1))
    assert (r["layout"], r["op_a"], r["op_b"], r["lda"], r["ldb"]) == (ROW_MAJOR, 1, 1, 5, 3)


def test_column_major_output_selects_the_column_major_layout():
    r = args_for((5, 3), (1, 5), (3, 4), (1, 3), (5, 4), (1, 5))
    assert (r["layout"], r["op_a"], r["op_b"], r["lda"], r["ldb"], r["ldc"]) == (COLUMN_MAJOR, 0, 0, 5, 3, 5)


def test_row_slices_keep_their_parent_leading_dimension():
    r = args_for((5, 3), (10, 1), (3, 4), (4, 1), (5, 4), (4, 1))
    assert r["lda"] == 10 and r["op_a"] == 0


def test_a_view_without_a_unit_stride_needs_a_copy():
    with pytest.raises(NeedsCopy) as e:
        gemm_arguments((5, 3), (6, 2), (3, 4), (4, 1), (5, 4), (4, 1))
    assert e.value.name == "a"
    with pytest.raises(NeedsCopy) as e:
        gemm_arguments((5, 3), (3, 1), (3, 4), (4, 1), (5, 4), (0, 0))
    assert e.value.name == "out"


def test_one_wide_matrices_take_the_minimal_leading_dimension():
    r = args_for((1, 7), (7, 1), (7, 1), (1, 1), (1, 1), (1, 1))
    assert r["op_a"] == 0 and r["op_b"] == 0 and r["lda"] >= 7 and r["ldb"] >= 1 and r["ldc"] >= 1


def test_a_2d_operand_is_broadcast_over_the_batch_with_stride_0():
    r = args_for((4, 5, 3), (15, 3, 1), (3, 2), (2, 1), (4, 5, 2), (10, 2, 1))
    assert (r["stride_a"], r["stride_b"], r["stride_c"]) == (15, 0, 10)
    r = args_for((1, 5, 3), (15, 3, 1), (4, 3, 2), (6, 2, 1), (4, 5, 2), (10, 2, 1))
    assert r["stride_a"] == 0 and r["stride_b"] == 6


def test_problem_shapes_and_their_errors_name_the_argument():
    assert problem_shape((5, 3), (3, 4)) == (1, 5, 4, 3, (5, 4))
    assert problem_shape((2, 5, 3), (3, 4)) == (2, 5, 4, 3, (2, 5, 4))
    assert problem_shape((5, 3), (6, 3, 4)) == (6, 5, 4, 3, (6, 5, 4))
    with pytest.raises(tilemm.InvalidArgument, match="'b'.*3 columns"):
        problem_shape((5, 3), (4, 4))
    with pytest.raises(tilemm.InvalidArgument, match="'a'.*2-D or 3-D"):
        problem_shape((5,), (5, 4))
    with pytest.raises(tilemm.InvalidArgument, match="'b'.*batch"):
        problem_shape((2, 5, 3), (3, 3, 4))
    with pytest.raises(ValueError):  # InvalidArgument is a ValueError
        problem_shape((1, 2, 3, 4), (4, 4))


def test_overlapping_out_is_rejected():
    span = span_bytes((4, 4), (4, 1))
    assert span == 64
    with pytest.raises(tilemm.InvalidArgument, match="'out'"):
        check_no_overlap(1000, span, 1000 + 60, span, "a")
    check_no_overlap(1000, span, 1000 + 64, span, "a")  # adjacent, not overlapping
