/*
 * qconv.c (ref) -- the portable path of the int8 convolution library (kernels/qconv.h): plain C
 * loops that spell out the semantics.  Used on CPUs without AVX2 + FMA and for grouped (not
 * depthwise) convolutions; the SIMD paths are tested against it and against a float64 model.
 *
 * The input (one image at a time, or all M rows) is first quantized into scratch as int16
 * q - in_zero, then each output value is an int32 dot product over its window, dequantized and
 * passed through the epilogue.  Work is split over output channels (convolution) or rows (gemm).
 */
#include <stdint.h>

#include "kernels/qconv_internal.h"
#include "kernels/kernel.h"
#include "core/threadpool.h"

/* The epilogue of output value o (qconv.h: dequantize, bias, residual, activation, out_quant), stored
 * as a float or, with out_quant = 2, as its code. */
void trtl_qconv_epilogue_one(const trtl_qconv_state *s, int64_t k, int32_t acc, const float *res, const int8_t *resq,
                         void *y, int64_t o)
{
    const trtl_qconv_desc *d = &s->d;
    float v = (float)acc * s->scale[k];
    if (!d->bias_after_mid)
        v += s->bias[k];
    if (d->mid_quant)
        v = (float)(trtl_q8_quantize(v, d->mid_scale, d->mid_zero, d->mid_signed) - d->mid_zero) * d->mid_scale;
    if (d->bias_after_mid)
        v += s->bias[k];
    if (res)
        v += res[o];
    if (resq)
        v += (float)(trtl_qk_code_at(resq, d->res_signed, o) - d->res_zero) * d->res_scale;
    if (d->act != TRTL_ACT_NONE)
        v = trtl_activation_eval(d->act, d->alpha, d->beta, v);
    if (d->out_quant == 2) {
        int32_t c = trtl_q8_quantize(v, d->out_scale, d->out_zero, d->out_signed);
        if (d->out_signed)
            ((int8_t *)y)[o] = (int8_t)c;
        else
            ((uint8_t *)y)[o] = (uint8_t)c;
        return;
    }
    if (d->out_quant)
        v = (float)(trtl_q8_quantize(v, d->out_scale, d->out_zero, d->out_signed) - d->out_zero) * d->out_scale;
    ((float *)y)[o] = v;
}

/* The scratch comes at any alignment; the int16 buffer starts at the next 64 bytes. */
static int16_t *align_scratch(void *p) { return (int16_t *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

typedef struct ref_job {
    const trtl_qconv_state *s;
    int64_t H, W, OH, OW;
    const void *x; /* float, or codes (x_codes) */
    const float *res;
    void *y;       /* float, or codes (out_quant = 2) */
    int16_t *q;
    int32_t x_codes;
    const int8_t *resq; /* residual codes (res_codes), or NULL */
} ref_job;

static void quant_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const ref_job *j = ctx;
    const trtl_qconv_desc *d = &j->s->d;
    (void)thread;
    if (j->x_codes) {
        for (int64_t i = b; i < e; i++)
            j->q[i] = (int16_t)(trtl_qk_code_at(j->x, d->in_signed, i) - d->in_zero);
        return;
    }
    const float *x = j->x;
    for (int64_t i = b; i < e; i++)
        j->q[i] = (int16_t)(trtl_q8_quantize(x[i], d->in_scale, d->in_zero, d->in_signed) - d->in_zero);
}

/* Element offset of image / row block n in an x or y of this run's types. */
static const void *in_at(const ref_job *j, int64_t i)
{
    return j->x_codes ? (const void *)((const int8_t *)j->x + i) : (const void *)((const float *)j->x + i);
}

static void *out_at(const trtl_qconv_state *s, void *y, int64_t i)
{
    return s->d.out_quant == 2 ? (void *)((int8_t *)y + i) : (void *)((float *)y + i);
}

static void conv_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const ref_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const trtl_qconv_desc *d = &s->d;
    const int64_t HW = j->H * j->W, P = j->OH * j->OW;
    (void)thread;
    for (int64_t k = b; k < e; k++) {
        const int16_t *qg = j->q + (k / s->Kg) * s->Cg * HW;
        const int8_t *wk = s->w + k * s->D;
        for (int64_t oh = 0; oh < j->OH; oh++)
            for (int64_t ow = 0; ow < j->OW; ow++) {
                int32_t acc = 0;
                for (int64_t c = 0; c < s->Cg; c++)
                    for (int64_t r = 0; r < d->R; r++) {
                        int64_t ih = oh * d->stride_h - d->pad_t + r * d->dil_h;
                        if (ih < 0 || ih >= j->H)
                            continue;
                        for (int64_t t = 0; t < d->S; t++) {
                            int64_t iw = ow * d->stride_w - d->pad_l + t * d->dil_w;
                            if (iw >= 0 && iw < j->W)
                                acc += (int32_t)qg[c * HW + ih * j->W + iw] * wk[(c * d->R + r) * d->S + t];
                        }
                    }
                trtl_qconv_epilogue_one(s, k, acc, j->res, j->resq, j->y, k * P + oh * j->OW + ow);
            }
    }
}

size_t trtl_qconv_ref_scratch(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W)
{
    (void)N;
    return 64 + (size_t)(s->d.C * H * W) * sizeof(int16_t);
}

void trtl_qconv_ref_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const trtl_qk_io *io,
                        void *scratch, struct trtl_threadpool *pool)
{
    const trtl_qconv_desc *d = &s->d;
    ref_job j = {s, H, W, 0, 0, NULL, NULL, NULL, align_scratch(scratch), io->x_codes, NULL};
    j.OH = trtl_qconv_out_dim(H, d->R, d->stride_h, d->pad_t, d->pad_b, d->dil_h);
    j.OW = trtl_qconv_out_dim(W, d->S, d->stride_w, d->pad_l, d->pad_r, d->dil_w);
    const int64_t in_img = d->C * H * W, out_img = d->K * j.OH * j.OW;
    for (int64_t n = 0; n < N; n++) {
        j.x = io->x;
        j.x = in_at(&j, n * in_img);
        j.y = out_at(s, io->y, n * out_img);
        j.res = io->residual ? io->residual + n * out_img : NULL;
        j.resq = io->residual_codes ? io->residual_codes + n * out_img : NULL;
        trtl_parallel_for(pool, in_img, 4096, quant_task, &j);
        trtl_parallel_for(pool, d->K, 1, conv_task, &j);
    }
}

static void gemm_task(void *ctx, int64_t b, int64_t e, int thread)
{
    const ref_job *j = ctx;
    const trtl_qconv_state *s = j->s;
    const int64_t C = s->d.C, K = s->d.K;
    (void)thread;
    for (int64_t m = b; m < e; m++)
        for (int64_t k = 0; k < K; k++) {
            int32_t acc = 0;
            for (int64_t c = 0; c < C; c++)
                acc += (int32_t)j->q[m * C + c] * s->w[k * C + c];
            trtl_qconv_epilogue_one(s, k, acc, j->res, j->resq, j->y, m * K + k);
        }
}

size_t trtl_qgemm_ref_scratch(const trtl_qconv_state *s, int64_t M)
{
    return 64 + (size_t)(M * s->d.C) * sizeof(int16_t);
}

void trtl_qgemm_ref_run(const trtl_qconv_state *s, int64_t M, const trtl_qk_io *io, void *scratch,
                        struct trtl_threadpool *pool)
{
    ref_job j = {s, 0, 0, 0, 0, io->x, io->residual, io->y, align_scratch(scratch), io->x_codes, io->residual_codes};
    trtl_parallel_for(pool, M * s->d.C, 4096, quant_task, &j);
    trtl_parallel_for(pool, M, 1, gemm_task, &j);
}
