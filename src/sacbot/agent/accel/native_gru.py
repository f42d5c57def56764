"""The grouped GRU's time loops as two C functions (the `native` speed-up): each step's hidden-side matmul
(MKL's sgemm, the one torch itself calls) and its gate arithmetic fused in one pass over the batch.

Why: in torch each step of the forward is eight ops and each step of the backward four, plus whole-sequence
passes to form the gate factors; on these 2-core VMs every op costs a dispatch and a trip through memory for
a (G, B, 3H) tensor. Here a step is one sgemm call and one loop that reads each gate value once. The
input-side projections and the weight gradients stay batched torch matmuls over all T steps
(`_parameter_grads`).

The C source, `gru_seq.c` beside this module (package data), is compiled when sacbot is installed
(`hatch_build.py`), else on first use (`sacbot.agent.native_build`). Where neither finds a compiler or an
exported sgemm (or SACBOT_NATIVE=0, or SACBOT_ACCEL leaves `native` out), `kernel_for` is None and torch's own
GRU runs instead (`sacbot.agent.accel.plain`); tests compare the two. float32 on the CPU only.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

from sacbot.agent.accel import parts
from sacbot.agent.native_build import BuiltOnce, build_and_load

# The cached library's name; its C source is the package file <KERNEL_NAME>.c beside this module, where
# hatch_build.py finds it (by this name) to build the kernel at install time.
KERNEL_NAME = "gru_seq"

C_SOURCE = (Path(__file__).parent / f"{KERNEL_NAME}.c").read_text()

MAX_HIDDEN = 4096  # the cell's scratch rows in gru_seq.c
_P = ctypes.c_void_p
_I = ctypes.c_int


def _sgemm_address() -> int | None:
    """The address of the BLAS sgemm_ that torch's CPU library exports (MKL in the official wheels)."""
    path = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        lib = ctypes.CDLL(str(path))  # already loaded by `import torch`: this only takes a handle
        address = ctypes.cast(lib.sgemm_, ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    return address


def _build() -> tuple[ctypes.CDLL, int] | None:
    address = _sgemm_address()
    if not address:
        return None
    symbols = ["gru_forward", "gru_backward", "gru_cell", "gru_cell_backward_rows"]
    lib = build_and_load(KERNEL_NAME, C_SOURCE, symbols)
    if lib is None:
        return None
    lib.gru_forward.argtypes = [_P, _I, _I, _I, _I, _P, _P, _P, ctypes.c_long, _P, _P, _P, _I, *([_P] * 7)]
    lib.gru_backward.argtypes = [_P, _I, _I, _I, _I, _I, *([_P] * 13)]
    lib.gru_cell.argtypes = [_I, _I, _I, *([_P] * 8)]
    lib.gru_cell_backward_rows.argtypes = [_I, _I, *([_P] * 8)]
    for fn in (lib.gru_forward, lib.gru_backward, lib.gru_cell, lib.gru_cell_backward_rows):
        fn.restype = None
    return lib, address


# (the compiled kernel, the sgemm address), or None where either is missing. Thread-safe; built once.
kernel = BuiltOnce(_build)


def _parameter_grads(
    needs: tuple[bool, ...],
    dgi: Tensor,
    dgh: Tensor,
    x: Tensor,
    h_prev: Tensor,
    w_ih: Tensor,
    bias_grads: tuple[Tensor | None, Tensor | None] | None = None,
) -> tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None, Tensor | None]:
    """The backward's batched tail: from the pre-activation gradients dgi, dgh (G, T, B, 3H) the gradients
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


def kernel_for(*tensors: Tensor) -> tuple[Any, int] | None:
    """The C kernel when `native` is on, it is built and every tensor is float32 on the CPU, else None."""
    if not parts.enabled("native"):
        return None
    if not all(t.dtype == torch.float32 and t.device.type == "cpu" for t in tensors):
        return None
    return kernel()


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
    """The GRU over a window with both time loops in C; outputs (out, gates or an empty tensor)."""

    @staticmethod
    def forward(
        ctx: Any, x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor, gates: bool
    ) -> tuple[Tensor, Tensor]:
        k = kernel()
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
        k = kernel()
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
    k: tuple[Any, int], x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
) -> tuple[Tensor, Tensor]:
    """Outputs (G, T, B, H) of G GRUs over x (G, T, B, I) from h0 (G, B, H), differentiable in every input,
    and (detached) each step's W_hh h_{t-1} + b_hh as (G, T, B, 3H); k: `kernel_for`'s kernel."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in (x, h0, w_ih, w_hh, b_ih, b_hh)):
        out, gh = _NativeGRUSequence.apply(x, h0, w_ih, w_hh, b_ih, b_hh, True)
        return out, gh
    hs, gates, _ = _native_run(k, x, h0, w_ih, w_hh, b_ih, b_hh, keep=False, with_gates=True)
    assert gates is not None
    return hs[:, 1:], gates


def gru_sequence(
    k: tuple[Any, int], x: Tensor, h0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
) -> Tensor:
    """`gru_sequence_with_gates`'s outputs alone (no gates kept)."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in (x, h0, w_ih, w_hh, b_ih, b_hh)):
        out: Tensor = _NativeGRUSequence.apply(x, h0, w_ih, w_hh, b_ih, b_hh, False)[0]
        return out
    return _native_run(k, x, h0, w_ih, w_hh, b_ih, b_hh, keep=False, with_gates=False)[0][:, 1:]
