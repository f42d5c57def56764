"""The direct fused Adam step: bit for bit torch.optim.Adam(fused=True).step(), gradient divisor included."""

from __future__ import annotations

import pytest
import torch

from sacbot.agent.adam import fused_adam_step, supports_fused_step


def _pair() -> tuple[list[torch.nn.Parameter], list[torch.nn.Parameter]]:
    gen = torch.Generator().manual_seed(7)
    shapes = [(5, 3), (3,), (2, 4, 4)]
    first = [torch.nn.Parameter(torch.randn(s, generator=gen)) for s in shapes]
    return first, [torch.nn.Parameter(p.detach().clone()) for p in first]


@pytest.mark.parametrize("divisor", [None, 3.5])
def test_direct_step_equals_adam_step(divisor: float | None) -> None:
    ours, theirs = _pair()
    opt_ours = torch.optim.Adam(ours, lr=1e-2, fused=True)
    opt_theirs = torch.optim.Adam(theirs, lr=1e-2, fused=True)
    gen = torch.Generator().manual_seed(8)
    for _ in range(4):
        for a, b in zip(ours, theirs, strict=True):
            g = torch.randn(a.shape, generator=gen)
            a.grad, b.grad = g.clone(), g.clone()
        for a in ours:  # the state a first torch step would make, made up front as the trainer does
            opt_ours.state.setdefault(
                a,
                {"step": torch.zeros(()), "exp_avg": torch.zeros_like(a), "exp_avg_sq": torch.zeros_like(a)},
            )
        scale = None if divisor is None else torch.tensor(divisor)
        fused_adam_step(opt_ours, scale)
        if scale is not None:
            opt_theirs.grad_scale = scale  # type: ignore[attr-defined]
        opt_theirs.step()
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a, b)
        assert torch.equal(opt_ours.state[a]["exp_avg_sq"], opt_theirs.state[b]["exp_avg_sq"])
        assert float(opt_ours.state[a]["step"]) == float(opt_theirs.state[b]["step"]) == 4.0


def test_only_plain_fused_adams_are_stepped_directly() -> None:
    p = [torch.nn.Parameter(torch.zeros(2))]
    assert supports_fused_step(torch.optim.Adam(p, fused=True))
    assert not supports_fused_step(torch.optim.Adam(p))
    assert not supports_fused_step(torch.optim.Adam(p, fused=True, amsgrad=True))
    assert not supports_fused_step(torch.optim.SGD(p, lr=0.1))
