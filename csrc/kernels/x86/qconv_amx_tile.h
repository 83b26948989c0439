/*
 * qconv_amx_tile.h -- the Intel AMX kernel of the int8 convolution library ("amx"), included by
 * qconv_vnni.c after the AVX512-VNNI template: the AMX variant shares its quantizer, im2col strip
 * packing and helpers (u8 activations, VL = 16, G = 4) and replaces only the tile.
 *
 * Tiles (one palette-1 configuration, all eight registers 16 rows x 64 bytes):
 *   tmm0..3  int32 accumulators, 2 x 2 blocks of 16 x 16 (32 rows x 2 strips)
 *   tmm4, 5  row operand: 16 rows x 16 words (64 depth bytes), rows 0-15 and 16-31 of the panel
 *   tmm6, 7  column operand: 16 depth words x 16 columns (one strip's [16 steps][16] words as they are)
 * Convolution: rows = s8 weights, columns = u8 activations -> tdpbsud; rows (gemm): rows = u8
 * activations, columns = s8 weights -> tdpbusd.  The dot products are the exact int32 sums of
 * VNNI (the same +128 / zero-point compensation, comp), so results are bit-identical to it.
 *
 * Layouts (ops->kchunk = 16): steps is a multiple of 16, a row panel is [steps / 16][32][16] words
 * (each 16-step block one 2 KiB tile pair, rows 64 bytes apart); strips are the VNNI ones.
 * The accumulators go through a 4 KiB buffer on the stack (tilestored) to the same epilogue as the
 * template's tile.  The driver calls begin() / end() around each work item, on the thread running
 * it: the tile configuration is per thread, and tilerelease gives the state back at the end.
 */

#define QA_ATTR __attribute__((target("avx512f,avx512bw,avx512vnni,fma,amx-tile,amx-int8")))
#define QA_MR 32
#define QA_NV 2

typedef struct qa_tilecfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} qa_tilecfg;

/* A constant table: gcc 12 drops stores into a stack copy that only ldtilecfg reads. */
static const _Alignas(64) qa_tilecfg qa_cfg = {
    1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

QA_ATTR static void qa_begin(void) { _tile_loadconfig(&qa_cfg); }

QA_ATTR static void qa_end(void) { _tile_release(); }

/* acc[32][32] <- the tile's products; nv2: both strips, else strip 0 only (acc columns 16.. unset). */
#define QA_ROW_STRIDE 64
#define QA_ACC_STRIDE (QA_NV * QT_VL * 4)
QA_ATTR static void qa_dot_conv2(const trtl_qk_tile *t, int32_t *acc)
{
    const int32_t *rp = t->rows, *b0 = t->strips, *b1 = t->strips + t->strip_stride;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t k = 0; k < t->steps; k += 16) {
        _tile_loadd(4, rp + k * QA_MR, QA_ROW_STRIDE);
        _tile_loadd(5, rp + k * QA_MR + 16 * 16, QA_ROW_STRIDE);
        _tile_loadd(6, b0 + k * QT_VL, QA_ROW_STRIDE);
        _tile_loadd(7, b1 + k * QT_VL, QA_ROW_STRIDE);
        _tile_dpbsud(0, 4, 6);
        _tile_dpbsud(1, 4, 7);
        _tile_dpbsud(2, 5, 6);
        _tile_dpbsud(3, 5, 7);
    }
    _tile_stored(0, acc, QA_ACC_STRIDE);
    _tile_stored(1, acc + QT_VL, QA_ACC_STRIDE);
    _tile_stored(2, acc + 16 * QA_NV * QT_VL, QA_ACC_STRIDE);
    _tile_stored(3, acc + 16 * QA_NV * QT_VL + QT_VL, QA_ACC_STRIDE);
}

QA_ATTR static void qa_dot_conv1(const trtl_qk_tile *t, int32_t *acc)
{
    const int32_t *rp = t->rows, *b0 = t->strips;
    _tile_zero(0);
    _tile_zero(2);
    for (int64_t k = 0; k < t->steps; k += 16) {
        _tile_loadd(4, rp + k * QA_MR, QA_ROW_STRIDE);
        _tile_loadd(5, rp + k * QA_MR + 16 * 16, QA_ROW_STRIDE);
        _tile_loadd(6, b0 + k * QT_VL, QA_ROW_STRIDE);
        _tile_dpbsud(0, 4, 6);
        _tile_dpbsud(2, 5, 6);
    }
    _tile_stored(0, acc, QA_ACC_STRIDE);
    _tile_stored(2, acc + 16 * QA_NV * QT_VL, QA_ACC_STRIDE);
}

QA_ATTR static void qa_dot_gemm2(const trtl_qk_tile *t, int32_t *acc)
{
    const int32_t *rp = t->rows, *b0 = t->strips, *b1 = t->strips + t->strip_stride;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t k = 0; k < t->steps; k += 16) {
        _tile_loadd(4, rp + k * QA_MR, QA_ROW_STRIDE);
        _tile_loadd(5, rp + k * QA_MR + 16 * 16, QA_ROW_STRIDE);
        _tile_loadd(6, b0 + k * QT_VL, QA_ROW_STRIDE);
        _tile_loadd(7, b1 + k * QT_VL, QA_ROW_STRIDE);
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
    }
    _tile_stored(0, acc, QA_ACC_STRIDE);
    _tile_stored(1, acc + QT_VL, QA_ACC_STRIDE);
    _tile_stored(2, acc + 16 * QA_NV * QT_VL, QA_ACC_STRIDE);
    _tile_stored(3, acc + 16 * QA_NV * QT_VL + QT_VL, QA_ACC_STRIDE);
}

QA_ATTR static void qa_dot_gemm1(const trtl_qk_tile *t, int32_t *acc)
{
    const int32_t *rp = t->rows, *b0 = t->strips;
    _tile_zero(0);
    _tile_zero(2);
    for (int64_t k = 0; k < t->steps; k += 16) {
        _tile_loadd(4, rp + k * QA_MR, QA_ROW_STRIDE);
        _tile_loadd(5, rp + k * QA_MR + 16 * 16, QA_ROW_STRIDE);
        _tile_loadd(6, b0 + k * QT_VL, QA_ROW_STRIDE);
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(2, 5, 6);
    }
    _tile_stored(0, acc, QA_ACC_STRIDE);
    _tile_stored(2, acc + 16 * QA_NV * QT_VL, QA_ACC_STRIDE);
}

/* The template's epilogue (qt_tile_body) on accumulators read back from acc[QA_MR][QA_NV * VL]. */
QA_ATTR static void qa_tile(const trtl_qk_tile *t, const trtl_qk_epi *e)
{
    _Alignas(64) int32_t acc[QA_MR * QA_NV * QT_VL];
    const int per_col = t->per_col, NV = t->nv;
    if (per_col)
        (NV == 2 ? qa_dot_gemm2 : qa_dot_gemm1)(t, acc);
    else
        (NV == 2 ? qa_dot_conv2 : qa_dot_conv1)(t, acc);
    const int fast = trtl_act_is_fast(e->act);
    if (qt_epc_applies_avx512vnni(t, fast)) {
        qt_epc_avx512vnni c;
        qt_epc_init_avx512vnni(&c, e);
        for (int i = 0; i < t->mr; i++) {
            VI comp = VI_ZERO();
            VF sc = VF_ZERO(), bi = VF_ZERO();
            if (!per_col) {
                comp = VI_SET1(t->comp[i]);
                sc = VF_SET1(t->scale[i]);
                bi = VF_SET1(t->bias[i]);
            }
            for (int j = 0; j < NV; j++) {
                if (per_col) {
                    comp = VI_LOAD(t->comp + j * QT_VL);
                    sc = VF_LOAD(t->scale + j * QT_VL);
                    bi = VF_LOAD(t->bias + j * QT_VL);
                }
                const VI a = VI_LOAD(acc + i * QA_NV * QT_VL + j * QT_VL);
                const int64_t o = i * t->ldy + j * QT_VL;
                qt_epc_store_avx512vnni(qt_deq_avx512vnni(VF_CVT_I2F(VI_SUB(a, comp)), sc, bi, c.late), bi, &c,
                                        t->resq ? t->resq + o : NULL, t->yq + o, j < NV - 1 ? QT_VL : t->last_cols);
            }
        }
        return;
    }
    const VMASK tail = VMASK_N(t->last_cols);
    for (int i = 0; i < t->mr; i++) {
        float *yr = t->y ? t->y + i * t->ldy : NULL;
        const float *rr = t->res ? t->res + i * t->ldy : NULL;
        VI comp = VI_ZERO();
        VF sc = VF_ZERO(), bi = VF_ZERO();
        if (!per_col) {
            comp = VI_SET1(t->comp[i]);
            sc = VF_SET1(t->scale[i]);
            bi = VF_SET1(t->bias[i]);
        }
        for (int j = 0; j < NV; j++) {
            if (per_col) {
                comp = VI_LOAD(t->comp + j * QT_VL);
                sc = VF_LOAD(t->scale + j * QT_VL);
                bi = VF_LOAD(t->bias + j * QT_VL);
            }
            const VI a = VI_LOAD(acc + i * QA_NV * QT_VL + j * QT_VL);
            qt_epi_vec_avx512vnni(qt_deq_avx512vnni(VF_CVT_I2F(VI_SUB(a, comp)), sc, bi, e->bias_late), bi, t, e, i, j,
                                  yr, rr, tail, fast);
        }
    }
    qt_epi_finish_avx512vnni(t, e, fast);
}

const trtl_qk_ops trtl_qk_ops_amx = {
    .name = "amx",
    .vl = QT_VL,
    .mr = QA_MR,
    .nv = QA_NV,
    .g = QT_G,
    .tile = qa_tile,
    .quant = qt_quant_avx512vnni,
    .pack_strip = qt_pack_strip_avx512vnni,
    .pack_direct = qt_pack_direct_avx512vnni,
    .fakequant = qt_fakequant_avx512vnni,
    .begin = qa_begin,
    .end = qa_end,
    .kchunk = 16,
    .codes = qt_codes_elems_avx512vnni,
};
