"""The plain-torch version of each seam point (`sacbot.agent.accel`): what runs with a speed-up turned off,
and what the tests hold each speed-up to.

- GRU: autograd through torch's own GRU (`torch._VF.gru`, what `torch.nn.GRU` calls), one call per group; the
  hidden-side pre-activations are one batched matmul of the outputs afterwards.
- The actor loss's critic value: one GRU step of both (detached) critics (`TwinCritic.step`), then the min.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

if TYPE_CHECKING:
    from sacbot.agent.networks import TwinCritic


def gru_sequence(x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> Tensor:
    """Outputs (G, T, B, H) of G GRUs over x (G, T, B, I) from h0 (G, B, H), weights stacked (G, ...)."""
    # Arguments: has_biases, num_layers, dropout, train, bidirectional, batch_first. train is True (no
    # dropout, so the same maths): cuDNN's backward refuses a forward run in inference mode.
    outs = [
        torch._VF.gru(
            x[g], h0[g].unsqueeze(0), [w_ih[g], w_hh[g], b_ih[g], b_hh[g]], True, 1, 0.0, True, False, False
        )[0]
        for g in range(x.shape[0])
    ]
    return torch.stack(outs)


def gru_sequence_with_gates(
    x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
) -> tuple[Tensor, Tensor]:
    """`gru_sequence`'s outputs and (detached) each step's W_hh h_{t-1} + b_hh (G, T, B, 3H)."""
    out = gru_sequence(x, h0, w_ih, w_hh, b_ih, b_hh)
    with torch.no_grad():
        g, t_len, b, h = out.shape
        h_prev = torch.cat([h0.unsqueeze(1), out[:, :-1]], 1).reshape(g, t_len * b, h)
        gh = torch.baddbmm(b_hh.unsqueeze(1), h_prev, w_hh.transpose(1, 2))
    return out, gh.view(g, t_len, b, 3 * h)


def actor_q(critic: TwinCritic, x: Tensor, h_prev: Tensor) -> Tensor:
    """min(Q1, Q2) of one step of both critics (weights detached) from h_prev (2, ..., H) with x (..., D)."""
    return critic.step(x, h_prev, detach=True).min(0).values
