/* Reference pooling: direct loops over each window, double accumulation, 1-3 spatial dims (as 3-D
 * with 1s).  Per dim a window starting at o*stride - pre covers data positions [0, in) and padding
 * positions [-pre, 0) and [in, in + post); positions past in + post (ROUND_UP modes) are outside the
 * window altogether.  MAX sees only data (padding is -inf); AVERAGE divides the data sum by the count
 * of data positions (excludes padding) or of data + padding positions; a window without data gives
 * -inf (MAX) and 0 (AVERAGE).  NaN: a window holding one gives NaN (MAX, as numpy.max and
 * onnxruntime's MaxPool; AVERAGE and the blend through the sum).
 * MAX also takes INT8 / UINT8 codes (int8 tensors between int8 layers, passes/qdq_int8_io.c): the
 * max of the codes is the code of the max (dequantization is increasing); a window without data
 * gives the lowest code. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "core/shape.h"
#include "core/dims.h"
#include "core/status.h"

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

trtl_status trtl_ref_pooling(const trtl_kernel_args *a)
{
    const trtl_pooling_params *p = &a->node->p.pool;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    const float *x = (const float *)a->in[0].data;
    float *y = (float *)a->out[0].data;
    const trtl_dtype dt = a->in[0].dtype;
    const int codes = dt == TRTL_INT8 || dt == TRTL_UINT8;
    if (codes && (p->type != TRTL_POOL_MAX || a->out[0].dtype != dt))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s pooling of %s codes", a->node->name,
                          p->type == TRTL_POOL_MAX ? "max" : "non-max", trtl_dtype_name(dt));
    int nsp = p->window_size.nb_dims, off = 3 - nsp, first = xd->nb_dims - nsp;
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, pre[3] = {0, 0, 0},
            post[3] = {0, 0, 0};
    for (int i = 0; i < nsp; i++) {
        int64_t o;
        in[off + i] = xd->d[first + i];
        out[off + i] = yd->d[first + i];
        k[off + i] = p->window_size.d[i];
        s[off + i] = p->stride.d[i];
        trtl_status st = trtl_spatial_out(in[off + i], k[off + i], s[off + i], p->pre_padding.d[i],
                                          p->post_padding.d[i], p->padding_mode, 1, &o, &pre[off + i], &post[off + i]);
        if (st != TRTL_OK)
            return trtl_error_prefix("layer '%s'", a->node->name);
        if (o != out[off + i])
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output spatial dim %d is %lld, expected %lld",
                              a->node->name, i, (long long)out[off + i], (long long)o);
    }
    int64_t planes = trtl_volume_range(xd, 0, first);
    int64_t in_sp = in[0] * in[1] * in[2], out_sp = out[0] * out[1] * out[2];
    int excl = p->average_count_excludes_padding;
    double f = p->blend_factor;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = codes ? NULL : x + pl * in_sp;
        float *yp = codes ? NULL : y + pl * out_sp;
        for (int64_t od = 0; od < out[0]; od++)
            for (int64_t oh = 0; oh < out[1]; oh++)
                for (int64_t ow = 0; ow < out[2]; ow++) {
                    int64_t o3[3] = {od, oh, ow}, lo[3], hi[3], padded = 1;
                    for (int d = 0; d < 3; d++) {
                        int64_t start = o3[d] * s[d] - pre[d], end = start + k[d];
                        lo[d] = max64(start, 0);
                        hi[d] = min64(end, in[d]);
                        padded *= max64(min64(end, in[d] + post[d]) - max64(start, -pre[d]), 0);
                    }
                    double sum = 0.0, mx = -INFINITY;
                    int64_t count = 0;
                    for (int64_t id = lo[0]; id < hi[0]; id++)
                        for (int64_t ih = lo[1]; ih < hi[1]; ih++)
                            for (int64_t iw = lo[2]; iw < hi[2]; iw++) {
                                int64_t xi = (id * in[1] + ih) * in[2] + iw;
                                double v = !codes ? xp[xi]
                                           : dt == TRTL_INT8 ? ((const int8_t *)a->in[0].data)[pl * in_sp + xi]
                                                             : ((const uint8_t *)a->in[0].data)[pl * in_sp + xi];
                                sum += v;
                                if (v > mx || count == 0 || isnan(v))
                                    mx = v; /* a NaN in the window makes the max NaN, as in numpy */
                                count++;
                            }
                    int64_t div = excl ? count : padded;
                    double avg = div > 0 ? sum / (double)div : 0.0, r;
                    switch (p->type) {
                    case TRTL_POOL_MAX: r = mx; break;
                    case TRTL_POOL_AVERAGE: r = avg; break;
                    default: /* TensorRT: (1 - blend_factor) * max + blend_factor * avg */
                        r = f < 1.0 ? (1.0 - f) * mx + f * avg : avg;
                        break;
                    }
                    int64_t yi = (od * out[1] + oh) * out[2] + ow;
                    if (!codes)
                        yp[yi] = (float)r;
                    else if (dt == TRTL_INT8)
                        ((int8_t *)a->out[0].data)[pl * out_sp + yi] = (int8_t)(count ? mx : -128);
                    else
                        ((uint8_t *)a->out[0].data)[pl * out_sp + yi] = (uint8_t)(count ? mx : 0);
                }
    }
    return TRTL_OK;
}
