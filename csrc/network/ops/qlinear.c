/* qlinear.c -- QLINEAR, the builder's internal quantized convolution / fully connected / matrix
 * multiply (trtl_qlinear_params in core/params.h; made by passes/fuse_qdq.c, run by
 * kernels/ref/qlinear.c and the int8 kernels).  Never a network layer: lowering refuses it.
 * Inputs: 0 the FLOAT activation (quantized inside) or its INT8 / UINT8 codes (of in_type, written
 * by a QLINEAR with out_quant = 2: passes/qdq_int8_io.c), 1 the FLOAT residual when has_residual
 * (or its codes of res_type when res_quant).
 * Output FLOAT, or the codes of out_type when out_quant = 2, shaped as the convolution / fully
 * connected layer / matrix multiply it replaces. */
#include <string.h>
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

#define QA(name, type, member) TRTL_A_FLAGS(name, type, qlin.member, TRTL_ATTRF_INTERNAL)
const trtl_attr_desc trtl_attrs_qlinear[] = {
    QA("num_output_maps", TRTL_ATTR_INT, conv.num_output_maps),
    QA("kernel_size_nd", TRTL_ATTR_DIMS, conv.kernel_size),
    QA("stride_nd", TRTL_ATTR_DIMS, conv.stride),
    QA("pre_padding", TRTL_ATTR_DIMS, conv.pre_padding),
    QA("post_padding", TRTL_ATTR_DIMS, conv.post_padding),
    QA("dilation_nd", TRTL_ATTR_DIMS, conv.dilation),
    QA("num_groups", TRTL_ATTR_INT, conv.num_groups),
    QA("padding_mode", TRTL_ATTR_INT, conv.padding_mode),
    QA("kernel", TRTL_ATTR_WEIGHTS, conv.kernel),
    QA("bias", TRTL_ATTR_WEIGHTS, conv.bias),
    QA("mode", TRTL_ATTR_INT, mode),
    QA("in_scale", TRTL_ATTR_FLOAT, in_scale),
    QA("in_zero_point", TRTL_ATTR_INT, in_zero_point),
    QA("in_type", TRTL_ATTR_DTYPE, in_type),
    QA("w_scale", TRTL_ATTR_WEIGHTS, w_scale),
    QA("act", TRTL_ATTR_INT, act),
    QA("alpha", TRTL_ATTR_FLOAT, alpha),
    QA("beta", TRTL_ATTR_FLOAT, beta),
    QA("has_residual", TRTL_ATTR_BOOL, has_residual),
    QA("out_quant", TRTL_ATTR_INT, out_quant), /* 0, 1 or 2; an i32 in plans as the BOOL it was */
    QA("out_scale", TRTL_ATTR_FLOAT, out_scale),
    QA("out_zero_point", TRTL_ATTR_INT, out_zero_point),
    QA("out_type", TRTL_ATTR_DTYPE, out_type),
    QA("mid_quant", TRTL_ATTR_INT, mid_quant),
    QA("mid_scale", TRTL_ATTR_FLOAT, mid_scale),
    QA("mid_zero_point", TRTL_ATTR_INT, mid_zero_point),
    QA("mid_type", TRTL_ATTR_DTYPE, mid_type),
    QA("res_quant", TRTL_ATTR_INT, res_quant),
    QA("res_scale", TRTL_ATTR_FLOAT, res_scale),
    QA("res_zero_point", TRTL_ATTR_INT, res_zero_point),
    QA("res_type", TRTL_ATTR_DTYPE, res_type),
    QA("pool_mode", TRTL_ATTR_INT, pool_mode),
    QA("in_grid", TRTL_ATTR_INT, in_grid),
    QA("bias_after_mid", TRTL_ATTR_INT, bias_after_mid),
};
TRTL_NATTRS(qlinear);

void trtl_init_qlinear(trtl_params *p)
{
    memset(p, 0, sizeof *p); /* weights empty */
    trtl_init_convolution(p);
    p->qlin.mode = TRTL_QL_CONV;
    p->qlin.in_scale = 1.0f;
    p->qlin.in_zero_point = 0;
    p->qlin.in_type = TRTL_INT8;
    p->qlin.w_scale.type = TRTL_FLOAT;
    p->qlin.w_scale.values = NULL;
    p->qlin.w_scale.count = 0;
    p->qlin.act = TRTL_ACT_NONE;
    p->qlin.alpha = p->qlin.beta = 0.0f;
    p->qlin.has_residual = 0;
    p->qlin.out_quant = 0;
    p->qlin.out_scale = 1.0f;
    p->qlin.out_zero_point = 0;
    p->qlin.out_type = TRTL_INT8;
    p->qlin.mid_quant = p->qlin.res_quant = 0;
    p->qlin.mid_scale = p->qlin.res_scale = 1.0f;
    p->qlin.mid_zero_point = p->qlin.res_zero_point = 0;
    p->qlin.mid_type = p->qlin.res_type = TRTL_INT8;
    p->qlin.pool_mode = TRTL_QP_NONE;
    p->qlin.in_grid = 0;
    p->qlin.bias_after_mid = 0;
}

trtl_status trtl_lower_qlinear(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': the quantized linear op is internal to the builder and "
                      "cannot be added to a network", c->layer_name);
}

static int range_ok(int32_t type, int32_t zp)
{
    return type == TRTL_INT8 ? zp >= -128 && zp <= 127 : type == TRTL_UINT8 ? zp >= 0 && zp <= 255 : 0;
}

/* The parameters a plan could carry wrong; the builder always makes them right. */
static trtl_status check_params(const trtl_infer_ctx *c, int64_t *K)
{
    const trtl_qlinear_params *q = &c->p->qlin;
    const char *ln = c->layer_name;
    *K = q->conv.num_output_maps;
    const int no_weights = q->mode == TRTL_QL_POOL || q->mode == TRTL_QL_ADD;
    if (q->mode < 0 || q->mode >= TRTL_QL_MODE_COUNT || (*K < 1 && !no_weights))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': bad quantized op mode %d / %lld outputs", ln,
                          (int)q->mode, (long long)*K);
    if (q->mode == TRTL_QL_POOL) {
        if (q->pool_mode < TRTL_QP_AVG || q->pool_mode > TRTL_QP_GLOBAL_DROP || q->has_residual || q->mid_quant ||
            q->conv.kernel.count)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': bad quantized pooling mode %d", ln,
                              (int)q->pool_mode);
    } else if (q->mode == TRTL_QL_ADD) {
        if (q->pool_mode != TRTL_QP_NONE || !q->has_residual || q->mid_quant || q->conv.kernel.count)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': a quantized add needs its residual input and "
                              "no weights", ln);
    } else if (q->pool_mode != TRTL_QP_NONE) {
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': pool_mode %d on a quantized linear op", ln,
                          (int)q->pool_mode);
    } else if (q->conv.kernel.type != TRTL_INT8 || q->w_scale.type != TRTL_FLOAT || q->w_scale.count != *K ||
        (q->conv.bias.count && (q->conv.bias.type != TRTL_FLOAT || q->conv.bias.count != *K)))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': quantized weights must be INT8 with %lld FLOAT "
                          "scales (and bias)", ln, (long long)*K);
    if (q->in_grid != 0 && q->in_grid != 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': bad in_grid %d (0 or 1)", ln, (int)q->in_grid);
    if ((q->bias_after_mid != 0 && q->bias_after_mid != 1) ||
        (q->bias_after_mid && ((q->mode != TRTL_QL_FC && q->mode != TRTL_QL_MATMUL) || q->mid_quant != 1 ||
                               !q->conv.bias.count)))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': bad bias_after_mid %d (0, or 1 on a fully connected / matrix multiply step "
                          "with a mid quantization and a bias)", ln, (int)q->bias_after_mid);
    if (q->out_quant < 0 || q->out_quant > 2)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': bad output quantization mode %d", ln,
                          (int)q->out_quant);
    if (!(q->in_scale > 0) || !range_ok(q->in_type, q->in_zero_point) ||
        (q->out_quant && (!(q->out_scale > 0) || !range_ok(q->out_type, q->out_zero_point))))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': bad quantization scale or zero point", ln);
    if ((q->mid_quant != 0 && q->mid_quant != 1) || (q->res_quant != 0 && q->res_quant != 1) ||
        (q->res_quant && !q->has_residual) ||
        (q->mid_quant && (!(q->mid_scale > 0) || !range_ok(q->mid_type, q->mid_zero_point))) ||
        (q->res_quant && (!(q->res_scale > 0) || !range_ok(q->res_type, q->res_zero_point))))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': bad residual quantization", ln);
    if (q->act != TRTL_ACT_NONE && !trtl_act_code_valid(q->act))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown activation %d", ln, (int)q->act);
    if (c->n_in != 1 + (q->has_residual ? 1 : 0))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %d inputs, expected %d", ln, (int)c->n_in,
                          1 + (q->has_residual ? 1 : 0));
    for (int32_t i = 0; i < c->n_in; i++)
        if (i == 1 && q->res_quant) {
            if ((int32_t)c->in_type[1] != q->res_type)
                return trtl_error(TRTL_ERR_DTYPE, "layer '%s': input 1 (residual codes) must be %s", ln,
                                  trtl_dtype_name((trtl_dtype)q->res_type));
        } else if (c->in_type[i] != TRTL_FLOAT && (i != 0 || (int32_t)c->in_type[0] != q->in_type))
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': input %d must be FLOAT%s%s", ln, (int)i,
                              i ? "" : " or ", i ? "" : trtl_dtype_name((trtl_dtype)q->in_type));
    return TRTL_OK;
}

trtl_status trtl_infer_qlinear(const trtl_infer_ctx *c)
{
    const trtl_qlinear_params *q = &c->p->qlin;
    int64_t K;
    char b1[TRTL_DIMS_STR_MAX], b2[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_params(c, &K));
    trtl_infer_ctx one = *c;
    one.n_in = 1;
    trtl_dtype float_in = TRTL_FLOAT;
    one.in_type = &float_in; /* the geometry's own type checks see the value type */
    if (q->mode == TRTL_QL_POOL && q->pool_mode >= TRTL_QP_GLOBAL) {
        const trtl_dims *x = &c->in[0];
        if (x->nb_dims != 4)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': global pooling needs a 4-D input, got %s", c->layer_name,
                              trtl_dims_str(x, b1, sizeof b1));
        c->out[0] = *x;
        c->out[0].d[2] = c->out[0].d[3] = 1;
        if (q->pool_mode == TRTL_QP_GLOBAL_DROP)
            c->out[0].nb_dims = 2;
    } else if (q->mode == TRTL_QL_ADD) {
        c->out[0] = c->in[0];
    } else if (q->mode == TRTL_QL_POOL) {
        trtl_params pp;
        trtl_init_pooling(&pp);
        pp.pool.type = TRTL_POOL_AVERAGE;
        pp.pool.window_size = q->conv.kernel_size;
        pp.pool.stride = q->conv.stride;
        pp.pool.pre_padding = q->conv.pre_padding;
        pp.pool.post_padding = q->conv.post_padding;
        pp.pool.padding_mode = q->conv.padding_mode;
        pp.pool.average_count_excludes_padding = q->pool_mode == TRTL_QP_AVG_EXCL;
        one.p = &pp;
        TRTL_TRY(trtl_infer_pooling(&one));
    } else if (q->mode == TRTL_QL_CONV) {
        TRTL_TRY(trtl_infer_convolution(&one)); /* node->p.conv is q->conv (first member) */
    } else if (q->mode == TRTL_QL_FC) {
        trtl_params fc;
        trtl_init_fully_connected(&fc);
        fc.fc.num_output_channels = (int32_t)K;
        fc.fc.kernel = q->conv.kernel;
        fc.fc.bias = q->conv.bias;
        one.p = &fc;
        TRTL_TRY(trtl_infer_fully_connected(&one));
    } else {
        const trtl_dims *x = &c->in[0];
        int64_t cin = q->conv.kernel.count / K;
        if (x->nb_dims < 2 || cin * K != q->conv.kernel.count || (x->d[x->nb_dims - 1] >= 0 && x->d[x->nb_dims - 1] != cin))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s does not match %lld x %lld quantized weights",
                              c->layer_name, trtl_dims_str(x, b1, sizeof b1), (long long)K, (long long)cin);
        c->out[0] = *x;
        c->out[0].d[x->nb_dims - 1] = K;
    }
    c->out_type[0] = q->out_quant == 2 ? (trtl_dtype)q->out_type : TRTL_FLOAT;
    if (q->has_residual) {
        const trtl_dims *r = &c->in[1], *o = &c->out[0];
        int ok = r->nb_dims == o->nb_dims;
        for (int32_t i = 0; ok && i < r->nb_dims; i++)
            ok = r->d[i] == o->d[i] || r->d[i] < 0 || o->d[i] < 0;
        if (!ok)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': residual %s differs from the output %s", c->layer_name,
                              trtl_dims_str(r, b1, sizeof b1), trtl_dims_str(o, b2, sizeof b2));
    }
    return TRTL_OK;
}
