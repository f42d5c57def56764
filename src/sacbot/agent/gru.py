"""A grouped, time-major GRU layer with a hand-written backward pass (the trainer's hot loop).

G independent GRUs of the same sizes (the actor: G = 1; the twin critics: G = 2) run over a time-major
sequence x (G, T, B, I) from h0 (G, B, H) with stacked weights w_ih (G, 3H, I), w_hh (G, 3H, H),
b_ih, b_hh (G, 3H), in torch.nn.GRU's gate order (r, z, n):

    r, z = sigmoid(W_i{r,z} x + b_i{r,z} + W_h{r,z} h + b_h{r,z})
    n    = tanh(W_in x + b_in + r * (W_hn h + b_hn))
    h'   = (1 - z) * n + z * h

Why not autograd over torch's own GRU: its backward replays every step's small ops and computes the weight
gradients one time step at a time. Here the input projections and all weight gradients are one batched matmul
over all T steps, and each step of the backward is four ops for every group at once: the gate derivatives
depend on dh only through a product with factors computed, vectorised, at the end of the forward pass.

Where the C kernel builds (`sacbot.agent.native_gru`; float32 on the CPU), both time loops run there instead:
one sgemm and one fused gate loop per step. The torch loops below stay the fallback and the reference.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from sacbot.agent import native_gru

__all__ = ["gru_sequence", "gru_sequence_with_gates"]


def _forward(
    x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor, keep: bool
) -> tuple[Tensor, tuple[Tensor, Tensor, Tensor] | None]:
    """Outputs (G, T, B, H); with keep, also the gates r|z (G, T, B, 2H), n (G, T, B, H) and the hidden-side
    pre-activations W_hh h + b_hh (T, G, B, 3H), time-first so each step's matmul writes in place."""
    g, t_len, b, i = x.shape
    h = h0.shape[-1]
    gi = torch.baddbmm(b_ih.unsqueeze(1), x.reshape(g, t_len * b, i), w_ih.transpose(1, 2))
    gi = gi.view(g, t_len, b, 3 * h)
    # tanh(v) = 2 sigmoid(2 v) - 1: torch's sigmoid is about three times faster than its tanh on CPU, so the n
    # gate's pre-activation is formed doubled (input side scaled once here, hidden side in the addcmul).
    # Near 0 this loses relative, not absolute, precision (~6e-8), far below float32 training noise.
    gi[..., 2 * h :] *= 2.0
    w_hh_t = w_hh.transpose(1, 2).contiguous()
    bias_hh = b_hh.unsqueeze(1)
    out = x.new_empty(g, t_len, b, h)
    rz = x.new_empty(g, t_len, b, 2 * h)
    n = x.new_empty(g, t_len, b, h)
    gh_all = x.new_empty(t_len, g, b, 3 * h) if keep else None
    h_t = h0
    for t in range(t_len):
        gh = (
            torch.baddbmm(bias_hh, h_t, w_hh_t, out=gh_all[t])
            if gh_all is not None
            else torch.baddbmm(bias_hh, h_t, w_hh_t)
        )
        rz_t = torch.add(gi[:, t, :, : 2 * h], gh[..., : 2 * h], out=rz[:, t]).sigmoid_()
        n_t = torch.addcmul(gi[:, t, :, 2 * h :], rz_t[..., :h], gh[..., 2 * h :], value=2.0, out=n[:, t])
        n_t.sigmoid_().mul_(2.0).sub_(1.0)
        h_t = torch.lerp(n_t, h_t, rz_t[..., h:], out=out[:, t])
    if gh_all is None:
        return out, None
    return out, (rz, n, gh_all)


def _parameter_grads(
    needs: tuple[bool, ...],
    dgi: Tensor,
    dgh: Tensor,
    x: Tensor,
    h_prev: Tensor,
    w_ih: Tensor,
    bias_grads: tuple[Tensor | None, Tensor | None] | None = None,
) -> tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None, Tensor | None]:
    """Both backwards' batched tail: from the pre-activation gradients dgi, dgh (G, T, B, 3H) the gradients
    of x, W_ih, W_hh, b_ih and b_hh (None where `needs` (x, W_ih, W_hh, b_ih, b_hh) says no). h_prev
    (G, T, B, H) holds the hidden state before each step; bias_grads, where given, are the bias gradients
    already summed."""
    need_x, need_w_ih, need_w_hh, need_b_ih, need_b_hh = needs
    g, t_len, b, h3 = dgh.shape
    dgi_flat, dgh_flat = dgi.reshape(g, t_len * b, h3), dgh.reshape(g, t_len * b, h3)
    grad_b_ih, grad_b_hh = bias_grads if bias_grads is not None else (None, None)
    return (
        torch.bmm(dgi_flat, w_ih).view_as(x) if need_x else None,
        torch.bmm(dgi_flat.transpose(1, 2), x.reshape(g, t_len * b, x.shape[-1])) if need_w_ih else None,
        torch.bmm(dgh_flat.transpose(1, 2), h_prev.reshape(g, t_len * b, h_prev.shape[-1]))
        if need_w_hh
        else None,
        (grad_b_ih if grad_b_ih is not None else dgi_flat.sum(1)) if need_b_ih else None,
        (grad_b_hh if grad_b_hh is not None else dgh_flat.sum(1)) if need_b_hh else None,
    )


class _GRUSequence(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
    ) -> tuple[Tensor, Tensor]:
        out, kept = _forward(x, h0, w_ih, w_hh, b_ih, b_hh, keep=True)
        assert kept is not None
        rz, n, gh_all = kept
        hsz = h0.shape[-1]
        r, z = rz[..., :hsz], rz[..., hsz:]
        ghn = gh_all[..., 2 * hsz :].transpose(0, 1)  # (G, T, B, H)
        h_prev = torch.cat([h0.unsqueeze(1), out[:, :-1]], 1)  # (G, T, B, H)
        # dL/d(pre-activation) = dh * factor, per gate; the factors need no dh, so they are computed here
        # for all steps at once.
        dn_pre = (1.0 - z) * (1.0 - n * n)  # through n's tanh
        factors_h = torch.stack(
            [dn_pre * ghn * r * (1.0 - r), (h_prev - n) * z * (1.0 - z), dn_pre * r], 3
        )  # (G, T, B, 3, H): for the hidden-side pre-activations (r, z, W_hn h + b_hn)
        ctx.save_for_backward(x, h_prev, w_ih, w_hh, z, factors_h, dn_pre)
        ctx.mark_non_differentiable(gh_all)
        ctx.set_materialize_grads(False)  # no zero-filled (T, G, B, 3H) gradient for the detached gates
        return out, gh_all

    @staticmethod
    @once_differentiable  # the saved factors carry no graph: a double backward must fail, not be wrong
    def backward(ctx: Any, grad_out: Tensor, _grad_gh: Tensor | None) -> tuple[Tensor | None, ...]:
        x, h_prev, w_ih, w_hh, z, factors_h, dn_pre = ctx.saved_tensors
        need_x, need_h0, need_w_ih, need_w_hh, need_b_ih, need_b_hh = ctx.needs_input_grad
        g, t_len, b, hsz = h_prev.shape
        if grad_out is None:  # the outputs were not used in the loss
            grad_out = torch.zeros_like(h_prev)
        dh_all = torch.empty_like(h_prev)
        dgh = h_prev.new_empty(g, t_len, b, 3, hsz)
        dh = torch.zeros_like(h_prev[:, 0])
        grad_out = grad_out.contiguous()
        for t in range(t_len - 1, -1, -1):
            dh_t = torch.add(dh, grad_out[:, t], out=dh_all[:, t])
            dgh_t = torch.mul(dh_t.unsqueeze(2), factors_h[:, t], out=dgh[:, t])
            if t > 0 or need_h0:
                dh = torch.baddbmm(dh_t * z[:, t], dgh_t.view(g, b, 3 * hsz), w_hh)
        # The input side differs from the hidden side only in the n gate (no factor r there).
        dgi = dgh.clone()
        torch.mul(dh_all, dn_pre, out=dgi[..., 2, :])
        grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh = _parameter_grads(
            (need_x, need_w_ih, need_w_hh, need_b_ih, need_b_hh),
            dgi.view(g, t_len, b, 3 * hsz),
            dgh.view(g, t_len, b, 3 * hsz),
            x,
            h_prev,
            w_ih,
        )
        return (grad_x, dh if need_h0 else None, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh)


def _native(*tensors: Tensor) -> tuple[Any, int] | None:
    """The C kernel when it is built and every tensor is float32 on the CPU, else None."""
    if not all(t.dtype == torch.float32 and t.device.type == "cpu" for t in tensors):
        return None
    return native_gru.kernel()


def _ptr(t: Tensor | None) -> int | None:
    return None if t is None else t.data_ptr()


def _native_run(
    k: tuple[Any, int],
    x: Tensor,
    h0: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor,
    b_hh: Tensor,
    keep: bool,
    with_gates: bool,
) -> tuple[Tensor, Tensor | None, tuple[Tensor, Tensor, Tensor, Tensor] | None]:
    """The C forward: the states hs (G, T + 1, B, H) (hs[:, 1:] the outputs; with keep, hs[:, 0] is h0 so that
    hs[:, :-1] are the previous states), the hidden-side pre-activations (G, T, B, 3H) if with_gates, and
    with keep the saved r, z, n, W_hn h + b_hn for `gru_backward`."""
    lib, sgemm = k
    g, t_len, b, i = x.shape
    h = h0.shape[-1]
    gi = torch.bmm(x.reshape(g, t_len * b, i), w_ih.transpose(1, 2))  # b_ih is added in C: no broadcast copy
    hs = x.new_empty(g, t_len + 1, b, h)
    saved = tuple(x.new_empty(g, t_len, b, h) for _ in range(4)) if keep else None
    gh_all = x.new_empty(g, t_len, b, 3 * h) if with_gates else None
    scratch = None if with_gates else x.new_empty(b, 3 * h)
    rows4 = None if keep else x.new_empty(4 * h)  # where the gates go when nothing is kept
    r, z, n, ghn = saved if saved is not None else (None, None, None, None)
    # Every array C reads or writes is held by a name: a temporary's memory would be freed before the call.
    w_hh, b_ih, b_hh = w_hh.contiguous(), b_ih.contiguous(), b_hh.contiguous()
    if h0.stride(-1) != 1 or h0.stride(-2) != h:  # each group's rows must be one block; the groups need not
        h0 = h0.contiguous()
    if keep:
        hs[:, 0] = h0
    lib.gru_forward(
        sgemm, g, t_len, b, h, gi.data_ptr(), b_ih.data_ptr(), h0.data_ptr(), h0.stride(0), w_hh.data_ptr(),
        b_hh.data_ptr(), hs.data_ptr(), int(keep), _ptr(r), _ptr(z), _ptr(n), _ptr(ghn), _ptr(gh_all),
        _ptr(scratch), _ptr(rows4),
    )  # fmt: skip
    return hs, gh_all, saved  # type: ignore[return-value]


class _NativeGRUSequence(torch.autograd.Function):
    """`_GRUSequence` with both time loops in C; outputs (out, gates or an empty tensor)."""

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor, gates: bool
    ) -> tuple[Tensor, Tensor]:
        k = native_gru.kernel()
        assert k is not None
        w_hh = w_hh.contiguous()
        hs, gh_all, saved = _native_run(k, x, h0, w_ih, w_hh, b_ih, b_hh, keep=True, with_gates=gates)
        assert saved is not None
        ctx.save_for_backward(x, w_ih, w_hh, hs, *saved)
        gh = gh_all if gh_all is not None else x.new_empty(0)
        ctx.mark_non_differentiable(gh)
        ctx.set_materialize_grads(False)
        return hs[:, 1:], gh

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_out: Tensor | None, _grad_gh: Tensor | None) -> tuple[Tensor | None, ...]:
        x, w_ih, w_hh, hs, r, z, n, ghn = ctx.saved_tensors
        need_x, need_h0, need_w_ih, need_w_hh, need_b_ih, need_b_hh, _ = ctx.needs_input_grad
        k = native_gru.kernel()
        assert k is not None
        lib, sgemm = k
        g, t_len, b, hsz = r.shape
        go = grad_out.contiguous() if grad_out is not None else torch.zeros_like(r)
        # Trailing steps whose outputs got no gradient (the actor's last state feeds only the detached
        # targets) have an all-zero backward: it is skipped.
        t_run = t_len
        while t_run > 0 and not bool(go[:, t_run - 1].any()):  # from the end: one small check per step
            t_run -= 1
        dgh = r.new_empty(g, t_len, b, 3 * hsz)
        dgi = r.new_empty(g, t_len, b, 3 * hsz)
        dh0 = r.new_empty(g, b, hsz) if need_h0 else None
        db_ih = r.new_empty(g, 3 * hsz) if need_b_ih else None
        db_hh = r.new_empty(g, 3 * hsz) if need_b_hh else None
        scratch = r.new_empty(b, hsz)  # held by a name: a temporary would be freed before the call
        lib.gru_backward(
            sgemm, g, t_len, t_run, b, hsz, go.data_ptr(), hs.data_ptr(), r.data_ptr(), z.data_ptr(),
            n.data_ptr(), ghn.data_ptr(), w_hh.data_ptr(), dgh.data_ptr(), dgi.data_ptr(), _ptr(dh0),
            _ptr(db_ih), _ptr(db_hh), scratch.data_ptr(),
        )  # fmt: skip
        needs = (need_x, need_w_ih, need_w_hh, need_b_ih, need_b_hh)
        run = slice(0, t_run)
        grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh = _parameter_grads(
            needs, dgi[:, run], dgh[:, run], x[:, run], hs[:, run], w_ih, (db_ih, db_hh)
        )
        if grad_x is not None and t_run < t_len:
            grad_x = torch.cat([grad_x, x.new_zeros(g, t_len - t_run, b, x.shape[-1])], 1)
        return (grad_x, dh0, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh, None)


def gru_sequence_with_gates(
    x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
) -> tuple[Tensor, Tensor]:
    """Outputs (G, T, B, H) of G GRUs over x (G, T, B, I) from h0 (G, B, H), differentiable in every input,
    and (detached) each step's hidden-side pre-activations W_hh h_{t-1} + b_hh as (G, T, B, 3H)."""
    k = _native(x, h0, w_ih, w_hh, b_ih, b_hh)
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (x, h0, w_ih, w_hh, b_ih, b_hh))
    if k is not None:
        if grad:
            out, gh = _NativeGRUSequence.apply(x, h0, w_ih, w_hh, b_ih, b_hh, True)
            return out, gh
        hs, gates, _ = _native_run(k, x, h0, w_ih, w_hh, b_ih, b_hh, keep=False, with_gates=True)
        assert gates is not None
        return hs[:, 1:], gates
    if grad:  # the torch loops keep the gates time-first (T, G, B, 3H)
        out, gh = _GRUSequence.apply(x, h0, w_ih, w_hh, b_ih, b_hh)
        return out, gh.transpose(0, 1)
    out, kept = _forward(x, h0, w_ih, w_hh, b_ih, b_hh, keep=True)
    assert kept is not None
    return out, kept[2].transpose(0, 1)


def gru_sequence(x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> Tensor:
    """Outputs (G, T, B, H) of G GRUs over x (G, T, B, I) from h0 (G, B, H); differentiable in every input."""
    k = _native(x, h0, w_ih, w_hh, b_ih, b_hh)
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (x, h0, w_ih, w_hh, b_ih, b_hh))
    if k is not None:
        if grad:
            native_out: Tensor = _NativeGRUSequence.apply(x, h0, w_ih, w_hh, b_ih, b_hh, False)[0]
            return native_out
        return _native_run(k, x, h0, w_ih, w_hh, b_ih, b_hh, keep=False, with_gates=False)[0][:, 1:]
    if grad:
        out: Tensor = _GRUSequence.apply(x, h0, w_ih, w_hh, b_ih, b_hh)[0]
        return out
    return _forward(x, h0, w_ih, w_hh, b_ih, b_hh, keep=False)[0]
