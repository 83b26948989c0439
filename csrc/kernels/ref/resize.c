/* Reference resize.  Each output coordinate o of dim d maps to an input coordinate x (scale = the
 * given scale when `scales` are used, else out/in, computed as the exact ratio):
 *   HALF_PIXEL     x = (o + 0.5) / scale - 0.5
 *   ASYMMETRIC     x = o / scale
 *   ALIGN_CORNERS  x = o * (in - 1) / (out - 1)      (0 when out == 1)
 *   selector UPPER with out == 1: x = 0.
 * NEAREST rounds x with nearest_rounding over every dim and clamps to [0, in - 1].  LINEAR and
 * CUBIC interpolate separably over every dim whose size changes (others map o -> o): LINEAR clamps x
 * into [0, in - 1] and blends floor(x) and floor(x) + 1; CUBIC uses Keys' kernel with coefficient
 * A = cubic_coeff on taps floor(x) - 1 .. floor(x) + 2, replicating the edge for taps outside the
 * input, or with exclude_outside dropping them and renormalizing the remaining weights.  Every tap is
 * multiplied, weight 0 included, so a NaN or Inf at any tap of the interpolation makes the output NaN
 * (0 * Inf = NaN), as ONNX Runtime computes it. */
#include <math.h>
#include <string.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"
#include "kernels/ref/ref_index.h"

static double src_coord(const trtl_resize_params *p, int64_t o, int64_t in, int64_t out, double scale, int use_scale)
{
    if (out == 1 && p->selector_for_single_pixel == TRTL_SELECT_UPPER)
        return 0.0;
    switch (p->coordinate_transformation) {
    case TRTL_COORD_ALIGN_CORNERS:
        return out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0.0;
    case TRTL_COORD_HALF_PIXEL:
        return use_scale ? ((double)o + 0.5) / scale - 0.5 : ((double)o + 0.5) * (double)in / (double)out - 0.5;
    default:
        return use_scale ? (double)o / scale : (double)o * (double)in / (double)out;
    }
}

/* A float scale such as 0.6f makes 3 / scale land a hair below 5; TensorRT and ONNX Runtime compute
 * in float and get exactly 5.  Snap coordinates within float noise of a multiple of 0.5 (the only
 * places where rounding changes its answer) onto it. */
static double snap_half(double x)
{
    double h = floor(2.0 * x + 0.5) * 0.5;
    return fabs(x - h) <= 1e-6 * fmax(1.0, fabs(x)) ? h : x;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

static int64_t nearest_index(int32_t mode, double x, int64_t in)
{
    double r;
    x = snap_half(x);
    switch (mode) {
    case TRTL_ROUND_HALF_UP: r = floor(x + 0.5); break;
    case TRTL_ROUND_HALF_DOWN: r = ceil(x - 0.5); break;
    case TRTL_ROUND_CEIL: r = ceil(x); break;
    default: r = floor(x); break;
    }
    if (r < 0.0)
        return 0;
    if (r > (double)(in - 1))
        return in - 1;
    return (int64_t)r;
}

/* Keys' cubic convolution weight of a tap at distance d (TensorRT's cubic_coeff formula). */
static double cubic_weight(double d, double A)
{
    d = fabs(d);
    if (d <= 1.0)
        return ((A + 2.0) * d - (A + 3.0)) * d * d + 1.0;
    if (d < 2.0)
        return ((A * d - 5.0 * A) * d + 8.0 * A) * d - 4.0 * A;
    return 0.0;
}

/* Taps of one dim for output coordinate o: count, input indices, weights. */
static int dim_taps(const trtl_resize_params *p, int64_t o, int64_t in, int64_t out, double scale, int use_scale,
                    int64_t idx[4], double w[4])
{
    if (p->resize_mode == TRTL_RESIZE_NEAREST) {
        idx[0] = nearest_index(p->nearest_rounding, src_coord(p, o, in, out, scale, use_scale), in);
        w[0] = 1.0;
        return 1;
    }
    if (out == in) {
        idx[0] = o;
        w[0] = 1.0;
        return 1;
    }
    double x = src_coord(p, o, in, out, scale, use_scale);
    if (p->resize_mode == TRTL_RESIZE_LINEAR) {
        if (x < 0.0)
            x = 0.0;
        if (x > (double)(in - 1))
            x = (double)(in - 1);
        double f = floor(x);
        idx[0] = (int64_t)f;
        w[0] = 1.0;
        if (idx[0] + 1 >= in)
            return 1; /* at the last input: one tap (ONNX Runtime blends it with itself, 0.5 + 0.5) */
        idx[1] = idx[0] + 1;
        w[1] = x - f;
        w[0] = 1.0 - w[1];
        return 2;
    }
    double f = floor(x), t = x - f, sum = 0.0;
    for (int j = 0; j < 4; j++) {
        int64_t i = (int64_t)f - 1 + j;
        w[j] = cubic_weight(t - (double)(j - 1), (double)p->cubic_coeff);
        if (i < 0 || i >= in) {
            if (p->exclude_outside)
                w[j] = 0.0;
            i = clamp64(i, 0, in - 1);
        }
        idx[j] = i;
        sum += w[j];
    }
    if (p->exclude_outside && sum != 0.0)
        for (int j = 0; j < 4; j++)
            w[j] /= sum;
    return 4;
}

trtl_status trtl_ref_resize(const trtl_kernel_args *a)
{
    const trtl_resize_params *p = &a->node->p.resize;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    int r = xd->nb_dims;
    int use_scale = p->shape.nb_dims == 0 && p->nb_scales > 0;
    if (yd->nb_dims != r || (use_scale && p->nb_scales != r))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': resize rank mismatch", a->node->name);
    int64_t ist[TRTL_MAX_DIMS];
    ref_strides(xd->d, r, ist);
    int64_t n = trtl_volume(yd);
    if (n > 0 && trtl_volume(xd) <= 0)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': cannot resize an empty input to a non-empty output",
                          a->node->name);
    for (int64_t e = 0; e < n; e++) {
        int64_t idx[TRTL_MAX_DIMS][4], o[TRTL_MAX_DIMS], rem = e;
        double w[TRTL_MAX_DIMS][4];
        int nt[TRTL_MAX_DIMS];
        int64_t combos = 1;
        for (int d = r - 1; d >= 0; d--) {
            o[d] = rem % yd->d[d];
            rem /= yd->d[d];
        }
        for (int d = 0; d < r; d++) {
            double sc = use_scale ? (double)p->scales[d] : 1.0;
            nt[d] = dim_taps(p, o[d], xd->d[d], yd->d[d], sc, use_scale, idx[d], w[d]);
            combos *= nt[d];
        }
        if (p->resize_mode == TRTL_RESIZE_NEAREST) {
            int64_t off = 0;
            for (int d = 0; d < r; d++)
                off += idx[d][0] * ist[d];
            /* FLOAT or INT32: both 4 bytes, copied bit-exactly */
            memcpy((char *)a->out[0].data + e * 4, (const char *)a->in[0].data + off * 4, 4);
            continue;
        }
        const float *x = (const float *)a->in[0].data;
        double acc = 0.0;
        for (int64_t cmb = 0; cmb < combos; cmb++) {
            int64_t off = 0, c = cmb;
            double wt = 1.0;
            for (int d = r - 1; d >= 0; d--) {
                int t = (int)(c % nt[d]);
                c /= nt[d];
                off += idx[d][t] * ist[d];
                wt *= w[d][t];
            }
            acc += wt * (double)x[off]; /* weight 0 too: NaN / Inf there propagate, as in ONNX Runtime */
        }
        ((float *)a->out[0].data)[e] = (float)acc;
    }
    return TRTL_OK;
}
