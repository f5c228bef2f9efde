"""torch.ops.tilemm.matmul: tilemm as a PyTorch custom operator.

Registered through torch.library.custom_op with a fake (meta) implementation, so that
torch.compile(fullgraph=True) graphs hold it as one opaque call, and with autograd: the gradients
are two more tilemm products, grad_a = alpha * grad @ b^T and grad_b = alpha * a^T @ grad
(summed over the batch where an operand was broadcast).

    torch.ops.tilemm.matmul(a, b, alpha=1.0, precision="") -> Tensor

precision "" means tilemm.get_precision() at the time of the call.
"""


from typing import Any, Optional

import torch

from . import _precision
from ._layout import problem_shape
from ._torch_path import matmul as _matmul


def _code(precision: str) -> int:
    return _precision._current if precision == "" else _precision.code(precision)


@torch.library.custom_op("tilemm::matmul", mutates_args=())
def matmul(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0, precision: str = "") -> torch.Tensor:
    """alpha * a @ b with tilemm (2-D, or batched 3-D with 2-D operands broadcast)."""
    return _matmul(a, b, None, alpha, 0.0, _code(precision))


@matmul.register_fake
def _(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0, precision: str = "") -> torch.Tensor:
    torch._check(a.dtype == torch.float32, lambda: f"tilemm.matmul: a must be float32, got {a.dtype}")
    torch._check(b.dtype == torch.float32, lambda: f"tilemm.matmul: b must be float32, got {b.dtype}")
    _, _, _, _, shape = problem_shape(a.shape, b.shape)
    return a.new_empty(shape)


def _setup_context(ctx: Any, inputs: tuple, output: torch.Tensor) -> None:
    a, b, alpha, precision = inputs
    ctx.save_for_backward(a, b)
    ctx.alpha = alpha
    ctx.precision = precision


def _reduce_to(grad: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A batched gradient summed over the batches an operand of `like`'s shape was broadcast to."""
    if grad.dim() == like.dim() and grad.shape[0] == like.shape[0]:
        return grad
    summed = grad.sum(dim=0)
    return summed if like.dim() == 2 else summed.unsqueeze(0)


def _backward(ctx: Any, grad: torch.Tensor) -> tuple:
    a, b = ctx.saved_tensors
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = _reduce_to(matmul(grad, b.transpose(-1, -2), ctx.alpha, ctx.precision), a)
    if ctx.needs_input_grad[1]:
        grad_b = _reduce_to(matmul(a.transpose(-1, -2), grad, ctx.alpha, ctx.precision), b)
    return grad_a, grad_b, None, None


matmul.register_autograd(_backward, setup_context=_setup_context)


def functional(a: torch.Tensor, b: torch.Tensor, out: Optional[torch.Tensor], alpha: float,
               beta: float, precision: int) -> torch.Tensor:
    """tilemm.matmul under autograd or torch.compile: through the operator (out= by a copy)."""
    result = matmul(a, b, alpha, _precision.NAMES[precision])
    if out is None:
        if beta != 0.0:
            from ._errors import invalid
            raise invalid("beta", "is applied to out=, so it needs one (got beta without out)")
        return result
    with torch.no_grad():
        out.copy_(result + beta * out if beta != 0.0 else result)
    return out
