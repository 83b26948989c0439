/*
 * pooling_2d.c -- 2-D max / average / blend pooling over [.., H, W] planes.
 *
 * Same window semantics as the reference kernel (see kernels/ref/pooling.c): per dim a window
 * starting at o*stride - pre sees data in [0, in), padding in [-pre, 0) and [in, in + post), and
 * nothing past in + post.  Window bounds are clipped once per output row/column instead of per
 * element, the inner loop runs over contiguous floats, and planes are split over the pool.
 *
 * Max pooling has a vector path (AVX-512 or AVX2, rows up to ROW_MAX floats): per output row, the
 * rows of its window are first reduced column-wise into a row buffer padded with -inf (the
 * padding never wins), then every output is the max over kw consecutive (stride 1) or every
 * other (stride 2: even lanes of two loads) buffer floats, 8 or 16 outputs at once; other
 * strides read the buffer one output at a time.  A NaN anywhere in a window wins, as in the
 * reference (maxps alone would keep its second operand: vmax() blends a NaN back in); planes of at most
 * NAN_CHECK_MAX floats without a NaN (one pass checks) run the same code on plain maxps.  The row buffer is set to -inf once per plane: rows of
 * data overwrite only its middle.
 *
 * Average pooling has the same vector path with sums (zero padding) and a division by each window's count.
 *
 * An output row's partial last vector is stored whole where it ends inside the plane (what spills into the next
 * rows is written again when those are computed, by the same thread: a plane is one task), masked only at the
 * plane's end; AVX2's masked stores go through a buffer (mstore256).
 */
#include <math.h>
#include <immintrin.h>

#include "kernels/kernel.h"
#include "core/shape.h"
#include "core/threadpool.h"
#include "core/status.h"
#include "core/dims.h"
#include "core/cpu.h"

#define ROW_MAX 4096 /* floats of the stack row buffer of the vector max path */
#define NAN_CHECK_MAX 4096 /* floats of a plane at most whose max pooling checks for NaN first (16 KiB) */

typedef struct pool_job {
    const trtl_pooling_params *p;
    const float *x;
    float *y;
    int64_t H, W, OH, OW, kh, kw, sh, sw, ph, pw, qh, qw; /* q*: effective post padding */
    int64_t planes; /* of x */
    int spill;      /* no window of an output reaches past the rows' data: the max path may fill its row buffer
                       past it (whole vectors over the rows' tails) */
    const float *rc; /* the average small-plane path's reciprocal counts (rc_table), on the calling thread's stack */
} pool_job;

static inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static void pool_planes(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const pool_job *j = ctx;
    const int type = j->p->type, excl = j->p->average_count_excludes_padding;
    const float blend = j->p->blend_factor;
    for (int64_t pl = begin; pl < end; pl++) {
        const float *xp = j->x + pl * j->H * j->W;
        float *yp = j->y + pl * j->OH * j->OW;
        for (int64_t oh = 0; oh < j->OH; oh++) {
            int64_t hs = oh * j->sh - j->ph, he = hs + j->kh;
            int64_t h0 = imax(hs, 0), h1 = imin(he, j->H);
            int64_t hpad = imax(imin(he, j->H + j->qh) - imax(hs, -j->ph), 0);
            for (int64_t ow = 0; ow < j->OW; ow++) {
                int64_t ws = ow * j->sw - j->pw, we = ws + j->kw;
                int64_t w0 = imax(ws, 0), w1 = imin(we, j->W);
                int64_t wpad = imax(imin(we, j->W + j->qw) - imax(ws, -j->pw), 0);
                float mx = -INFINITY, sum = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++) {
                    const float *row = xp + ih * j->W;
                    for (int64_t iw = w0; iw < w1; iw++) {
                        float v = row[iw];
                        mx = v > mx || v != v ? v : mx; /* a NaN wins and stays, as in the reference */
                        sum += v;
                    }
                }
                int64_t data = imax(h1 - h0, 0) * imax(w1 - w0, 0), cnt = excl ? data : hpad * wpad;
                float avg = cnt > 0 ? sum / (float)cnt : 0.0f;
                float r = type == TRTL_POOL_MAX ? mx
                          : type == TRTL_POOL_AVERAGE || blend >= 1.0f ? avg /* no (1 - 1) * -inf for empty windows */
                                                                       : (1.0f - blend) * mx + blend * avg;
                yp[oh * j->OW + ow] = r;
            }
        }
    }
}

/* ---- vector max path -------------------------------------------------------------------------- */

/* Row-buffer floats the max path needs: the padded input row, read up to the last window's end
 * rounded up to whole 16-output vectors (stride <= 2; larger strides are read one by one).  Only for a
 * job that row_path() accepts, which bounds the operands first. */
static int64_t max_row_floats(const pool_job *j)
{
    int64_t reach = (j->OW + 16) * j->sw + j->kw + 32;
    int64_t padded = j->pw + j->W + 32;
    return reach > padded ? reach : padded;
}

/* Whether the row paths' stack buffers (ROW_MAX floats) hold a row of this job.  Each operand is bounded before
 * max_row_floats multiplies them: a valid pooling may have a stride near 2^62 where it has one output column (a
 * fuzzed plan: (OW + 16) * stride overflowed). */
static int row_path(const pool_job *j)
{
    return j->OW <= ROW_MAX - 16 && j->sw <= ROW_MAX && j->kw <= ROW_MAX && j->pw <= ROW_MAX && j->W <= ROW_MAX &&
           max_row_floats(j) <= ROW_MAX;
}

/* The max path's row buffer: up to ROW_MAX floats of rows of max_row_floats() rounded to 16. */
static int64_t max_row_stride(const pool_job *j) { return (max_row_floats(j) + 15) & ~(int64_t)15; }

/* The max path's ISA-specific parts are written once, as a macro over the vector type.  The rows of t (`rows` of
 * them, max_row_stride() apart) are -inf outside [pw, pw + W) when called (the caller sets them once per task: rows
 * of data overwrite only their middle, or, with j->spill, also floats that no output's window reads).  Output rows
 * go in blocks of `rows`: first the column-wise maxima of every row of the block, then the block's outputs, so
 * that the outputs' loads, which straddle two of those stores, do not wait on stores just made (a failed
 * store-to-load forward: with one row at a time, 27-wide rows ran at a third of their load rate).  kh and kw are
 * compile-time KH and KW in the common windows (loops unrolled), else 0: j's. */
#define MAXROW_IMPL(SUF, TGT, V, VL, LOAD, STORE, MLOAD, MSTORE, SET1, EVENS, VMAX)                             \
    TGT static inline __attribute__((always_inline)) void maxrow_body_##SUF(                                  \
        const pool_job *j, const float *xp, float *yp, float *t, int64_t room, int64_t rows, const int64_t KH, \
        const int64_t KW)                                                                                     \
    {                                                                                                 \
        const int64_t W = j->W, OW = j->OW, ts = max_row_stride(j);                                    \
        const int64_t kh = KH ? KH : j->kh, kw = KW ? KW : j->kw;                                      \
        for (int64_t ob = 0; ob < j->OH; ob += rows) {                                                 \
            const int64_t nb = j->OH - ob < rows ? j->OH - ob : rows;                                  \
            for (int64_t r = 0; r < nb; r++) { /* the block's column-wise maxima */                   \
                int64_t hs = (ob + r) * j->sh - j->ph, h0 = imax(hs, 0), h1 = imin(hs + kh, j->H);     \
                float *tr = t + r * ts + j->pw;                                                        \
                if (h0 >= h1) { /* a window of padding rows only */                                   \
                    for (int64_t i = 0; i < W; i++)                                                    \
                        tr[i] = -INFINITY;                                                             \
                    continue;                                                                          \
                }                                                                                     \
                const float *r0 = xp + h0 * W;                                                         \
                int64_t w = 0, wf = W - W % VL;                                                        \
                if (j->spill && wf < W && h1 * W + VL - W % VL <= j->H * W + room)                     \
                    wf += VL; /* the tail read whole: past the row, inside x; its spill lanes unread */ \
                if (h1 - h0 == kh) { /* a whole window of rows (KH: unrolled) */                      \
                    for (; w < wf; w += VL) {                                                          \
                        V m = LOAD(r0 + w);                                                            \
                        for (int64_t k = 1; k < kh; k++)                                               \
                            m = VMAX(m, LOAD(r0 + k * W + w));                                         \
                        STORE(tr + w, m);                                                              \
                    }                                                                                 \
                } else {                                                                               \
                    for (; w < wf; w += VL) {                                                          \
                        V m = LOAD(r0 + w);                                                            \
                        for (int64_t ih = h0 + 1; ih < h1; ih++)                                       \
                            m = VMAX(m, LOAD(xp + ih * W + w));                                        \
                        STORE(tr + w, m);                                                              \
                    }                                                                                 \
                }                                                                                     \
                if (w < W) { /* the row's tail: one masked vector */                                  \
                    V m = MLOAD(r0 + w, W - w);                                                        \
                    for (int64_t ih = h0 + 1; ih < h1; ih++)                                           \
                        m = VMAX(m, MLOAD(xp + ih * W + w, W - w));                                    \
                    MSTORE(tr + w, m, W - w);                                                          \
                }                                                                                     \
            }                                                                                         \
            for (int64_t r = 0; r < nb; r++) { /* the block's outputs */                              \
                const int64_t oh = ob + r;                                                             \
                const float *tr = t + r * ts;                                                          \
                float *yr = yp + oh * OW;                                                              \
                int64_t o = 0;                                                                         \
                if (j->sw == 1) { /* the buffer reaches a whole vector past OW: the tail is masked */ \
                    for (; o < OW; o += VL) {                                                          \
                        V m = LOAD(tr + o);                                                            \
                        for (int64_t k = 1; k < kw; k++)                                               \
                            m = VMAX(m, LOAD(tr + o + k));                                             \
                        if (oh * OW + o + VL <= j->OH * OW) /* in the plane: later rows overwrite the spill */ \
                            STORE(yr + o, m);                                                          \
                        else                                                                           \
                            MSTORE(yr + o, m, OW - o);                                                 \
                    }                                                                                 \
                } else if (j->sw == 2) { /* windows at every float of two vectors, then their even lanes */ \
                    for (; o < OW; o += VL) {                                                          \
                        const float *b = tr + 2 * o;                                                   \
                        V lo = LOAD(b), hi = LOAD(b + VL);                                             \
                        for (int64_t k = 1; k < kw; k++) {                                             \
                            lo = VMAX(lo, LOAD(b + k));                                                \
                            hi = VMAX(hi, LOAD(b + k + VL));                                           \
                        }                                                                             \
                        V m = EVENS(lo, hi);                                                           \
                        if (oh * OW + o + VL <= j->OH * OW) /* in the plane: later rows overwrite the spill */ \
                            STORE(yr + o, m);                                                          \
                        else                                                                           \
                            MSTORE(yr + o, m, OW - o);                                                 \
                    }                                                                                 \
                }                                                                                     \
                for (; o < OW; o++) {                                                                  \
                    const float *b = tr + o * j->sw;                                                   \
                    float m = b[0];                                                                    \
                    for (int64_t k = 1; k < kw; k++)                                                   \
                        m = b[k] > m || b[k] != b[k] ? b[k] : m;                                       \
                    yr[o] = m;                                                                         \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    TGT static void maxrow_##SUF(const pool_job *j, const float *xp, float *yp, float *t, int64_t room,      \
                                 int64_t rows)                                                        \
    {                                                                                                 \
        if (j->kh == 3 && j->kw == 3)                                                                  \
            maxrow_body_##SUF(j, xp, yp, t, room, rows, 3, 3);                                         \
        else if (j->kh == 2 && j->kw == 2)                                                             \
            maxrow_body_##SUF(j, xp, yp, t, room, rows, 2, 2);                                         \
        else                                                                                           \
            maxrow_body_##SUF(j, xp, yp, t, room, rows, 0, 0);                                         \
    }

/* max(m, v) with a NaN of either operand kept (maxps returns its 2nd operand for NaN). */
__attribute__((target("avx512f"))) static inline __m512 vmax512(__m512 m, __m512 v)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_max_ps(v, m), v);
}
__attribute__((target("avx512f"))) static inline __m512 evens512(__m512 a, __m512 b)
{
    const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, idx, b);
}
__attribute__((target("avx2"))) static inline __m256 vmax256(__m256 m, __m256 v)
{
    return _mm256_blendv_ps(_mm256_max_ps(v, m), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}
__attribute__((target("avx2"))) static inline __m256 evens256(__m256 a, __m256 b)
{
    /* lanes a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit pairs reordered */
    __m256 s = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* The first n (< VL) floats at p; the lanes past them are not read (and are 0 in the vector). */
__attribute__((target("avx512f"))) static inline __m512 mload512(const float *p, int64_t n)
{
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
__attribute__((target("avx512f"))) static inline void mstore512(float *p, __m512 v, int64_t n)
{
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}
/* as mload512 / mstore512, n up to 16 */
__attribute__((target("avx512f"))) static inline __m512 mload16(const float *p, int64_t n)
{
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
__attribute__((target("avx512f"))) static inline void mstore16(float *p, __m512 v, int64_t n)
{
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}
static const int32_t lane_mask8[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
__attribute__((target("avx2"))) static inline __m256 mload256(const float *p, int64_t n)
{
    return _mm256_maskload_ps(p, _mm256_loadu_si256((const __m256i *)(lane_mask8 + 8 - n)));
}
/* The first n (< 8) lanes of v to p: through a buffer, not vmaskmovps, whose stores are microcoded on AMD cores
 * (googlenet's 3x3/s1 max pools on 14x14 maps, two masked stores an output row, ran at 3x onnxruntime's time). */
__attribute__((target("avx2"))) static inline void mstore256(float *p, __m256 v, int64_t n)
{
    float b[8];
    _mm256_storeu_ps(b, v);
    for (int64_t i = 0; i < n; i++)
        p[i] = b[i];
}

__attribute__((target("avx2"))) static inline void mstore8(float *p, __m256 v, int64_t n)
{
    if (n >= 8)
        _mm256_storeu_ps(p, v);
    else
        mstore256(p, v, n);
}

/* max(m, v) where neither is NaN: the same result as vmax*() (maxps(v, m): m where equal), one instruction. */
__attribute__((target("avx512f"))) static inline __m512 fmax512(__m512 m, __m512 v) { return _mm512_max_ps(v, m); }
__attribute__((target("avx2"))) static inline __m256 fmax256(__m256 m, __m256 v) { return _mm256_max_ps(v, m); }

MAXROW_IMPL(avx512, __attribute__((target("avx512f"))), __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, mload512,
            mstore512, _mm512_set1_ps, evens512, vmax512)
MAXROW_IMPL(avx2, __attribute__((target("avx2"))), __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, mload256,
            mstore256, _mm256_set1_ps, evens256, vmax256)
/* planes without NaN (checked first: one pass, a third of the NaN-keeping max's cost on 3x3 windows) */
MAXROW_IMPL(avx512_nonan, __attribute__((target("avx512f"))), __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps,
            mload512, mstore512, _mm512_set1_ps, evens512, fmax512)
MAXROW_IMPL(avx2_nonan, __attribute__((target("avx2"))), __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, mload256,
            mstore256, _mm256_set1_ps, evens256, fmax256)

/* Whether any of the n floats at x is NaN. */
__attribute__((target("avx2"))) static int any_nan(const float *x, int64_t n)
{
    __m256 u = _mm256_setzero_ps(), u2 = u;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) { /* unordered(a, b): a NaN in either; two chains */
        u = _mm256_or_ps(u, _mm256_cmp_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i + 8), _CMP_UNORD_Q));
        u2 = _mm256_or_ps(u2, _mm256_cmp_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(x + i + 24), _CMP_UNORD_Q));
    }
    u = _mm256_or_ps(u, u2);
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        u = _mm256_or_ps(u, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    int r = _mm256_movemask_ps(u) != 0;
    for (; i < n; i++)
        r |= x[i] != x[i];
    return r;
}

/* t[0, n) = -inf; n a multiple of 8 */
__attribute__((target("avx2"))) static void fill_ninf(float *t, int64_t n)
{
    const __m256 v = _mm256_set1_ps(-INFINITY);
    for (int64_t i = 0; i < n; i += 8)
        _mm256_store_ps(t + i, v);
}

/* ---- vector average path ---------------------------------------------------------------------- */

/* The count of window column o (data only, or padding included) and of window row oh; 0 for a window of nothing. */
static float col_count(const pool_job *j, int64_t o)
{
    int64_t ws = o * j->sw - j->pw, we = ws + j->kw;
    return (float)(j->p->average_count_excludes_padding ? imax(imin(we, j->W) - imax(ws, 0), 0)
                                                        : imax(imin(we, j->W + j->qw) - imax(ws, -j->pw), 0));
}
static float row_count(const pool_job *j, int64_t oh)
{
    int64_t hs = oh * j->sh - j->ph, he = hs + j->kh;
    return (float)(j->p->average_count_excludes_padding ? imax(imin(he, j->H) - imax(hs, 0), 0)
                                                        : imax(imin(he, j->H + j->qh) - imax(hs, -j->ph), 0));
}

/* Per output row: the window's rows summed column-wise into a row buffer padded with zeros, then every output is
 * the sum of kw consecutive (stride 1) or every-other (stride 2) buffer floats divided by its count, the product
 * of the row's count and the column's (wc[o], built once per call): the reference's count, data only or padding
 * included, factorizes so.  A count of 0 (a window of nothing) gives 0, as in the reference.  NaN / Inf
 * propagate through the sums as in the reference; only the order of the additions differs. */
#define AVGROW_IMPL(SUF, TGT, V, VL, LOAD, STORE, MLOAD, MSTORE, SET1, EVENS, ADD, DIVZ)                       \
    TGT static void avgrow_##SUF(const pool_job *j, const float *xp, float *yp, float *t, const float *wc)    \
    {                                                                                                 \
        const int64_t W = j->W, OW = j->OW, wend = max_row_floats(j);                                  \
        const V zero = SET1(0.0f);                                                                     \
        int64_t i = 0; /* zeros once: rows of data overwrite [pw, pw + W) only, the padding stays */    \
        for (; i + VL <= wend; i += VL)                                                                \
            STORE(t + i, zero);                                                                        \
        for (; i < wend; i++)                                                                          \
            t[i] = 0.0f;                                                                               \
        for (int64_t oh = 0; oh < j->OH; oh++) {                                                       \
            int64_t hs = oh * j->sh - j->ph, h0 = imax(hs, 0), h1 = imin(hs + j->kh, j->H);             \
            if (h0 >= h1) /* a window of padding rows only */                                          \
                for (i = 0; i < W; i++)                                                                \
                    t[j->pw + i] = 0.0f;                                                               \
            if (h0 < h1) {                                                                             \
                float *tr = t + j->pw;                                                                 \
                const float *r0 = xp + h0 * W;                                                         \
                int64_t w = 0;                                                                         \
                for (; w + VL <= W; w += VL) {                                                         \
                    V m = LOAD(r0 + w);                                                                \
                    for (int64_t ih = h0 + 1; ih < h1; ih++)                                           \
                        m = ADD(m, LOAD(xp + ih * W + w));                                             \
                    STORE(tr + w, m);                                                                  \
                }                                                                                     \
                if (w < W) {                                                                           \
                    V m = MLOAD(r0 + w, W - w);                                                        \
                    for (int64_t ih = h0 + 1; ih < h1; ih++)                                           \
                        m = ADD(m, MLOAD(xp + ih * W + w, W - w));                                     \
                    MSTORE(tr + w, m, W - w);                                                          \
                }                                                                                     \
            }                                                                                         \
            const float hc = row_count(j, oh);                                                         \
            const V hv = SET1(hc);                                                                     \
            float *yr = yp + oh * OW;                                                                  \
            int64_t o = 0;                                                                             \
            if (j->sw == 1) {                                                                          \
                for (; o < OW; o += VL) {                                                              \
                    V m = LOAD(t + o);                                                                 \
                    for (int64_t k = 1; k < j->kw; k++)                                                \
                        m = ADD(m, LOAD(t + o + k));                                                   \
                    m = DIVZ(m, _mul(hv, LOAD(wc + o)));                                               \
                    if (oh * OW + o + VL <= j->OH * OW) /* in the plane: later rows overwrite the spill */ \
                        STORE(yr + o, m);                                                              \
                    else                                                                               \
                        MSTORE(yr + o, m, OW - o);                                                     \
                }                                                                                     \
            } else if (j->sw == 2) {                                                                   \
                for (; o < OW; o += VL) {                                                              \
                    const float *b = t + 2 * o;                                                        \
                    V m = EVENS(LOAD(b), LOAD(b + VL));                                                \
                    for (int64_t k = 1; k < j->kw; k++)                                                \
                        m = ADD(m, EVENS(LOAD(b + k), LOAD(b + k + VL)));                              \
                    m = DIVZ(m, _mul(hv, LOAD(wc + o)));                                               \
                    if (oh * OW + o + VL <= j->OH * OW) /* in the plane: later rows overwrite the spill */ \
                        STORE(yr + o, m);                                                              \
                    else                                                                               \
                        MSTORE(yr + o, m, OW - o);                                                     \
                }                                                                                     \
            }                                                                                         \
            for (; o < OW; o++) {                                                                      \
                const float *b = t + o * j->sw;                                                        \
                float m = b[0];                                                                        \
                for (int64_t k = 1; k < j->kw; k++)                                                    \
                    m += b[k];                                                                         \
                float cnt = hc * wc[o];                                                                \
                yr[o] = cnt > 0.0f ? m / cnt : 0.0f;                                                   \
            }                                                                                         \
        }                                                                                             \
    }

/* a / b where b > 0, else 0 (b is a window count: 0 or a positive integer) */
__attribute__((target("avx512f"))) static inline __m512 divz512(__m512 a, __m512 b)
{
    return _mm512_maskz_div_ps(_mm512_cmp_ps_mask(b, _mm512_setzero_ps(), _CMP_GT_OQ), a, b);
}
__attribute__((target("avx2"))) static inline __m256 divz256(__m256 a, __m256 b)
{
    return _mm256_and_ps(_mm256_div_ps(a, b), _mm256_cmp_ps(b, _mm256_setzero_ps(), _CMP_GT_OQ));
}

#define _mul _mm512_mul_ps
AVGROW_IMPL(avx512, __attribute__((target("avx512f"))), __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, mload512,
            mstore512, _mm512_set1_ps, evens512, _mm512_add_ps, divz512)
#undef _mul
#define _mul _mm256_mul_ps
AVGROW_IMPL(avx2, __attribute__((target("avx2"))), __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, mload256,
            mstore256, _mm256_set1_ps, evens256, _mm256_add_ps, divz256)
#undef _mul

/* The small-plane path (stride 1 along W; Inception-V3's 35x35, 17x17 and 8x8 pools, GoogLeNet's): v holds one
 * padded row of Wp floats per OUTPUT row, the column-wise sum of that output's window rows at [pw, pw + W) and
 * zeros around it; each output is then the sum of kw consecutive floats of its row times the reciprocal of its
 * count, rc[oh][o] (built once per call).  The row path's per-row set-up and division are what this saves: the
 * divisions were a third of a 17x17 plane's time. */
static int64_t plane_wp(const pool_job *j)
{
    int64_t a = (j->OW - 1) * j->sw + j->kw, b = j->pw + j->W;
    return a > b ? a : b;
}
static int64_t plane_owr(const pool_job *j) { return (j->OW + 15) & ~(int64_t)15; }
/* Floats of v: OH padded rows, then what the last row's vectors read past it (outputs up to OWr, kw - 1 more). */
static int64_t plane_v_floats(const pool_job *j) { return j->OH * plane_wp(j) + plane_owr(j) + j->kw + 16; }
static int plane_path(const pool_job *j)
{
    /* (row_path() bounds OW, kw, pw and W first; each factor is bounded before the products) */
    return row_path(j) && j->sw == 1 && j->OW <= 256 && j->OH <= 256 && plane_v_floats(j) <= ROW_MAX &&
           j->OH * plane_owr(j) <= ROW_MAX;
}

/* One plane; v's floats outside the data columns of rows with data are zero when called (set once per task: every
 * plane writes the same floats, a row's masked tail writes zeros past the data).  kh and kw are compile-time KH and
 * KW for 3x3 windows (loops unrolled: with run-time trip counts a 35x35 plane ran at ~3 instructions per float), else
 * 0: j's. */
#define AVGPLANE_IMPL(SUF, TGT, V, VL, LOAD, STORE, MLOAD, MSTORE, ADD, MUL)                                    \
    TGT static inline __attribute__((always_inline)) void avgplane_body_##SUF(                                \
        const pool_job *j, const float *xp, float *yp, float *v, const float *rc, const int64_t KH,            \
        const int64_t KW)                                                                                     \
    {                                                                                                 \
        const int64_t W = j->W, OW = j->OW, OH = j->OH, Wp = plane_wp(j), OWr = plane_owr(j);           \
        const int64_t kh = KH ? KH : j->kh, kw = KW ? KW : j->kw;                                      \
        for (int64_t oh = 0; oh < OH; oh++) {                                                          \
            const int64_t hs = oh * j->sh - j->ph, h0 = imax(hs, 0), h1 = imin(hs + kh, j->H);          \
            if (h0 >= h1) /* padding rows only: zeros since the set-up */                              \
                continue;                                                                             \
            float *vr = v + oh * Wp + j->pw;                                                           \
            const float *r0 = xp + h0 * W;                                                             \
            int64_t w = 0;                                                                             \
            if (h1 - h0 == kh) { /* a whole window of rows (KH: unrolled) */                          \
                for (; w + VL <= W; w += VL) {                                                         \
                    V m = LOAD(r0 + w);                                                                \
                    for (int64_t k = 1; k < kh; k++)                                                   \
                        m = ADD(m, LOAD(r0 + k * W + w));                                              \
                    STORE(vr + w, m);                                                                  \
                }                                                                                     \
            } else {                                                                                   \
                for (; w + VL <= W; w += VL) {                                                         \
                    V m = LOAD(r0 + w);                                                                \
                    for (int64_t ih = h0 + 1; ih < h1; ih++)                                           \
                        m = ADD(m, LOAD(xp + ih * W + w));                                             \
                    STORE(vr + w, m);                                                                  \
                }                                                                                     \
            }                                                                                         \
            if (w < W) { /* lanes past W are 0: the padding right of the row (the next row rewrites \
                                       what this store spills over its data) */                        \
                V m = MLOAD(r0 + w, W - w);                                                            \
                for (int64_t ih = h0 + 1; ih < h1; ih++)                                               \
                    m = ADD(m, MLOAD(xp + ih * W + w, W - w));                                         \
                STORE(vr + w, m);                                                                      \
            }                                                                                         \
        }                                                                                             \
        for (int64_t oh = 0; oh < OH; oh++) {                                                          \
            const float *vr = v + oh * Wp, *rr = rc + oh * OWr;                                          \
            float *yr = yp + oh * OW;                                                                  \
            for (int64_t o = 0; o < OW; o += VL) {                                                     \
                V m = LOAD(vr + o);                                                                    \
                for (int64_t k = 1; k < kw; k++)                                                       \
                    m = ADD(m, LOAD(vr + o + k));                                                      \
                m = MUL(m, LOAD(rr + o));                                                              \
                if (oh * OW + o + VL <= OH * OW) /* in the plane: later rows overwrite the spill */   \
                    STORE(yr + o, m);                                                                  \
                else                                                                                   \
                    MSTORE(yr + o, m, OW - o);                                                         \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    TGT static void avgplane_##SUF(const pool_job *j, const float *xp, float *yp, float *v, const float *rc)  \
    {                                                                                                 \
        if (j->kh == 3 && j->kw == 3)                                                                  \
            avgplane_body_##SUF(j, xp, yp, v, rc, 3, 3);                                               \
        else                                                                                           \
            avgplane_body_##SUF(j, xp, yp, v, rc, 0, 0);                                               \
    }

AVGPLANE_IMPL(avx512, __attribute__((target("avx512f"))), __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, mload16,
              mstore16, _mm512_add_ps, _mm512_mul_ps)
AVGPLANE_IMPL(avx2, __attribute__((target("avx2"))), __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, mload256, mstore8,
              _mm256_add_ps, _mm256_mul_ps)

/* The small-plane path's reciprocal counts rc[oh][o] (OWr floats a row): 0 for a window of nothing and past OW.  Built
 * once per call (a task of a few 17x17 planes spent as long on it as on the planes). */
static void rc_table(const pool_job *j, float *rc)
{
    const int64_t OWr = plane_owr(j);
    for (int64_t oh = 0; oh < j->OH; oh++) {
        const float hc = row_count(j, oh);
        for (int64_t o = 0; o < OWr; o++) {
            const float c = o < j->OW ? hc * col_count(j, o) : 0.0f;
            rc[oh * OWr + o] = c > 0.0f ? 1.0f / c : 0.0f;
        }
    }
}

static void avg_planes(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const pool_job *j = ctx;
    float t[ROW_MAX] __attribute__((aligned(64)));
    float wc[ROW_MAX] __attribute__((aligned(64)));
    const int wide = trtl_cpu_has(TRTL_CPU_AVX512F);
    if (plane_path(j)) {
        /* t: the plane's column sums (v), zero once a task */
        float *v = t;
        const float *rc = j->rc;
        const int64_t nv = plane_v_floats(j);
        for (int64_t i = 0; i < nv; i++)
            v[i] = 0.0f;
        for (int64_t pl = begin; pl < end; pl++) {
            const float *xp = j->x + pl * j->H * j->W;
            float *yp = j->y + pl * j->OH * j->OW;
            if (wide)
                avgplane_avx512(j, xp, yp, v, rc);
            else
                avgplane_avx2(j, xp, yp, v, rc);
        }
        return;
    }
    /* the columns' counts, zero a vector past OW (read by the last, masked, output vector) */
    for (int64_t o = 0; o < j->OW + 16; o++)
        wc[o] = o >= j->OW ? 0.0f : col_count(j, o);
    for (int64_t pl = begin; pl < end; pl++) {
        const float *xp = j->x + pl * j->H * j->W;
        float *yp = j->y + pl * j->OH * j->OW;
        if (wide)
            avgrow_avx512(j, xp, yp, t, wc);
        else
            avgrow_avx2(j, xp, yp, t, wc);
    }
}

static void max_planes(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const pool_job *j = ctx;
    float t[ROW_MAX] __attribute__((aligned(64)));
    const int wide = trtl_cpu_has(TRTL_CPU_AVX512F);
    const int64_t rows = imin(ROW_MAX / max_row_stride(j), j->OH); /* the row buffer's rows, -inf once */
    fill_ninf(t, rows * max_row_stride(j));
    for (int64_t pl = begin; pl < end; pl++) {
        const float *xp = j->x + pl * j->H * j->W;
        float *yp = j->y + pl * j->OH * j->OW;
        const int64_t room = (j->planes - 1 - pl) * j->H * j->W; /* floats of x past this plane */
        /* the check reads the plane once more: on planes past half of L1 it cost more than it saved (112x112
         * s2: +28%), there the NaN-keeping max runs without it */
        const int nan = j->H * j->W > NAN_CHECK_MAX || any_nan(xp, j->H * j->W);
        if (wide)
            (nan ? maxrow_avx512 : maxrow_avx512_nonan)(j, xp, yp, t, room, rows);
        else
            (nan ? maxrow_avx2 : maxrow_avx2_nonan)(j, xp, yp, t, room, rows);
    }
}

static int pool_applies(const trtl_node *n, const trtl_dims *in_dims)
{
    const trtl_pooling_params *p = &n->p.pool;
    return p->window_size.nb_dims == 2 && in_dims[0].nb_dims >= 3 && p->type >= TRTL_POOL_MAX &&
           p->type <= TRTL_POOL_MAX_AVERAGE_BLEND;
}

static trtl_status pool_run(const trtl_kernel_args *a)
{
    const trtl_pooling_params *p = &a->node->p.pool;
    const trtl_dims *xd = &a->in[0].dims, *yd = &a->out[0].dims;
    int r = xd->nb_dims;
    pool_job j = {p, a->in[0].data, a->out[0].data, xd->d[r - 2], xd->d[r - 1], yd->d[r - 2], yd->d[r - 1],
                  p->window_size.d[0], p->window_size.d[1], p->stride.d[0], p->stride.d[1], 0, 0, 0, 0, 0, 0,
                  NULL};
    int64_t oh, ow;
    if (trtl_spatial_out(j.H, j.kh, j.sh, p->pre_padding.d[0], p->post_padding.d[0], p->padding_mode, 1, &oh, &j.ph,
                         &j.qh) != TRTL_OK ||
        trtl_spatial_out(j.W, j.kw, j.sw, p->pre_padding.d[1], p->post_padding.d[1], p->padding_mode, 1, &ow, &j.pw,
                         &j.qw) != TRTL_OK)
        return trtl_error_prefix("layer '%s'", a->node->name);
    if (oh != j.OH || ow != j.OW)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %lldx%lld, expected %lldx%lld", a->node->name,
                          (long long)j.OH, (long long)j.OW, (long long)oh, (long long)ow);
    int64_t planes = trtl_volume_range(xd, 0, r - 2);
    j.planes = planes;
    j.spill = (j.OW - 1) * j.sw + j.kw <= j.pw + j.W;
    /* ~32k window reads per task keeps threading worthwhile on small maps */
    /* (in double: the window reads of a plane overflow int64 when planes is 0 and the window huge) */
    double per_plane = (double)j.OH * (double)j.OW * (double)j.kh * (double)j.kw;
    int64_t grain = per_plane > 32768 ? 1 : 32768 / ((int64_t)per_plane + 1) + 1;
    const int vec = trtl_cpu_has(TRTL_CPU_AVX2) && row_path(&j); /* (row_path: max_row_stride() <= ROW_MAX too) */
    void (*fn)(void *, int64_t, int64_t, int) = pool_planes;
    float rc[ROW_MAX] __attribute__((aligned(64)));
    if (vec && p->type == TRTL_POOL_MAX) {
        fn = max_planes;
    } else if (vec && p->type == TRTL_POOL_AVERAGE) {
        fn = avg_planes;
        if (plane_path(&j)) {
            rc_table(&j, rc);
            j.rc = rc;
        }
    }
    trtl_parallel_for(a->pool, planes, grain, fn, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_pooling_2d = {
    .name = "pooling.2d",
    .op = TRTL_OP_POOLING,
    .applies = pool_applies,
    .run = pool_run,
};
