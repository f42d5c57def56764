"""The actor loss's critic value min(Q1, Q2) at one GRU step, with a backward through the smaller critic only
(the `min_q` speed-up; plain: autograd through both critics' `TwinCritic.step`, `sacbot.agent.accel.plain`).

The actor loss needs min_k Q_k(s_t, a~pi, h_{t-1}) for every trained step: one GRU step of each (detached)
critic whose hidden-side gates gh = W_hh h_{t-1} + b_hh the critics' pass over the window already computed.
Its gradient reaches the action only through the critic that is the smaller one in that row, so the
backward here runs the head, the GRU cell and the input layer for that critic's rows alone: half the rows of
autograd's version, which would push zeros through the other critic.

Differentiable in the input x only; the weights, gh and the hidden states are constants here.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from sacbot.agent.accel import native_gru
from sacbot.agent.activations import activation_backward, activation_fn

__all__ = ["min_q_from_gates"]


def _native_cell(t: Tensor) -> Any | None:
    """The C kernel (`native` on) for float32 CPU arrays of a hidden size its scratch rows hold, else None."""
    if t.shape[-1] > native_gru.MAX_HIDDEN:
        return None
    k = native_gru.kernel_for(t)
    return None if k is None else k[0]


def _cell_forward(gi: Tensor, b_ih: Tensor, gh: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One GRU step of G groups of N rows: gi (G, N, 3H) without b_ih (G, 3H), gh (G, N, 3H), h (G, N, H)
    -> h' and the gates r, z, n (each (G, N, H)), in C where it is built."""
    g, rows, hsz = h.shape
    lib = _native_cell(h)
    if lib is not None:
        out, r, z, n = (h.new_empty(g, rows, hsz) for _ in range(4))
        lib.gru_cell(
            g, rows, hsz, gi.data_ptr(), b_ih.data_ptr(), gh.data_ptr(), h.data_ptr(), out.data_ptr(),
            r.data_ptr(), z.data_ptr(), n.data_ptr(),
        )  # fmt: skip
        return out, r, z, n
    gi = gi + b_ih.unsqueeze(1)
    r, z = torch.sigmoid(gi[..., : 2 * hsz] + gh[..., : 2 * hsz]).split(hsz, -1)
    n = torch.tanh(torch.addcmul(gi[..., 2 * hsz :], r, gh[..., 2 * hsz :]))
    return torch.lerp(n, h, z), r.contiguous(), z.contiguous(), n


def _cell_backward_rows(
    rows: Tensor, dh: Tensor, gh: Tensor, h: Tensor, r: Tensor, z: Tensor, n: Tensor
) -> Tensor:
    """The gradient (len(rows), 3H) of the cell's input pre-activations for the rows `rows` (int64) of one
    group's arrays gh (N, 3H), h, r, z, n (N, H), given dh (len(rows), H) for those rows."""
    hsz = h.shape[-1]
    lib = _native_cell(dh)
    if lib is not None:
        dgi = dh.new_empty(len(rows), 3 * hsz)
        lib.gru_cell_backward_rows(
            len(rows), hsz, rows.data_ptr(), dh.data_ptr(), gh.data_ptr(), h.data_ptr(), r.data_ptr(),
            z.data_ptr(), n.data_ptr(), dgi.data_ptr(),
        )  # fmt: skip
        return dgi
    r, z, n, hp = r[rows], z[rows], n[rows], h[rows]
    ghn = gh[rows, 2 * hsz :]
    dpn = dh * (1.0 - z) * (1.0 - n * n)
    dpz = dh * (hp - n) * z * (1.0 - z)
    return torch.cat([dpn * ghn * r * (1.0 - r), dpz, dpn], -1)


class _MinQStep(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        h: Tensor,
        gh: Tensor,
        weights: tuple[Tensor, ...],
        activation: str,
    ) -> Tensor:
        w_in, b_in, w_ih, _, b_ih, _, w_head, b_head, w_q, b_q = weights
        rows = x.shape[0]
        act = activation_fn(activation)
        e = act(torch.baddbmm(b_in.unsqueeze(1), x.expand(2, -1, -1), w_in.transpose(1, 2)))
        gi = torch.bmm(e, w_ih.transpose(1, 2))  # b_ih is added in the cell
        h_new, r, z, n = _cell_forward(gi, b_ih.contiguous(), gh, h)
        y = act(torch.baddbmm(b_head.unsqueeze(1), h_new, w_head.transpose(1, 2)))
        q = torch.baddbmm(b_q.unsqueeze(1), y, w_q.transpose(1, 2)).view(2, rows)
        second = q[1] < q[0]  # the row's smaller critic (the first on a tie, as torch.min)
        ctx.save_for_backward(second, e, y, gh, h, r, z, n)
        ctx.weights = weights
        ctx.activation = activation
        return torch.where(second, q[1], q[0])

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, dq: Tensor) -> tuple[Tensor | None, ...]:
        second, e, y, gh, h, r, z, n = ctx.saved_tensors
        w_in, _, w_ih, _, _, _, w_head, _, w_q, _ = ctx.weights
        act = ctx.activation
        dx = dq.new_empty(dq.shape[0], w_in.shape[-1])
        for k, chosen in enumerate((~second, second)):
            rows = chosen.nonzero().view(-1)
            if rows.numel() == 0:
                continue
            dy = activation_backward(act, dq[rows].unsqueeze(1) * w_q[k], y[k, rows])  # (n, F)
            dh = dy @ w_head[k]  # (n, H)
            dgi = _cell_backward_rows(rows, dh, gh[k], h[k], r[k], z[k], n[k])  # (n, 3H)
            de = activation_backward(act, dgi @ w_ih[k], e[k, rows])
            dx[rows] = de @ w_in[k]
        return dx, None, None, None, None


def min_q_from_gates(
    x: Tensor, h_prev: Tensor, gh: Tensor, weights: tuple[Tensor, ...], activation: str, memoryless: bool
) -> Tensor:
    """min over the two critics of Q(x, h') with h' one GRU step from h_prev: x (..., D), h_prev (2, ..., H),
    gh = W_hh h_prev + b_hh (2, ..., 3H), the critics' stacked weights (`TwinCritic.weights`) -> (...).

    Differentiable in x only. `memoryless` steps from zero (gh was then computed from zero as well)."""
    lead = x.shape[:-1]
    hsz = h_prev.shape[-1]
    flat_x = x.reshape(-1, x.shape[-1])
    h = h_prev.detach().reshape(2, -1, hsz)
    h = torch.zeros_like(h) if memoryless else h.contiguous()
    w = tuple(t.detach().contiguous() for t in weights)
    q: Tensor = _MinQStep.apply(flat_x, h, gh.detach().reshape(2, -1, 3 * hsz).contiguous(), w, activation)
    return q.view(lead)
