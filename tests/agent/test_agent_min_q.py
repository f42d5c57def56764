"""The actor loss's min(Q1, Q2) step: the value and the input gradient of autograd through both critics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from sacbot.agent import accel
from sacbot.agent.accel.min_q import min_q_from_gates
from sacbot.agent.activations import activation_backward, activation_fn
from sacbot.agent.networks import NetworkSizes, TwinCritic


def _critic_and_history(
    sizes: NetworkSizes, dtype: torch.dtype
) -> tuple[TwinCritic, torch.Tensor, torch.Tensor]:
    """A critic after a pass over a window: h_prev (2, T, B, H) before each step and the pass's gates."""
    torch.manual_seed(3)
    critic = TwinCritic(sizes).to(dtype)
    x = torch.randn(7, 5, 21, dtype=dtype)  # time-major (T, B, D)
    _, out, gh = critic.sequence_tm(x, critic.initial_hidden(5).to(dtype))
    h_prev = torch.cat([torch.zeros(2, 1, 5, sizes.hidden, dtype=dtype), out[:, :-1].detach()], 1)
    return critic, h_prev, gh


@pytest.mark.parametrize("activation", ["relu", "tanh", "elu"])
@pytest.mark.parametrize("memoryless", [False, True])
@pytest.mark.parametrize("native", [True, False])
def test_min_q_equals_autograd_through_both_critics(
    activation: str, memoryless: bool, native: bool, with_kernel: Callable[..., Any]
) -> None:
    sizes = NetworkSizes(embed=16, hidden=16, head=8, activation=activation, memoryless=memoryless)
    critic, h_prev, gh = _critic_and_history(sizes, torch.float32)
    x0 = torch.randn(7, 5, 21)
    weights = torch.randn(7, 5)

    def ours() -> tuple[torch.Tensor, torch.Tensor]:
        x = x0.clone().requires_grad_()
        q = accel.actor_q(critic, x, h_prev, gh)
        (q * weights).sum().backward()
        assert x.grad is not None
        return q.detach(), x.grad

    q, grad = with_kernel(native, ours)
    x = x0.clone().requires_grad_()
    with accel.using(()):  # the seam's plain fallback: autograd through both critics
        plain_q, stepped = accel.actor_q(critic, x, h_prev, gh), critic.step(x, h_prev, detach=True)
        assert torch.equal(plain_q, stepped.min(0).values)
    both = critic.step(x, h_prev, detach=True)  # (2, T, B): autograd through both critics
    assert bool((both[0] < both[1]).any()) and bool((both[1] < both[0]).any())  # both branches are taken
    ref = both.min(0).values
    (ref * weights).sum().backward()
    assert torch.allclose(q, ref, atol=1e-5)
    assert x.grad is not None and torch.allclose(grad, x.grad, atol=1e-5, rtol=1e-4)
    assert all(p.grad is None for p in critic.parameters())


def test_min_q_passes_gradcheck() -> None:
    sizes = NetworkSizes(embed=8, hidden=8, head=4, activation="tanh")
    critic, h_prev, gh = _critic_and_history(sizes, torch.float64)
    x = torch.randn(7, 5, 21, dtype=torch.float64, requires_grad=True)
    w = critic.weights(detach=True)
    assert torch.autograd.gradcheck(lambda v: min_q_from_gates(v, h_prev, gh, w, "tanh", False), [x])


@pytest.mark.parametrize("activation", ["relu", "tanh", "elu"])
def test_activation_backward_from_its_output(activation: str) -> None:
    v = torch.linspace(-3, 3, 61, dtype=torch.float64, requires_grad=True)
    out = activation_fn(activation)(v)
    upstream = torch.randn(61, dtype=torch.float64)
    (grad,) = torch.autograd.grad(out, v, upstream)
    mask = v.detach().abs() > 1e-9  # relu's kink at 0 has no single derivative
    assert torch.allclose(activation_backward(activation, upstream, out.detach())[mask], grad[mask])
