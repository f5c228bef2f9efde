"""tilemm: autotuned FP32 matrix multiply for CUDA arrays of PyTorch, CuPy and JAX.

    import torch, tilemm
    c = tilemm.matmul(a, b)            # a, b: CUDA float32 tensors, 2-D or batched 3-D
    tilemm.matmul(a, b, out=c, beta=1) # c = a @ b + c, in place
    tilemm.set_precision("high")       # 3xTF32 on tensor cores, within FP32's error bound

The first call of a shape on a machine may tune it (seconds; results are cached on disk, see
cache_path()); later calls launch the stored winner. With PyTorch installed, the same operation
is torch.ops.tilemm.matmul, which torch.compile(fullgraph=True) graphs can hold.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Optional

from . import _ext, _precision
from ._errors import Error, InvalidArgument
from ._generic_path import matmul as _generic_matmul
from ._precision import get_precision, set_precision

__version__: str = _ext.version
__all__ = ["matmul", "autotune", "set_precision", "get_precision", "cache_path", "Error",
           "InvalidArgument", "AutotuneResult", "Candidate", "__version__"]

AutotuneResult = _ext.AutotuneResult
Candidate = _ext.Candidate

_torch_matmul = None
_Tensor: Any = None
if importlib.util.find_spec("torch") is not None:
    from . import _torch_op  # registers torch.ops.tilemm.matmul
    from ._torch_path import matmul as _torch_matmul
    import torch as _torch
    _Tensor = _torch.Tensor
    _is_compiling = _torch.compiler.is_compiling
    _grad_enabled = _torch.is_grad_enabled


def matmul(a: Any, b: Any, *, out: Optional[Any] = None, alpha: float = 1.0, beta: float = 0.0,
           precision: Optional[str] = None) -> Any:
    """alpha * a @ b, or alpha * a @ b + beta * out written into out, computed by tilemm.

    a and b are CUDA float32 arrays of one device: torch tensors, CuPy or JAX arrays, or any
    DLPack or __cuda_array_interface__ producer. Shapes: (M, K) @ (K, N) -> (M, N), and batched
    (B, M, K) @ (B, K, N) -> (B, M, N), where a 2-D operand (or a batch of 1) is used for every
    batch. Any strides: transposed and column-major views are passed to the library as such.

    The result is an array of a's library on a's device (a new one, or out). The call runs on
    the caller's current stream (torch's or CuPy's) and returns without synchronizing; arrays of
    other libraries run on the legacy default stream, and a new result of theirs is synchronized
    before it is handed over. beta needs out=. precision: 'highest', 'high' or 'medium' for this
    call; None uses get_precision().

    Raises InvalidArgument (a ValueError) naming the argument for a wrong dtype, an array not on
    a CUDA device, arrays on different devices, a bad shape or an out= that overlaps an input;
    Error (a RuntimeError) when CUDA, NVRTC or the tuning cache fails. With autograd on (torch
    tensors that require grad) or inside torch.compile, it calls torch.ops.tilemm.matmul.
    """
    code = _precision._current if precision is None else _precision.code(precision)
    if (_Tensor is not None and isinstance(a, _Tensor) and isinstance(b, _Tensor)
            and (out is None or isinstance(out, _Tensor))):
        if _is_compiling() or (_grad_enabled() and (a.requires_grad or b.requires_grad)):
            return _torch_op.functional(a, b, out, alpha, beta, code)
        return _torch_matmul(a, b, out, alpha, beta, code)
    return _generic_matmul(a, b, out, alpha, beta, code)


def autotune(m: int, n: int, k: int, *, precision: Optional[str] = None, force: bool = False,
             device: Optional[int] = None) -> AutotuneResult:
    """The tuning result for an m x n x k problem (row-major, dense) on a CUDA device.

    Looks in the SQLite cache, then the fleet's store (TILEMM_REMOTE_CACHE), then the results
    shipped with tilemm; tunes on a miss or with force=True (seconds: compiles candidates with
    NVRTC, verifies and times each, synchronizes the device). device: a CUDA ordinal, None for the current device. The result has winner,
    median_ms, tflops, margin, source ('tuned', 'cache', 'imported', 'remote', 'preloaded',
    'fallback') and candidates (each with name, median_ms, status, reason).
    Raises InvalidArgument for dimensions < 1, Error without a device.
    """
    return _ext.autotune(m, n, k, _precision.code(precision), force, -1 if device is None else device)


def cache_path() -> str:
    """The SQLite file that holds this machine's tuning results ($TILEMM_CACHE, else
    ${XDG_CACHE_HOME:-~/.cache}/tilemm/tuning.db)."""
    return _ext.cache_path()
