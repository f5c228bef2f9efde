"""tilemm.matmul on arrays other than torch tensors: CuPy, JAX and any DLPack or
__cuda_array_interface__ producer.

Which stream the call runs on, and what the result is, follow a's library:
- CuPy: CuPy's current stream; the result is a cupy.ndarray from CuPy's allocator; no sync.
- others: the DLPack stream protocol, with the legacy default stream as the consumer's stream
  (producers order their data before it); the result is allocated by torch or CuPy where one is
  installed, else by tilemm, and handed to a's library through its from_dlpack after the stream
  is synchronized, since such a library has no way to learn which stream to wait for.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any, NamedTuple, Optional, Tuple

from . import _ext
from ._errors import invalid
from ._layout import NeedsCopy, check_no_overlap, gemm_arguments, problem_shape, span_bytes

_KDL_CUDA = 2
_KDL_FLOAT = 2
_LEGACY_STREAM = 0  # cudaStreamLegacy as a handle; DLPack calls it 1
_DLPACK_LEGACY_STREAM = 1


class View(NamedTuple):
    ptr: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # in elements
    device: int


def _library(x: Any) -> str:
    return type(x).__module__.split(".", 1)[0]


def _cupy_view(x: Any, name: str) -> View:
    if x.dtype.char != "f":
        raise invalid(name, f"must be float32, got {x.dtype}")
    return View(x.data.ptr, tuple(x.shape), tuple(s // 4 for s in x.strides), x.device.id)


def _interface_view(x: Any, name: str, stream: int) -> View:
    """A __cuda_array_interface__ producer's view; orders `stream` after the producer's."""
    cai = x.__cuda_array_interface__
    if cai.get("typestr") != "<f4":
        raise invalid(name, f"must be float32, got typestr {cai.get('typestr')!r}")
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        strides, step = [], 4
        for d in reversed(shape):
            strides.insert(0, step)
            step *= max(d, 1)
    if any(s % 4 for s in strides):
        raise invalid(name, "has strides that are not whole float32 elements")
    ptr = cai["data"][0]
    device = _pointer_device(ptr, name)
    producer = cai.get("stream")
    if producer is not None and producer not in (stream, _DLPACK_LEGACY_STREAM):
        _ext.stream_wait(stream, producer, device)
    return View(ptr, shape, tuple(s // 4 for s in strides), device)


def _pointer_device(ptr: int, name: str) -> int:
    try:
        import cupy  # a CAI producer that is not CuPy: CuPy's runtime says where the pointer is
        return cupy.cuda.runtime.pointerGetAttributes(ptr).device
    except ImportError:
        return -1  # the current device


def _dlpack_view(x: Any, name: str) -> View:
    device_type, device = x.__dlpack_device__()
    if device_type != _KDL_CUDA:
        raise invalid(name, f"must be on a CUDA device, got a {type(x).__module__}."
                            f"{type(x).__name__} on DLPack device type {device_type}")
    try:
        capsule = x.__dlpack__(stream=_DLPACK_LEGACY_STREAM)
    except TypeError:  # a producer without the stream keyword
        capsule = x.__dlpack__()
    ptr, shape, strides, _, _, code, bits, lanes = _ext.dlpack_view(capsule)
    if (code, bits, lanes) != (_KDL_FLOAT, 32, 1):
        raise invalid(name, f"must be float32, got DLPack dtype code {code}, {bits} bits, {lanes} lanes")
    return View(ptr, tuple(shape), tuple(strides), device)


def view(x: Any, name: str, stream: int) -> View:
    """The pointer, shape, element strides and device of a CUDA float32 array, or InvalidArgument."""
    if type(x) is DeviceBuffer:
        return x.view()
    library = _library(x)
    if library == "cupy":
        return _cupy_view(x, name)
    if library == "torch":
        return _torch_view(x, name)
    if hasattr(x, "__cuda_array_interface__"):
        return _interface_view(x, name, stream)
    if hasattr(x, "__dlpack_device__"):
        return _dlpack_view(x, name)
    raise invalid(name, f"must be a CUDA array (DLPack or __cuda_array_interface__), got "
                        f"{type(x).__module__}.{type(x).__name__}")


def _torch_view(x: Any, name: str) -> View:
    import torch
    if x.dtype is not torch.float32:
        raise invalid(name, f"must be float32, got {x.dtype}")
    if x.get_device() < 0:
        raise invalid(name, f"must be on a CUDA device, got a tensor on {x.device}")
    return View(x.data_ptr(), tuple(x.shape), tuple(x.stride()), x.get_device())


def _stream_of(a: Any) -> int:
    library = _library(a)
    if library == "cupy":
        import cupy
        return cupy.cuda.get_current_stream(a.device.id).ptr
    if library == "torch":  # mixed with another library's b or out
        import torch
        return torch._C._cuda_getCurrentRawStream(max(a.get_device(), 0))
    return _LEGACY_STREAM


def _empty(a: Any, shape: Tuple[int, ...], device: int) -> Any:
    """An uninitialized float32 result on `device`: from a's library where it allocates (torch,
    CuPy), else from torch or CuPy where one is installed (the result is handed to a's library
    through DLPack, which both export well), else tilemm's own memory."""
    library = _library(a)
    if library == "torch" or (library != "cupy" and importlib.util.find_spec("torch") is not None):
        import torch
        return torch.empty(shape, dtype=torch.float32, device=f"cuda:{device}")
    if library == "cupy" or importlib.util.find_spec("cupy") is not None:
        import cupy
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=cupy.float32)
    return DeviceBuffer(shape, device)


class DeviceBuffer:
    """tilemm's own device memory for a result, handed to one consumer through DLPack."""

    def __init__(self, shape: Tuple[int, ...], device: int) -> None:
        self.ptr, self._capsule = _ext.empty(list(shape), device)
        self.shape = tuple(shape)
        self.device = device

    def view(self) -> View:
        strides, step = [], 1
        for d in reversed(self.shape):
            strides.insert(0, step)
            step *= max(d, 1)
        return View(self.ptr, self.shape, tuple(strides), self.device)

    def __dlpack__(self, **_: Any) -> Any:  # the stream is synchronized before the hand-over
        if self._capsule is None:
            raise invalid("out", "tilemm's result memory was already handed over once")
        capsule, self._capsule = self._capsule, None
        return capsule

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (_KDL_CUDA, self.device)


def _handed_over(a: Any, result: Any) -> Any:
    """`result` (tilemm's own memory) as an array of a's library, where that library imports DLPack."""
    library = _library(a)
    if library in ("jax", "jaxlib"):
        import jax.numpy
        return jax.numpy.from_dlpack(result)
    module = sys.modules.get(library)
    from_dlpack = getattr(module, "from_dlpack", None)
    return from_dlpack(result) if from_dlpack is not None else result


def matmul(a: Any, b: Any, out: Optional[Any], alpha: float, beta: float, precision: int) -> Any:
    stream = _stream_of(a)
    va = view(a, "a", stream)
    vb = view(b, "b", stream)
    if vb.device != va.device:
        raise invalid("b", f"is on cuda:{vb.device}, but a is on cuda:{va.device}")
    batch, m, n, k, shape = problem_shape(va.shape, vb.shape)
    owned = out is None
    if owned:
        if beta != 0.0:
            raise invalid("beta", "is applied to out=, so it needs one (got beta without out)")
        out = _empty(a, shape, va.device)
    elif _library(out) in ("jax", "jaxlib"):
        raise invalid("out", "is a JAX array, which is immutable: pass out=None")
    vc = view(out, "out", stream)
    if vc.device != va.device:
        raise invalid("out", f"is on cuda:{vc.device}, but a is on cuda:{va.device}")
    if vc.shape != shape:
        raise invalid("out", f"has shape {vc.shape}, but a @ b has shape {shape}")
    if not owned:
        c_span = span_bytes(vc.shape, vc.strides)
        check_no_overlap(vc.ptr, c_span, va.ptr, span_bytes(va.shape, va.strides), "a")
        check_no_overlap(vc.ptr, c_span, vb.ptr, span_bytes(vb.shape, vb.strides), "b")
    try:
        layout, op_a, op_b, lda, sa, ldb, sb, ldc, sc = gemm_arguments(
            va.shape, va.strides, vb.shape, vb.strides, vc.shape, vc.strides)
    except NeedsCopy as e:
        return _matmul_with_copies(a, b, out, alpha, beta, precision, e.name)
    _ext.gemm(layout, op_a, op_b, m, n, k, alpha, va.ptr, lda, sa, vb.ptr, ldb, sb, beta, vc.ptr,
              ldc, sc, batch, stream, va.device, precision)
    if owned and _library(a) not in ("cupy", "torch"):
        _ext.synchronize(stream, va.device)
        return _handed_over(a, out)
    return out


def _matmul_with_copies(a: Any, b: Any, out: Any, alpha: float, beta: float, precision: int,
                        which: str) -> Any:
    """CuPy views without a unit stride are copied (on CuPy's stream); others cannot be."""
    if _library(a) != "cupy" or any(_library(x) != "cupy" for x in (b, out)):
        raise invalid(which, "has no unit stride in its last two dimensions; pass a contiguous array")
    import cupy
    dense_out = cupy.ascontiguousarray(out)
    matmul(cupy.ascontiguousarray(a), cupy.ascontiguousarray(b), dense_out, alpha, beta, precision)
    if dense_out is not out:
        out[...] = dense_out
    return out

