/*
 * winograd_exact.c -- the plain 3x3 weights of a Winograd convolution, exactly, from its transformed
 * weights U = G g G^T and one byte per weight (issue #10: the plain copy beside U made a Winograd layer
 * hold 5x (F43) or 2.8x (F23) its weights; now 4.25x / 2.03x).
 *
 * U is rounded to float, so no linear inverse gives g back bit for bit; the least-squares one
 * (P = (G^T G)^-1 G^T, g' = P U P^T in double, rounded to float) lands within 127 units in the last
 * place (as the float bit patterns, read as integers) of g for 99.9 % of real weights (ResNet-18,
 * U-Net: 76-78 % exactly).  So prepare() keeps, per weight, the difference bits(g) - bits(g') as an
 * int8, and the rare weights farther off (or g' NaN, signs differing, -0) as exceptions: index and
 * value.  Reading back is exact: bits(g) = bits(g') + d.  g' comes from the same code on the same U
 * in prepare() and later, so it is the same bits.  The kernel's unpack() (plan writer) and its
 * direct fallback for tiles reading NaN / Inf use it; the engine then frees the plain copy.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "kernels/x86/winograd.h"

#define ESC (-128)

/* P = (G^T G)^-1 G^T for G a x 3 (by the adjugate; G^T G is symmetric positive definite). */
static void pinv(const double (*G)[3], int64_t a, double P[3][6])
{
    double M[3][3] = {{0}}, I[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int64_t r = 0; r < a; r++)
                M[i][j] += G[r][i] * G[r][j];
    I[0][0] = M[1][1] * M[2][2] - M[1][2] * M[2][1];
    I[0][1] = M[0][2] * M[2][1] - M[0][1] * M[2][2];
    I[0][2] = M[0][1] * M[1][2] - M[0][2] * M[1][1];
    I[1][0] = M[1][2] * M[2][0] - M[1][0] * M[2][2];
    I[1][1] = M[0][0] * M[2][2] - M[0][2] * M[2][0];
    I[1][2] = M[0][2] * M[1][0] - M[0][0] * M[1][2];
    I[2][0] = M[1][0] * M[2][1] - M[1][1] * M[2][0];
    I[2][1] = M[0][1] * M[2][0] - M[0][0] * M[2][1];
    I[2][2] = M[0][0] * M[1][1] - M[0][1] * M[1][0];
    double det = M[0][0] * I[0][0] + M[0][1] * I[1][0] + M[0][2] * I[2][0];
    for (int i = 0; i < 3; i++)
        for (int64_t r = 0; r < a; r++) {
            double s = 0.0;
            for (int j = 0; j < 3; j++)
                s += I[i][j] * G[r][j];
            P[i][r] = s / det;
        }
}

/* g' (row-major 3x3) from a kernel's a*a values of U */
static void approx_from(const trtl_wg_exact *x, const double *U, float out[9])
{
    const int64_t a = x->a;
    double t[3][6];
    for (int i = 0; i < 3; i++)
        for (int64_t q = 0; q < a; q++) {
            double s = 0.0;
            for (int64_t p = 0; p < a; p++)
                s += x->P[i][p] * U[p * a + q];
            t[i][q] = s;
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int64_t q = 0; q < a; q++)
                s += t[i][q] * x->P[j][q];
            out[i * 3 + j] = (float)s;
        }
}

/* g' of output channel k, input channel c, reading its a*a values from U ([xi][kb][c][mr]) */
static void approx9(const trtl_wg_exact *x, const float *u, int64_t k, int64_t c, float out[9])
{
    const int64_t xs = x->nkb * x->C * x->mr;
    const float *b = u + ((k / x->mr) * x->C + c) * x->mr + k % x->mr;
    double U[36];
    for (int64_t i = 0; i < x->a * x->a; i++)
        U[i] = (double)b[i * xs];
    approx_from(x, U, out);
}

static uint32_t bits(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* fn(ctx, at, g') for every kernel (at: the index of its first weight), in U's order.  U's a*a rows lie nkb*C*mr
 * floats apart (1 MiB for 512 x 512 channels: the same cache sets), so the values of a block of channels are
 * gathered row by row first (one kernel at a time from U made a ResNet-18 plan load 2.4x slower); approx_from does
 * what approx9 does.  -1: out of memory. */
static int each_approx(const trtl_wg_exact *x, const float *u, void (*fn)(void *ctx, int64_t at, const float r[9]),
                       void *ctx)
{
    const int64_t cb = 128, mr = x->mr, nxi = x->a * x->a, xs = x->nkb * x->C * mr;
    float *blk = malloc(sizeof(float) * (size_t)(nxi * cb * mr));
    if (!blk)
        return -1;
    for (int64_t kb = 0; kb < x->nkb; kb++)
        for (int64_t c0 = 0; c0 < x->C; c0 += cb) {
            const int64_t cn = x->C - c0 < cb ? x->C - c0 : cb;
            for (int64_t xi = 0; xi < nxi; xi++)
                memcpy(blk + xi * cb * mr, u + xi * xs + (kb * x->C + c0) * mr, sizeof(float) * (size_t)(cn * mr));
            for (int64_t c = c0; c < c0 + cn; c++)
                for (int64_t k = kb * mr; k < (kb + 1) * mr && k < x->K; k++) {
                    float r[9];
                    double U[36];
                    for (int64_t xi = 0; xi < nxi; xi++)
                        U[xi] = (double)blk[xi * cb * mr + (c - c0) * mr + k % mr];
                    approx_from(x, U, r);
                    fn(ctx, (k * x->C + c) * 9, r);
                }
        }
    free(blk);
    return 0;
}

struct diff_ctx {
    trtl_wg_exact *x;
    const float *g;
    int64_t esc;
};

static void record_diff(void *ctx, int64_t at, const float r[9])
{
    struct diff_ctx *dc = ctx;
    for (int i = 0; i < 9; i++) {
        int64_t d = (int64_t)bits(dc->g[at + i]) - (int64_t)bits(r[i]);
        int ok = d > ESC && d <= 127;
        dc->x->d[at + i] = ok ? (int8_t)d : (int8_t)ESC;
        dc->esc += !ok;
    }
}

trtl_status trtl_wg_exact_init(trtl_wg_exact *x, const double (*G)[3], int64_t m, int64_t K, int64_t C, int64_t mr,
                               int64_t nkb, const float *u, const float *g, const char *layer)
{
    memset(x, 0, sizeof *x);
    x->a = m + 2;
    x->K = K;
    x->C = C;
    x->mr = mr;
    x->nkb = nkb;
    pinv(G, x->a, x->P);
    const size_t n = (size_t)(K * C * 9);
    x->d = malloc(n ? n : 1);
    struct diff_ctx dc = {x, g, 0};
    if (!x->d || each_approx(x, u, record_diff, &dc) < 0) {
        trtl_wg_exact_free(x);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory for Winograd weights", layer);
    }
    if (dc.esc) {
        x->esc_at = malloc(sizeof *x->esc_at * (size_t)dc.esc);
        x->esc_val = malloc(sizeof *x->esc_val * (size_t)dc.esc);
        if (!x->esc_at || !x->esc_val) {
            trtl_wg_exact_free(x);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "layer '%s': out of memory for Winograd weights", layer);
        }
        for (int64_t i = 0; i < K * C * 9; i++)
            if (x->d[i] == ESC) {
                x->esc_at[x->n_esc] = i;
                x->esc_val[x->n_esc++] = g[i];
            }
    }
    return TRTL_OK;
}

void trtl_wg_exact_free(trtl_wg_exact *x)
{
    free(x->d);
    free(x->esc_at);
    free(x->esc_val);
    memset(x, 0, sizeof *x);
}

size_t trtl_wg_exact_bytes(const trtl_wg_exact *x)
{
    return (size_t)(x->K * x->C * 9) + (size_t)x->n_esc * (sizeof *x->esc_at + sizeof *x->esc_val);
}

/* out: the approximation of the kernel whose first weight is `at`, corrected to the plain weights */
static void correct(const trtl_wg_exact *x, int64_t at, float out[9])
{
    int64_t lo = 0, hi = x->n_esc; /* the first exception at or after `at` */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (x->esc_at[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int i = 0; i < 9; i++) {
        if (x->d[at + i] != ESC) {
            uint32_t b = bits(out[i]) + (uint32_t)(int32_t)x->d[at + i];
            memcpy(&out[i], &b, sizeof b);
        } else {
            out[i] = x->esc_val[lo++];
        }
    }
}

void trtl_wg_exact_get(const trtl_wg_exact *x, const float *u, int64_t k, int64_t c, float out[9])
{
    approx9(x, u, k, c, out);
    correct(x, (k * x->C + c) * 9, out);
}

struct unpack_ctx {
    const trtl_wg_exact *x;
    unsigned char *dst;
};

static void unpack_one(void *ctx, int64_t at, const float r[9])
{
    const struct unpack_ctx *uc = ctx;
    float g[9];
    memcpy(g, r, sizeof g);
    correct(uc->x, at, g);
    memcpy(uc->dst + (size_t)at * sizeof(float), g, sizeof g);
}

void trtl_wg_exact_unpack(const trtl_wg_exact *x, const float *u, void *dst)
{
    struct unpack_ctx uc = {x, dst};
    if (each_approx(x, u, unpack_one, &uc) == 0)
        return;
    for (int64_t k = 0; k < x->K; k++) /* no memory for the block: one kernel at a time */
        for (int64_t c = 0; c < x->C; c++) {
            float g[9];
            trtl_wg_exact_get(x, u, k, c, g);
            memcpy((unsigned char *)dst + (size_t)((k * x->C + c) * 9) * sizeof(float), g, sizeof g);
        }
}
