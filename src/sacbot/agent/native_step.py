"""The actor step as one C function, compiled on first use with the system C compiler and called with ctypes.

Why: at batch 1 the numpy step is ~20 small calls of about a microsecond each on these VMs, and its p99
is 2-3x its median; one call into a C loop does the same arithmetic (~100k multiply-adds over ~430 KB of
weights) in about 11 us. Where no compiler is found (or it fails) `load_kernel` returns None and `FastActor`
keeps the numpy path; both are tested against the torch actor.

Building and caching: `sacbot.agent.native_build` (at install time, by hatch_build.py, else on first use).
"""

from __future__ import annotations

import ctypes

from sacbot.agent.native_build import BuiltOnce, build_and_load

# The cached library's name; hatch_build.py reads it and C_SOURCE to build the kernel at install time.
KERNEL_NAME = "actor_step"
ACTIVATIONS = {"relu": 0, "tanh": 1, "elu": 2}

C_SOURCE = r"""
#include <math.h>
#include <string.h>

typedef struct {
    const float *w_in, *b_in, *w_ih, *b_ih, *w_hh, *b_hh, *w_head, *b_head, *w_out, *b_out;
    int s, e, h, f, a, act, memoryless;
    float log_std_min, log_std_max;
} actor_t;

static float activate(float x, int act) {
    if (act == 0) return x > 0.0f ? x : 0.0f;
    if (act == 1) return tanhf(x);
    return x > 0.0f ? x : expm1f(x);
}

static float dot(const float *restrict w, const float *restrict x, int n) {
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += w[k] * x[k];
    return acc;
}

/* state (s), hidden (h) -> action (a), new hidden (h); eps (a) or NULL for the deterministic tanh(mu). */
void actor_step(const actor_t *m, const float *state, const float *hidden, const float *eps,
                float *action, float *new_hidden) {
    float e[1024], gi[3072], gh[3072], y[1024], out[64];
    const int H = m->h;
    for (int i = 0; i < m->e; i++)
        e[i] = activate(m->b_in[i] + dot(m->w_in + (long)i * m->s, state, m->s), m->act);
    for (int i = 0; i < 3 * H; i++) gi[i] = m->b_ih[i] + dot(m->w_ih + (long)i * m->e, e, m->e);
    if (m->memoryless) {
        for (int i = 0; i < 3 * H; i++) gh[i] = m->b_hh[i];
    } else {
        for (int i = 0; i < 3 * H; i++) gh[i] = m->b_hh[i] + dot(m->w_hh + (long)i * H, hidden, H);
    }
    /* Separate loops over whole gate vectors, so the compiler can use vector expf/tanhf (libmvec). */
    float rz[2048], n[1024];
    for (int i = 0; i < 2 * H; i++) rz[i] = 1.0f / (1.0f + expf(-(gi[i] + gh[i])));
    for (int i = 0; i < H; i++) n[i] = tanhf(gi[2 * H + i] + rz[i] * gh[2 * H + i]);
    for (int i = 0; i < H; i++) {
        float h_old = m->memoryless ? 0.0f : hidden[i];
        new_hidden[i] = n[i] + rz[H + i] * (h_old - n[i]);
    }
    for (int i = 0; i < m->f; i++)
        y[i] = activate(m->b_head[i] + dot(m->w_head + (long)i * H, new_hidden, H), m->act);
    int rows = eps ? 2 * m->a : m->a;
    for (int i = 0; i < rows; i++) out[i] = m->b_out[i] + dot(m->w_out + (long)i * m->f, y, m->f);
    for (int i = 0; i < m->a; i++) {
        float u = out[i];
        if (eps) {
            float ls = out[m->a + i];
            ls = ls < m->log_std_min ? m->log_std_min : (ls > m->log_std_max ? m->log_std_max : ls);
            u += expf(ls) * eps[i];
        }
        action[i] = tanhf(u);
    }
}
"""

# The C buffers above bound the sizes it takes.
MAX_EMBED, MAX_HIDDEN, MAX_HEAD, MAX_ACTION = 1024, 1024, 1024, 32


class ActorStruct(ctypes.Structure):
    _fields_ = [
        *(
            (name, ctypes.c_void_p)
            for name in ("w_in", "b_in", "w_ih", "b_ih", "w_hh", "b_hh", "w_head", "b_head", "w_out", "b_out")
        ),
        *((name, ctypes.c_int) for name in ("s", "e", "h", "f", "a", "act", "memoryless")),
        ("log_std_min", ctypes.c_float),
        ("log_std_max", ctypes.c_float),
    ]


def _build_and_load() -> ctypes.CDLL | None:
    lib = build_and_load(KERNEL_NAME, C_SOURCE, ["actor_step"])
    if lib is not None:
        lib.actor_step.argtypes = [ctypes.c_void_p] * 6
        lib.actor_step.restype = None
    return lib


# The compiled kernel (once per machine and source), or None where it cannot be built. Thread-safe.
load_kernel = BuiltOnce(_build_and_load)
