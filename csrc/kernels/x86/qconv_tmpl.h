/*
 * qconv_tmpl.h -- the SIMD pieces of the int8 convolution library (qconv_internal.h), written once
 * and instantiated per ISA by qconv_vnni.c (AVX512-VNNI, AVX-VNNI) and qconv_avx2.c.
 *
 * The includer defines:
 *   QT_SFX                 name suffix;  QT_ATTR  the function attribute (target ISA)
 *   QT_VL, QT_MR, QT_NV, QT_G   lanes, tile rows, tile strips, depth values per 32-bit word
 *   QT_ELEM                uint8_t (G = 4) or int16_t (G = 2)
 *   QT_DOT_CONV(acc, u, w) acc += the G-wide dot products of strip vector u (activations) and the
 *                          broadcast weight word w;  QT_DOT_GEMM(acc, a, w): broadcast activation
 *                          word a with weight strip vector w
 *   VI / VF and the V* operation macros (loads, stores, masks, arithmetic) of the vector width,
 *   QT_NARROW_STORE(dst, v)  VL int32 values (already clamped) stored as VL elements
 *   QT_COMBINE(dst, src)     VL words from G rows of VL elements (src[i][col] is depth q*G + i)
 *
 * Quantizing divides by the scale as the reference does (float32 x / scale, correctly rounded),
 * without a divide: t = x * rcp, e = x - t * scale (exact with FMA), t + e * rcp is the correctly
 * rounded quotient when rcp is the rounded reciprocal (Markstein's correction step; the C tests
 * compare it with the division on ties and random values).  x is first clamped to +-512 scale,
 * which saturates every code and maps NaN to the lowest one (maxps returns its 2nd operand on NaN).
 */
#include <string.h>

#include "kernels/qconv_internal.h"
#include "kernels/x86/fused_epilogue.h"

#define QT_CAT2(a, b) a##_##b
#define QT_CAT(a, b) QT_CAT2(a, b)
#define QT_FN(name) QT_CAT(name, QT_SFX)

/* Correctly rounded x / s (x clamped to +-lim first). */
QT_ATTR static inline VF QT_FN(qt_quot)(VF x, VF s, VF r, VF lim)
{
    VF xc = VF_MIN(VF_MAX(x, VF_SUB(VF_ZERO(), lim)), lim);
    VF t = VF_MUL(xc, r);
    VF e = VF_FNMADD(t, s, xc);
    return VF_FMADD(e, r, t);
}

/* VL (n <= VL valid) residual codes at p as floats (q - res_zero) * res_scale. */
QT_ATTR static inline VF QT_FN(qt_res_codes)(const int8_t *p, int n, const trtl_qk_epi *e)
{
    int8_t tmp[16] = {0};
    if (n < QT_VL) {
        memcpy(tmp, p, (size_t)n);
        p = tmp;
    }
#if QT_VL == 16
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
    VI q = e->res_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
#else
    __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)p);
    VI q = e->res_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
#endif
    return VF_MUL(VF_CVT_I2F(VI_SUB(q, VI_SET1(e->res_zero))), VF_SET1(e->res_scale));
}

/* Fake quantization before the residual (mid_quant): (sat(rne(v / s) + z) - z) * s. */
QT_ATTR static inline VF QT_FN(qt_fq_mid)(VF v, const trtl_qk_epi *e)
{
    VF s = VF_SET1(e->mid_scale);
    VI q = VF_CVT_F2I(QT_FN(qt_quot)(v, s, VF_SET1(e->mid_rcp), VF_SET1(e->mid_lim)));
    q = VI_MIN(VI_MAX(q, VI_SET1(e->mid_lo)), VI_SET1(e->mid_hi));
    return VF_MUL(VF_CVT_I2F(q), s);
}

/* Fake quantization of VL outputs. */
QT_ATTR static inline VF QT_FN(qt_fq)(VF v, const trtl_qk_epi *e)
{
    VF s = VF_SET1(e->out_scale);
    VI q = VF_CVT_F2I(QT_FN(qt_quot)(v, s, VF_SET1(e->out_rcp), VF_SET1(e->out_lim)));
    q = VI_MIN(VI_MAX(q, VI_SET1(e->out_lo)), VI_SET1(e->out_hi));
    return VF_MUL(VF_CVT_I2F(q), s);
}

QT_ATTR static inline VF QT_FN(qt_act)(VF v, int32_t act, float alpha, float beta)
{
    switch (act) {
    case TRTL_ACT_RELU: return VF_MAX(VF_ZERO(), v); /* maxps gives its 2nd operand (v) for NaN */
    case TRTL_ACT_LEAKY_RELU: return VF_BLEND(VF_CMP_GE(v, VF_ZERO()), VF_MUL(v, VF_SET1(alpha)), v);
    case TRTL_ACT_CLIP: {
        VF t = VF_BLEND(VF_CMP_GT(v, VF_SET1(beta)), v, VF_SET1(beta));
        return VF_BLEND(VF_CMP_LT(v, VF_SET1(alpha)), t, VF_SET1(alpha));
    }
    default: return v;
    }
}

QT_ATTR static void QT_FN(qt_fakequant)(float *y, int64_t n, const trtl_qk_epi *e)
{
    int64_t i = 0;
    for (; i + QT_VL <= n; i += QT_VL)
        VF_STORE(y + i, QT_FN(qt_fq)(VF_LOAD(y + i), e));
    if (i < n) {
        VMASK m = VMASK_N((int)(n - i));
        VF_STOREM(y + i, m, QT_FN(qt_fq)(VF_LOADM(y + i, m), e));
    }
}

/* Output codes (out_quant = 2) of n <= VL values v (bias and residual added, activation not yet
 * applied): act, then sat(rne(v / out_scale) + out_zero), stored as n bytes at dst. */
QT_ATTR static inline void QT_FN(qt_store_codes)(VF v, int8_t *dst, int n, const trtl_qk_epi *e, int fast)
{
    int32_t c[QT_VL];
    if (fast) {
        v = QT_FN(qt_act)(v, e->act, e->alpha, e->beta);
        VF s = VF_SET1(e->out_scale);
        VI q = VF_CVT_F2I(QT_FN(qt_quot)(v, s, VF_SET1(e->out_rcp), VF_SET1(e->out_lim)));
        q = VI_MIN(VI_MAX(q, VI_SET1(e->out_lo)), VI_SET1(e->out_hi));
        q = VI_ADD(q, VI_SET1(e->out_zero));
        /* codes in [-128, 255]: their low bytes */
#if QT_VL == 16
        _mm512_mask_cvtepi32_storeu_epi8(dst, VMASK_N(n), q);
#else
        __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        h = e->out_lo + e->out_zero < 0 ? _mm_packs_epi16(h, h) : _mm_packus_epi16(h, h);
        if (n == QT_VL) {
            _mm_storel_epi64((__m128i *)(void *)dst, h);
        } else {
            int8_t b[16];
            _mm_storeu_si128((__m128i *)(void *)b, h);
            memcpy(dst, b, (size_t)n);
        }
#endif
        return;
    } else { /* the other activations, one value at a time */
        float f[QT_VL];
        const int sgn = e->out_lo + e->out_zero < 0;
        VF_STORE(f, v);
        for (int i = 0; i < n; i++)
            c[i] = trtl_q8_quantize(trtl_activation_eval(e->act, e->alpha, e->beta, f[i]), e->out_scale, e->out_zero,
                                    sgn);
    }
    for (int i = 0; i < n; i++)
        dst[i] = (int8_t)c[i]; /* uint8 codes keep their bit pattern */
}

/* VL floats -> VL clamped codes (int32 lanes). */
QT_ATTR static inline VI QT_FN(qt_codes)(VF x, const trtl_qk_quant *q)
{
    VI v = VF_CVT_F2I(QT_FN(qt_quot)(x, VF_SET1(q->scale), VF_SET1(q->rcp), VF_SET1(q->lim)));
    v = VI_ADD(v, VI_SET1(q->add));
    return VI_MIN(VI_MAX(v, VI_SET1(q->lo)), VI_SET1(q->hi));
}

QT_ATTR static void QT_FN(qt_quant)(const float *x, int64_t n, void *dst, const trtl_qk_quant *q)
{
    QT_ELEM *o = dst;
    int64_t i = 0;
    for (; i + QT_VL <= n; i += QT_VL)
        QT_NARROW_STORE(o + i, QT_FN(qt_codes)(VF_LOAD(x + i), q));
    if (i < n) {
        QT_ELEM tmp[QT_VL];
        QT_NARROW_STORE(tmp, QT_FN(qt_codes)(VF_LOADM(x + i, VMASK_N((int)(n - i))), q));
        memcpy(o + i, tmp, (size_t)(n - i) * sizeof(QT_ELEM));
    }
}

#define QT_ROW_BYTES (QT_VL * (int)sizeof(QT_ELEM)) /* 16 or 8 */
#define QT_MAX_RUNS 4

/* A row of VL elements (16 or 8 bytes) from p into an xmm register. */
QT_ATTR static inline __m128i QT_FN(qt_row_load)(const QT_ELEM *p)
{
    return QT_ROW_BYTES == 16 ? _mm_loadu_si128((const __m128i *)(const void *)p)
                              : _mm_loadl_epi64((const __m128i *)(const void *)p);
}

/* The even elements of 2 VL elements at p (a stride-2 row). */
QT_ATTR static inline __m128i QT_FN(qt_row_load2)(const QT_ELEM *p)
{
    if (sizeof(QT_ELEM) == 2) { /* int16: sign-extend the even halves of the int32 lanes, pack back */
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 8));
        return _mm_packs_epi32(_mm_srai_epi32(_mm_slli_epi32(a, 16), 16), _mm_srai_epi32(_mm_slli_epi32(b, 16), 16));
    }
    const __m128i lo = _mm_set1_epi16(0x00FF);
    __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)p), lo);
    if (QT_ROW_BYTES == 8) /* 16 bytes in, 8 out */
        return _mm_packus_epi16(a, a);
    __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 16)), lo);
    return _mm_packus_epi16(a, b);
}

/*
 * One strip of im2col'd activations.  Three ways to fetch the VL columns of a depth row:
 *   runs        the columns are runs of stride 1 or 2 in the padded image (a strip crossing
 *               output rows has one run per row, at most QT_MAX_RUNS): one load (stride 2: two
 *               loads, the even elements kept) per run, blended by column; a single run of
 *               stride 1 (1x1 convolutions, strips inside an output row) is read in place;
 *   gather      anything else: one element at a time.
 * The loads read up to 2 VL elements beyond the kept columns on either side: the driver leaves
 * guards around the padded image.
 */
QT_ATTR static void QT_FN(qt_pack_strip)(const trtl_qk_strip *s)
{
    const QT_ELEM *plane = s->plane;
    const int64_t *off = s->off;
    const int ncols = s->ncols;
    const int64_t sw = ncols > 1 ? off[1] - off[0] : 1;
    /* run r starts at column start[r]; column c of it reads plane + doff + ro[r] + c * sw */
    int nruns = 1, start[QT_MAX_RUNS] = {0};
    int64_t ro[QT_MAX_RUNS] = {off[0]};
    for (int c = 1; c < ncols && nruns <= QT_MAX_RUNS; c++) {
        if (off[c] == off[c - 1] + sw)
            continue;
        if (nruns < QT_MAX_RUNS) {
            start[nruns] = c;
            ro[nruns] = off[c] - c * sw;
        }
        nruns++;
    }
    const int use_runs = nruns <= QT_MAX_RUNS && (sw == 1 || sw == 2);
    __m128i mask[QT_MAX_RUNS];
    if (use_runs) {
        /* byte b belongs to column b / sizeof(QT_ELEM); mask[r]: the columns >= start[r] */
        const __m128i col = sizeof(QT_ELEM) == 1 ? _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
                                                 : _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
        for (int r = 0; r < nruns; r++)
            mask[r] = _mm_cmpgt_epi8(col, _mm_set1_epi8((char)(start[r] - 1)));
    }
    QT_ELEM zero[16], tmp[QT_G][16];
    for (int i = 0; i < 16; i++)
        zero[i] = (QT_ELEM)s->pad;
    for (int64_t q = 0; q < s->steps; q++) {
        const QT_ELEM *src[QT_G];
        for (int i = 0; i < QT_G; i++) {
            int64_t dd = q * QT_G + i;
            if (dd >= s->D) {
                src[i] = zero;
            } else if (use_runs) {
                const QT_ELEM *p = plane + s->doff[dd];
                if (nruns == 1 && sw == 1) {
                    src[i] = p + ro[0];
                    continue;
                }
                __m128i v = sw == 1 ? QT_FN(qt_row_load)(p + ro[0]) : QT_FN(qt_row_load2)(p + ro[0]);
                for (int r = 1; r < nruns; r++)
                    v = _mm_blendv_epi8(v, sw == 1 ? QT_FN(qt_row_load)(p + ro[r]) : QT_FN(qt_row_load2)(p + ro[r]),
                                        mask[r]);
                _mm_storeu_si128((__m128i *)(void *)tmp[i], v);
                src[i] = tmp[i];
            } else {
                const QT_ELEM *p = plane + s->doff[dd];
                int c = 0;
                for (; c < ncols; c++)
                    tmp[i][c] = p[off[c]];
                for (; c < QT_VL; c++)
                    tmp[i][c] = (QT_ELEM)s->pad;
                src[i] = tmp[i];
            }
        }
        QT_COMBINE(s->dst + q * QT_VL, src);
    }
}

/* n input codes at x (int8 when in_signed, else uint8) -> n elements at dst, as the quantizer makes
 * them: u8 the code + 128 for signed codes (the +128 shift), int16 the code - in_zero. */
QT_ATTR static void QT_FN(qt_codes_elems)(const void *x, int64_t n, void *dst, int32_t in_signed, int32_t in_zero)
{
    QT_ELEM *er = dst;
    int64_t i = 0;
    if (QT_G == 4) {
        const uint8_t *b = x, flip = in_signed ? 0x80 : 0;
        const __m128i f = _mm_set1_epi8((char)flip);
#if QT_VL == 16
        /* AVX-512 BW: 64 codes a masked load / store, no byte loop for the tail */
        const __m512i f64 = _mm512_set1_epi8((char)flip);
        for (; i < n; i += 64) {
            const __mmask64 m = n - i >= 64 ? ~0ull : (1ull << (n - i)) - 1;
            _mm512_mask_storeu_epi8(er + i, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, b + i), f64));
        }
#endif
        for (; i + 16 <= n; i += 16)
            _mm_storeu_si128((__m128i *)(void *)(er + i),
                             _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(b + i)), f));
        for (; i + 8 <= n; i += 8) /* a strip of 8 (AVX-VNNI's pack_direct) */
            _mm_storel_epi64((__m128i *)(void *)(er + i),
                             _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(const void *)(b + i)), f));
        for (; i < n; i++)
            er[i] = (QT_ELEM)(b[i] ^ flip);
    } else {
        const int8_t *b = x;
        const __m128i z = _mm_set1_epi16((short)in_zero);
        for (; i + 8 <= n; i += 8) {
            __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)(b + i));
            v = in_signed ? _mm_cvtepi8_epi16(v) : _mm_cvtepu8_epi16(v);
            _mm_storeu_si128((__m128i *)(void *)(er + i), _mm_sub_epi16(v, z));
        }
        for (; i < n; i++)
            er[i] = (QT_ELEM)((in_signed ? (int32_t)b[i] : (int32_t)(uint8_t)b[i]) - in_zero);
    }
}

/* The n <= VL values of channel c at pixels p0.. of the sequence of images (C channels of HW pixels each, es
 * bytes a value) gathered into buf: a strip that runs across an image boundary. */
static inline void QT_FN(qt_gather_cols)(const uint8_t *x, size_t es, int64_t C, int64_t HW, int64_t c, int64_t p0,
                                         int n, uint8_t *buf)
{
    for (int k = 0; k < n;) {
        const int64_t g = p0 + k, img = g / HW, pix = g - img * HW;
        const int m = HW - pix < n - k ? (int)(HW - pix) : n - k;
        memcpy(buf + (size_t)k * es, x + (size_t)((img * C + c) * HW + pix) * es, (size_t)m * es);
        k += m;
    }
}

/* One full strip word row from codes: the VL codes of each of the G channel rows at x (HW apart) turned into
 * elements (as qt_codes_elems) and interleaved into VL words at dst in registers: no element rows stored and
 * reloaded (the codes path of qt_pack_direct otherwise). */
QT_ATTR static inline void QT_FN(qt_codes_word_row)(const int8_t *x, int64_t HW, int32_t *dst, int32_t in_signed,
                                                    int32_t in_zero)
{
    if (QT_G == 4) { /* u8 elements: the code, + 128 for signed codes (flip the top bit) */
        const __m128i f = _mm_set1_epi8((char)(in_signed ? 0x80 : 0));
        __m128i r[4];
        for (int i = 0; i < 4; i++)
            r[i] = _mm_xor_si128(QT_VL == 16 ? _mm_loadu_si128((const __m128i *)(const void *)(x + i * HW))
                                             : _mm_loadl_epi64((const __m128i *)(const void *)(x + i * HW)),
                                 f);
        const __m128i a = _mm_unpacklo_epi8(r[0], r[1]), b = _mm_unpacklo_epi8(r[2], r[3]);
        _mm_storeu_si128((__m128i *)(void *)dst, _mm_unpacklo_epi16(a, b));
        _mm_storeu_si128((__m128i *)(void *)(dst + 4), _mm_unpackhi_epi16(a, b));
        if (QT_VL == 16) {
            const __m128i c = _mm_unpackhi_epi8(r[0], r[1]), d = _mm_unpackhi_epi8(r[2], r[3]);
            _mm_storeu_si128((__m128i *)(void *)(dst + 8), _mm_unpacklo_epi16(c, d));
            _mm_storeu_si128((__m128i *)(void *)(dst + 12), _mm_unpackhi_epi16(c, d));
        }
    } else { /* int16 elements: the code - in_zero (VL = 8) */
        const __m128i z = _mm_set1_epi16((short)in_zero);
        __m128i r[2];
        for (int i = 0; i < 2; i++) {
            __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)(x + i * HW));
            r[i] = _mm_sub_epi16(in_signed ? _mm_cvtepi8_epi16(v) : _mm_cvtepu8_epi16(v), z);
        }
        _mm_storeu_si128((__m128i *)(void *)dst, _mm_unpacklo_epi16(r[0], r[1]));
        _mm_storeu_si128((__m128i *)(void *)(dst + 4), _mm_unpackhi_epi16(r[0], r[1]));
    }
}

/*
 * 1x1, stride 1, unpadded convolution: strips [t0, t1) straight from x (channels HW apart), without
 * a padded image: floats quantized and combined in registers, or (x_codes) the G channel rows' codes
 * of a strip turned into elements (qt_codes_elems) and combined.  Strip t is dst + t * steps * VL.
 * The strips run over the pixels of nimg images ([nimg][C][HW]) as one sequence: a strip crossing an
 * image boundary gathers its columns first (qt_gather_cols).  Columns past nimg * HW (the last
 * strip's tail) are never stored by the tiles: their words are arbitrary.
 */
QT_ATTR static void QT_FN(qt_pack_direct)(const void *x, int32_t x_codes, int64_t C, int64_t HW, int64_t nimg,
                                           int64_t t0, int64_t t1, int64_t steps, int32_t *dst,
                                           const trtl_qk_quant *qp, int32_t in_signed, int32_t in_zero)
{
    QT_ELEM zero[QT_VL], el[QT_G][QT_VL];
    int8_t tail[QT_VL];
    float ft[QT_VL];
    const int64_t NP = nimg * HW, img0 = nimg > 1 ? t0 * QT_VL / HW : 0, pix0 = t0 * QT_VL - img0 * HW;
    const size_t es = x_codes ? 1 : sizeof(float);
    memset(zero, 0, sizeof zero);
    for (int64_t q = 0; q < steps; q++)
        for (int64_t t = t0, img = img0, pix = pix0; t < t1; t++) {
            const int64_t p0 = t * QT_VL;
            const int n = NP - p0 < QT_VL ? (int)(NP - p0) : QT_VL;
            const int cross = pix + n > HW;
            const uint8_t *xi = (const uint8_t *)x + (size_t)(img * C * HW) * es; /* image img */
            const int64_t pp = pix;
            for (pix += QT_VL; pix >= HW && img < nimg; pix -= HW) /* the next strip's image and pixel */
                img++;
            if (x_codes && !cross && n == QT_VL && (q + 1) * QT_G <= C) {
                QT_FN(qt_codes_word_row)((const int8_t *)xi + q * QT_G * HW + pp, HW, dst + (t * steps + q) * QT_VL,
                                         in_signed, in_zero);
                continue;
            }
            if (x_codes) {
                const QT_ELEM *src[QT_G];
                for (int i = 0; i < QT_G; i++) {
                    const int64_t c = q * QT_G + i;
                    if (c >= C) { /* zero weights there */
                        src[i] = zero;
                        continue;
                    }
                    const int8_t *xp = (const int8_t *)xi + c * HW + pp;
                    if (cross || n < QT_VL) { /* no read past the row */
                        memset(tail, 0, sizeof tail);
                        if (cross)
                            QT_FN(qt_gather_cols)(x, 1, C, HW, c, p0, n, (uint8_t *)tail);
                        else
                            memcpy(tail, xp, (size_t)n);
                        xp = tail;
                    }
                    QT_FN(qt_codes_elems)(xp, QT_VL, el[i], in_signed, in_zero);
                    src[i] = el[i];
                }
                QT_COMBINE(dst + (t * steps + q) * QT_VL, src);
                continue;
            }
            const VMASK m = VMASK_N(n);
            VI w = VI_ZERO();
            for (int i = 0; i < QT_G; i++) {
                int64_t c = q * QT_G + i;
                if (c >= C)
                    break;
                const float *xp = (const float *)(const void *)xi + c * HW + pp;
                if (cross) {
                    QT_FN(qt_gather_cols)(x, sizeof(float), C, HW, c, p0, n, (uint8_t *)ft);
                    xp = ft;
                }
                VI code = QT_FN(qt_codes)(n == QT_VL ? VF_LOAD(xp) : VF_LOADM(xp, m), qp);
                w = QT_WORD_OR(w, code, i);
            }
            VI_STORE(dst + (t * steps + q) * QT_VL, w);
        }
}

/* An accumulator vector (as floats) dequantized: accf * sc + bi, or accf * sc where the bias comes after the mid
 * quantization (bias_late: qt_epi_vec / qt_epc_store add bi there). */
QT_ATTR static inline VF QT_FN(qt_deq)(VF accf, VF sc, VF bi, int bias_late)
{
    return bias_late ? VF_MUL(accf, sc) : VF_ADD(VF_MUL(accf, sc), bi);
}

/* The epilogue of one accumulator vector (row i, vector j of a tile), dequantized to v (qt_deq; bi its bias):
 * fake quantization before the residual (then the bias, with bias_late), the residual (float or codes), then
 * either the output codes or the activation (fast ones in registers) and output fake quantization, stored to yr.
 * Shared by every tile body of this ISA (the register-blocked one below and AMX's, qconv_amx_tile.h), so the
 * epilogue has one definition per ISA. */
QT_ATTR static inline void QT_FN(qt_epi_vec)(VF v, VF bi, const trtl_qk_tile *t, const trtl_qk_epi *e, int i, int j,
                                             float *yr, const float *rr, VMASK tail, int fast)
{
    const int full = j < t->nv - 1 || t->last_cols == QT_VL;
    if (e->mid_quant)
        v = QT_FN(qt_fq_mid)(v, e);
    if (e->bias_late)
        v = VF_ADD(v, bi);
    if (rr)
        v = VF_ADD(v, full ? VF_LOAD(rr + j * QT_VL) : VF_LOADM(rr + j * QT_VL, tail));
    if (t->resq)
        v = VF_ADD(v, QT_FN(qt_res_codes)(t->resq + i * t->ldy + j * QT_VL, full ? QT_VL : t->last_cols, e));
    if (t->yq) {
        QT_FN(qt_store_codes)(v, t->yq + i * t->ldy + j * QT_VL, full ? QT_VL : t->last_cols, e, fast);
        return;
    }
    if (fast) {
        v = QT_FN(qt_act)(v, e->act, e->alpha, e->beta);
        if (e->out_quant)
            v = QT_FN(qt_fq)(v, e);
    }
    if (full)
        VF_STORE(yr + j * QT_VL, v);
    else
        VF_STOREM(yr + j * QT_VL, tail, v);
}

/*
 * The codes epilogue with its constants in registers: what qt_epi_vec does for a tile that writes
 * output codes (out_quant = 2) with a register activation and no float residual (mid quantization and
 * residual codes allowed) -- the same operations in the same order, so the codes are identical -- with
 * every scale, limit and clamp broadcast once per tile instead of once per vector (the code-byte stores
 * may alias the epilogue parameters, so the compiler reloads them otherwise).  MobileNetV2's int8
 * layers spent about half their time in qt_epi_vec's per-vector set-up.
 */
typedef struct QT_FN(qt_epc) {
    VF s, r, lim, nlim;      /* output quantizer */
    VI zero;
    VF ms, mr, mlim, mnlim;  /* mid quantizer (mid_quant) */
    VI mlo, mhi;
    VF rs;                   /* residual codes: (q - rz) * rs */
    VI rz;
    VF alpha, beta;
    VF flo, fhi;             /* fold: the activation and the +-lim clamp as one clamp */
    int32_t act, mid, rsigned, sgn, fold, late;
} QT_FN(qt_epc);

/* 1: the tile's epilogue can run qt_epc_store (codes out, register activation, no float residual). */
static inline int QT_FN(qt_epc_applies)(const trtl_qk_tile *t, int fast)
{
    return t->yq && fast && !t->res;
}

QT_ATTR static inline void QT_FN(qt_epc_init)(QT_FN(qt_epc) *c, const trtl_qk_epi *e)
{
    c->s = VF_SET1(e->out_scale);
    c->r = VF_SET1(e->out_rcp);
    c->lim = VF_SET1(e->out_lim);
    c->nlim = VF_SUB(VF_ZERO(), c->lim);
    c->zero = VI_SET1(e->out_zero);
    c->ms = VF_SET1(e->mid_scale);
    c->mr = VF_SET1(e->mid_rcp);
    c->mlim = VF_SET1(e->mid_lim);
    c->mnlim = VF_SUB(VF_ZERO(), c->mlim);
    c->mlo = VI_SET1(e->mid_lo);
    c->mhi = VI_SET1(e->mid_hi);
    c->rs = VF_SET1(e->res_scale);
    c->rz = VI_SET1(e->res_zero);
    c->alpha = VF_SET1(e->alpha);
    c->beta = VF_SET1(e->beta);
    c->act = e->act;
    c->mid = e->mid_quant;
    c->rsigned = e->res_signed;
    c->sgn = e->out_lo + e->out_zero < 0;
    c->fold = e->fold;
    c->late = e->bias_late;
    c->flo = VF_SET1(e->fold_lo);
    c->fhi = VF_SET1(e->fold_hi);
}

/* qt_quot with the limits given. */
QT_ATTR __attribute__((always_inline)) static inline VF QT_FN(qt_quot2)(VF x, VF s, VF r, VF lim, VF nlim)
{
    VF xc = VF_MIN(VF_MAX(x, nlim), lim);
    VF t = VF_MUL(xc, r);
    VF e = VF_FNMADD(t, s, xc);
    return VF_FMADD(e, r, t);
}

/* n <= VL outputs v (dequantized: qt_deq; bi their bias) -> codes at dst; resq: the residual's codes there or NULL. */
QT_ATTR __attribute__((always_inline)) static inline void QT_FN(qt_epc_store)(VF v, VF bi, const QT_FN(qt_epc) *c,
                                                                               const int8_t *resq, int8_t *dst, int n)
{
    if (c->mid) {
        VI q = VF_CVT_F2I(QT_FN(qt_quot2)(v, c->ms, c->mr, c->mlim, c->mnlim));
        q = VI_MIN(VI_MAX(q, c->mlo), c->mhi);
        v = VF_MUL(VF_CVT_I2F(q), c->ms);
    }
    if (c->late)
        v = VF_ADD(v, bi);
    if (resq) {
        int8_t tmp[16] = {0};
        if (n < QT_VL) {
            memcpy(tmp, resq, (size_t)n);
            resq = tmp;
        }
#if QT_VL == 16
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)resq);
        VI q = c->rsigned ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
#else
        __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)resq);
        VI q = c->rsigned ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
#endif
        v = VF_ADD(v, VF_MUL(VF_CVT_I2F(VI_SUB(q, c->rz)), c->rs));
    }
    if (c->fold) { /* v is finite: act + the +-lim clamp as one clamp (qconv.c, fold_init) */
        VF xc = VF_MIN(VF_MAX(v, c->flo), c->fhi);
        VF t = VF_MUL(xc, c->r);
        v = VF_FMADD(VF_FNMADD(t, c->s, xc), c->r, t);
    } else {
        switch (c->act) { /* qt_act with the constants given */
        case TRTL_ACT_RELU: v = VF_MAX(VF_ZERO(), v); break;
        case TRTL_ACT_LEAKY_RELU: v = VF_BLEND(VF_CMP_GE(v, VF_ZERO()), VF_MUL(v, c->alpha), v); break;
        case TRTL_ACT_CLIP: {
            VF t = VF_BLEND(VF_CMP_GT(v, c->beta), v, c->beta);
            v = VF_BLEND(VF_CMP_LT(v, c->alpha), t, c->alpha);
            break;
        }
        default: break;
        }
        v = QT_FN(qt_quot2)(v, c->s, c->r, c->lim, c->nlim);
    }
    /* the codes q + zero, saturated by the narrowing store ([-128, 127] or [0, 255]: the clamp of q to
     * [out_lo, out_hi] plus out_zero) */
    VI q = VI_ADD(VF_CVT_F2I(v), c->zero);
#if QT_VL == 16
    if (c->sgn)
        _mm512_mask_cvtsepi32_storeu_epi8(dst, VMASK_N(n), q);
    else
        _mm512_mask_cvtusepi32_storeu_epi8(dst, VMASK_N(n), VI_MAX(q, VI_ZERO()));
#else
    __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    h = c->sgn ? _mm_packs_epi16(h, h) : _mm_packus_epi16(h, h);
    if (n == QT_VL) {
        _mm_storel_epi64((__m128i *)(void *)dst, h);
    } else {
        int8_t b[16];
        _mm_storeu_si128((__m128i *)(void *)b, h);
        memcpy(dst, b, (size_t)n);
    }
#endif
}

/* After a tile's vectors: activations without a register form, and their output fake quantization,
 * over the stored rows. */
QT_ATTR static inline void QT_FN(qt_epi_finish)(const trtl_qk_tile *t, const trtl_qk_epi *e, int fast)
{
    if (fast || t->yq)
        return;
    const trtl_epilogue ae = {e->act, e->alpha, e->beta, 0};
    const int64_t cols = (int64_t)(t->nv - 1) * QT_VL + t->last_cols;
    for (int i = 0; i < t->mr; i++) {
        trtl_epi_act(&ae, t->y + i * t->ldy, cols);
        if (e->out_quant)
            QT_FN(qt_fakequant)(t->y + i * t->ldy, cols, e);
    }
}

/* The tile: NV strips, per_col epilogue parameters (gemm) or per row (convolution). */
QT_ATTR __attribute__((always_inline)) static inline void QT_FN(qt_tile_body)(const trtl_qk_tile *t,
                                                                               const trtl_qk_epi *e, const int NV,
                                                                               const int per_col)
{
    VI acc[QT_MR][QT_NV];
#pragma GCC unroll 8
    for (int i = 0; i < QT_MR; i++)
#pragma GCC unroll 4
        for (int j = 0; j < NV; j++)
            /* the accumulators start at -comp (the zero point / shift compensation): exact int32 (wrapping)
             * arithmetic as subtracting it in the epilogue, one vector op fewer per output vector */
            acc[i][j] = per_col ? VI_SUB(VI_ZERO(), VI_LOAD(t->comp + j * QT_VL))
                                : VI_SET1(i < t->mr ? (int32_t)(0u - (uint32_t)t->comp[i]) : 0);
    const int32_t *rp = t->rows, *sp = t->strips;
    const int64_t ss = t->strip_stride;
    for (int64_t q = 0; q < t->steps; q++) {
        VI b[QT_NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; j++)
            b[j] = VI_LOAD(sp + j * ss + q * QT_VL);
#pragma GCC unroll 8
        for (int i = 0; i < QT_MR; i++) {
            VI w = VI_SET1(rp[q * QT_MR + i]);
#pragma GCC unroll 4
            for (int j = 0; j < NV; j++)
                acc[i][j] = per_col ? QT_DOT_GEMM(acc[i][j], w, b[j]) : QT_DOT_CONV(acc[i][j], b[j], w);
        }
    }
    const int fast = trtl_act_is_fast(e->act);
    if (QT_FN(qt_epc_applies)(t, fast)) {
        QT_FN(qt_epc) c;
        QT_FN(qt_epc_init)(&c, e);
        for (int i = 0; i < QT_MR; i++) {
            if (i >= t->mr)
                break;
            VF sc = VF_ZERO(), bi = VF_ZERO();
            if (!per_col) {
                sc = VF_SET1(t->scale[i]);
                bi = VF_SET1(t->bias[i]);
            }
            for (int j = 0; j < NV; j++) {
                if (per_col) {
                    sc = VF_LOAD(t->scale + j * QT_VL);
                    bi = VF_LOAD(t->bias + j * QT_VL);
                }
                const int64_t o = i * t->ldy + j * QT_VL;
                QT_FN(qt_epc_store)(QT_FN(qt_deq)(VF_CVT_I2F(acc[i][j]), sc, bi, c.late), bi, &c,
                                    t->resq ? t->resq + o : NULL, t->yq + o,
                                    j < NV - 1 ? QT_VL : t->last_cols);
            }
        }
        return;
    }
    const VMASK tail = VMASK_N(t->last_cols);
#pragma GCC unroll 8
    for (int i = 0; i < QT_MR; i++) {
        if (i >= t->mr)
            break;
        float *yr = t->y ? t->y + i * t->ldy : NULL;
        const float *rr = t->res ? t->res + i * t->ldy : NULL;
        VF sc = VF_ZERO(), bi = VF_ZERO();
        if (!per_col) {
            sc = VF_SET1(t->scale[i]);
            bi = VF_SET1(t->bias[i]);
        }
#pragma GCC unroll 4
        for (int j = 0; j < NV; j++) {
            if (per_col) {
                sc = VF_LOAD(t->scale + j * QT_VL);
                bi = VF_LOAD(t->bias + j * QT_VL);
            }
            QT_FN(qt_epi_vec)(QT_FN(qt_deq)(VF_CVT_I2F(acc[i][j]), sc, bi, e->bias_late), bi, t, e, i, j, yr, rr, tail,
                              fast);
        }
    }
    QT_FN(qt_epi_finish)(t, e, fast);
}

#define QT_TILE_FN(nv, pc)                                                                                   \
    QT_ATTR static void QT_CAT(QT_FN(qt_tile), nv##_##pc)(const trtl_qk_tile *t, const trtl_qk_epi *e)     \
    {                                                                                                        \
        QT_FN(qt_tile_body)(t, e, nv, pc);                                                                   \
    }
QT_TILE_FN(1, 0)
QT_TILE_FN(2, 0)
QT_TILE_FN(1, 1)
QT_TILE_FN(2, 1)
#if QT_NV >= 3 /* NV is 2 or 3 */
QT_TILE_FN(3, 0)
QT_TILE_FN(3, 1)
#define QT_TILE3(pc) QT_CAT(QT_FN(qt_tile), 3_##pc)
#else
#define QT_TILE3(pc) NULL
#endif

static void QT_FN(qt_tile)(const trtl_qk_tile *t, const trtl_qk_epi *e)
{
    static void (*const fns[2][3])(const trtl_qk_tile *, const trtl_qk_epi *) = {
        {QT_CAT(QT_FN(qt_tile), 1_0), QT_CAT(QT_FN(qt_tile), 2_0), QT_TILE3(0)},
        {QT_CAT(QT_FN(qt_tile), 1_1), QT_CAT(QT_FN(qt_tile), 2_1), QT_TILE3(1)}};
    fns[t->per_col ? 1 : 0][t->nv - 1](t, e); /* nv <= QT_NV (the driver's tiles) */
}
#undef QT_TILE3

const trtl_qk_ops QT_CAT(trtl_qk_ops, QT_SFX) = {
    .name = QT_NAME,
    .vl = QT_VL,
    .mr = QT_MR,
    .nv = QT_NV,
    .g = QT_G,
    .tile = QT_FN(qt_tile),
    .quant = QT_FN(qt_quant),
    .pack_strip = QT_FN(qt_pack_strip),
    .pack_direct = QT_FN(qt_pack_direct),
    .fakequant = QT_FN(qt_fakequant),
    .codes = QT_FN(qt_codes_elems),
};
