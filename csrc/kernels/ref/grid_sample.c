/* Reference grid-sample kernel (ops/grid_sample.c), ONNX GridSample's definition step by step, per
 * output position and spatial dim i (size d, grid coordinate g = grid[..., k-1-i]):
 *   x = ((g + 1) * d - 1) / 2, or (g + 1) / 2 * (d - 1) with align_corners
 *   NEAREST: x rounded half to even
 *   outside [lo, hi] (-0.5 .. d - 0.5, or 0 .. d - 1 with align_corners):
 *       CLAMP: x clamped to [0, d - 1]; REFLECT: x reflected at lo / hi until inside
 *   taps: NEAREST 1 (x), LINEAR 2 (floor(x) + 0, 1), CUBIC 4 (floor(x) - 1 .. + 2, Keys a = -0.75)
 *   each tap index: FILL: weight 0 outside [0, d); CLAMP: clamped; REFLECT: reflected, truncated, clamped
 *   y = sum over tap combinations of the product of per-dim weights times the input there.
 * Computed in double.  The per-position taps are trtl_grid_taps() (ref/grid_taps.h), shared with
 * grid_sample.tables. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/grid_taps.h"

static double reflect(double x, double lo, double hi)
{
    double rng = hi - lo;
    if ((x >= lo && x <= hi) || !(rng > 0))
        return x < lo ? lo : x > hi ? hi : x;
    int below = x < lo;
    double dx = below ? lo - x : x - hi, n = floor(dx / rng), r = dx - n * rng;
    int even = fmod(n, 2.0) == 0;
    if (below)
        return even ? lo + r : hi - r;
    return even ? hi - r : lo + r;
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

static void cubic_w(double t, double *w)
{
    const double A = -0.75;
    double u;
    u = t + 1;
    w[0] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
    u = t;
    w[1] = ((A + 2) * u - (A + 3)) * u * u + 1;
    u = 1 - t;
    w[2] = ((A + 2) * u - (A + 3)) * u * u + 1;
    u = 2 - t;
    w[3] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
}

void trtl_grid_geom_init(trtl_grid_geom *g, const trtl_grid_sample_params *q, const trtl_dims *X)
{
    g->k = X->nb_dims - 2;
    g->mode = q->interpolation_mode;
    g->pad = q->sample_mode;
    g->align_corners = q->align_corners;
    g->ntap = g->mode == TRTL_RESIZE_NEAREST ? 1 : g->mode == TRTL_RESIZE_LINEAR ? 2 : 4;
    g->ncomb = 1;
    for (int32_t i = 0; i < g->k; i++)
        g->ncomb *= g->ntap;
    for (int32_t i = g->k - 1, s = 1; i >= 0; i--) {
        g->d[i] = (double)X->d[2 + i];
        g->st[i] = s;
        s *= (int32_t)X->d[2 + i];
    }
}

void trtl_grid_taps(const trtl_grid_geom *g, const float *gp, int64_t *off_out, double *w_out, uint8_t *valid_out)
{
    const int32_t k = g->k, mode = g->mode, pad = g->pad, ntap = g->ntap;
    int64_t idx[3][4];
    double w[3][4];
    int ok[3][4];
    for (int32_t i = 0; i < k; i++) {
        double d = g->d[i], gv = gp[k - 1 - i], xi, lo, hi;
        if (g->align_corners) {
            xi = (gv + 1) / 2 * (d - 1);
            lo = 0;
            hi = d - 1;
        } else {
            xi = ((gv + 1) * d - 1) / 2;
            lo = -0.5;
            hi = d - 0.5;
        }
        if (mode == TRTL_RESIZE_NEAREST)
            xi = nearbyint(xi);
        if (pad == TRTL_SLICE_CLAMP && (xi < lo || xi > hi))
            xi = clampd(xi, 0, d - 1);
        else if (pad == TRTL_SLICE_REFLECT)
            xi = reflect(xi, lo, hi);
        double x0 = mode == TRTL_RESIZE_NEAREST ? xi : floor(xi), t = xi - x0;
        if (mode == TRTL_RESIZE_LINEAR) {
            w[i][0] = 1 - t;
            w[i][1] = t;
        } else if (mode == TRTL_RESIZE_CUBIC) {
            cubic_w(t, w[i]);
        } else {
            w[i][0] = 1;
        }
        for (int j = 0; j < ntap; j++) {
            double ti = x0 + (mode == TRTL_RESIZE_CUBIC ? j - 1 : j);
            ok[i][j] = 1;
            if (!(ti == ti)) { /* a NaN grid coordinate: NaN out */
                w[i][j] = NAN;
                ti = 0;
            }
            if (pad == TRTL_SLICE_FILL) {
                ok[i][j] = ti >= 0 && ti <= d - 1;
                ti = clampd(ti, 0, d - 1);
            } else if (pad == TRTL_SLICE_CLAMP) {
                ti = clampd(ti, 0, d - 1);
            } else {
                double r = reflect(ti, lo, hi);
                ti = clampd(r < 0 ? -floor(-r) : floor(r), 0, d - 1);
            }
            idx[i][j] = (int64_t)ti;
        }
    }
    for (int64_t cb = 0; cb < g->ncomb; cb++) {
        int64_t rem = cb, off = 0;
        double wt = 1;
        int valid = 1;
        for (int32_t i = k - 1; i >= 0; i--) {
            int j = (int)(rem % ntap);
            rem /= ntap;
            valid &= ok[i][j];
            wt *= w[i][j];
            off += idx[i][j] * g->st[i];
        }
        off_out[cb] = off;
        w_out[cb] = wt;
        valid_out[cb] = (uint8_t)valid;
    }
}

trtl_status trtl_ref_grid_sample(const trtl_kernel_args *a)
{
    const trtl_grid_sample_params *q = &a->node->p.grid;
    const char *node = a->node->name;
    const trtl_dims *X = &a->in[0].dims, *G = &a->in[1].dims, *Y = &a->out[0].dims;
    int32_t k = X->nb_dims - 2;
    if ((k != 2 && k != 3) || G->nb_dims != k + 2 || G->d[k + 1] != k || G->d[0] != X->d[0] || Y->nb_dims != k + 2 ||
        Y->d[0] != X->d[0] || Y->d[1] != X->d[1] || a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT ||
        a->out[0].dtype != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad grid-sample shapes or types", node);
    for (int32_t i = 0; i < k; i++)
        if (Y->d[2 + i] != G->d[1 + i])
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': bad grid-sample output shape", node);
    int64_t N = X->d[0], C = X->d[1], S = trtl_volume_range(X, 2, k + 2), P = trtl_volume_range(G, 1, k + 1);
    trtl_grid_geom geo;
    trtl_grid_geom_init(&geo, q, X);
    const float *x = (const float *)a->in[0].data, *g = (const float *)a->in[1].data;
    float *y = (float *)a->out[0].data;
    int64_t off[TRTL_GRID_MAX_COMB];
    double w[TRTL_GRID_MAX_COMB];
    uint8_t valid[TRTL_GRID_MAX_COMB];
    for (int64_t n = 0; n < N; n++)
        for (int64_t p = 0; p < P; p++) {
            trtl_grid_taps(&geo, g + (n * P + p) * k, off, w, valid);
            for (int64_t c = 0; c < C; c++) {
                const float *xc = x + (n * C + c) * S;
                double acc = 0;
                for (int64_t cb = 0; cb < geo.ncomb; cb++) {
                    if (valid[cb])
                        acc += w[cb] * xc[off[cb]];
                    else if (w[cb] != w[cb])
                        acc += w[cb];
                }
                y[(n * C + c) * P + p] = (float)acc;
            }
        }
    return TRTL_OK;
}
