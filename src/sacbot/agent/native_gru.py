"""The grouped GRU's time loops as two C functions: each step's hidden-side matmul (MKL's sgemm, the one torch
itself calls) and its gate arithmetic fused in one pass over the batch.

Why: in torch each step of the forward is eight ops and each step of the backward four, plus whole-sequence
passes to form the gate factors; on these 2-core VMs every op costs a dispatch and a trip through memory for
a (G, B, 3H) tensor. Here a step is one sgemm call and one loop that reads each gate value once. The
input-side projections and the weight gradients stay batched torch matmuls over all T steps
(`sacbot.agent.gru`).

Where no compiler or no exported sgemm is found (or SACBOT_NATIVE=0), `kernel()` is None and
`sacbot.agent.gru` keeps its torch loops; tests compare the two. float32 on the CPU only.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

from sacbot.agent.native_build import build_and_load, native_enabled

C_SOURCE = r"""
#include <math.h>
#include <string.h>

typedef void (*sgemm_t)(const char *, const char *, const int *, const int *, const int *, const float *,
                        const float *, const int *, const float *, const int *, const float *, float *,
                        const int *);

/* tanh(v) = 2 sigmoid(2 v) - 1: one vectorisable expf for every gate. */
static inline float sigm(float v) { return 1.0f / (1.0f + expf(-v)); }

/* G GRUs, T steps, batch B, hidden H; row-major arrays, gate order (r, z, n) as torch.nn.GRU:
   gi (G, T, B, 3H) = W_ih x (no bias);  b_ih (G, 3H);  h0 (G, B, H);  w_hh (G, 3H, H);  b_hh (G, 3H)
   ->  out (G, T, B, H). keep != 0: r, z, n and ghn = W_hn h + b_hn (each (G, T, B, H)) are written for
   the backward. gh_all (G, T, B, 3H) receives every step's W_hh h_{t-1} + b_hh; NULL: scratch (B, 3H)
   holds it. */
void gru_forward(sgemm_t sgemm, int G, int T, int B, int H, const float *gi, const float *b_ih,
                 const float *h0, const float *w_hh, const float *b_hh, float *out, int keep, float *r,
                 float *z, float *n, float *ghn, float *gh_all, float *scratch) {
    const int H3 = 3 * H;
    const float one = 1.0f, zero = 0.0f;
    for (int g = 0; g < G; g++) {
        const float *w = w_hh + (long)g * H3 * H, *bias = b_hh + (long)g * H3, *bi = b_ih + (long)g * H3;
        for (int t = 0; t < T; t++) {
            const long row = ((long)g * T + t) * B; /* first (g, t, b=0) row */
            const float *hp = t ? out + (row - B) * H : h0 + (long)g * B * H;
            float *gh = gh_all ? gh_all + row * H3 : scratch;
            sgemm("T", "N", &H3, &B, &H, &one, w, &H, hp, &H, &zero, gh, &H3);
            for (int b = 0; b < B; b++) {
                float *ghb = gh + (long)b * H3;
                const float *gib = gi + (row + b) * H3, *hpb = hp + (long)b * H;
                const long k0 = (row + b) * H;
                float *ob = out + k0;
                for (int j = 0; j < H3; j++) ghb[j] += bias[j];
                if (keep) {
                    for (int j = 0; j < H; j++) {
                        float rj = sigm(gib[j] + bi[j] + ghb[j]);
                        float zj = sigm(gib[H + j] + bi[H + j] + ghb[H + j]);
                        float pn = gib[2 * H + j] + bi[2 * H + j] + rj * ghb[2 * H + j];
                        float nj = 2.0f * sigm(2.0f * pn) - 1.0f;
                        ob[j] = nj + zj * (hpb[j] - nj);
                        r[k0 + j] = rj;
                        z[k0 + j] = zj;
                        n[k0 + j] = nj;
                        ghn[k0 + j] = ghb[2 * H + j];
                    }
                } else {
                    for (int j = 0; j < H; j++) {
                        float rj = sigm(gib[j] + bi[j] + ghb[j]);
                        float zj = sigm(gib[H + j] + bi[H + j] + ghb[H + j]);
                        float pn = gib[2 * H + j] + bi[2 * H + j] + rj * ghb[2 * H + j];
                        float nj = 2.0f * sigm(2.0f * pn) - 1.0f;
                        ob[j] = nj + zj * (hpb[j] - nj);
                    }
                }
            }
        }
    }
}

/* The backward of gru_forward (keep != 0) for the loss gradient grad_out (G, T, B, H):
   dgh (G, T, B, 3H) the gradients of the hidden-side pre-activations W_hh h_{t-1} + b_hh, dgi (G, T, B, 3H)
   those of the input side, dh0 (G, B, H) or NULL; dh is scratch (B, H). */
void gru_backward(sgemm_t sgemm, int G, int T, int B, int H, const float *grad_out, const float *h0,
                  const float *out, const float *r, const float *z, const float *n, const float *ghn,
                  const float *w_hh, float *dgh, float *dgi, float *dh0, float *dh) {
    const int H3 = 3 * H;
    const float one = 1.0f;
    for (int g = 0; g < G; g++) {
        const float *w = w_hh + (long)g * H3 * H;
        memset(dh, 0, sizeof(float) * (size_t)B * H);
        for (int t = T - 1; t >= 0; t--) {
            const long row = ((long)g * T + t) * B;
            const float *hp = t ? out + (row - B) * H : h0 + (long)g * B * H;
            for (int b = 0; b < B; b++) {
                const long k0 = (row + b) * H;
                const float *go = grad_out + k0;
                const float *restrict rb = r + k0, *restrict zb = z + k0, *restrict nb = n + k0;
                const float *restrict gb = ghn + k0, *restrict hpb = hp + (long)b * H;
                float *restrict dhb = dh + (long)b * H, *restrict dghb = dgh + (row + b) * H3;
                float *restrict dgib = dgi + (row + b) * H3;
                for (int j = 0; j < H; j++) {
                    float d = dhb[j] + go[j];
                    float rj = rb[j], zj = zb[j], nj = nb[j];
                    float dpn = d * (1.0f - zj) * (1.0f - nj * nj);
                    float dpz = d * (hpb[j] - nj) * zj * (1.0f - zj);
                    float dpr = dpn * gb[j] * rj * (1.0f - rj);
                    dghb[j] = dpr;
                    dghb[H + j] = dpz;
                    dghb[2 * H + j] = dpn * rj;
                    dgib[j] = dpr;
                    dgib[H + j] = dpz;
                    dgib[2 * H + j] = dpn;
                    dhb[j] = d * zj;
                }
            }
            if (t > 0 || dh0)
                sgemm("N", "N", &H, &B, &H3, &one, w, &H, dgh + row * H3, &H3, &one, dh, &H);
        }
        if (dh0) memcpy(dh0 + (long)g * B * H, dh, sizeof(float) * (size_t)B * H);
    }
}
"""

_P = ctypes.c_void_p
_I = ctypes.c_int

_lock = threading.Lock()
_tried = False
_kernel: tuple[ctypes.CDLL, int] | None = None


def _sgemm_address() -> int | None:
    """The address of the BLAS sgemm_ that torch's CPU library exports (MKL in the official wheels)."""
    import torch

    path = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        lib = ctypes.CDLL(str(path))  # already loaded by `import torch`: this only takes a handle
        address = ctypes.cast(lib.sgemm_, ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    return address


def kernel() -> tuple[ctypes.CDLL, int] | None:
    """(the compiled kernel, the sgemm address), or None where either is missing. Thread-safe; built once."""
    global _tried, _kernel
    with _lock:
        if not _tried:
            _tried = True
            if native_enabled():
                address = _sgemm_address()
                symbols = ["gru_forward", "gru_backward"]
                lib = build_and_load("gru_seq", C_SOURCE, symbols) if address else None
                if lib is not None and address:
                    lib.gru_forward.argtypes = [_P, _I, _I, _I, _I, _P, _P, _P, _P, _P, _P, _I, *([_P] * 6)]
                    lib.gru_forward.restype = None
                    lib.gru_backward.argtypes = [_P, _I, _I, _I, _I, *([_P] * 12)]
                    lib.gru_backward.restype = None
                    _kernel = (lib, address)
        return _kernel
