/* The grouped GRU's time loops (sacbot.agent.accel.native_gru, which loads this file and calls it through
   ctypes): gru_forward and gru_backward over whole windows, gru_cell and gru_cell_backward_rows for one step.
   Compiled when sacbot is installed (hatch_build.py), else on first use (sacbot.agent.native_build); the
   cached build is named by a digest of this text. */

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
