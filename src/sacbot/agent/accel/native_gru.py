"""The grouped GRU's time loops as two C functions (the `native` speed-up): each step's hidden-side matmul
(MKL's sgemm, the one torch itself calls) and its gate arithmetic fused in one pass over the batch.

Why: in torch each step of the forward is eight ops and each step of the backward four, plus whole-sequence
passes to form the gate factors; on these 2-core VMs every op costs a dispatch and a trip through memory for
a (G, B, 3H) tensor. Here a step is one sgemm call and one loop that reads each gate value once. The
input-side projections and the weight gradients stay batched torch matmuls over all T steps
(`_parameter_grads`).

The C source is compiled when sacbot is installed (`hatch_build.py`), else on first use
(`sacbot.agent.native_build`). Where neither finds a compiler or an exported sgemm (or SACBOT_NATIVE=0, or
SACBOT_ACCEL leaves `native` out), `kernel_for` is None and torch's own GRU runs instead
(`sacbot.agent.accel.plain`); tests compare the two. float32 on the CPU only.
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

# The cached library's name; hatch_build.py reads it and C_SOURCE to build the kernel at install time.
KERNEL_NAME = "gru_seq"

C_SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef void (*sgemm_t)(const char *, const char *, const int *, const int *, const int *, const float *,
                        const float *, const int *, const float *, const int *, const float *, float *,
                        const int *);

/* exp(v) inlined, so the gate loops vectorise without a call per 8 values (glibc's vector expf costs about
   a third more here): exp(v) = 2^k 2^f, k = round(v log2 e), |f| <= 1/2, 2^f by its degree-6 Taylor
   polynomial (relative error ~1.2e-7, float32's own rounding), 2^k put into the exponent bits. v is clamped
   to where both factors are normal floats. The polynomial is evaluated in Estrin's form (three levels of
   independent products instead of Horner's chain of six): the gate loops wait on this latency. */
static inline float exp_inline(float v) {
    const float t = fminf(fmaxf(v, -87.0f), 88.0f) * 1.44269504088896341f;
    const float k = floorf(t + 0.5f), f = t - k;
    const float f2 = f * f, f4 = f2 * f2;
    const float c01 = 1.0f + 6.9314718055994531e-1f * f;
    const float c23 = 2.4022650695910071e-1f + 5.5504108664821580e-2f * f;
    const float c45 = 9.6181291076284772e-3f + 1.3333558146428443e-3f * f;
    const float c6 = 1.5403530393381606e-4f;
    float p = (c01 + c23 * f2) + (c45 + c6 * f2) * f4;
    int32_t bits;
    memcpy(&bits, &p, sizeof bits);
    bits += (int32_t)k << 23;
    memcpy(&p, &bits, sizeof p);
    return p;
}

/* tanh(v) = 2 sigmoid(2 v) - 1: one exp for every gate. */
static inline float sigm(float v) { return 1.0f / (1.0f + exp_inline(-v)); }

/* One row (one batch entry of one step) per call; restrict parameters (the rows never overlap) and noinline
   keep each loop vectorised: inlined into the step loop, gcc gave up on the row loops. One loop per gate:
   each body is short enough that several iterations' exp chains overlap (one loop for all three gates ran
   about a fifth slower, its n gate waiting on r). */
__attribute__((noinline)) static void row_forward(
    int H, const float *restrict gi, const float *restrict bi, float *restrict gh, const float *restrict bh,
    const float *restrict hp, float *restrict out, float *restrict r, float *restrict z, float *restrict n,
    float *restrict ghn) {
    for (int j = 0; j < H; j++) {
        const float ghr = gh[j] + bh[j];
        r[j] = sigm(gi[j] + bi[j] + ghr);
        gh[j] = ghr; /* the row ends up holding W_hh h + b_hh */
    }
    for (int j = 0; j < H; j++) {
        const float ghz = gh[H + j] + bh[H + j];
        z[j] = sigm(gi[H + j] + bi[H + j] + ghz);
        gh[H + j] = ghz;
    }
    for (int j = 0; j < H; j++) {
        const float ghnj = gh[2 * H + j] + bh[2 * H + j];
        const float pn = gi[2 * H + j] + bi[2 * H + j] + r[j] * ghnj;
        const float nj = 2.0f * sigm(2.0f * pn) - 1.0f;
        out[j] = nj + z[j] * (hp[j] - nj);
        n[j] = nj;
        ghn[j] = ghnj;
        gh[2 * H + j] = ghnj;
    }
}

static int all_zero(const float *x, long count) {
    for (long i = 0; i < count; i++)
        if (x[i] != 0.0f) return 0;
    return 1;
}

/* acc += row (H3 values): the bias gradients, summed while the rows are in cache. */
__attribute__((noinline)) static void row_accumulate(int H3, const float *restrict row, float *restrict acc) {
    for (int j = 0; j < H3; j++) acc[j] += row[j];
}

__attribute__((noinline)) static void row_backward(
    int H, const float *restrict go, const float *restrict r, const float *restrict z,
    const float *restrict n, const float *restrict ghn, const float *restrict hp, float *restrict dh,
    float *restrict dgh, float *restrict dgi) {
    for (int j = 0; j < H; j++) {
        float d = dh[j] + go[j];
        float rj = r[j], zj = z[j], nj = n[j];
        float dpn = d * (1.0f - zj) * (1.0f - nj * nj);
        float dpz = d * (hp[j] - nj) * zj * (1.0f - zj);
        float dpr = dpn * ghn[j] * rj * (1.0f - rj);
        dgh[j] = dpr;
        dgh[H + j] = dpz;
        dgh[2 * H + j] = dpn * rj;
        dgi[j] = dpr;
        dgi[H + j] = dpz;
        dgi[2 * H + j] = dpn;
        dh[j] = d * zj;
    }
}

/* G GRUs, T steps, batch B, hidden H; row-major arrays, gate order (r, z, n) as torch.nn.GRU:
   gi (G, T, B, 3H) = W_ih x (no bias);  b_ih (G, 3H);  h0 (G, B, H), its groups h0_stride floats apart;
   w_hh (G, 3H, H);  b_hh (G, 3H)
   ->  hs (G, T + 1, B, H): step t's output goes to hs[g, t + 1] (hs[g, 0] is the caller's: with h0 copied
   there, hs[:, :-1] is every step's previous state, one array for the W_hh gradient). keep != 0: r, z, n and
   ghn = W_hn h + b_hn (each (G, T, B, H)) are written for the backward (keep == 0: they go to rows4, 4H
   scratch). gh_all (G, T, B, 3H) receives every step's W_hh h_{t-1} + b_hh; NULL: scratch (B, 3H) holds
   it. */
void gru_forward(sgemm_t sgemm, int G, int T, int B, int H, const float *gi, const float *b_ih,
                 const float *h0, long h0_stride, const float *w_hh, const float *b_hh, float *hs, int keep,
                 float *r, float *z, float *n, float *ghn, float *gh_all, float *scratch, float *rows4) {
    const int H3 = 3 * H;
    const float one = 1.0f, zero = 0.0f;
    for (int g = 0; g < G; g++) {
        const float *w = w_hh + (long)g * H3 * H, *bias = b_hh + (long)g * H3, *bi = b_ih + (long)g * H3;
        for (int t = 0; t < T; t++) {
            const long row = ((long)g * T + t) * B; /* first (g, t, b=0) row of the (G, T, B, .) arrays */
            const float *hp = t ? hs + ((long)g * (T + 1) + t) * B * H : h0 + g * h0_stride;
            float *ht = hs + ((long)g * (T + 1) + t + 1) * B * H;
            float *gh = gh_all ? gh_all + row * H3 : scratch;
            if (t == 0 && all_zero(hp, (long)B * H)) /* the critics' burn-in starts from zeros: no product */
                memset(gh, 0, sizeof(float) * (size_t)B * H3);
            else
                sgemm("T", "N", &H3, &B, &H, &one, w, &H, hp, &H, &zero, gh, &H3);
            for (int b = 0; b < B; b++) {
                const long k0 = (row + b) * H;
                float *ghb = gh + (long)b * H3;
                if (keep)
                    row_forward(H, gi + (row + b) * H3, bi, ghb, bias, hp + (long)b * H, ht + (long)b * H,
                                r + k0, z + k0, n + k0, ghn + k0);
                else
                    row_forward(H, gi + (row + b) * H3, bi, ghb, bias, hp + (long)b * H, ht + (long)b * H,
                                rows4, rows4 + H, rows4 + 2 * H, rows4 + 3 * H);
            }
        }
    }
}

static const float NO_BIAS[3 * 4096];

/* One GRU step of G groups of N rows from given pre-activations (the actor loss's critic step): gi (G, N, 3H)
   = W_ih x without b_ih (G, 3H), gh (G, N, 3H) = W_hh h + b_hh, h (G, N, H) -> out (G, N, H); r, z, n
   (G, N, H) are kept for gru_cell_backward_rows. */
void gru_cell(int G, int N, int H, const float *gi, const float *b_ih, const float *gh, const float *h,
              float *out, float *r, float *z, float *n) {
    float ghrow[3 * 4096], ghn[4096]; /* scratch rows: the cell's backward reads gh itself */
    for (int g = 0; g < G; g++)
        for (int i = 0; i < N; i++) {
            const long row = (long)g * N + i;
            memcpy(ghrow, gh + row * 3 * H, sizeof(float) * 3 * (size_t)H);
            row_forward(H, gi + row * 3 * H, b_ih + (long)g * 3 * H, ghrow, NO_BIAS, h + row * H,
                        out + row * H, r + row * H, z + row * H, n + row * H, ghn);
        }
}

/* gru_cell's gradient to gi for the rows `rows` (N of them, int64) of one group's gh (., 3H), h, r, z, n
   (., H), given dout (N, H) for those rows -> dgi (N, 3H); gh and h get none (they are data). */
void gru_cell_backward_rows(int N, int H, const int64_t *rows, const float *dout, const float *gh,
                            const float *h, const float *r, const float *z, const float *n, float *dgi) {
    float dh[4096], dgh[3 * 4096];
    for (long i = 0; i < N; i++) {
        const int64_t row = rows[i];
        for (int j = 0; j < H; j++) dh[j] = 0.0f;
        row_backward(H, dout + i * H, r + row * H, z + row * H, n + row * H, gh + row * 3 * H + 2 * H,
                     h + row * H, dh, dgh, dgi + i * 3 * H);
    }
}

/* The backward of gru_forward (keep != 0, hs as it filled it, h0 in hs[:, 0]) for the loss gradient grad_out
   (G, T, B, H):
   dgh (G, T, B, 3H) the gradients of the hidden-side pre-activations W_hh h_{t-1} + b_hh, dgi (G, T, B, 3H)
   those of the input side, dh0 (G, B, H) or NULL; db_ih, db_hh (G, 3H) or NULL receive the bias gradients
   (the sums of dgi and dgh over steps and batch); dh is scratch (B, H). Only steps t < T_run are run and
   written: the caller found grad_out zero from T_run on, so those steps' gradients are zero. */
void gru_backward(sgemm_t sgemm, int G, int T, int T_run, int B, int H, const float *grad_out,
                  const float *hs, const float *r, const float *z, const float *n, const float *ghn,
                  const float *w_hh, float *dgh, float *dgi, float *dh0, float *db_ih, float *db_hh,
                  float *dh) {
    const int H3 = 3 * H;
    const float one = 1.0f;
    for (int g = 0; g < G; g++) {
        const float *w = w_hh + (long)g * H3 * H;
        float *bi = db_ih ? db_ih + (long)g * H3 : NULL, *bh = db_hh ? db_hh + (long)g * H3 : NULL;
        if (bi) memset(bi, 0, sizeof(float) * (size_t)H3);
        if (bh) memset(bh, 0, sizeof(float) * (size_t)H3);
        memset(dh, 0, sizeof(float) * (size_t)B * H);
        for (int t = T_run - 1; t >= 0; t--) {
            const long row = ((long)g * T + t) * B;
            const float *hp = hs + ((long)g * (T + 1) + t) * B * H;
            for (int b = 0; b < B; b++) {
                const long k0 = (row + b) * H;
                float *dghb = dgh + (row + b) * H3, *dgib = dgi + (row + b) * H3;
                row_backward(H, grad_out + k0, r + k0, z + k0, n + k0, ghn + k0, hp + (long)b * H,
                             dh + (long)b * H, dghb, dgib);
                if (bh) row_accumulate(H3, dghb, bh);
                if (bi) row_accumulate(H3, dgib, bi);
            }
            if (t > 0 || dh0)
                sgemm("N", "N", &H, &B, &H3, &one, w, &H, dgh + row * H3, &H3, &one, dh, &H);
        }
        if (dh0) memcpy(dh0 + (long)g * B * H, dh, sizeof(float) * (size_t)B * H);
    }
}
"""

MAX_HIDDEN = 4096  # the cell's scratch rows above
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
