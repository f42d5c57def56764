"""The networks' activation setting: each name's function, and its backward from the function's output."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor
from torch.nn import functional as F

NAMES = ("relu", "tanh", "elu")


def _unknown(name: str) -> ValueError:
    return ValueError(f"unknown activation {name!r} ({', '.join(NAMES)})")


def activation_fn(name: str) -> Callable[[Tensor], Tensor]:
    if name == "relu":
        return F.relu
    if name == "tanh":
        return torch.tanh
    if name == "elu":
        return F.elu
    raise _unknown(name)


def activation_backward(name: str, grad: Tensor, out: Tensor) -> Tensor:
    """grad * act'(v), given out = act(v) (relu, tanh, elu with alpha 1: each derivative follows from the
    output); relu's is one masking pass."""
    if name == "relu":
        masked: Tensor = torch.ops.aten.threshold_backward(grad, out, 0.0)
        return masked
    if name == "tanh":
        return grad * (1.0 - out * out)
    if name == "elu":
        return grad * torch.where(out > 0, 1.0, out + 1.0)
    raise _unknown(name)
