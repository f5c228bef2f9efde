"""tilemm.matmul on CUDA torch tensors against a float64 product, within FP32's error bound.
Skipped without PyTorch or a CUDA device."""

import random

import pytest

import tilemm
from conftest import assert_within_bound


def reference(torch, a, b, alpha=1.0, beta=0.0, c0=None):
    """(float64 result, the bound's scale |alpha| |A||B| + |beta| |C0|)."""
    ref = alpha * (a.double() @ b.double())
    scale = abs(alpha) * (a.double().abs() @ b.double().abs())
    if c0 is not None and beta != 0.0:
        ref = ref + beta * c0.double()
        scale = scale + abs(beta) * c0.double().abs()
    return ref, scale


def check(torch, a, b, got, alpha=1.0, beta=0.0, c0=None, precision="highest"):
    torch.cuda.synchronize()
    ref, scale = reference(torch, a, b, alpha, beta, c0)
    assert got.shape == ref.shape
    assert_within_bound(got, ref, scale, a.shape[-1], precision)


def rand(torch, *shape):
    return torch.randn(*shape, device="cuda")


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (1, 7, 13), (13, 1, 7), (7, 13, 1), (97, 89, 101),
                                   (128, 256, 64), (1000, 3, 1000), (2, 4097, 31), (512, 512, 512)])
def test_shapes_match_float64(torch_cuda, m, n, k):
    torch = torch_cuda
    a, b = rand(torch, m, k), rand(torch, k, n)
    c = tilemm.matmul(a, b)
    assert isinstance(c, torch.Tensor) and c.device == a.device and c.dtype == torch.float32
    check(torch, a, b, c)


def test_random_shapes_match_float64(torch_cuda):
    torch = torch_cuda
    rng = random.Random(47)
    for _ in range(12):
        m, n, k = (rng.choice([1, 2, 3, 5, 17, 31, 61, 127, 257, 521, 1009]) for _ in range(3))
        a, b = rand(torch, m, k), rand(torch, k, n)
        check(torch, a, b, tilemm.matmul(a, b))


@pytest.mark.parametrize("ta,tb", [(False, True), (True, False), (True, True)])
def test_transposed_views(torch_cuda, ta, tb):
    torch = torch_cuda
    a = rand(torch, 67, 45).t() if ta else rand(torch, 45, 67)
    b = rand(torch, 29, 67).t() if tb else rand(torch, 67, 29)
    check(torch, a, b, tilemm.matmul(a, b))


def test_column_major_out(torch_cuda):
    torch = torch_cuda
    a, b = rand(torch, 33, 21), rand(torch, 21, 19)
    out = torch.empty(19, 33, device="cuda").t()
    assert tilemm.matmul(a, b, out=out) is out
    check(torch, a, b, out)


def test_strided_views(torch_cuda):
    torch = torch_cuda
    big = rand(torch, 100, 90)
    a = big[3:50, 5:40]          # row slices: lda 90
    b = rand(torch, 35, 80)[:, ::2]  # no unit stride: copied
    check(torch, a, b, tilemm.matmul(a, b))
    out_parent = torch.zeros(60, 70, device="cuda")
    out = out_parent[5:52, 10:50]
    tilemm.matmul(a, b, out=out)
    check(torch, a, b, out)
    assert float(out_parent[:5].abs().max()) == 0.0 and float(out_parent[:, :10].abs().max()) == 0.0


def test_out_alpha_and_beta(torch_cuda):
    torch = torch_cuda
    a, b = rand(torch, 70, 50), rand(torch, 50, 30)
    c0 = rand(torch, 70, 30)
    out = c0.clone()
    assert tilemm.matmul(a, b, out=out, alpha=-0.5, beta=2.0) is out
    check(torch, a, b, out, alpha=-0.5, beta=2.0, c0=c0)


def test_batches_and_broadcast(torch_cuda):
    torch = torch_cuda
    a3, b3 = rand(torch, 5, 33, 17), rand(torch, 5, 17, 9)
    check(torch, a3, b3, tilemm.matmul(a3, b3))
    b2 = rand(torch, 17, 9)
    check(torch, a3, b2, tilemm.matmul(a3, b2))
    a2 = rand(torch, 33, 17)
    check(torch, a2, b3, tilemm.matmul(a2, b3))
    a1 = rand(torch, 1, 33, 17)
    check(torch, a1, b3, tilemm.matmul(a1, b3))
    at = rand(torch, 5, 17, 33).transpose(1, 2)  # a batch of transposed views
    check(torch, at, b3, tilemm.matmul(at, b3))
    c0 = rand(torch, 5, 33, 9)
    out = c0.clone()
    tilemm.matmul(a3, b3, out=out, alpha=2.0, beta=-1.0)
    check(torch, a3, b3, out, alpha=2.0, beta=-1.0, c0=c0)


def test_runs_on_the_current_stream_after_its_queued_work(torch_cuda):
    torch = torch_cuda
    a_src, b = rand(torch, 256, 256), rand(torch, 256, 256)
    a = torch.zeros(256, 256, device="cuda")
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(100_000_000)  # tens of milliseconds of GPU time before the copy
        a.copy_(a_src)
        c = tilemm.matmul(a, b)
    stream.synchronize()
    check(torch, a_src, b, c)


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_each_precision_keeps_its_bound(torch_cuda, precision):
    torch = torch_cuda
    for m, n, k in ((512, 512, 512), (1000, 1000, 1000), (300, 200, 1001)):
        a, b = rand(torch, m, k), rand(torch, k, n)
        check(torch, a, b, tilemm.matmul(a, b, precision=precision), precision=precision)


def test_errors_name_the_argument(torch_cuda):
    torch = torch_cuda
    a = rand(torch, 8, 8)
    with pytest.raises(tilemm.InvalidArgument, match="'b'.*CUDA device"):
        tilemm.matmul(a, torch.ones(8, 8))
    with pytest.raises(tilemm.InvalidArgument, match="'b'.*float32"):
        tilemm.matmul(a, a.half())
    with pytest.raises(tilemm.InvalidArgument, match="'b'.*rows"):
        tilemm.matmul(a, rand(torch, 7, 8))
    with pytest.raises(tilemm.InvalidArgument, match="'out'.*shape"):
        tilemm.matmul(a, a, out=rand(torch, 8, 9))
    with pytest.raises(tilemm.InvalidArgument, match="'out'.*overlaps"):
        tilemm.matmul(a, rand(torch, 8, 8), out=a)
    with pytest.raises(tilemm.InvalidArgument, match="'beta'"):
        tilemm.matmul(a, a, beta=1.0)
    if torch.cuda.device_count() > 1:
        with pytest.raises(tilemm.InvalidArgument, match="'b'.*cuda:1"):
            tilemm.matmul(a, a.to("cuda:1"))


def test_autotune_reports_a_result(torch_cuda):
    r = tilemm.autotune(512, 512, 512)
    assert r.winner and r.median_ms > 0 and r.tflops > 0
    assert r.source in ("tuned", "cache", "imported", "preloaded", "fallback")
    for c in r.candidates:
        assert c.name and c.status


def test_the_operator_inside_torch_compile_fullgraph(torch_cuda):
    torch = torch_cuda
    a, b = rand(torch, 64, 48), rand(torch, 48, 32)

    @torch.compile(fullgraph=True)
    def f(x, y):
        return torch.ops.tilemm.matmul(x, y, 2.0, "") * 0.5 + 1.0

    got = f(a, b) - 1.0
    check(torch, a, b, got)
    g = torch.compile(lambda x, y: tilemm.matmul(x, y), fullgraph=True)  # the Python entry too
    check(torch, a, b, g(a, b))


def test_opcheck_passes(torch_cuda):
    torch = torch_cuda
    samples = [(rand(torch, 8, 5), rand(torch, 5, 3), 1.0, ""),
               (rand(torch, 2, 8, 5).requires_grad_(), rand(torch, 5, 3).requires_grad_(), 0.5, "highest"),
               (rand(torch, 7, 4).t(), rand(torch, 7, 6), 1.0, "high")]
    for args in samples:
        torch.library.opcheck(torch.ops.tilemm.matmul.default, args)


def test_autograd_gives_the_gradients_of_a_product(torch_cuda):
    torch = torch_cuda
    a = rand(torch, 3, 20, 10).requires_grad_()
    b = rand(torch, 10, 15).requires_grad_()
    g = rand(torch, 3, 20, 15)
    tilemm.matmul(a, b, alpha=1.5).backward(g)
    ref_a = 1.5 * (g.double() @ b.double().t())
    ref_b = 1.5 * (a.double().transpose(1, 2) @ g.double()).sum(0)
    tol = 1e-4
    assert float((a.grad.double() - ref_a).abs().max()) <= tol * float(ref_a.abs().max())
    assert float((b.grad.double() - ref_b).abs().max()) <= tol * float(ref_b.abs().max())
