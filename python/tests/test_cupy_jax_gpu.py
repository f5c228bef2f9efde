"""tilemm.matmul on CuPy and JAX arrays. Skipped without them or a CUDA device."""

import pytest

import tilemm
from conftest import assert_within_bound


def check_cupy(cupy, a, b, got, alpha=1.0, beta=0.0, c0=None):
    torch = pytest.importorskip("torch")  # the float64 check reuses torch's helpers
    cupy.cuda.get_current_stream().synchronize()
    a64, b64 = (torch.as_tensor(cupy.asnumpy(x), dtype=torch.float64) for x in (a, b))
    ref = alpha * (a64 @ b64)
    scale = abs(alpha) * (a64.abs() @ b64.abs())
    if c0 is not None:
        c64 = torch.as_tensor(cupy.asnumpy(c0), dtype=torch.float64)
        ref, scale = ref + beta * c64, scale + abs(beta) * c64.abs()
    assert tuple(got.shape) == tuple(ref.shape)
    assert_within_bound(torch.as_tensor(cupy.asnumpy(got)), ref, scale, a.shape[-1])


def rand(cupy, *shape):
    return cupy.random.standard_normal(shape, dtype=cupy.float32)


def test_cupy_in_cupy_out(cupy_cuda):
    cupy = cupy_cuda
    a, b = rand(cupy, 97, 61), rand(cupy, 61, 43)
    c = tilemm.matmul(a, b)
    assert isinstance(c, cupy.ndarray) and c.dtype == cupy.float32
    check_cupy(cupy, a, b, c)


def test_cupy_views_batches_out_and_beta(cupy_cuda):
    cupy = cupy_cuda
    a, b = rand(cupy, 45, 67).T, rand(cupy, 45, 29)        # a transposed
    check_cupy(cupy, a, b, tilemm.matmul(a, b))
    a, b = rand(cupy, 67, 90)[:, ::2], rand(cupy, 45, 29)  # no unit stride: copied
    check_cupy(cupy, a, b, tilemm.matmul(a, b))
    a3, b3 = rand(cupy, 4, 20, 10), rand(cupy, 4, 10, 7)
    check_cupy(cupy, a3, b3, tilemm.matmul(a3, b3))
    c0 = rand(cupy, 4, 20, 7)
    out = c0.copy()
    assert tilemm.matmul(a3, b3, out=out, alpha=0.5, beta=3.0) is out
    check_cupy(cupy, a3, b3, out, alpha=0.5, beta=3.0, c0=c0)


def test_cupy_runs_on_cupys_current_stream(cupy_cuda):
    cupy = cupy_cuda
    a_src, b = rand(cupy, 512, 512), rand(cupy, 512, 512)
    a = cupy.zeros((512, 512), dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for _ in range(20):  # queued work that takes a while before a is filled
            cupy.matmul(b, b)
        a[...] = a_src
        c = tilemm.matmul(a, b)
    stream.synchronize()
    check_cupy(cupy, a_src, b, c)


def test_cupy_errors(cupy_cuda):
    cupy = cupy_cuda
    a = rand(cupy, 8, 8)
    with pytest.raises(tilemm.InvalidArgument, match="'b'.*float32"):
        tilemm.matmul(a, a.astype(cupy.float64))
    with pytest.raises(tilemm.InvalidArgument, match="'beta'"):
        tilemm.matmul(a, a, beta=1.0)


def test_jax_in_jax_out(cupy_cuda):
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as e:
        pytest.skip(f"JAX sees no GPU ({e})")
    import numpy as np
    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((33, 21), dtype=np.float32)
    b_np = rng.standard_normal((21, 17), dtype=np.float32)
    a, b = jax.device_put(a_np, gpu), jax.device_put(b_np, gpu)
    c = tilemm.matmul(a, b)
    assert isinstance(c, jax.Array)
    ref = a_np.astype(np.float64) @ b_np.astype(np.float64)
    scale = np.abs(a_np).astype(np.float64) @ np.abs(b_np).astype(np.float64)
    from conftest import bound_unit
    assert (np.abs(np.asarray(c) - ref) <= bound_unit(21) * scale).all()
