"""The grouped GRU behind the seam: the plain path equals torch's GRU per group and gives the gates; the C
loops (values, gates, every gradient) equal it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import Any

import pytest
import torch

from sacbot.agent import accel
from sacbot.agent.accel import native_gru
from sacbot.agent.accel.heap import retain_freed_memory
from sacbot.agent.native_build import native_enabled
from sacbot.agent.networks import NetworkSizes, TwinCritic


def _inputs(g: int = 2, t: int = 5, b: int = 3, i: int = 4, h: int = 6) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    shapes = [(g, t, b, i), (g, b, h), (g, 3 * h, i), (g, 3 * h, h), (g, 3 * h), (g, 3 * h)]
    return [torch.randn(s, generator=gen, dtype=torch.float64, requires_grad=True) for s in shapes]


def test_values_equal_torch_gru_per_group() -> None:
    x, h0, w_ih, w_hh, b_ih, b_hh = (a.detach() for a in _inputs())
    out = accel.gru_sequence(x, h0, w_ih, w_hh, b_ih, b_hh)
    for g in range(2):
        ref, _ = torch._VF.gru(
            x[g], h0[g][None], (w_ih[g], w_hh[g], b_ih[g], b_hh[g]), True, 1, 0.0, False, False, False
        )
        assert torch.allclose(out[g], ref, atol=1e-12)


def test_gradients_pass_gradcheck() -> None:
    assert torch.autograd.gradcheck(accel.gru_sequence, _inputs())


def test_gates_are_the_hidden_side_preactivations() -> None:
    x, h0, w_ih, w_hh, b_ih, b_hh = (a.detach() for a in _inputs())
    out, gh = accel.gru_sequence_with_gates(x, h0, w_ih, w_hh, b_ih, b_hh)
    h_prev = torch.cat([h0.unsqueeze(1), out[:, :-1]], 1)  # (G, T, B, H)
    expect = torch.einsum("gtbh,gkh->gtbk", h_prev, w_hh) + b_hh[:, None, None]
    assert torch.allclose(gh, expect, atol=1e-12)
    gi = torch.einsum("gtbi,gki->gtbk", x, w_ih) + b_ih[:, None, None]
    r, z = torch.sigmoid(gi[..., :12] + gh[..., :12]).split(6, -1)  # one GRU step from the given gates
    n = torch.tanh(gi[..., 12:] + r * gh[..., 12:])
    assert torch.allclose((1 - z) * n + z * h_prev, out, atol=1e-12)


def test_heap_setting_applies_once() -> None:
    assert retain_freed_memory() is retain_freed_memory()


def test_double_backward_of_the_c_loops_is_refused_not_wrong() -> None:
    args = [a.detach().float().requires_grad_() for a in _inputs()]
    assert native_gru.kernel_for(*args) is not None
    out = accel.gru_sequence(*args)
    (grad,) = torch.autograd.grad(out.sum(), args[0], create_graph=True)
    with pytest.raises(RuntimeError):
        grad.sum().backward()


def test_the_c_loops_are_loaded_where_a_compiler_exists() -> None:
    has_cc = shutil.which(os.environ.get("CC", "cc")) is not None or shutil.which("gcc") is not None
    built = native_gru.kernel() is not None
    if not native_enabled():
        assert not built
    elif has_cc:  # without one, an install-time build may still be there
        assert built


@pytest.mark.parametrize(("t_len", "zero_state"), [(1, False), (6, False), (6, True)])
def test_c_loops_equal_the_torch_loops(t_len: int, zero_state: bool, with_kernel: Callable[..., Any]) -> None:
    """Outputs, gates and every gradient, in float32 (the kernel's type), with and without h0's gradient;
    zero_state starts one group from zeros (the C loop skips that product)."""
    gen = torch.Generator().manual_seed(3)
    g, b, i, h = 2, 5, 7, 16
    shapes = [(g, t_len, b, i), (g, b, h), (g, 3 * h, i), (g, 3 * h, h), (g, 3 * h), (g, 3 * h)]
    base = [torch.randn(s, generator=gen) * 0.5 for s in shapes]
    if zero_state:
        base[1][0] = 0.0
    weights = torch.randn(g, t_len, b, h, generator=gen)
    gate_weights = torch.randn(g, t_len, b, 3 * h, generator=gen)

    def run() -> list[torch.Tensor]:
        args = [a.clone().requires_grad_(k != 1 or t_len > 1) for k, a in enumerate(base)]
        out, gh = accel.gru_sequence_with_gates(*args)
        (out * weights).sum().backward()
        with torch.no_grad():
            outputs = accel.gru_sequence(*args)
            out_ng, gh_ng = accel.gru_sequence_with_gates(*args)
        grads = [a.grad if a.grad is not None else torch.zeros(0) for a in args]
        return [out.detach(), gh * gate_weights, outputs, out_ng, gh_ng, *grads]

    assert native_gru.kernel() is not None
    ours, reference = with_kernel(True, run), with_kernel(False, run)
    for a, r in zip(ours, reference, strict=True):
        assert a.shape == r.shape
        assert torch.allclose(a, r, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("zero_tail", [1, 3, 6])
def test_steps_without_output_gradient_are_skipped_exactly(
    zero_tail: int, with_kernel: Callable[..., Any]
) -> None:
    """The C backward skips trailing steps whose outputs get no gradient (the actor's last state): every
    gradient still equals the torch loops', including all of them zero when no step has a gradient."""
    gen = torch.Generator().manual_seed(6)
    g, t_len, b, i, h = 2, 6, 3, 5, 8
    shapes = [(g, t_len, b, i), (g, b, h), (g, 3 * h, i), (g, 3 * h, h), (g, 3 * h), (g, 3 * h)]
    base = [torch.randn(s, generator=gen) * 0.5 for s in shapes]
    weights = torch.randn(g, t_len, b, h, generator=gen)
    weights[:, t_len - zero_tail :] = 0.0

    def run() -> list[torch.Tensor]:
        args = [a.clone().requires_grad_() for a in base]
        (accel.gru_sequence(*args) * weights).sum().backward()
        return [a.grad for a in args if a.grad is not None]

    ours, reference = with_kernel(True, run), with_kernel(False, run)
    assert len(ours) == len(reference) == 6
    for a, r in zip(ours, reference, strict=True):
        assert torch.allclose(a, r, atol=2e-5, rtol=1e-4)


def test_c_loops_equal_torch_gru_and_train_the_critics(with_kernel: Callable[..., Any]) -> None:
    """The kernel inside a critic pass: the same Q values and parameter gradients as the torch loops."""
    torch.manual_seed(2)
    critic = TwinCritic(NetworkSizes(embed=32, hidden=32, head=16))
    x = torch.randn(9, 4, 21)

    def run() -> list[torch.Tensor]:
        critic.zero_grad(set_to_none=True)
        q, _, gh = critic.sequence_tm(x, critic.initial_hidden(4))
        (q.sum() + gh.sum() * 0.0).backward()
        return [q.detach(), *(p.grad.clone() for p in critic.parameters() if p.grad is not None)]

    ours, reference = with_kernel(True, run), with_kernel(False, run)
    assert len(ours) == len(reference) == 11
    for a, r in zip(ours, reference, strict=True):
        assert torch.allclose(a, r, atol=2e-5, rtol=1e-4)


def test_seam_runs_each_part_and_its_fallback_alike() -> None:
    """A critic pass through the seam with every part on and with none on: the same Q, gates and gradients."""
    torch.manual_seed(5)
    critic = TwinCritic(NetworkSizes(embed=16, hidden=16, head=8))
    x = torch.randn(6, 3, 21)
    found = []
    for chosen in (accel.PARTS, ()):
        with accel.using(chosen):
            critic.zero_grad(set_to_none=True)
            q, _, gh = critic.sequence_tm(x, critic.initial_hidden(3))
            q.sum().backward()
            grads = [p.grad.clone() for p in critic.parameters() if p.grad is not None]
            found.append([q.detach(), gh, *grads])
    for other in found[1:]:
        for a, r in zip(found[0], other, strict=True):
            assert torch.allclose(a, r, atol=2e-5, rtol=1e-4)
