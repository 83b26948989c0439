/*
 * qconv_dw_c16.h -- the channel-interleaved depthwise kernel of the int8 convolution library
 * (qconv_internal.h describes it): 16 channels a vector instead of the plane kernel's 16 output
 * pixels, for the small maps of MobileNet-style networks.  Included once, by qconv_vnni.c after
 * qconv_tmpl.h (QT_VL 16, QT_G 4), so that the codes epilogue is that file's qt_epc_store: the same
 * operations on the same values as the plane kernel, hence the same codes.
 *
 * Needs AVX512-VBMI (vpermb, vpermt2b) and AVX512-VL besides AVX512-VNNI; x86/qconv_dw_driver.c checks the CPU.
 */
#define QDWC_ATTR __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,fma")))

/* 16 x 16 byte transpose, 4 rows a vector: b[j] byte p * 16 + c = row c's byte 4 j + p of a (row r
 * is bytes (r % 4) * 16 .. of a[r / 4]).  Rows 0-7 come from a[0] | a[1], rows 8-15 from a[2] | a[3]
 * by the same index; the bytes of rows 8-15 (c % 16 >= 8) are blended in. */
static const uint8_t qdwc_tidx[4][64] __attribute__((aligned(64))) = {
    {0, 16, 32, 48, 64, 80, 96, 112, 0, 16, 32, 48, 64, 80, 96, 112, 1, 17, 33, 49, 65, 81, 97, 113, 1, 17, 33, 49,
     65, 81, 97, 113, 2, 18, 34, 50, 66, 82, 98, 114, 2, 18, 34, 50, 66, 82, 98, 114, 3, 19, 35, 51, 67, 83, 99, 115,
     3, 19, 35, 51, 67, 83, 99, 115},
    {4, 20, 36, 52, 68, 84, 100, 116, 4, 20, 36, 52, 68, 84, 100, 116, 5, 21, 37, 53, 69, 85, 101, 117, 5, 21, 37,
     53, 69, 85, 101, 117, 6, 22, 38, 54, 70, 86, 102, 118, 6, 22, 38, 54, 70, 86, 102, 118, 7, 23, 39, 55, 71, 87,
     103, 119, 7, 23, 39, 55, 71, 87, 103, 119},
    {8, 24, 40, 56, 72, 88, 104, 120, 8, 24, 40, 56, 72, 88, 104, 120, 9, 25, 41, 57, 73, 89, 105, 121, 9, 25, 41,
     57, 73, 89, 105, 121, 10, 26, 42, 58, 74, 90, 106, 122, 10, 26, 42, 58, 74, 90, 106, 122, 11, 27, 43, 59, 75,
     91, 107, 123, 11, 27, 43, 59, 75, 91, 107, 123},
    {12, 28, 44, 60, 76, 92, 108, 124, 12, 28, 44, 60, 76, 92, 108, 124, 13, 29, 45, 61, 77, 93, 109, 125, 13, 29,
     45, 61, 77, 93, 109, 125, 14, 30, 46, 62, 78, 94, 110, 126, 14, 30, 46, 62, 78, 94, 110, 126, 15, 31, 47, 63,
     79, 95, 111, 127, 15, 31, 47, 63, 79, 95, 111, 127},
};
/* 64 bytes = 4 pixels x 16 channels -> 16 words, word c = the 4 pixels' bytes of channel c. */
static const uint8_t qdwc_widx[64] __attribute__((aligned(64))) = {
    0, 16, 32, 48, 1, 17, 33, 49, 2, 18, 34, 50, 3, 19, 35, 51, 4, 20, 36, 52, 5, 21, 37, 53, 6, 22, 38, 54, 7, 23, 39,
    55, 8, 24, 40, 56, 9, 25, 41, 57, 10, 26, 42, 58, 11, 27, 43, 59, 12, 28, 44, 60, 13, 29, 45, 61, 14, 30, 46, 62,
    15, 31, 47, 63};

QDWC_ATTR static inline void qdwc_transpose(const __m512i a[4], __m512i b[4])
{
    const __mmask64 hi = 0xFF00FF00FF00FF00ull;
    for (int j = 0; j < 4; j++) {
        const __m512i idx = _mm512_load_si512((const void *)qdwc_tidx[j]);
        b[j] = _mm512_mask_blend_epi8(hi, _mm512_permutex2var_epi8(a[0], idx, a[1]),
                                      _mm512_permutex2var_epi8(a[2], idx, a[3]));
    }
}

/* 16 bytes of lane l of v stored at p (l a constant after unrolling). */
QDWC_ATTR static inline void qdwc_store_lane(uint8_t *p, __m512i v, int l)
{
    switch (l) {
    case 0: _mm_storeu_si128((__m128i *)(void *)p, _mm512_castsi512_si128(v)); break;
    case 1: _mm_storeu_si128((__m128i *)(void *)p, _mm512_extracti32x4_epi32(v, 1)); break;
    case 2: _mm_storeu_si128((__m128i *)(void *)p, _mm512_extracti32x4_epi32(v, 2)); break;
    default: _mm_storeu_si128((__m128i *)(void *)p, _mm512_extracti32x4_epi32(v, 3)); break;
    }
}

QDWC_ATTR static inline void qdwc_mstore_lane(uint8_t *p, __mmask16 m, __m512i v, int l)
{
    switch (l) {
    case 0: _mm_mask_storeu_epi8(p, m, _mm512_castsi512_si128(v)); break;
    case 1: _mm_mask_storeu_epi8(p, m, _mm512_extracti32x4_epi32(v, 1)); break;
    case 2: _mm_mask_storeu_epi8(p, m, _mm512_extracti32x4_epi32(v, 2)); break;
    default: _mm_mask_storeu_epi8(p, m, _mm512_extracti32x4_epi32(v, 3)); break;
    }
}

/* The byte plane of channels c0 .. c0 + nch - 1 (x at channel c0's plane): every input pixel's 16
 * channel bytes (xor flip: the u8 element) at its padded position; 16 pixels of the flat plane a
 * transpose. */
QDWC_ATTR static void qdwc_fill(const trtl_qconv_desc *d, const trtl_qdwc_geom *g, const uint8_t *x, int nch,
                                uint8_t flip, uint8_t *P)
{
    const int64_t HW = g->H * g->W, W = g->W;
    const __m512i fl = _mm512_set1_epi8((char)flip);
    int64_t h = 0, w = 0;
    for (int64_t p0 = 0; p0 < HW; p0 += 16) {
        const int n = HW - p0 < 16 ? (int)(HW - p0) : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1u);
        __m128i r[16];
        for (int c = 0; c < 16; c++)
            r[c] = c < nch ? _mm_maskz_loadu_epi8(m, x + c * HW + p0) : _mm_setzero_si128();
        __m512i a[4], b[4];
        for (int i = 0; i < 4; i++) {
            __m512i v = _mm512_castsi128_si512(r[4 * i]);
            v = _mm512_inserti32x4(v, r[4 * i + 1], 1);
            v = _mm512_inserti32x4(v, r[4 * i + 2], 2);
            a[i] = _mm512_inserti32x4(v, r[4 * i + 3], 3);
        }
        qdwc_transpose(a, b);
        for (int j = 0; j < 4; j++)
            b[j] = _mm512_xor_si512(b[j], fl);
        for (int q = 0; q < n; q++) {
            qdwc_store_lane(P + ((h + d->pad_t) * g->Wq + w + d->pad_l) * 16, b[q / 4], q % 4);
            if (++w == W)
                w = 0, h++;
        }
    }
}

/* The accumulators of output pixel (p: its window's first byte in the plane): R kernel rows rstep
 * bytes apart, T words of 4 taps a row. */
QDWC_ATTR __attribute__((always_inline)) static inline __m512i qdwc_dot(const uint8_t *p, const __m512i *wv,
                                                                        const int R, const int T, int64_t rstep,
                                                                        __m512i widx)
{
    __m512i acc = _mm512_setzero_si512();
    for (int r = 0; r < R; r++)
        for (int tg = 0; tg < T; tg++) {
            const __m512i v = _mm512_loadu_si512((const void *)(p + r * rstep + tg * 64));
            acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(widx, v), wv[r * T + tg]);
        }
    return acc;
}

QDWC_ATTR void trtl_qdwc_block(const trtl_qconv_state *s, const trtl_qdwc_geom *g, const void *x, void *y, int64_t cb,
                               void *scratch, int border)
{
    const trtl_qconv_desc *d = &s->d;
    const int64_t c0 = cb * 16, HW = g->H * g->W, OHW = g->OH * g->OW, OW = g->OW;
    const int nch = d->C - c0 < 16 ? (int)(d->C - c0) : 16;
    const int R = d->R, T = (int)s->dwc_T;
    uint8_t *P = scratch, *O = (uint8_t *)scratch + g->plane_bytes;
    const uint8_t flip = d->in_signed ? 0x80 : 0;
    if (border)
        memset(P, (uint8_t)s->q.pad, g->plane_bytes);
    qdwc_fill(d, g, (const uint8_t *)x + c0 * HW, nch, flip, P);

    /* 16 channels of each output pixel: weights in registers, the plane kernel's dequantization */
    __m512i wv[16];
    const int32_t *wk = s->dwc_w + cb * R * T * 16;
    for (int i = 0; i < R * T; i++)
        wv[i] = _mm512_loadu_si512((const void *)(wk + i * 16));
    const __m512i widx = _mm512_load_si512((const void *)qdwc_widx);
    const __m512i comp = _mm512_loadu_si512((const void *)(s->comp + c0));
    const __m512 sc = _mm512_loadu_ps(s->scale + c0), bi = _mm512_loadu_ps(s->bias + c0);
    qt_epc_avx512vnni c;
    qt_epc_init_avx512vnni(&c, &s->e);
    const int64_t rstep = d->dil_h * g->Wq * 16, xstep = d->stride_w * 16;
    for (int64_t oh = 0; oh < g->OH; oh++) {
        const uint8_t *row = P + oh * d->stride_h * g->Wq * 16;
        int8_t *o = (int8_t *)(O + oh * OW * 16);
        for (int64_t ox = 0; ox < OW; ox++) {
            const uint8_t *p = row + ox * xstep;
            __m512i acc;
            if (R == 3 && T == 1)
                acc = qdwc_dot(p, wv, 3, 1, rstep, widx);
            else if (R == 5 && T == 2)
                acc = qdwc_dot(p, wv, 5, 2, rstep, widx);
            else
                acc = qdwc_dot(p, wv, R, T, rstep, widx);
            const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc, comp)), sc), bi);
            qt_epc_store_avx512vnni(v, bi, &c, NULL, o + ox * 16, 16); /* (no bias_late: gemm only) */
        }
    }

    /* the [OHW][16] code block back into the 16 output planes, 16 pixels a transpose */
    uint8_t *yc = (uint8_t *)y + c0 * OHW;
    for (int64_t p0 = 0; p0 < OHW; p0 += 16) {
        const int n = OHW - p0 < 16 ? (int)(OHW - p0) : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1u);
        __m512i a[4], b[4];
        for (int i = 0; i < 4; i++)
            a[i] = _mm512_loadu_si512((const void *)(O + (p0 + 4 * i) * 16));
        qdwc_transpose(a, b);
        for (int ch = 0; ch < nch; ch++)
            qdwc_mstore_lane(yc + ch * OHW + p0, m, b[ch / 4], ch % 4);
    }
}
