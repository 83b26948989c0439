/* qlinear_fp32.h -- what the builder and the engine need to know of the QLINEAR kernels that run the
 * quantized math on fp32 convolution kernels (x86/qlinear_fp32.c), and the descriptor both QLINEAR
 * kernel families build for the int8 library. */
#ifndef TRTL_KERNELS_QLINEAR_FP32_H
#define TRTL_KERNELS_QLINEAR_FP32_H

#include "kernels/kernel.h"
#include "kernels/qconv.h"

/* The int8 library's descriptor of a QLINEAR node's params (x86/qlinear_int8.c). */
void trtl_qlinear_make_desc(const trtl_qlinear_params *q, trtl_qconv_desc *d);

/* The fp32 convolution kernel a "qlinear.fp32.*" kernel runs, or NULL when k is no such kernel. */
const trtl_kernel *trtl_qlinear_fp32_inner(const trtl_kernel *k);

#endif
