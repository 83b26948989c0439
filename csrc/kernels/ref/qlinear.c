/* Reference QLINEAR (internal quantized convolution / fully connected / matrix multiply, see
 * trtl_qlinear_params): the integer math simulated exactly -- each input element quantized as
 * QuantizeLinear does (qdq_math.h), products of integers summed in int64, then
 *   y = (float)(acc * in_scale * w_scale[k] + bias[k])      (double, one rounding)
 *   y = act(y + residual);   y = DQ(Q(y)) when out_quant     (float, as the fp32 layers would);
 * with mid_quant y = DQ(Q(y; mid)) before the residual, and with bias_after_mid the bias added after it
 * (y = (float)(acc * in_scale * w_scale[k]), mid, + bias[k] in float).
 * Padding taps contribute nothing: they are the value 0.0, whose quantized form minus the zero
 * point is 0.  The slow but obvious form: inputs are quantized again for every tap (no scratch).
 * Integer input (input 0 of in_type: codes) is used as it is; out_quant = 2 stores the output's codes. */
#include "kernels/ref/ref.h"
#include "kernels/ref/qdq_math.h"
#include "kernels/qpool.h"
#include "core/shape.h"
#include "core/dims.h"
#include "core/status.h"

/* Element i of input 0 quantized, minus the zero point (x: float, or codes when codes). */
static inline int32_t qx(const trtl_qlinear_params *q, const void *x, int codes, int64_t i)
{
    if (codes)
        return (q->in_type == TRTL_UINT8 ? ((const uint8_t *)x)[i] : ((const int8_t *)x)[i]) - q->in_zero_point;
    return trtl_q_value(((const float *)x)[i], q->in_scale, q->in_zero_point, q->in_type) - q->in_zero_point;
}

/* acc -> the output value with the epilogue (r: residual value or 0). */
static float finish_value(const trtl_qlinear_params *q, int64_t acc, int64_t k, const void *res, int64_t i)
{
    const float *ws = q->w_scale.values, *b = q->conv.bias.count ? q->conv.bias.values : NULL;
    const int late = q->bias_after_mid && b;
    float y = (float)((double)acc * (double)q->in_scale * (double)ws[k] + (b && !late ? (double)b[k] : 0.0));
    if (q->mid_quant)
        y = trtl_fake_quant(y, q->mid_scale, q->mid_zero_point, q->mid_type);
    if (late) /* the bias after the mid quantization (float, as the elementwise add it replaces) */
        y += b[k];
    if (res && q->res_quant)
        y += (float)((q->res_type == TRTL_UINT8 ? ((const uint8_t *)res)[i] : ((const int8_t *)res)[i]) -
                     q->res_zero_point) * q->res_scale;
    else if (res)
        y += ((const float *)res)[i];
    if (q->act != TRTL_ACT_NONE)
        y = trtl_activation_eval(q->act, q->alpha, q->beta, y);
    if (q->out_quant == 1)
        y = trtl_fake_quant(y, q->out_scale, q->out_zero_point, q->out_type);
    return y;
}

/* Output element i: the float, or its code (out_quant = 2). */
static void finish(const trtl_qlinear_params *q, int64_t acc, int64_t k, const void *res, void *y, int64_t i)
{
    float v = finish_value(q, acc, k, res, i);
    if (q->out_quant != 2) {
        ((float *)y)[i] = v;
        return;
    }
    int32_t c = trtl_q_value(v, q->out_scale, q->out_zero_point, q->out_type);
    if (q->out_type == TRTL_UINT8)
        ((uint8_t *)y)[i] = (uint8_t)c;
    else
        ((int8_t *)y)[i] = (int8_t)c;
}

static trtl_status run_conv(const trtl_kernel_args *a, const trtl_qlinear_params *q, const void *res)
{
    const trtl_conv_params *p = &q->conv;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    const void *x = a->in[0].data;
    const int codes = a->in[0].dtype != TRTL_FLOAT;
    const int8_t *w = p->kernel.values;
    void *y = a->out[0].data;
    int nsp = p->kernel_size.nb_dims, off = 3 - nsp;
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1},
            pad[3] = {0, 0, 0};
    for (int i = 0; i < nsp; i++) {
        int64_t post, o;
        in[off + i] = xd->d[2 + i];
        out[off + i] = yd->d[2 + i];
        k[off + i] = p->kernel_size.d[i];
        s[off + i] = p->stride.d[i];
        dl[off + i] = p->dilation.d[i];
        TRTL_TRY(trtl_spatial_out(in[off + i], dl[off + i] * (k[off + i] - 1) + 1, s[off + i], p->pre_padding.d[i],
                                  p->post_padding.d[i], p->padding_mode, 0, &o, &pad[off + i], &post));
    }
    int64_t N = xd->d[0], C = xd->d[1], K = yd->d[1], G = p->num_groups, Cg = C / G, Kg = K / G;
    int64_t in_sp = in[0] * in[1] * in[2], out_sp = out[0] * out[1] * out[2], kvol = k[0] * k[1] * k[2];
    for (int64_t n = 0; n < N; n++)
        for (int64_t kk = 0; kk < K; kk++) {
            int64_t g = kk / Kg;
            for (int64_t od = 0; od < out[0]; od++)
                for (int64_t oh = 0; oh < out[1]; oh++)
                    for (int64_t ow = 0; ow < out[2]; ow++) {
                        int64_t acc = 0;
                        for (int64_t c = 0; c < Cg; c++) {
                            const int64_t xc = (n * C + g * Cg + c) * in_sp;
                            const int8_t *wc = w + (kk * Cg + c) * kvol;
                            for (int64_t kd = 0; kd < k[0]; kd++) {
                                int64_t id = od * s[0] - pad[0] + kd * dl[0];
                                if (id < 0 || id >= in[0])
                                    continue;
                                for (int64_t kh = 0; kh < k[1]; kh++) {
                                    int64_t ih = oh * s[1] - pad[1] + kh * dl[1];
                                    if (ih < 0 || ih >= in[1])
                                        continue;
                                    for (int64_t kw = 0; kw < k[2]; kw++) {
                                        int64_t iw = ow * s[2] - pad[2] + kw * dl[2];
                                        if (iw < 0 || iw >= in[2])
                                            continue;
                                        acc += (int64_t)qx(q, x, codes, xc + (id * in[1] + ih) * in[2] + iw) *
                                               wc[(kd * k[1] + kh) * k[2] + kw];
                                    }
                                }
                            }
                        }
                        int64_t i = (n * K + kk) * out_sp + (od * out[1] + oh) * out[2] + ow;
                        finish(q, acc, kk, res, y, i);
                    }
        }
    return TRTL_OK;
}

/* FC and matrix multiply: rows of cin inputs times K weight rows. */
static trtl_status run_rows(const trtl_kernel_args *a, const trtl_qlinear_params *q, const void *res)
{
    int64_t K = q->conv.num_output_maps, cin = q->conv.kernel.count / K;
    int64_t total = trtl_volume(&a->in[0].dims), rows = cin ? total / cin : 0;
    const void *x = a->in[0].data;
    const int codes = a->in[0].dtype != TRTL_FLOAT;
    const int8_t *w = q->conv.kernel.values;
    void *y = a->out[0].data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t kk = 0; kk < K; kk++) {
            int64_t acc = 0;
            for (int64_t c = 0; c < cin; c++)
                acc += (int64_t)qx(q, x, codes, r * cin + c) * w[kk * cin + c];
            finish(q, acc, kk, res, y, r * K + kk);
        }
    return TRTL_OK;
}

/* A pooled value v through the activation and the output quantization, stored at y[i]. */
static void put(const trtl_qlinear_params *q, float v, void *y, int64_t i)
{
    if (q->act != TRTL_ACT_NONE)
        v = trtl_activation_eval(q->act, q->alpha, q->beta, v);
    if (q->out_quant == 2) {
        int32_t c = trtl_q_value(v, q->out_scale, q->out_zero_point, q->out_type);
        if (q->out_type == TRTL_UINT8)
            ((uint8_t *)y)[i] = (uint8_t)c;
        else
            ((int8_t *)y)[i] = (int8_t)c;
        return;
    }
    if (q->out_quant == 1)
        v = trtl_fake_quant(v, q->out_scale, q->out_zero_point, q->out_type);
    ((float *)y)[i] = v;
}

/* Average pooling of the input's codes (TRTL_QL_POOL, kernels/qpool.h): 4-D input, the last two dims. */
static trtl_status run_pool(const trtl_kernel_args *a, const trtl_qlinear_params *q)
{
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    const void *x = a->in[0].data;
    const int codes = a->in[0].dtype != TRTL_FLOAT;
    void *y = a->out[0].data;
    if (xd->nb_dims != 4)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': quantized pooling needs a 4-D input", a->node->name);
    const int64_t planes = xd->d[0] * xd->d[1], H = xd->d[2], W = xd->d[3];
    if (q->pool_mode >= TRTL_QP_GLOBAL) {
        for (int64_t p = 0; p < planes; p++) {
            int64_t sum = 0;
            for (int64_t i = 0; i < H * W; i++)
                sum += qx(q, x, codes, p * H * W + i);
            put(q, trtl_qpool_value(sum, H * W, q->in_scale), y, p);
        }
        return TRTL_OK;
    }
    const trtl_conv_params *c = &q->conv;
    const int64_t OH = yd->d[2], OW = yd->d[3], R = c->kernel_size.d[0], S = c->kernel_size.d[1];
    for (int64_t p = 0; p < planes; p++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t sum = 0, valid = 0;
                for (int64_t r = 0; r < R; r++)
                    for (int64_t t = 0; t < S; t++) {
                        int64_t ih = oh * c->stride.d[0] - c->pre_padding.d[0] + r;
                        int64_t iw = ow * c->stride.d[1] - c->pre_padding.d[1] + t;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                            continue;
                        sum += qx(q, x, codes, (p * H + ih) * W + iw);
                        valid++;
                    }
                put(q, trtl_qpool_value(sum, q->pool_mode == TRTL_QP_AVG_EXCL ? valid : R * S, q->in_scale), y,
                    (p * OH + oh) * OW + ow);
            }
    return TRTL_OK;
}

/* The int8 add (TRTL_QL_ADD): y = act(DQ(x) + r), then the output quantization. */
static trtl_status run_add(const trtl_kernel_args *a, const trtl_qlinear_params *q)
{
    const void *x = a->in[0].data, *r = a->in[1].data;
    const int codes = a->in[0].dtype != TRTL_FLOAT;
    const int64_t n = trtl_volume(&a->out[0].dims);
    for (int64_t i = 0; i < n; i++) {
        float v = (float)qx(q, x, codes, i) * q->in_scale;
        if (q->res_quant)
            v += (float)((q->res_type == TRTL_UINT8 ? ((const uint8_t *)r)[i] : ((const int8_t *)r)[i]) -
                         q->res_zero_point) * q->res_scale;
        else
            v += ((const float *)r)[i];
        put(q, v, a->out[0].data, i);
    }
    return TRTL_OK;
}

trtl_status trtl_ref_qlinear(const trtl_kernel_args *a)
{
    const trtl_qlinear_params *q = &a->node->p.qlin;
    if (q->mode == TRTL_QL_POOL)
        return run_pool(a, q);
    if (q->mode == TRTL_QL_ADD)
        return run_add(a, q);
    const void *res = q->has_residual ? a->in[1].data : NULL;
    return q->mode == TRTL_QL_CONV ? run_conv(a, q, res) : run_rows(a, q, res);
}
