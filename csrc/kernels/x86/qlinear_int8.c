/* qlinear_int8.c -- "qlinear.int8": the internal QLINEAR node (trtl_qlinear_params; made by the
 * builder's fuse_qdq pass) on the int8 convolution / GEMM library (kernels/qconv.h), which picks
 * AVX512-VNNI, AVX-VNNI, exact AVX2 or portable code from the CPU features at prepare time.
 * Weights are packed once in prepare(); run() only calls the library.  Applies to 2-D
 * convolutions with explicit padding (SAME modes and 1-D / 3-D convolutions keep the reference),
 * fully connected layers and matrix multiplies (rows).  The library's arithmetic is the
 * reference's up to the rounding of in_scale * w_scale (once, in float; the reference multiplies in
 * double), so results agree to float rounding and, after an output fake-quantization, within one
 * step where a value lies on a rounding tie.  Input 0 may be FLOAT or the INT8 / UINT8 codes of the
 * input's quantization, and out_quant = 2 writes the output's codes (passes/qdq_int8_io.c). */
#include "kernels/kernel.h"
#include "kernels/qconv.h"
#include "kernels/qlinear_fp32.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

static int conv_mode(const trtl_qlinear_params *q) { return q->mode == TRTL_QL_CONV; }

static int ql_applies(const trtl_node *n, const trtl_dims *in)
{
    const trtl_qlinear_params *q = &n->p.qlin;
    if (!conv_mode(q))
        return q->mode == TRTL_QL_FC || q->mode == TRTL_QL_MATMUL;
    return q->conv.kernel_size.nb_dims == 2 && in[0].nb_dims == 4 &&
           q->conv.padding_mode == TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
}

void trtl_qlinear_make_desc(const trtl_qlinear_params *q, trtl_qconv_desc *d)
{
    const trtl_conv_params *c = &q->conv;
    int64_t K = c->num_output_maps, n = c->kernel.count / (K ? K : 1);
    *d = (trtl_qconv_desc){0};
    d->K = (int32_t)K;
    d->groups = 1;
    d->R = d->S = d->stride_h = d->stride_w = d->dil_h = d->dil_w = 1;
    if (conv_mode(q)) {
        d->R = (int32_t)c->kernel_size.d[0];
        d->S = (int32_t)c->kernel_size.d[1];
        d->groups = c->num_groups;
        d->C = (int32_t)(n / (d->R * d->S) * d->groups);
        d->stride_h = (int32_t)c->stride.d[0];
        d->stride_w = (int32_t)c->stride.d[1];
        d->dil_h = (int32_t)c->dilation.d[0];
        d->dil_w = (int32_t)c->dilation.d[1];
        d->pad_t = (int32_t)c->pre_padding.d[0];
        d->pad_l = (int32_t)c->pre_padding.d[1];
        d->pad_b = (int32_t)c->post_padding.d[0];
        d->pad_r = (int32_t)c->post_padding.d[1];
    } else {
        d->C = (int32_t)n;
        d->gemm = 1;
    }
    d->in_scale = q->in_scale;
    d->in_zero = q->in_zero_point;
    d->in_signed = q->in_type == TRTL_INT8;
    d->act = q->act;
    d->alpha = q->alpha;
    d->beta = q->beta;
    d->has_residual = q->has_residual;
    d->out_quant = q->out_quant;
    d->out_scale = q->out_scale;
    d->out_zero = q->out_zero_point;
    d->out_signed = q->out_type == TRTL_INT8;
    d->mid_quant = q->mid_quant;
    d->mid_scale = q->mid_scale;
    d->mid_zero = q->mid_zero_point;
    d->mid_signed = q->mid_type == TRTL_INT8;
    d->res_codes = q->res_quant;
    d->res_scale = q->res_scale;
    d->res_zero = q->res_zero_point;
    d->res_signed = q->res_type == TRTL_INT8;
    d->bias_after_mid = q->bias_after_mid;
}

/* amx: TRTL_QCONV_AMX_NEVER ("qlinear.int8") or TRTL_QCONV_AMX_ONLY ("qlinear.amx_int8"). */
static trtl_status ql_prepare_amx(const trtl_node *n, void **state, int32_t amx)
{
    const trtl_qlinear_params *q = &n->p.qlin;
    trtl_qconv_desc d;
    trtl_qlinear_make_desc(q, &d);
    trtl_qconv_state *s = NULL;
    trtl_status st = trtl_qconv_prepare_amx(&d, q->conv.kernel.values, q->w_scale.values, 1,
                                            q->conv.bias.count ? q->conv.bias.values : NULL, amx, &s);
    if (st != TRTL_OK)
        return trtl_error_prefix("layer '%s'", n->name);
    *state = s;
    return TRTL_OK;
}

static trtl_status ql_prepare(const trtl_node *n, void **state)
{
    return ql_prepare_amx(n, state, TRTL_QCONV_AMX_NEVER);
}

static void ql_release(void *state) { trtl_qconv_release(state); }

/* Rows of a FC / matmul input (the library's M). */
static int64_t rows_of(const trtl_node *n, const trtl_dims *x)
{
    int64_t K = n->p.qlin.conv.num_output_maps, cin = n->p.qlin.conv.kernel.count / (K ? K : 1);
    return cin ? trtl_volume(x) / cin : 0;
}

/* Sized for trtl_available_cpus() threads (a larger pool runs on the calling thread). */
static size_t ql_scratch_amx(const trtl_node *n, const trtl_tensor_view *in, int32_t amx)
{
    trtl_qconv_state *s = NULL;
    if (ql_prepare_amx(n, (void **)&s, amx) != TRTL_OK) /* the state holds the layout; packing is off the run path */
        return 0;
    int nt = trtl_available_cpus();
    const trtl_dims *x = &in[0].dims;
    size_t r = conv_mode(&n->p.qlin) ? trtl_qconv_scratch(s, x->d[0], x->d[2], x->d[3], nt)
                                      : trtl_qgemm_scratch(s, rows_of(n, x), nt);
    trtl_qconv_release(s);
    return r;
}

static size_t ql_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)out;
    return ql_scratch_amx(n, in, TRTL_QCONV_AMX_NEVER);
}

static trtl_status ql_run(const trtl_kernel_args *a)
{
    const trtl_node *n = a->node;
    const trtl_qconv_state *s = a->state;
    const trtl_dims *x = &a->in[0].dims;
    const void *res = n->p.qlin.has_residual ? a->in[1].data : NULL;
    const int32_t codes = a->in[0].dtype != TRTL_FLOAT;
    struct trtl_threadpool *pool = a->pool;
    int nt = pool ? trtl_threadpool_size(pool) : 1;
    trtl_status st;
    if (conv_mode(&n->p.qlin)) {
        if (trtl_qconv_scratch(s, x->d[0], x->d[2], x->d[3], nt) > a->scratch_size)
            pool = NULL;
        st = trtl_qconv_run_codes(s, x->d[0], x->d[2], x->d[3], a->in[0].data, codes, a->out[0].data, res,
                                  a->scratch, a->scratch_size, pool);
    } else {
        int64_t m = rows_of(n, x);
        if (trtl_qgemm_scratch(s, m, nt) > a->scratch_size)
            pool = NULL;
        st = trtl_qgemm_run_codes(s, m, a->in[0].data, codes, a->out[0].data, res, a->scratch, a->scratch_size,
                                  pool);
    }
    return st == TRTL_OK ? st : trtl_error_prefix("layer '%s'", n->name);
}

const trtl_kernel trtl_kernel_qlinear_int8 = {
    .name = "qlinear.int8",
    .op = TRTL_OP_QLINEAR,
    .cpu_features = 0, /* the library falls back to portable code itself */
    .applies_epilogue = 1,
    .applies = ql_applies,
    .prepare = ql_prepare,
    .release = ql_release,
    .scratch = ql_scratch,
    .run = ql_run,
    .precision = TRTL_INT8,
};

/* "qlinear.amx_int8": the same on the library's Intel AMX kernel (tdpbsud / tdpbusd tiles), a candidate
 * only where the CPU has AMX-INT8 (its plans need it: cpu_features) and groups = 1; bit-identical int32
 * sums to "qlinear.int8" on AVX512-VNNI.  The builder times the two. */
static int qa_applies(const trtl_node *n, const trtl_dims *in)
{
    return ql_applies(n, in) && (!conv_mode(&n->p.qlin) || n->p.qlin.conv.num_groups == 1);
}

static trtl_status qa_prepare(const trtl_node *n, void **state)
{
    return ql_prepare_amx(n, state, TRTL_QCONV_AMX_ONLY);
}

static size_t qa_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out)
{
    (void)out;
    return ql_scratch_amx(n, in, TRTL_QCONV_AMX_ONLY);
}

const trtl_kernel trtl_kernel_qlinear_amx_int8 = {
    .name = "qlinear.amx_int8",
    .op = TRTL_OP_QLINEAR,
    .cpu_features = TRTL_QCONV_AMX_CPU,
    .applies_epilogue = 1,
    .applies = qa_applies,
    .prepare = qa_prepare,
    .release = ql_release,
    .scratch = qa_scratch,
    .run = ql_run,
    .precision = TRTL_INT8,
};
