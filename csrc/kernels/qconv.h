/*
 * qconv.h -- int8 convolution and GEMM with fp32 in and out: the activations are quantized on the
 * way in, the integer products accumulate in int32, and the epilogue dequantizes, adds the bias
 * and the residual, applies the activation and (optionally) fake-quantizes the output.
 *
 * Semantics are those of ONNX QuantizeLinear -> integer convolution -> DequantizeLinear:
 *
 *   quantize    q = sat(rne(x / in_scale) + in_zero)     sat: [-128, 127] (in_signed) or [0, 255];
 *               rne rounds half to even; x / in_scale is the float32 quotient (correctly
 *               rounded); NaN quantizes to the lowest code (-128 or 0), +-Inf saturate
 *   accumulate  acc[k] = sum over (c, r, s) of (q_x - in_zero) * w[k][c][r][s]     (int32, exact)
 *               padding pixels are the value 0.0, i.e. q_x = in_zero: they add nothing
 *   dequantize  y = float(acc) * (in_scale * w_scale[k]) + bias[k]     (the product of the two
 *               scales rounded to float once, at prepare time)
 *   mid_quant   1: y = (sat(rne(y / mid_scale) + mid_zero) - mid_zero) * mid_scale   (before the residual)
 *   bias_after_mid  1 (rows only): the bias is added here, after the mid quantization, instead of
 *               before it: y = fq_mid(float(acc) * scale) + bias[k] (quantize_static's MatMul -> Q/DQ
 *               -> Add(bias) -> Q/DQ: the bias add of a BERT linear layer in the layer's epilogue)
 *   residual    r = residual[i] (float), or with res_codes r = float(q_r - res_zero) * res_scale
 *   epilogue    y = act(y + r)                   (TensorRT's activation formulas, epilogue.c)
 *   out_quant   1: y = (sat(rne(y / out_scale) + out_zero) - out_zero) * out_scale
 *               (a Q -> DQ pair fused after the layer; the next layer sees exactly these values)
 *               2: y = sat(rne(y / out_scale) + out_zero) stored as int8 (out_signed) or uint8
 *               codes: the output stays integer for the next int8 layer (no fp32 round trip)
 *
 * Integer input (the _codes run functions with x_codes = 1): x holds the codes q_x themselves
 * (int8 when in_signed, else uint8, with in_scale / in_zero), as a layer with out_quant = 2
 * wrote them; the quantize step is skipped and everything else is unchanged.
 *
 * Weights are symmetric int8 (zero point 0, as TensorRT requires), per output channel
 * (w_scale[K]) or per tensor (w_scale[1]).
 *
 * Two operations share one prepared state (chosen by desc.gemm):
 *   convolution (gemm = 0)  x[N][C][H][W] -> y[N][K][OH][OW], 2-D, any stride / padding /
 *                           dilation / groups.  1x1 stride-1 unpadded: quantized straight from x;
 *                           otherwise x is quantized once into a padded int8 image, then
 *                           im2col'd from bytes.  Depthwise convolutions (one input channel a
 *                           group) run the ISA's depthwise kernel ("avx512vnni_dw", "avxvnni_dw",
 *                           "avx2_dw"; x86/qconv_dw_tmpl.h), other grouped ones the portable path.
 *   rows (gemm = 1)         y[M][K] = x[M][C] * W^T (fully connected layers, MatMul with constant
 *                           weights); W is [K][C] (R = S = 1, groups = 1, no stride/padding).
 *
 * Kernels (picked at prepare time from trtl_cpu_features(), so TRTL_CPU_MASK selects them):
 *   "amx"         Intel AMX tiles (x86/qconv_amx_tile.h): tdpbsud / tdpbusd on 32 x 32 blocks, the
 *                 avx512vnni variant's u8 activations, compensation and epilogue (bit-identical int32
 *                 sums); the depth is padded to 64 bytes
 *   "avx512vnni"  vpdpbusd on zmm: u8 activations (signed ones shifted by +128) x s8 weights, the
 *                 shift and the zero point compensated by (in_zero + shift) * sum_k w, computed at
 *                 prepare time
 *   "avxvnni"     the same with the VEX vpdpbusd on ymm (AVX-VNNI)
 *   "avx2"        (q_x - in_zero) and the weights as int16 pairs, vpmaddwd -> int32: exact (no
 *                 int16 saturation as vpmaddubsw would have on u8 x s8 pairs), half VNNI's rate
 *   "portable"    plain C loops (ref/qconv.c), the definition of the semantics
 *
 * Ownership and threads: prepare copies and packs what it needs (w, w_scale, bias may be freed
 * after it returns).  A state is immutable after prepare: any number of threads may run it at
 * once, each with its own scratch.  run never allocates; scratch (trtl_qconv_scratch bytes, any
 * alignment) is overwritten.  pool may be NULL (the calling thread does all the work).
 */
#ifndef TRTL_KERNELS_QCONV_H
#define TRTL_KERNELS_QCONV_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "trtlite/types.h"

struct trtl_threadpool;

typedef struct trtl_qconv_desc {
    /* geometry: C input channels, K output channels, R x S kernel; gemm = 1 needs R = S = 1,
     * unit strides and dilations, no padding, groups = 1 */
    int32_t C, K, R, S;
    int32_t stride_h, stride_w, pad_t, pad_l, pad_b, pad_r, dil_h, dil_w, groups;
    int32_t gemm;
    /* activation quantization */
    float in_scale;
    int32_t in_zero, in_signed;
    /* epilogue: act is a trtl_activation_type (TRTL_ACT_NONE for none, internal codes allowed) */
    int32_t act;
    float alpha, beta;
    int32_t has_residual;
    /* output fake-quantization (out_quant = 1) or integer output codes (out_quant = 2) */
    int32_t out_quant;
    float out_scale;
    int32_t out_zero, out_signed;
    /* (appended) a Q -> DQ between the layer and a residual add (ResNet's skip connection as
     * quantize_static writes it): mid_quant = 1 fake-quantizes y = acc * scale + bias with these
     * parameters before the residual is added (act must then be applied after the residual only) */
    int32_t mid_quant;
    float mid_scale;
    int32_t mid_zero, mid_signed;
    /* (appended) res_codes = 1: the residual is given as int8 (res_signed) / uint8 codes whose value
     * is (q - res_zero) * res_scale (float32), read in the epilogue */
    int32_t res_codes;
    float res_scale;
    int32_t res_zero, res_signed;
    /* (appended) 1: the bias is added after the mid quantization (see bias_after_mid above; gemm = 1 only) */
    int32_t bias_after_mid;
} trtl_qconv_desc;

/* The quantize step above for one value: the definition every kernel's quantizer matches. */
static inline int32_t trtl_q8_quantize(float x, float scale, int32_t zero, int32_t is_signed)
{
    const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
    float t = rintf(x / scale) + (float)zero; /* rintf: round half to even (default rounding mode) */
    t = t >= lo ? t : lo;                     /* NaN -> lo */
    return (int32_t)(t <= hi ? t : hi);
}

/* Packed s8 (or s16) weights, compensation, combined scales, bias; immutable after prepare. */
typedef struct trtl_qconv_state trtl_qconv_state;

/* Checks d (message naming the field: scales finite and > 0, zero points in range, geometry) and
 * packs the weights w[K][C/groups][R][S] with scales w_scale[K] (per_channel) or w_scale[0], and
 * bias[K] (NULL: zero).  *out is NULL on failure. */
trtl_status trtl_qconv_prepare(const trtl_qconv_desc *d, const int8_t *w, const float *w_scale, int32_t per_channel,
                               const float *bias, trtl_qconv_state **out);
void trtl_qconv_release(trtl_qconv_state *s);

/* trtl_qconv_prepare with the AMX choice open: AUTO (what trtl_qconv_prepare does) takes "amx" first
 * when the CPU has TRTL_QCONV_AMX_CPU and groups = 1; NEVER picks among the others; ONLY fails
 * (TRTL_ERR_UNSUPPORTED) unless "amx" applies.  The qlinear kernels use NEVER / ONLY so that the
 * builder times the two and the engine inspector names the one that runs. */
#define TRTL_QCONV_AMX_AUTO 0
#define TRTL_QCONV_AMX_NEVER 1
#define TRTL_QCONV_AMX_ONLY 2
#define TRTL_QCONV_AMX_CPU                                                                                             \
    (TRTL_CPU_AMX_TILE | TRTL_CPU_AMX_INT8 | TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_FMA)
trtl_status trtl_qconv_prepare_amx(const trtl_qconv_desc *d, const int8_t *w, const float *w_scale,
                                   int32_t per_channel, const float *bias, int32_t amx, trtl_qconv_state **out);

/* The kernel the state runs ("amx", "avx512vnni", "avxvnni", "avx2", their "_dw" depthwise kernels, "portable"). */
const char *trtl_qconv_kernel_name(const trtl_qconv_state *s);

/* Output size of one spatial dim (0 if the window does not fit; -1 on bad geometry). */
static inline int64_t trtl_qconv_out_dim(int64_t in, int32_t k, int32_t stride, int32_t pad0, int32_t pad1, int32_t dil)
{
    if (in < 0 || k < 1 || stride < 1 || dil < 1 || pad0 < 0 || pad1 < 0)
        return -1;
    int64_t span = (int64_t)dil * (k - 1) + 1, padded = in + pad0 + pad1;
    return padded < span ? 0 : (padded - span) / stride + 1;
}

/* Convolution (state prepared with gemm = 0): x[N][C][H][W] -> y[N][K][OH][OW]; residual has y's
 * shape (read when has_residual, may alias nothing else).  Scratch bytes for these shapes and at
 * most nthreads threads (the pool's size). */
size_t trtl_qconv_scratch(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, int nthreads);
trtl_status trtl_qconv_run(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const float *x, float *y,
                           const float *residual, void *scratch, size_t scratch_size, struct trtl_threadpool *pool);

/* Rows (state prepared with gemm = 1): x[M][C] -> y[M][K]; residual [M][K]. */
size_t trtl_qgemm_scratch(const trtl_qconv_state *s, int64_t M, int nthreads);
trtl_status trtl_qgemm_run(const trtl_qconv_state *s, int64_t M, const float *x, float *y, const float *residual,
                           void *scratch, size_t scratch_size, struct trtl_threadpool *pool);

/* The same with the input and output element types open: x is float (x_codes = 0) or the input's
 * int8 / uint8 codes (x_codes = 1, see above); y is float, or int8 / uint8 codes when the state
 * was prepared with out_quant = 2; residual is float, or the codes of the residual when the state
 * was prepared with res_codes = 1.  Same scratch. */
trtl_status trtl_qconv_run_codes(const trtl_qconv_state *s, int64_t N, int64_t H, int64_t W, const void *x,
                                 int32_t x_codes, void *y, const void *residual, void *scratch, size_t scratch_size,
                                 struct trtl_threadpool *pool);
trtl_status trtl_qgemm_run_codes(const trtl_qconv_state *s, int64_t M, const void *x, int32_t x_codes, void *y,
                                 const void *residual, void *scratch, size_t scratch_size,
                                 struct trtl_threadpool *pool);

#endif
