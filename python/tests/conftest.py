"""Shared test support: which GPU libraries are here, and the float64 error bound."""

import os

# The binding's tests check the binding, not the tuner (the C++ suite does that): a shape that was
# never tuned runs the nearest tuned shape's winner instead of tuning for seconds. Set before
# tilemm is imported (the library reads it once per process). JAX must not take most of the GPU.
os.environ.setdefault("TILEMM_TUNE", "off")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import pytest  # noqa: E402


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed"
    if not torch.cuda.is_available():
        return None, "no CUDA device (torch.cuda.is_available() is False)"
    return torch, ""


def _cupy_cuda():
    try:
        import cupy
    except ImportError:
        return None, "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return None, "no CUDA device"
    except Exception as e:  # CuPy without a driver raises its own CUDARuntimeError
        return None, f"no CUDA device ({e})"
    return cupy, ""


@pytest.fixture
def torch_cuda():
    torch, why = _torch_cuda()
    if torch is None:
        pytest.skip(why)
    return torch


@pytest.fixture
def cupy_cuda():
    cupy, why = _cupy_cuda()
    if cupy is None:
        pytest.skip(why)
    return cupy


# tuner/error_bound.cpp: FP32's bound per unit of (|A| |B|)_ij is 2 (K + 3) 2^-24 (both the
# result and a reference rounded to FP32 carry it); "high" must meet it too; "medium" adds the
# TF32 product error 2^-10 + 2^-11 + 2^-21.
def bound_unit(k, precision="highest"):
    fp32 = 2.0 * (k + 3) * 2.0 ** -24
    if precision == "medium":
        return fp32 + 2.0 ** -10 + 2.0 ** -11 + 2.0 ** -21
    return fp32


def assert_within_bound(got, ref, scale, k, precision="highest"):
    """|got - ref| <= unit * scale elementwise (float64 tensors of torch), with a floor for
    entries whose scale is 0 (a zero row or column: the result must then be exactly 0)."""
    err = (got.double() - ref).abs()
    limit = bound_unit(k, precision) * scale
    worst = float((err - limit).max()) if err.numel() else 0.0
    assert worst <= 0.0, (f"error above the {precision} bound: max |C - C64| - bound = {worst:.3e} "
                          f"(max error {float(err.max()):.3e})")
