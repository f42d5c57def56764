"""The learner's speed-ups behind one seam: the trainer and the networks call these few functions, and each
runs either a speed-up or its plain-torch version (`sacbot.agent.accel.plain`).

Seam points:
- `gru_sequence` / `gru_sequence_with_gates`: G grouped GRUs over a time-major window (both critics at once,
  or the actor), with the hidden-side pre-activations W_hh h_{t-1} + b_hh for `actor_q`.
- `actor_q`: the actor loss's min(Q1, Q2)(s_t, a ~ pi) as one step of the detached critics from their data
  history h_{t-1}.
- `prepare_process`: process-wide settings, once, when a trainer is made.

Parts (SACBOT_ACCEL, `sacbot.agent.accel.parts`; all on by default):
- `native`: the GRU's time loops with a hand-written backward, and `actor_q`'s GRU cell, in C (`native_gru`;
  float32 on the CPU; the C is built at install time, else on first use; plain: autograd through torch's GRU).
- `min_q`: `actor_q` reuses the critic pass's W_hh h_{t-1} + b_hh and runs its backward through each row's
  smaller critic only (`min_q`; plain: autograd through both critics' step).
- `heap`: glibc keeps freed memory mapped, so a pass's large temporaries do not page-fault back in (`heap`).
Every speed-up is held to its plain version by tests/agent; `sacbot bench trainer` with SACBOT_ACCEL set
measures each (docs/learner.md has the figures; two former speed-ups, the GRU's hand-written torch backward
and a direct fused-Adam call, were removed there: their gains were inside run-to-run noise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torch import Tensor

from sacbot.agent.accel import min_q, native_gru, plain
from sacbot.agent.accel.heap import retain_freed_memory
from sacbot.agent.accel.parts import PARTS, active, enabled, using

if TYPE_CHECKING:
    from sacbot.agent.networks import TwinCritic

__all__ = [
    "PARTS",
    "active",
    "actor_q",
    "enabled",
    "gru_sequence",
    "gru_sequence_with_gates",
    "prepare_process",
    "using",
]


def gru_sequence(x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> Tensor:
    """Outputs (G, T, B, H) of G GRUs over x (G, T, B, I) from h0 (G, B, H); differentiable in every input."""
    k = native_gru.kernel_for(x, h0, w_ih, w_hh, b_ih, b_hh)
    if k is not None:
        return native_gru.gru_sequence(k, x, h0, w_ih, w_hh, b_ih, b_hh)
    return plain.gru_sequence(x, h0, w_ih, w_hh, b_ih, b_hh)


def gru_sequence_with_gates(
    x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
) -> tuple[Tensor, Tensor]:
    """`gru_sequence`'s outputs and (detached) each step's W_hh h_{t-1} + b_hh as (G, T, B, 3H)."""
    k = native_gru.kernel_for(x, h0, w_ih, w_hh, b_ih, b_hh)
    if k is not None:
        return native_gru.gru_sequence_with_gates(k, x, h0, w_ih, w_hh, b_ih, b_hh)
    return plain.gru_sequence_with_gates(x, h0, w_ih, w_hh, b_ih, b_hh)


def actor_q(critic: TwinCritic, x: Tensor, h_prev: Tensor, gh: Tensor) -> Tensor:
    """min(Q1, Q2) of one GRU step of the critics, weights detached, from h_prev (2, ..., H) with x (..., D);
    gh = W_hh h_prev + b_hh (2, ..., 3H) from the critics' pass (`TwinCritic.sequence_tm`). Differentiable in
    x only (the actor's action)."""
    if enabled("min_q"):
        sz, weights = critic.sizes, critic.weights(detach=True)
        return min_q.min_q_from_gates(x, h_prev, gh, weights, sz.activation, sz.memoryless)
    return plain.actor_q(critic, x, h_prev)


def prepare_process() -> None:
    """Process-wide settings for training (`heap`); once per process, a no-op after."""
    if enabled("heap"):
        retain_freed_memory()
