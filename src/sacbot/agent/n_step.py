"""Soft n-step critic targets over a trained window (`n_step_targets`; `TrainerConfig.n_step` > 1)."""

from __future__ import annotations

import torch
from torch import Tensor


def n_step_targets(rew: Tensor, done: Tensor, value: Tensor, gamma: float, n: int) -> Tensor:
    """Soft n-step targets for T trained steps, time-major (T, B) each: `value[t]` is the soft value of the
    state after step t, V(s_{t+1}). y_t sums gamma^k r_{t+k} for k < n while no terminal came before, then
    bootstraps from V(s_{t+n'}), n' = min(n, T - t), unless a terminal came first; n = 1: one-step SAC."""
    steps = rew.shape[0]
    ret = torch.zeros_like(rew)
    live = torch.ones_like(rew)  # 1 while no terminal has come before step t + k
    boot = torch.zeros_like(rew)
    for k in range(n):
        if k >= steps:
            break
        pad = rew.new_zeros((k,) + rew.shape[1:])
        r_k = torch.cat([rew[k:], pad])
        d_k = torch.cat([done[k:], pad])
        v_k = torch.cat([value[k:], pad])
        valid = torch.cat([rew.new_ones((steps - k,) + rew.shape[1:]), pad])  # t + k inside the window
        ret = ret + valid * live * (gamma**k) * r_k
        live_next = live * (1.0 - d_k)
        # The last step summed for row t: k = n - 1, or the window's last step (t + k = T - 1).
        last = torch.zeros_like(valid)
        if k == n - 1:
            last = valid
        else:
            last[steps - 1 - k] = 1.0
        boot = boot + last * live_next * (gamma ** (k + 1)) * v_k
        live = live_next
    return ret + boot
