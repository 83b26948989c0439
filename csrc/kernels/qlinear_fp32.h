/* qlinear_fp32.h -- what the builder and the engine need to know of the QLINEAR kernels that run the
 * quantized math on fp32 convolution kernels (x86/qlinear_fp32.c), and the descriptor both QLINEAR
 * kernel families build for the int8 library. */
#ifndef TRTL_KERNELS_QLINEAR_FP32_H
#define TRTL_KERNELS_QLINEAR_FP32_H

#include "kernels/kernel.h"
#include "kernels/qconv.h"

/* The qlinear.fp32 tactics, X(id, inner fp32 kernel, cpu_features): the one list.  x86/qlinear_fp32.c defines
 * "qlinear.fp32.<id>" (trtl_kernel_qlinear_fp32_<id>) for each, kernels/registry.c registers them (in this order,
 * after the int8 kernels of QLINEAR), tests/c/test_kernels.c compares each with qlinear.ref.  cpu_features repeat
 * the inner kernel's (tests/test_int8_tactics.py checks).  Add a tactic here and nowhere else. */
#define TRTL_QLINEAR_FP32_TACTICS(X)                                                                                   \
    X(gemv, trtl_kernel_conv_gemv, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                                       \
    X(depthwise, trtl_kernel_conv_depthwise, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                             \
    X(depthwise_avx2, trtl_kernel_conv_depthwise_avx2, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                   \
    X(depthwise_c8, trtl_kernel_conv_depthwise_c8, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                       \
    X(depthwise_rows8, trtl_kernel_conv_depthwise_rows8, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                 \
    X(depthwise_c16, trtl_kernel_conv_depthwise_c16, TRTL_CPU_AVX512F)                                                 \
    X(depthwise_plane512, trtl_kernel_conv_depthwise_plane512, TRTL_CPU_AVX512F | TRTL_CPU_AVX2 | TRTL_CPU_FMA)        \
    X(winograd_f43, trtl_kernel_conv_winograd_f43, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                       \
    X(winograd_f23, trtl_kernel_conv_winograd_f23, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                       \
    X(1x1_direct, trtl_kernel_conv_1x1_direct, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                           \
    X(1x1_block, trtl_kernel_conv_1x1_block, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                             \
    X(pixel_gemm, trtl_kernel_conv_pixel_gemm, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                           \
    X(packed_gemm, trtl_kernel_conv_packed_gemm, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                         \
    X(tapwise, trtl_kernel_conv_tapwise, TRTL_CPU_AVX2 | TRTL_CPU_FMA)                                                 \
    X(grouped_direct, trtl_kernel_conv_grouped_direct, 0)                                                              \
    X(im2col_sgemm, trtl_kernel_conv_im2col_sgemm, 0)

/* The int8 library's descriptor of a QLINEAR node's params (x86/qlinear_int8.c). */
void trtl_qlinear_make_desc(const trtl_qlinear_params *q, trtl_qconv_desc *d);

/* An int8 convolution as an fp32 convolution on a FLOAT input on its grid (in_grid) with a FLOAT residual (res_quant
 * 0) and a FLOAT output, fake-quantized where q quantizes it (out_quant 1 or 2): what the fused fp32 tactics run
 * (qf_fused), for the blocked layout (builder/passes/nchwc.c).  *e: the epilogue after the residual (the activation and
 * output quantization folded into TRTL_ACT_QGRID's bounds, or the plain activation of a float output); *mid: the
 * mid quantization before the residual (TRTL_ACT_QGRID; TRTL_ACT_NONE where none or folded).  0 where one epilogue
 * cannot say it (qf_fold_bounds' cases: other activations before a quantization, residual codes, ...). */
int trtl_qlinear_fp32_epilogue(const trtl_qlinear_params *q, trtl_epilogue *e, trtl_activation_params *mid);

/* The weights and bias of that fp32 convolution: the int8 weights times w_scale[k] (the channel's in_scale *
 * w_scale[k] rounded to float as the int8 library keeps it, divided by in_scale: one rounding), the bias as floats
 * ([K], zeros where none).  Both trtl_aligned_alloc'ed; the node must be a QLINEAR convolution with per-channel
 * scales (its checks are the int8 library's: an error names the layer). */
trtl_status trtl_qlinear_fp32_weights(const trtl_node *n, float **w, float **bias);

/* The fp32 convolution kernel a "qlinear.fp32.*" kernel runs, or NULL when k is no such kernel. */
const trtl_kernel *trtl_qlinear_fp32_inner(const trtl_kernel *k);

#endif
