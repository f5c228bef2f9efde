"""What works without a GPU: the package imports, and arrays it cannot take raise the documented
exceptions before anything reaches CUDA."""

import os
import re

import pytest

import tilemm

np = pytest.importorskip("numpy")


def test_the_version_is_the_projects():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt")
    if not os.path.exists(root):
        pytest.skip("the repository's CMakeLists.txt is not beside the tests")
    with open(root) as f:
        version = re.search(r"project\(tilemm VERSION ([0-9.]+)", f.read()).group(1)
    assert tilemm.__version__ == version


def test_the_exceptions_are_a_runtime_error_and_a_value_error():
    assert issubclass(tilemm.Error, RuntimeError)
    assert issubclass(tilemm.InvalidArgument, ValueError)
    assert issubclass(tilemm.InvalidArgument, tilemm.Error)


def test_precision_round_trips_and_rejects_other_names():
    before = tilemm.get_precision()
    try:
        for name in ("high", "medium", "highest"):
            tilemm.set_precision(name)
            assert tilemm.get_precision() == name
        with pytest.raises(tilemm.InvalidArgument, match="'precision'"):
            tilemm.set_precision("fast")
        assert tilemm.get_precision() == "highest"
    finally:
        tilemm.set_precision(before)


def test_cache_path_is_the_environments_or_the_default():
    path = tilemm.cache_path()
    expected = os.environ.get("TILEMM_CACHE")
    assert path == expected if expected else path.endswith(os.path.join("tilemm", "tuning.db"))


def test_numpy_arrays_on_the_cpu_are_rejected_naming_the_argument():
    a = np.ones((4, 4), dtype=np.float32)
    with pytest.raises(tilemm.InvalidArgument, match="'a'.*CUDA device"):
        tilemm.matmul(a, a)


def test_objects_that_are_no_arrays_are_rejected():
    with pytest.raises(tilemm.InvalidArgument, match="'a'"):
        tilemm.matmul([[1.0]], [[1.0]])


def test_an_unknown_precision_is_rejected_before_the_arrays_are_read():
    a = np.ones((2, 2), dtype=np.float32)
    with pytest.raises(tilemm.InvalidArgument, match="'precision'"):
        tilemm.matmul(a, a, precision="double")


def test_autotune_rejects_empty_dimensions():
    with pytest.raises(tilemm.InvalidArgument):
        tilemm.autotune(0, 16, 16)


def test_torch_cpu_tensors_and_wrong_dtypes_are_rejected():
    torch = pytest.importorskip("torch")
    a = torch.ones(4, 4)
    with pytest.raises(tilemm.InvalidArgument, match="'a'.*CUDA device"):
        tilemm.matmul(a, a)
    with pytest.raises(tilemm.InvalidArgument, match="'a'.*float32.*float64"):
        tilemm.matmul(a.double(), a)
    with pytest.raises(tilemm.InvalidArgument, match="'a'"):
        tilemm.matmul(a, a.half())


def test_the_torch_operator_is_registered():
    torch = pytest.importorskip("torch")
    assert hasattr(torch.ops.tilemm, "matmul")
    with pytest.raises(tilemm.InvalidArgument):
        torch.ops.tilemm.matmul(torch.ones(2, 2), torch.ones(2, 2))


def test_without_a_device_autotune_raises_tilemm_error():
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a CUDA device is present")
    except ImportError:
        pass
    with pytest.raises(tilemm.Error):
        tilemm.autotune(64, 64, 64)


def test_tilemms_own_result_memory_is_a_dense_view_handed_over_once(monkeypatch):
    from tilemm import _generic_path
    monkeypatch.setattr(_generic_path._ext, "empty", lambda shape, device: (4096, "capsule"))
    buffer = _generic_path.DeviceBuffer((2, 3, 5), 1)
    assert buffer.view() == _generic_path.View(4096, (2, 3, 5), (15, 5, 1), 1)
    assert buffer.__dlpack_device__() == (2, 1)
    assert buffer.__dlpack__(stream=1) == "capsule"
    with pytest.raises(tilemm.InvalidArgument):
        buffer.__dlpack__()
