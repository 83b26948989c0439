/*
 * qconv_internal.h -- what the files of the int8 convolution library share (qconv.h is the
 * interface): the prepared state, the per-ISA microkernel table and the two run paths.
 *
 * Files: kernels/qconv.c (validation, weight packing, dispatch), kernels/ref/qconv.c (portable
 * path), kernels/x86/qconv_driver.c (packing + tiling + threads of the SIMD paths),
 * kernels/x86/qconv_vnni.c and qconv_avx2.c (microkernels, from the template qconv_tmpl.h).
 *
 * The SIMD paths see both operations as one integer GEMM, tile by tile:
 *   C[rows][cols] = sum over depth steps q of  rowop[row][q] . colop[q][col]
 * where a depth step is one 32-bit word holding G depth values (G = 4: u8 or s8 bytes for
 * vpdpbusd; G = 2: int16 pairs for vpmaddwd), and "." is the G-wide dot product.  The row operand
 * is broadcast, the column operand fills the vector lanes (VL columns a strip):
 *   convolution  rows = output channels (the packed weights, s8),
 *                cols = output pixels (the im2col'd activations, u8), so y[k][pixel] rows are
 *                contiguous as NCHW wants;
 *   rows (gemm)  rows = the M input rows (quantized activations, u8),
 *                cols = output features (the packed weights, s8), so y[m][k] is contiguous.
 * Strip layout: strip t (columns t*VL ..) is [steps][VL] words.  Row layout: panels of MR rows,
 * panel p = [steps][MR] words (row p*MR + i at step q: word q*MR + i), rows past the end zero.
 * With u8 activations the dot products see u = q + shift (shift 128 for signed activations,
 * else 0) and the accumulator is corrected by comp[k] = (in_zero + shift) * sum w[k] (exact in
 * int32); with int16 the activations are stored as q - in_zero and comp is 0.
 */
#ifndef TRTL_KERNELS_QCONV_INTERNAL_H
#define TRTL_KERNELS_QCONV_INTERNAL_H

#include "kernels/qconv.h"

typedef enum trtl_qk_isa {
    TRTL_QK_PORTABLE = 0,
    TRTL_QK_AVX2 = 1,
    TRTL_QK_AVXVNNI = 2,
    TRTL_QK_AVX512VNNI = 3,
    TRTL_QK_AMX = 4
} trtl_qk_isa;

/* Epilogue constants of a state (per-channel arrays are the state's). */
typedef struct trtl_qk_epi {
    int32_t act;
    float alpha, beta;
    int32_t out_quant;
    float out_scale, out_rcp, out_lim; /* rcp = 1/out_scale, lim = 512 * out_scale */
    int32_t out_lo, out_hi;            /* lowest / highest code minus out_zero */
    int32_t out_zero;                  /* out_quant = 2: codes are stored as q + out_zero */
    /* (appended) mid_quant: fake quantization before the residual (as out_*); res_codes: residual codes */
    int32_t mid_quant;
    float mid_scale, mid_rcp, mid_lim;
    int32_t mid_lo, mid_hi;
    int32_t res_codes, res_signed, res_zero;
    float res_scale;
    /* (appended) fold = 1: every y = acc * scale + bias is finite (scales below 2^-31 FLT_MAX, biases
     * finite) and the activation is none, ReLU or a clip with alpha <= beta, so act followed by the
     * output quantizer's clamp to +-out_lim is one clamp to [fold_lo, fold_hi] (see qt_epc_store) */
    int32_t fold;
    float fold_lo, fold_hi;
    /* (appended) bias_late = desc.bias_after_mid: the tiles dequantize to acc * scale and the epilogue adds the
     * bias after the mid quantization (qconv_tmpl.h: qt_deq, qt_epi_vec, qt_epc_store) */
    int32_t bias_late;
} trtl_qk_epi;

/* How activations become elements (u8 for G = 4, int16 for G = 2). */
typedef struct trtl_qk_quant {
    float scale, rcp, lim; /* rcp = 1/scale; x is clamped to +-lim (512 * scale) first */
    int32_t add;           /* added to rne(x / scale): in_zero + shift (u8), 0 (int16) */
    int32_t lo, hi;        /* then clamped: [0, 255] (u8), [lowest - zero, highest - zero] (int16) */
    int32_t pad;           /* the element of the value 0.0 (padding pixels) */
} trtl_qk_quant;

/* One tile of the GEMM: mr (<= MR) rows x nv (<= NV) strips, the last with last_cols columns. */
typedef struct trtl_qk_tile {
    const int32_t *rows;   /* the row panel ([steps][MR] words) */
    const int32_t *strips; /* strip j at strips + j * strip_stride */
    int64_t strip_stride;
    int64_t steps;
    int32_t mr, nv, last_cols;
    int32_t per_col;       /* 1: comp/scale/bias indexed by column (gemm), 0: by row (convolution) */
    const int32_t *comp;   /* at the tile's first row or column */
    const float *scale, *bias;
    float *y;              /* at the tile's first row and column; rows ldy apart */
    int8_t *yq;            /* out_quant = 2: the codes' bytes there instead (y unused) */
    const float *res;      /* same indexing as y, or NULL */
    int64_t ldy;
    const int8_t *resq;    /* (appended) res_codes: the residual's code bytes, same indexing as y, or NULL */
} trtl_qk_tile;

/* One strip of im2col'd activations: steps words x VL columns, from the quantized padded image. */
typedef struct trtl_qk_strip {
    const void *plane;     /* elements of the padded image (all channels) */
    const int64_t *off;    /* per column: offset of its (r = 0, s = 0) tap; ncols of them */
    const int64_t *doff;   /* per depth index (c, r, s): offset of the tap; D of them */
    int64_t D, steps;
    int32_t ncols;         /* valid columns (<= VL); the others get the pad element */
    int32_t pad;
    int32_t *dst;          /* steps x VL words */
} trtl_qk_strip;

typedef struct trtl_qk_ops {
    const char *name;
    int32_t vl, mr, nv, g;
    void (*tile)(const trtl_qk_tile *t, const trtl_qk_epi *e);
    /* x[0..n) -> n elements at dst */
    void (*quant)(const float *x, int64_t n, void *dst, const trtl_qk_quant *q);
    void (*pack_strip)(const trtl_qk_strip *s);
    /* 1x1 stride-1 unpadded convolution: strips [t0, t1) straight from x[nimg][C][HW], the nimg * HW
     * pixels one sequence (a strip may cross an image boundary), floats quantized (x_codes = 0) or the
     * input's codes turned into elements (x_codes = 1, the `codes` map) */
    void (*pack_direct)(const void *x, int32_t x_codes, int64_t C, int64_t HW, int64_t nimg, int64_t t0,
                        int64_t t1, int64_t steps, int32_t *dst, const trtl_qk_quant *q, int32_t in_signed,
                        int32_t in_zero);
    /* y[i] = fake-quantized y[i] over n floats (e->out_quant set) */
    void (*fakequant)(float *y, int64_t n, const trtl_qk_epi *e);
    /* AMX: begin / end (may be NULL) bracket each GEMM work item on the thread running it (tile
     * configuration, tilerelease); kchunk > 0: steps is a multiple of kchunk and a row panel is
     * [steps / kchunk][MR][kchunk] words (row-major tiles) instead of [steps][MR] */
    void (*begin)(void);
    void (*end)(void);
    int32_t kchunk;
    /* (appended) n input codes at x (int8 when in_signed, else uint8) -> n elements at dst, as the
     * quantizer makes them from the values the codes stand for (u8: the code + 128 for signed codes;
     * int16: the code - in_zero) */
    void (*codes)(const void *x, int64_t n, void *dst, int32_t in_signed, int32_t in_zero);
} trtl_qk_ops;

extern const trtl_qk_ops trtl_qk_ops_avx512vnni, trtl_qk_ops_avxvnni, trtl_qk_ops_avx2, trtl_qk_ops_amx;

/* Word (step q, row i) of a row panel of o's layout (steps words deep). */
static inline int64_t trtl_qk_panel_word(const trtl_qk_ops *o, int64_t q, int64_t i)
{
    return o->kchunk ? (q / o->kchunk * o->mr + i) * o->kchunk + q % o->kchunk : q * o->mr + i;
}

struct trtl_qconv_state {
    trtl_qconv_desc d;
    trtl_qk_isa isa;
    const trtl_qk_ops *ops;       /* NULL for the portable path */
    int64_t Cg, Kg, D;            /* D = Cg * R * S: depth of one output value */
    int64_t steps;                /* ceil(D / g) words of depth (SIMD paths) */
    int8_t *w;                    /* plain weights [K][D] (portable path, and the source of the packing) */
    int32_t *packed;              /* SIMD: convolution row panels [Kpad/MR][steps][MR]; gemm strips [K/VL][steps][VL] */
    int32_t *comp;                /* [Kpad]: (in_zero + shift) * sum w[k] (0 with int16 elements) */
    float *scale, *bias;          /* [Kpad]: in_scale * w_scale[k]; bias[k] (0 without) */
    trtl_qk_quant q;
    trtl_qk_epi e;
    /* (appended) depthwise convolutions (one input channel a group) on SIMD: the ISA's direct
     * kernel (x86/qconv_dw_tmpl.h) instead of the GEMM path; ops is then its trtl_qk_ops (the
     * quantizer, element type and compensation are that ISA's) */
    const struct trtl_qdw_ops *dw;
    int32_t *dw_w;                /* [K][R][dw_T] words: row r's taps tg*G .. tg*G+G-1 (zero past S) */
    int64_t dw_T;                 /* tap groups a kernel row: ceil(S / G) */
    /* (appended) the channel-interleaved depthwise kernel (x86/qconv_dw_c16.h, below): dwc = 1 when it
     * applies to this state; dwc_w its weights [ceil(K/16)][R][dwc_T][16] words (4 taps of a kernel row
     * a word, zero past S and past K) */
    int32_t dwc;
    int64_t dwc_T;
    int32_t *dwc_w;
};

/* One run's data: x float or codes (x_codes), y float or codes (the state's out_quant == 2). */
typedef struct trtl_qk_io {
    const void *x;
    int32_t x_codes;
    void *y;
    const float *residual;       /* float residual, or NULL */
    const int8_t *residual_codes; /* (appended) the residual's code bytes (res_codes), or NULL */
} trtl_qk_io;

/* Element (u8 / int16, as the quantizer makes) of input code c: the integer-input path. */
static inline int32_t trtl_qk_code_elem(const trtl_qk_quant *q, int32_t g, int32_t in_zero, int32_t c)
{
    return g == 4 ? c + q->add - in_zero : c - in_zero;
}

/* Input code i of x (int8 when in_signed, else uint8). */
static inline int32_t trtl_qk_code_at(const void *x, int32_t in_signed, int64_t i)
{
    return in_signed ? ((const int8_t *)x)[i] : ((const uint8_t *)x)[i];
}

/*
 * Depthwise convolutions (Cg = 1, any channel multiplier Kg): per output plane (image n, channel k)
 * the input channel is quantized row by row into an element row (u8 / int16, padding the element
 * of 0.0) and turned into a plane of words: word (ih, iw) holds the G elements at padded columns
 * iw, iw + dil_w, .., iw + (G-1) dil_w of row ih.  Output pixels fill the vector lanes: for each
 * kernel row r and tap group tg the VL words at columns ow * stride_w + tg * G * dil_w (one load
 * for stride 1, two loads and an even-word permute for stride 2, a gather otherwise) are dotted
 * with the broadcast weight word of (k, r, tg), taps past S zero.  The epilogue is the tiles'
 * (qt_epi_vec / qt_epi_finish of qconv_tmpl.h) over one output row at a time.
 */
typedef struct trtl_qdw_geom {
    int64_t H, W, OH, OW, Hp, Wp;
    int64_t nvec;   /* ceil(OW / VL) vectors an output row */
    int64_t WW, EW; /* words a row of the word plane; elements of the element row */
} trtl_qdw_geom;

typedef struct trtl_qdw_ops {
    const char *name;
    const trtl_qk_ops *qk; /* the ISA's GEMM ops: vl, g, the quantizer */
    trtl_qk_isa isa;
    /* One output plane: x is the input channel's plane (H x W floats, or codes with x_codes), y the
     * output plane (floats, or codes with out_quant = 2), res / resq the residual's plane or NULL;
     * k the output channel; scratch trtl_qdw_thread_bytes, 64-byte aligned, this thread's own. */
    void (*plane)(const trtl_qconv_state *s, const trtl_qdw_geom *g, const void *x, int32_t x_codes, void *y,
                  const float *res, const int8_t *resq, int64_t k, void *scratch);
} trtl_qdw_ops;

extern const trtl_qdw_ops trtl_qdw_ops_avx512vnni, trtl_qdw_ops_avxvnni, trtl_qdw_ops_avx2;

/* x86/qconv_dw_driver.c: geometry, the weights' words (prepare), scratch, the run over N x K planes. */
void trtl_qdw_geom_init(const trtl_qconv_state *s, int64_t H, int64_t W, trtl_qdw_geom *g);
size_t trtl_qdw_thread_bytes(const trtl_qconv_state *s, const trtl_qdw_geom *g);
trtl_status trtl_qdw_pack(trtl_qconv_state *s);
size_t trtl_qdw_scratch(const trtl_qconv_state *s, int64_t H, int64_t W, int nthreads);
void trtl_qdw_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const trtl_qk_io *io, void *scratch,
                  size_t scratch_size, struct trtl_threadpool *pool);

/*
 * Channel-interleaved depthwise kernel (x86/qconv_dw_c16.h, AVX512-VNNI + AVX512-VBMI), for small maps
 * where the plane kernel's pixel lanes are mostly idle (7 x 7: 7 of 16): channel multiplier 1, codes in
 * and out (out_quant = 2), no residual, a register activation, dilation 1 along W, S <= 8.  Per (image,
 * block of 16 channels) the input codes are transposed into a padded byte plane [Hp][Wq][16] (u8
 * elements as the quantizer makes them, the pad element around), so that the 64 bytes at pixel w hold
 * 4 pixels x 16 channels; one vpermb turns them into 16 words (channel c: the bytes of pixels w .. w+3)
 * dotted by vpdpbusd with the 16 channels' weight words of 4 taps.  Accumulators (16 channels of one
 * output pixel), compensation, scales, bias and the codes epilogue (qt_epc_store) are the plane
 * kernel's, so codes are identical; the [OH*OW][16] code block is transposed back into the 16 planes.
 */
typedef struct trtl_qdwc_geom {
    int64_t H, W, OH, OW, Hp, Wq;
    size_t plane_bytes, out_bytes; /* the byte plane (64-aligned, + a 64-byte pad), the output code block */
} trtl_qdwc_geom;

/* 1: the CPU has what the kernel needs (AVX512-VNNI as trtl_cpu_has sees it, and AVX512-VBMI). */
int trtl_qdwc_cpu(void);
void trtl_qdwc_geom_init(const trtl_qconv_state *s, int64_t H, int64_t W, trtl_qdwc_geom *g);
/* One block: image n's channels 16 cb .. 16 cb + 15 (x, y: the image's first code); scratch
 * plane_bytes + out_bytes, 64-byte aligned; border = 1 fills the plane's pad elements first (they are
 * never written otherwise, so a thread's later blocks of the same run skip it). */
void trtl_qdwc_block(const trtl_qconv_state *s, const trtl_qdwc_geom *g, const void *x, void *y, int64_t cb,
                     void *scratch, int border);

/* Portable path (ref/qconv.c): scratch, then the run over all N images / M rows. */
/* The epilogue of output value o from its int32 accumulator (channel k): dequantize, bias, mid
 * quantization, residual (res or resq, may be NULL), activation, out_quant; stored at y[o] as a
 * float or, with out_quant = 2, its code (also used by x86/qlinear_fp32.c for its tails). */
void trtl_qconv_epilogue_one(const trtl_qconv_state *s, int64_t k, int32_t acc, const float *res, const int8_t *resq,
                             void *y, int64_t o);
size_t trtl_qconv_ref_scratch(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W);
void trtl_qconv_ref_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const trtl_qk_io *io,
                        void *scratch, struct trtl_threadpool *pool);
size_t trtl_qgemm_ref_scratch(const trtl_qconv_state *s, int64_t M);
void trtl_qgemm_ref_run(const trtl_qconv_state *s, int64_t M, const trtl_qk_io *io, void *scratch,
                        struct trtl_threadpool *pool);

/* SIMD paths (x86/qconv_driver.c). */
size_t trtl_qconv_simd_scratch(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W);
void trtl_qconv_simd_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const trtl_qk_io *io,
                         void *scratch, struct trtl_threadpool *pool);
size_t trtl_qgemm_simd_scratch(const trtl_qconv_state *s, int64_t M);
void trtl_qgemm_simd_run(const trtl_qconv_state *s, int64_t M, const trtl_qk_io *io, void *scratch,
                         struct trtl_threadpool *pool);

#endif
