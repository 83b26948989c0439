/* pooling_codes.c -- "pooling.codes_max": 2-D max pooling of INT8 / UINT8 codes (the int8 tensors
 * between int8 layers, passes/qdq_int8_io.c).  The max of the codes is the code of the max
 * (dequantization is increasing), so the result is the reference kernel's byte for byte
 * (ref/pooling.c), a window without data giving the lowest code.  Per output row the window's rows
 * are first reduced column by column into a row of maxima (byte loops the compiler vectorizes),
 * then each output takes the max of its window's columns of that row.  Planes are split over the
 * pool.  Portable C: no CPU requirement.  The 2x2 stride-2 window without padding (LeNet / AdderNet)
 * has its own plane loop: AVX2 (vertical byte max of two rows, then the max of each byte pair as
 * 16-bit lanes, 16 outputs a step) where the CPU has it, else a direct loop. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "core/dims.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/threadpool.h"
#include "core/cpu.h"

#define ROW_MAX 4096 /* widest input row reduced through the row of column maxima; wider ones go direct */

typedef struct codes_job {
    const void *x;
    void *y;
    int is_signed;
    int64_t H, W, OH, OW, kh, kw, sh, sw, ph, pw;
} codes_job;

/* One plane, element type T (int8_t or uint8_t), lowest code LO. */
#define CODES_PLANE(NAME, T, LO)                                                                          \
    static void NAME(const codes_job *j, const T *x, T *y)                                              \
    {                                                                                                   \
        T col[ROW_MAX];                                                                                 \
        for (int64_t oh = 0; oh < j->OH; oh++) {                                                        \
            int64_t h0 = oh * j->sh - j->ph, h1 = h0 + j->kh;                                           \
            if (h0 < 0)                                                                                 \
                h0 = 0;                                                                                 \
            if (h1 > j->H)                                                                              \
                h1 = j->H;                                                                              \
            T *yr = y + oh * j->OW;                                                                     \
            if (h0 >= h1) {                                                                             \
                for (int64_t ow = 0; ow < j->OW; ow++)                                                  \
                    yr[ow] = (T)(LO);                                                                   \
                continue;                                                                               \
            }                                                                                           \
            const int direct = j->W > ROW_MAX;                                                          \
            if (!direct) {                                                                              \
                const T *r0 = x + h0 * j->W;                                                            \
                for (int64_t w = 0; w < j->W; w++)                                                      \
                    col[w] = r0[w];                                                                     \
                for (int64_t h = h0 + 1; h < h1; h++) {                                                 \
                    const T *r = x + h * j->W;                                                          \
                    for (int64_t w = 0; w < j->W; w++)                                                  \
                        col[w] = r[w] > col[w] ? r[w] : col[w];                                         \
                }                                                                                       \
            }                                                                                           \
            for (int64_t ow = 0; ow < j->OW; ow++) {                                                    \
                int64_t w0 = ow * j->sw - j->pw, w1 = w0 + j->kw;                                       \
                if (w0 < 0)                                                                             \
                    w0 = 0;                                                                             \
                if (w1 > j->W)                                                                          \
                    w1 = j->W;                                                                          \
                T m = (T)(LO);                                                                          \
                for (int64_t w = w0; w < w1; w++) {                                                     \
                    if (direct) {                                                                       \
                        for (int64_t h = h0; h < h1; h++)                                               \
                            m = x[h * j->W + w] > m ? x[h * j->W + w] : m;                              \
                    } else {                                                                            \
                        m = col[w] > m ? col[w] : m;                                                    \
                    }                                                                                   \
                }                                                                                       \
                yr[ow] = m;                                                                             \
            }                                                                                           \
        }                                                                                               \
    }
CODES_PLANE(plane_s8, int8_t, -128)
CODES_PLANE(plane_u8, uint8_t, 0)
#undef CODES_PLANE

/* 2x2 windows, stride 2, every window inside the plane (2 OH <= H, 2 OW <= W). */
static int is_2x2(const codes_job *j)
{
    return j->kh == 2 && j->kw == 2 && j->sh == 2 && j->sw == 2 && j->ph == 0 && j->pw == 0 && 2 * j->OH <= j->H &&
           2 * j->OW <= j->W;
}

#define PLANE_2X2(NAME, T)                                                                                \
    static void NAME(const codes_job *j, const T *x, T *y, int64_t ow0)                                 \
    {                                                                                                   \
        for (int64_t oh = 0; oh < j->OH; oh++) {                                                        \
            const T *r0 = x + 2 * oh * j->W, *r1 = r0 + j->W;                                           \
            for (int64_t ow = ow0; ow < j->OW; ow++) {                                                  \
                T a = r0[2 * ow] > r0[2 * ow + 1] ? r0[2 * ow] : r0[2 * ow + 1];                        \
                T b = r1[2 * ow] > r1[2 * ow + 1] ? r1[2 * ow] : r1[2 * ow + 1];                        \
                y[oh * j->OW + ow] = a > b ? a : b;                                                     \
            }                                                                                           \
        }                                                                                               \
    }
PLANE_2X2(plane2x2_s8, int8_t)
PLANE_2X2(plane2x2_u8, uint8_t)
#undef PLANE_2X2

/* The AVX2 steps of 16 outputs (32 input columns) per output row; the rest of each row is left to
 * plane2x2_* from column (OW / 16) * 16. */
static __attribute__((target("avx2"))) void plane2x2_avx2(const codes_job *j, const uint8_t *x, uint8_t *y,
                                                          int is_signed)
{
    const __m256i low = _mm256_set1_epi16(0x00FF);
    for (int64_t oh = 0; oh < j->OH; oh++) {
        const uint8_t *r0 = x + 2 * oh * j->W, *r1 = r0 + j->W;
        for (int64_t ow = 0; ow + 16 <= j->OW; ow += 16) {
            const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(r0 + 2 * ow));
            const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(r1 + 2 * ow));
            __m256i p;
            if (is_signed) {
                const __m256i m = _mm256_max_epi8(a, b);
                const __m256i v = _mm256_max_epi16(_mm256_srai_epi16(_mm256_slli_epi16(m, 8), 8),
                                                   _mm256_srai_epi16(m, 8));
                p = _mm256_packs_epi16(v, v);
            } else {
                const __m256i m = _mm256_max_epu8(a, b);
                const __m256i v = _mm256_max_epu16(_mm256_and_si256(m, low), _mm256_srli_epi16(m, 8));
                p = _mm256_packus_epi16(v, v);
            }
            p = _mm256_permute4x64_epi64(p, 0x08); /* the 8 bytes of each lane, side by side */
            _mm_storeu_si128((__m128i *)(void *)(y + oh * j->OW + ow), _mm256_castsi256_si128(p));
        }
    }
}

static void plane_2x2(const codes_job *j, const void *x, void *y)
{
    int64_t ow0 = 0;
    if (trtl_cpu_has(TRTL_CPU_AVX2)) {
        plane2x2_avx2(j, x, y, j->is_signed);
        ow0 = j->OW / 16 * 16;
    }
    if (j->is_signed)
        plane2x2_s8(j, x, y, ow0);
    else
        plane2x2_u8(j, x, y, ow0);
}

static void planes_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const codes_job *j = ctx;
    const int64_t in = j->H * j->W, out = j->OH * j->OW;
    const int fast = is_2x2(j);
    for (int64_t p = begin; p < end; p++) {
        if (fast)
            plane_2x2(j, (const int8_t *)j->x + p * in, (int8_t *)j->y + p * out);
        else if (j->is_signed)
            plane_s8(j, (const int8_t *)j->x + p * in, (int8_t *)j->y + p * out);
        else
            plane_u8(j, (const uint8_t *)j->x + p * in, (uint8_t *)j->y + p * out);
    }
}

static int codes_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_pooling_params *p = &n->p.pool;
    return p->type == TRTL_POOL_MAX && p->window_size.nb_dims == 2 && in_dims[0].nb_dims >= 3;
}

static trtl_status codes_run(const trtl_kernel_args *a)
{
    const trtl_pooling_params *p = &a->node->p.pool;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    const trtl_dtype dt = a->in[0].dtype;
    if ((dt != TRTL_INT8 && dt != TRTL_UINT8) || a->out[0].dtype != dt)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': pooling.codes_max pools INT8 / UINT8 codes, got %s -> %s",
                          a->node->name, trtl_dtype_name(dt), trtl_dtype_name(a->out[0].dtype));
    int r = xd->nb_dims;
    codes_job j = {a->in[0].data, a->out[0].data, dt == TRTL_INT8, xd->d[r - 2], xd->d[r - 1], yd->d[r - 2],
                   yd->d[r - 1], p->window_size.d[0], p->window_size.d[1], p->stride.d[0], p->stride.d[1], 0, 0};
    int64_t oh, ow, post;
    if (trtl_spatial_out(j.H, j.kh, j.sh, p->pre_padding.d[0], p->post_padding.d[0], p->padding_mode, 1, &oh, &j.ph,
                         &post) != TRTL_OK ||
        trtl_spatial_out(j.W, j.kw, j.sw, p->pre_padding.d[1], p->post_padding.d[1], p->padding_mode, 1, &ow, &j.pw,
                         &post) != TRTL_OK)
        return trtl_error_prefix("layer '%s'", a->node->name);
    if (oh != j.OH || ow != j.OW)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %lldx%lld, expected %lldx%lld", a->node->name,
                          (long long)j.OH, (long long)j.OW, (long long)oh, (long long)ow);
    int64_t planes = trtl_volume_range(xd, 0, r - 2);
    /* (in double: with no planes, a fuzzed window or stride can make these products overflow int64) */
    const double per_plane = (double)j.H * (double)j.W + (double)j.OH * (double)j.OW * (double)j.kw;
    const int64_t grain = per_plane > 32768 ? 1 : 32768 / ((int64_t)per_plane + 1) + 1;
    trtl_parallel_for(a->pool, planes, grain, planes_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_pooling_codes_max = {
    .name = "pooling.codes_max",
    .op = TRTL_OP_POOLING,
    .applies = codes_applies,
    .run = codes_run,
    .precision = TRTL_INT8,
};
