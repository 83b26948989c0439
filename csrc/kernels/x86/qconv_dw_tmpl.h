/*
 * qconv_dw_tmpl.h -- the depthwise plane kernel of the int8 convolution library (the layout is
 * described in qconv_internal.h), included after qconv_tmpl.h by each ISA's file so that it uses
 * that ISA's vector macros, element combiner (QT_COMBINE), quantizer (qt_quant) and tile epilogue
 * (qt_epi_vec / qt_epi_finish): the depthwise kernels' outputs go through the same code as the
 * GEMM tiles'.  Integer sums are exact, so the accumulators equal the portable path's.
 */
#define QT_DW_RT_MAX 64 /* kernel rows x tap groups kept as broadcast words (else broadcast in the loop) */

/* VL words of a row at p, lanes sw words apart. */
QT_ATTR static inline VI QT_FN(qdw_load)(const int32_t *p, int64_t sw)
{
    if (sw == 1)
        return VI_LOAD(p);
    if (sw == 2) {
#if QT_VL == 16
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        return _mm512_permutex2var_epi32(VI_LOAD(p), even, VI_LOAD(p + 16));
#else
        __m256 a = _mm256_castsi256_ps(VI_LOAD(p)), b = _mm256_castsi256_ps(VI_LOAD(p + 8));
        __m256d t = _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))); /* a0 a2 b0 b2 a4 a6 b4 b6 */
        return _mm256_castpd_si256(_mm256_permute4x64_pd(t, _MM_SHUFFLE(3, 1, 2, 0)));
#endif
    }
    int32_t tmp[QT_VL];
    for (int l = 0; l < QT_VL; l++)
        tmp[l] = p[l * sw];
    return VI_LOAD(tmp);
}

/* The accumulators of VL outputs: rows = the word plane at the output row's first kernel row and the
 * vector's first column; R kernel rows dh word rows apart, T tap groups tstep words apart. */
QT_ATTR __attribute__((always_inline)) static inline VI QT_FN(qdw_dot)(const int32_t *rows, const VI *wv, const int R,
                                                                       const int T, int64_t rstep, int64_t tstep,
                                                                       int64_t sw)
{
    VI acc = VI_ZERO();
    for (int r = 0; r < R; r++)
        for (int tg = 0; tg < T; tg++)
            acc = QT_DOT_CONV(acc, QT_FN(qdw_load)(rows + r * rstep + tg * tstep, sw), wv[r * T + tg]);
    return acc;
}

/* The element row of input row ih at er + pad_l (the pads around it are set by the caller). */
QT_ATTR static void QT_FN(qdw_elems)(const trtl_qconv_state *s, const void *x, int32_t x_codes, int64_t ih,
                                     int64_t W, QT_ELEM *er)
{
    if (x_codes)
        QT_FN(qt_codes_elems)((const int8_t *)x + ih * W, W, er, s->d.in_signed, s->d.in_zero);
    else
        QT_FN(qt_quant)((const float *)x + ih * W, W, er, &s->q);
}

#if QT_VL == 16 && QT_G == 4
/* The word row of input row ih straight from its codes (AVX-512 BW, u8 elements, dilation 1): per 16
 * words one masked 64-byte load of the padded row (the pad element outside the row), the three shifted
 * copies by alignr, widened and combined in registers.  Going through an element row in memory made
 * the word loads wait for the (masked or byte-wise) stores that wrote it: store forwarding fails. */
QT_ATTR static void QT_FN(qdw_words_codes)(const trtl_qconv_state *s, const void *x, int64_t ih, int64_t W,
                                           int64_t WW, int32_t *row)
{
    const trtl_qconv_desc *d = &s->d;
    const uint8_t flip = d->in_signed ? 0x80 : 0;
    const uintptr_t b = (uintptr_t)((const uint8_t *)x + ih * W);
    const __m512i padc = _mm512_set1_epi8((char)((uint8_t)s->q.pad ^ flip));
    const __m512i fl = _mm512_set1_epi32((int)(flip * 0x01010101u));
    for (int64_t iw = 0; iw < WW; iw += 16) {
        const int64_t c0 = iw - d->pad_l; /* the input column of element iw */
        const int64_t lo = c0 < 0 ? -c0 : 0, hi = W - c0 < 64 ? W - c0 : 64;
        const __mmask64 m = hi <= lo ? 0 : ((hi == 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1));
        /* masked-off bytes are not read (no fault), so the address may lie outside the row */
        const __m512i v = _mm512_mask_loadu_epi8(padc, m, (const void *)(b + (uintptr_t)c0));
        const __m128i e0 = _mm512_castsi512_si128(v), e1 = _mm512_extracti32x4_epi32(v, 1);
        __m512i w = _mm512_cvtepu8_epi32(e0);
        w = _mm512_or_si512(w, _mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_alignr_epi8(e1, e0, 1)), 8));
        w = _mm512_or_si512(w, _mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_alignr_epi8(e1, e0, 2)), 16));
        w = _mm512_or_si512(w, _mm512_slli_epi32(_mm512_cvtepu8_epi32(_mm_alignr_epi8(e1, e0, 3)), 24));
        _mm512_storeu_si512((void *)(row + iw), _mm512_xor_si512(w, fl));
    }
}
#endif

QT_ATTR static void QT_FN(qdw_plane)(const trtl_qconv_state *s, const trtl_qdw_geom *g, const void *x,
                                     int32_t x_codes, void *y, const float *res, const int8_t *resq, int64_t k,
                                     void *scratch)
{
    const trtl_qconv_desc *d = &s->d;
    const trtl_qk_epi *e = &s->e;
    const int64_t WW = g->WW, EW = g->EW, OW = g->OW, dil = d->dil_w, sw = d->stride_w;
    const int R = d->R, T = (int)s->dw_T;
    QT_ELEM *er = scratch;
    int32_t *wp = (int32_t *)(void *)((char *)scratch + (((size_t)EW * sizeof(QT_ELEM) + 63) & ~(size_t)63));
    const QT_ELEM pad = (QT_ELEM)s->q.pad;
    uint32_t padw = 0;
    for (int i = 0; i < QT_G; i++)
        padw |= (uint32_t)(QT_G == 4 ? (uint8_t)pad : (uint16_t)pad) << (32 / QT_G * i);
    /* 1. the word plane: pad rows are pad words; image rows from their element rows */
    for (int64_t i = 0; i < EW; i++)
        er[i] = pad;
    for (int64_t ihp = 0; ihp < g->Hp; ihp++) {
        int32_t *row = wp + ihp * WW;
        const int64_t ih = ihp - d->pad_t;
        if (ih < 0 || ih >= g->H) {
            for (int64_t i = 0; i < WW; i++)
                row[i] = (int32_t)padw;
            continue;
        }
#if QT_VL == 16 && QT_G == 4
        if (x_codes && dil == 1) {
            QT_FN(qdw_words_codes)(s, x, ih, g->W, WW, row);
            continue;
        }
#endif
        QT_FN(qdw_elems)(s, x, x_codes, ih, g->W, er + d->pad_l);
        for (int64_t iw = 0; iw < WW; iw += QT_VL) {
            const QT_ELEM *src[QT_G];
            for (int i = 0; i < QT_G; i++)
                src[i] = er + iw + i * dil;
            QT_COMBINE(row + iw, src);
        }
    }
    /* 2. output rows: VL pixels a vector, the tiles' epilogue */
    const int32_t *wk = s->dw_w + k * R * T;
    VI wv[QT_DW_RT_MAX];
    const int nw = R * T <= QT_DW_RT_MAX ? R * T : 0;
    for (int i = 0; i < nw; i++)
        wv[i] = VI_SET1(wk[i]);
    const VI comp = VI_SET1(s->comp[k]);
    const VF sc = VF_SET1(s->scale[k]), bi = VF_SET1(s->bias[k]);
    const int fast = trtl_act_is_fast(e->act);
    const int codes = e->out_quant == 2;
    trtl_qk_tile t;
    memset(&t, 0, sizeof t);
    t.mr = 1;
    t.nv = (int32_t)g->nvec;
    t.last_cols = (int32_t)(OW - (g->nvec - 1) * QT_VL);
    t.ldy = OW;
    const VMASK tail = VMASK_N(t.last_cols);
    const int64_t rstep = d->dil_h * WW, tstep = QT_G * dil;
    /* codes out, register activation, no float residual: the epilogue's constants in registers */
    const int epc = codes && fast && !res;
    QT_FN(qt_epc) c;
    QT_FN(qt_epc_init)(&c, e);
    for (int64_t oh = 0; oh < g->OH; oh++) {
        t.y = codes ? NULL : (float *)y + oh * OW;
        t.yq = codes ? (int8_t *)y + oh * OW : NULL;
        t.res = res ? res + oh * OW : NULL;
        t.resq = resq ? resq + oh * OW : NULL;
        const int32_t *rows = wp + oh * d->stride_h * WW;
        for (int j = 0; j < t.nv; j++) {
            const int32_t *p = rows + (int64_t)j * QT_VL * sw;
            VI acc;
            if (nw && R == 3 && T == (3 + QT_G - 1) / QT_G)
                acc = QT_FN(qdw_dot)(p, wv, 3, (3 + QT_G - 1) / QT_G, rstep, tstep, sw);
            else if (nw && R == 5 && T == (5 + QT_G - 1) / QT_G)
                acc = QT_FN(qdw_dot)(p, wv, 5, (5 + QT_G - 1) / QT_G, rstep, tstep, sw);
            else if (nw)
                acc = QT_FN(qdw_dot)(p, wv, R, T, rstep, tstep, sw);
            else {
                acc = VI_ZERO();
                for (int r = 0; r < R; r++)
                    for (int tg = 0; tg < T; tg++)
                        acc = QT_DOT_CONV(acc, QT_FN(qdw_load)(p + r * rstep + tg * tstep, sw), VI_SET1(wk[r * T + tg]));
            }
            if (epc)
                QT_FN(qt_epc_store)(QT_FN(qt_deq)(VF_CVT_I2F(VI_SUB(acc, comp)), sc, bi, c.late), bi, &c,
                                    t.resq ? t.resq + (int64_t)j * QT_VL : NULL, t.yq + (int64_t)j * QT_VL,
                                    j < t.nv - 1 ? QT_VL : t.last_cols);
            else
                QT_FN(qt_epi_vec)(QT_FN(qt_deq)(VF_CVT_I2F(VI_SUB(acc, comp)), sc, bi, e->bias_late), bi, &t, e, 0, j,
                                  t.y, t.res, tail, fast);
        }
        QT_FN(qt_epi_finish)(&t, e, fast);
    }
}

const trtl_qdw_ops QT_CAT(trtl_qdw_ops, QT_SFX) = {
    .name = QT_NAME "_dw",
    .qk = &QT_CAT(trtl_qk_ops, QT_SFX),
    .isa = QT_DW_ISA,
    .plane = QT_FN(qdw_plane),
};
