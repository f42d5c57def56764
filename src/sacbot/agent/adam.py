"""An Adam step as one call of torch's fused Adam kernel, without torch.optim's per-step Python bookkeeping.

`torch.optim.Adam(fused=True).step()` spends about 0.25 ms per call on the 2-core VMs this project targets
before it reaches its one kernel (grouping tensors by device, hooks, checks); three optimisers per update pass
made that ~1.3% of the trainer's time. `fused_adam_step` does what that step does for a plain Adam (no
amsgrad, no weight decay, no maximize): add 1 to each step count, then the fused kernel, with the gradients
divided by `grad_scale`. The optimiser keeps owning its state, so checkpoints and `load_state_dict` are
unchanged; the tests hold it to `Adam.step` bit for bit.
"""

from __future__ import annotations

import torch
from torch import Tensor


def supports_fused_step(opt: torch.optim.Optimizer) -> bool:
    """True for an Adam this function can step: fused, and none of the options it leaves out."""
    if not isinstance(opt, torch.optim.Adam) or not hasattr(torch, "_fused_adam_"):
        return False
    return all(
        g["fused"] and not g["amsgrad"] and not g["maximize"] and g["weight_decay"] == 0.0
        for g in opt.param_groups
    )


def fused_adam_step(opt: torch.optim.Adam, grad_scale: Tensor | None = None) -> None:
    """One Adam step of every parameter with a gradient (its state made already), gradients / grad_scale."""
    for group in opt.param_groups:
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            continue
        states = [opt.state[p] for p in params]
        steps = [s["step"] for s in states]
        torch._foreach_add_(steps, 1)
        beta1, beta2 = group["betas"]
        torch._fused_adam_(
            params,
            [p.grad for p in params],
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [],
            steps,
            amsgrad=False,
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            weight_decay=0.0,
            eps=group["eps"],
            maximize=False,
            grad_scale=grad_scale,
            found_inf=None,
        )
