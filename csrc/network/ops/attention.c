/* attention.c -- the ATTENTION op: y = norm(Q K^T * scale [+ mask]) V over the last axis (params in
 * core/params.h).  The builder makes it (passes/fuse_attention.c) from a matrix multiply / scale / add /
 * softmax / matrix multiply chain that it computes, and networks add it as TensorRT 10.14's IAttention
 * (network.add_attention: query, key, value, an optional BOOL or additive FLOAT mask as input 3, norm_op,
 * causal; no implicit 1/sqrt(d) scale, scale stays 1 unless set).  Shape inference checks everything a plan
 * could get wrong, as the plan reader re-runs it. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_attention[] = {
    TRTL_A("scale", TRTL_ATTR_FLOAT, attn.scale),
    TRTL_A("k_transposed", TRTL_ATTR_BOOL, attn.k_transposed),
    TRTL_A("mask_mode", TRTL_ATTR_INT, attn.mask_mode),
    /* plan version 7 (serialize/reader.c: attrs_in_version) */
    TRTL_A_ENUM("norm_op", attn.norm_op, "AttentionNormalizationOp", TRTL_ATTN_NORM_COUNT),
    TRTL_A("causal", TRTL_ATTR_BOOL, attn.causal),
    TRTL_A("decomposable", TRTL_ATTR_BOOL, attn.decomposable),
    TRTL_A("causal_lower_right", TRTL_ATTR_BOOL, attn.causal_lower_right),
    TRTL_A("empty_rows_zero", TRTL_ATTR_BOOL, attn.empty_rows_zero),
};
TRTL_NATTRS(attention);

void trtl_init_attention(trtl_params *p)
{
    p->attn.scale = 1.0f;
    p->attn.k_transposed = 0;
    p->attn.mask_mode = 0;
    p->attn.norm_op = TRTL_ATTN_NORM_SOFTMAX;
    p->attn.causal = 0;
    p->attn.decomposable = 0;
    p->attn.causal_lower_right = 0;
    p->attn.empty_rows_zero = 0;
}

/* A network layer (IAttention): the mask is input 3 when given; a row without an attendable key gives
 * zeros (as ONNX Attention defines it), where the builder's fused chains keep the unfused layers' NaN. */
trtl_status trtl_lower_attention(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': attention needs an explicit-batch network",
                          c->layer_name);
    if (c->n_in < 3 || c->n_in > 4)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': attention takes query, key, value and an optional "
                          "mask, %d inputs given", c->layer_name, (int)c->n_in);
    if (p->attn.k_transposed != 0 || p->attn.mask_mode == 2)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': attention k_transposed / mask_mode 2 are the "
                          "builder's own", c->layer_name);
    p->attn.mask_mode = c->n_in == 4;
    p->attn.empty_rows_zero = 1;
    return TRTL_OK;
}

/* Two batch dims (or a dim against an already broadcast one) that cannot be one. */
static int clash(int64_t x, int64_t y) { return x >= 0 && y >= 0 && x != y && x != 1 && y != 1; }

/* Broadcast of dims b and x that do not clash: 1 gives way, a known dim beats an unknown (-1) one. */
static int64_t combine(int64_t b, int64_t x)
{
    if (x == 1)
        return b;
    return b == 1 || b < 0 ? x : b;
}

trtl_status trtl_infer_attention(const trtl_infer_ctx *c)
{
    const trtl_attention_params *p = &c->p->attn;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    if ((p->k_transposed != 0 && p->k_transposed != 1) || p->mask_mode < 0 || p->mask_mode > 2 ||
        p->norm_op < 0 || p->norm_op >= TRTL_ATTN_NORM_COUNT || (p->causal & ~1) || (p->causal_lower_right & ~1) ||
        (p->empty_rows_zero & ~1) || (p->decomposable & ~1))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': attention k_transposed %d / mask_mode %d / "
                          "norm_op %d / causal %d", c->layer_name, (int)p->k_transposed, (int)p->mask_mode,
                          (int)p->norm_op, (int)p->causal);
    if (c->n_in != 3 + (p->mask_mode != 0))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention has %d inputs, needs %d", c->layer_name, (int)c->n_in,
                          3 + (p->mask_mode != 0));
    static const char *const in_names[4] = {"query", "key", "value", "mask"};
    for (int i = 0; i < c->n_in; i++)
        if (c->in_type[i] != TRTL_FLOAT && !(i == 3 && c->in_type[i] == TRTL_BOOL && p->mask_mode == 1))
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': attention needs FLOAT %s%s, input %d is %s",
                              c->layer_name, in_names[i], i == 3 ? " (or BOOL)" : "", i,
                              trtl_dtype_name(c->in_type[i]));
    const trtl_dims *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
    int r = q->nb_dims;
    if (r < 2 || k->nb_dims != r || v->nb_dims != r)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention inputs Q %s, K %s, V must have one rank >= 2",
                          c->layer_name, trtl_dims_str(q, s1, sizeof s1), trtl_dims_str(k, s2, sizeof s2));
    int64_t D = q->d[r - 1], Sq = q->d[r - 2];
    int64_t kd = k->d[p->k_transposed ? r - 2 : r - 1], Sk = k->d[p->k_transposed ? r - 1 : r - 2];
    int64_t vs = v->d[r - 2], Dv = v->d[r - 1];
    if ((D >= 0 && kd >= 0 && D != kd) || (Sk >= 0 && vs >= 0 && Sk != vs))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention Q %s, K %s (k_transposed %d) and V do not agree",
                          c->layer_name, trtl_dims_str(q, s1, sizeof s1), trtl_dims_str(k, s2, sizeof s2),
                          (int)p->k_transposed);
    trtl_dims o;
    o.nb_dims = r;
    for (int i = 0; i < r - 2; i++) {
        int64_t x = q->d[i], y = k->d[i], z = v->d[i];
        /* K / V heads may divide Q's (grouped-query attention) where Q is not broadcast */
        int gy = x > 1 && y > 1 && x % y == 0, gz = x > 1 && z > 1 && x % z == 0;
        if ((clash(x, y) && !gy) || (clash(x, z) && !gz) || (clash(y, z) && !gy && !gz))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention batch dim %d of Q, K, V cannot broadcast (%lld, %lld, %lld)"
                              " (K / V heads must equal Q's, be 1, or divide Q's)",
                              c->layer_name, i, (long long)x, (long long)y, (long long)z);
        o.d[i] = gy || gz ? x : combine(combine(x, y), z);
    }
    o.d[r - 2] = Sq;
    o.d[r - 1] = Dv;
    if (p->mask_mode) {
        const trtl_dims *m = &c->in[3];
        if (m->nb_dims != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention mask %s must have the scores' rank %d",
                              c->layer_name, trtl_dims_str(m, s1, sizeof s1), r);
        for (int i = 0; i < r; i++) {
            int64_t s = i == r - 2 ? Sq : i == r - 1 ? Sk : o.d[i];
            if (i == 0 && p->mask_mode == 2 && r > 2) { /* repeats: must divide the scores' dim 0 */
                if (m->d[0] == 0 || (m->d[0] > 0 && s >= 0 && s % m->d[0]))
                    return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention window mask %s: dim 0 does not divide %lld",
                                      c->layer_name, trtl_dims_str(m, s1, sizeof s1), (long long)s);
                continue;
            }
            if (m->d[i] >= 0 && m->d[i] != 1 && s >= 0 && m->d[i] != s)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': attention mask %s does not broadcast to the scores (dim %d: %lld)",
                                  c->layer_name, trtl_dims_str(m, s1, sizeof s1), i, (long long)s);
        }
    }
    c->out[0] = o;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
