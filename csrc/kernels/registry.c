/* registry.c -- the table of kernels: optimized ones listed by hand, reference ones from ops.def. */
#include <string.h>
#include "kernels/registry.h"
#include "kernels/qlinear_fp32.h"
#include "kernels/ref/ref.h"
#include "core/status.h"
#include "trtlite/trtlite.h"

/* Reference kernels: "<op>.ref", no CPU requirement, epilogue applied by the engine; scratch for NMS only. */
#define TRTL_REF_SCRATCH(E) (TRTL_OP_##E == TRTL_OP_NMS ? trtl_ref_nms_scratch : NULL)
static const trtl_kernel ref_kernels[TRTL_OP_COUNT] = {
#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no) \
    [TRTL_OP_##E] = {#l ".ref", TRTL_OP_##E, 0, 0, NULL, NULL, NULL, TRTL_REF_SCRATCH(E), trtl_ref_##l},
#include "trtlite/ops.def"
#undef TRTL_OP
};

/* Optimized kernels (csrc/kernels/x86/ and friends).  Add new ones here, best first per op. */
#define TRTL_OPT_KERNELS(X)                                                                       \
    X(trtl_kernel_conv_gemv)                                                                      \
    X(trtl_kernel_conv_depthwise)                                                                 \
    X(trtl_kernel_conv_depthwise_avx2)                                                            \
    X(trtl_kernel_conv_winograd_f43)                                                              \
    X(trtl_kernel_conv_winograd_f23)                                                              \
    X(trtl_kernel_conv_packed_gemm)                                                               \
    X(trtl_kernel_conv_im2col_sgemm)                                                              \
    X(trtl_kernel_conv_depthwise_c16)                                                             \
    X(trtl_kernel_fc_packed_gemm)                                                                 \
    X(trtl_kernel_fc_sgemm)                                                                       \
    X(trtl_kernel_matmul_sgemm)                                                               \
    X(trtl_kernel_matmul_packed)                                                              \
    X(trtl_kernel_pooling_2d)                                                                 \
    X(trtl_kernel_pooling_codes_max)                                                          \
    X(trtl_kernel_reduce_inner)                                                                \
    X(trtl_kernel_softmax_simd)                                                               \
    X(trtl_kernel_normalization_rows)                                                         \
    X(trtl_kernel_normalization_channels)                                                     \
    X(trtl_kernel_shuffle_transpose)                                                          \
    X(trtl_kernel_concat_copy)                                                                \
    X(trtl_kernel_slice_rows)                                                                 \
    X(trtl_kernel_gather_rows)                                                                \
    X(trtl_kernel_padding_rows)                                                               \
    X(trtl_kernel_deconv_packed_gemm)                                                             \
    X(trtl_kernel_resize_tables)                                                             \
    X(trtl_kernel_elementwise_simd)                                                               \
    X(trtl_kernel_unary_simd)                                                                     \
    X(trtl_kernel_activation_simd)                                                                \
    X(trtl_kernel_scale_simd)                                                                     \
    X(trtl_kernel_attention_tiled)                                                                \
    X(trtl_kernel_conv_amx_bf16)                                                                  \
    X(trtl_kernel_conv_bf16_gemm)                                                                 \
    X(trtl_kernel_fc_amx_bf16)                                                                    \
    X(trtl_kernel_fc_bf16_gemm)                                                                   \
    X(trtl_kernel_fc_f16_gemm)                                                                \
    X(trtl_kernel_qlinear_amx_int8)                                                               \
    X(trtl_kernel_qlinear_int8)                                                                   \
    X(trtl_kernel_concat_inplace)                                                                 \
    X(trtl_kernel_slice_inplace)                                                                  \
    X(trtl_kernel_qpool_int8)                                                                     \
    X(trtl_kernel_qadd_int8)                                                                      \
    X(trtl_kernel_conv_pixel_gemm)                                                                \
    X(trtl_kernel_linear_amx_bf16)                                                                \
    X(trtl_kernel_linear_bf16_gemm)                                                               \
    X(trtl_kernel_linear_packed_gemm)                                                             \
    X(trtl_kernel_linear_sgemm)                                                                   \
    X(trtl_kernel_quantize_simd)                                                                  \
    X(trtl_kernel_dequantize_simd)                                                                \
    X(trtl_kernel_conv_tapwise)                                                                   \
    X(trtl_kernel_conv_grouped_direct)                                                            \
    X(trtl_kernel_reduce_axes)                                                                    \
    X(trtl_kernel_reduce_binary_rows)                                                             \
    X(trtl_kernel_conv_1x1_direct)                                                                \
    X(trtl_kernel_conv_1x1_block)                                                                 \
    X(trtl_kernel_shuffle_inplace)                                                                \
    X(trtl_kernel_conv_depthwise_plane512)                                                        \
    X(trtl_kernel_conv_depthwise_c8)                                                              \
    X(trtl_kernel_conv_depthwise_rows8)                                                           \
    X(trtl_kernel_conv_stem)                                                                      \
    TRTL_QLINEAR_FP32_TACTICS(X##_QF) /* the qlinear.fp32 tactics: kernels/qlinear_fp32.h */ \
    X(trtl_kernel_nchwc_conv_avx2)                                                                \
    X(trtl_kernel_nchwc_conv_avx512)                                                              \
    X(trtl_kernel_preact_conv_packed_gemm)                                                        \
    X(trtl_kernel_pw_chain_simd)                                                                  \
    X(trtl_kernel_topk_select)                                                                    \
    X(trtl_kernel_select_bcast)                                                                   \
    X(trtl_kernel_parametric_relu_simd)                                                           \
    X(trtl_kernel_cast_simd)                                                                      \
    X(trtl_kernel_grid_sample_tables)                                                             \
    /* session 22 (s22-cov): any-step slices, gathers by index, Pow, comparisons, 3-D pooling, CumSum */                                 \
    X(trtl_kernel_slice_steps)                                                                    \
    X(trtl_kernel_gather_index)                                                                   \
    X(trtl_kernel_elementwise_pow)                                                                \
    X(trtl_kernel_elementwise_compare)                                                            \
    X(trtl_kernel_pooling_3d)                                                                     \
    X(trtl_kernel_cumulative_scan)
#define DECLARE(k) extern const trtl_kernel k;
#define DECLARE_QF(id, inner, feat) DECLARE(trtl_kernel_qlinear_fp32_##id)
TRTL_OPT_KERNELS(DECLARE)
#undef DECLARE_QF
#undef DECLARE
static const trtl_kernel *const opt_kernels[] = {
#define ENTRY(k) &k,
#define ENTRY_QF(id, inner, feat) ENTRY(trtl_kernel_qlinear_fp32_##id)
    TRTL_OPT_KERNELS(ENTRY)
#undef ENTRY_QF
#undef ENTRY
    NULL};

int trtl_kernels_for(trtl_op op, const trtl_kernel **out, int max)
{
    int n = 0;
    for (size_t i = 0; opt_kernels[i] && n < max - 1; i++)
        if (opt_kernels[i]->op == op)
            out[n++] = opt_kernels[i];
    if (n < max && (int)op >= 0 && op < TRTL_OP_COUNT)
        out[n++] = &ref_kernels[op];
    return n;
}

const trtl_kernel *trtl_kernel_find(const char *name)
{
    for (size_t i = 0; opt_kernels[i]; i++)
        if (strcmp(opt_kernels[i]->name, name) == 0)
            return opt_kernels[i];
    for (int i = 0; i < TRTL_OP_COUNT; i++)
        if (strcmp(ref_kernels[i].name, name) == 0)
            return &ref_kernels[i];
    return NULL;
}

const trtl_kernel *trtl_kernel_ref(trtl_op op)
{
    return ((int)op >= 0 && op < TRTL_OP_COUNT) ? &ref_kernels[op] : NULL;
}

int32_t trtl_kernel_count(void)
{
    return (int32_t)(sizeof opt_kernels / sizeof opt_kernels[0]) - 1;
}

trtl_status trtl_kernel_info(int32_t i, const char **name, trtl_op *op, uint32_t *cpu_features)
{
    if (name)
        *name = NULL;
    if (i < 0 || i >= trtl_kernel_count())
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "trtl_kernel_info: kernel index %d is out of range (0..%d)", (int)i,
                          (int)trtl_kernel_count() - 1);
    if (name)
        *name = opt_kernels[i]->name;
    if (op)
        *op = opt_kernels[i]->op;
    if (cpu_features)
        *cpu_features = opt_kernels[i]->cpu_features;
    return TRTL_OK;
}
