/*
 * gemm_amx_bf16.c -- packing and block driver of the AMX bf16 GEMM (layouts in gemm_amx_bf16.h):
 * 32 x 32 blocks of four tdpbf16ps accumulator tiles, stored to a 4 KiB buffer and passed to the
 * AVX-512 store of the reduced-precision cores (gemm_store512.h: ACC, bias, residual, the fast
 * activations in registers; the other activations over the block afterwards), as gemm_bf16.c does.
 */
#include <string.h>
#include <immintrin.h>

#include "kernels/x86/gemm_amx_bf16.h"
#include "kernels/x86/fused_epilogue.h"
#include "kernels/x86/gemm_store512.h"
#include "core/cpu.h"

#define AMR TRTL_AMX_BF16_MR
#define NR TRTL_BF16_NR
#define TGT __attribute__((target("avx512f,avx512bw,avx512bf16")))
#define TGT_AMX __attribute__((target("avx512f,avx512bw,avx512bf16,amx-tile,amx-bf16")))

int trtl_amx_bf16_available(void) { return trtl_cpu_has(TRTL_AMX_BF16_CPU); }

static int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

int64_t trtl_amx_bf16_packed_a_size(int64_t M, int64_t D) { return round_up(M, AMR) * round_up(D, 32); }

/* 32 floats (n valid, the rest zero) -> 32 bf16 in order. */
TGT static inline __m512i cvt32(const float *src, int64_t n)
{
    __mmask16 m0 = (__mmask16)(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1u);
    __mmask16 m1 = (__mmask16)(n >= 32 ? 0xffff : n <= 16 ? 0 : (1u << (n - 16)) - 1u);
    __m512 lo = _mm512_maskz_loadu_ps(m0, src), hi = _mm512_maskz_loadu_ps(m1, src + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

TGT void trtl_amx_bf16_pack_a(const float *src, int64_t rs, int64_t M, int64_t D, uint16_t *dst)
{
    const int64_t Dp = round_up(D, 32), a_stride = AMR * Dp;
    for (int64_t p = 0; p * AMR < M; p++)
        for (int64_t r = 0; r < AMR; r++) {
            const int64_t m = p * AMR + r;
            for (int64_t d = 0; d < Dp; d += 32) {
                uint16_t *o = dst + p * a_stride + d * AMR + r * 32;
                if (m < M)
                    _mm512_storeu_si512(o, cvt32(src + m * rs + d, D - d));
                else
                    memset(o, 0, 64);
            }
        }
}

void trtl_amx_bf16_zero_b_tail(uint16_t *b, int64_t kc, int64_t ntiles, int64_t tile_stride)
{
    const int64_t k2 = (kc + 1) / 2, kp = round_up(k2, 16);
    for (int64_t t = 0; t < ntiles && kp > k2; t++)
        memset(b + t * tile_stride + k2 * 2 * NR, 0, (size_t)((kp - k2) * 2 * NR) * sizeof(uint16_t));
}

/* Palette 1, eight tiles of 16 rows x 64 bytes (a constant table: gcc 12 drops stores into a stack
 * copy that only ldtilecfg reads). */
static const _Alignas(64) struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_cfg = {1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

static void at_tile(bk_args *u, const trtl_gemm_epi *e, int64_t i, int64_t j, float *c, int64_t ldc)
{
    u->c = c + i * ldc + j;
    u->row_bias = e && e->row_bias ? e->row_bias + i : NULL;
    u->col_bias = e && e->col_bias ? e->col_bias + j : NULL;
    u->res = e && e->res ? e->res + i * e->ldr + j : NULL;
}

/* acc rows [0, rows) of a 32 x 32 block: A panel a, B tile b, nk steps of 32 depths. */
TGT_AMX static void block32(const uint16_t *a, const uint16_t *b, int64_t nk, float *buf)
{
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t k = 0; k < nk; k++) {
        const uint16_t *ak = a + k * 32 * AMR, *bk = b + k * 16 * 2 * NR;
        _tile_loadd(4, ak, 64);
        _tile_loadd(5, ak + 16 * 32, 64);
        _tile_loadd(6, bk, 4 * NR);
        _tile_loadd(7, bk + 32, 4 * NR);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, buf, 128);
    _tile_stored(1, buf + 16, 128);
    _tile_stored(2, buf + 16 * 32, 128);
    _tile_stored(3, buf + 16 * 32 + 16, 128);
}

/* The same for blocks of at most 16 columns (B tile 0 only). */
TGT_AMX static void block16(const uint16_t *a, const uint16_t *b, int64_t nk, float *buf)
{
    _tile_zero(0);
    _tile_zero(2);
    for (int64_t k = 0; k < nk; k++) {
        const uint16_t *ak = a + k * 32 * AMR, *bk = b + k * 16 * 2 * NR;
        _tile_loadd(4, ak, 64);
        _tile_loadd(5, ak + 16 * 32, 64);
        _tile_loadd(6, bk, 4 * NR);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(2, 5, 6);
    }
    _tile_stored(0, buf, 128);
    _tile_stored(2, buf + 16 * 32, 128);
}

TGT_AMX static void tiles_begin(void) { _tile_loadconfig(&amx_cfg); }
TGT_AMX static void tiles_end(void) { _tile_release(); }

TGT static void store_block(const bk_args *u, const float *buf, int rows, int nv)
{
    __m512 acc[AMR][2];
    for (int r = 0; r < rows; r++) {
        acc[r][0] = _mm512_load_ps(buf + r * 32);
        acc[r][1] = nv > 1 ? _mm512_load_ps(buf + r * 32 + 16) : acc[r][0];
    }
    if (nv > 1)
        trtl_s512_store(u, acc, rows, 2);
    else
        trtl_s512_store(u, acc, rows, 1);
}

void trtl_amx_bf16_block(int64_t M, int64_t N, int64_t kc, const uint16_t *a, int64_t a_stride, const uint16_t *b,
                         int64_t b_stride, float *c, int64_t ldc, const trtl_gemm_epi *e, int flags)
{
    const int last = (flags & TRTL_GEMM_LAST) && e;
    const int slow_act = last && !trtl_act_is_fast(e->act);
    bk_args u;
    memset(&u, 0, sizeof u);
    u.ldc = ldc;
    u.flags = flags & (last ? (TRTL_GEMM_ACC | TRTL_GEMM_LAST) : TRTL_GEMM_ACC);
    u.act = last && !slow_act ? e->act : TRTL_ACT_NONE;
    if (last) {
        u.ldr = e->ldr;
        u.alpha = e->alpha;
        u.beta = e->beta;
    }
    const trtl_gemm_epi *ee = last ? e : NULL;
    const int64_t nk = (kc + 31) / 32;
    _Alignas(64) float buf[AMR * 32];
    tiles_begin();
    for (int64_t i = 0; i < M; i += AMR) {
        const int rows = M - i < AMR ? (int)(M - i) : AMR;
        const uint16_t *ap = a + (i / AMR) * a_stride;
        for (int64_t j = 0; j < N; j += NR) {
            u.cols = N - j < NR ? (int)(N - j) : NR;
            const uint16_t *bp = b + (j / NR) * b_stride;
            if (u.cols > 16)
                block32(ap, bp, nk, buf);
            else
                block16(ap, bp, nk, buf);
            at_tile(&u, ee, i, j, c, ldc);
            store_block(&u, buf, rows, u.cols > 16 ? 2 : 1);
        }
    }
    tiles_end();
    if (slow_act) {
        const trtl_epilogue act = {e->act, e->alpha, e->beta, 0};
        for (int64_t i = 0; i < M; i++)
            trtl_epi_act(&act, c + i * ldc, N);
    }
}
