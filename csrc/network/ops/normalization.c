/* normalization.c -- INormalizationLayer (TensorRT 8.6): y = (x - mean) / sqrt(var + epsilon) * scale
 * + bias, mean and (biased) variance over `axes`.  Internal (builder/passes/norm_codes.c): out_quant 2
 * writes QuantizeLinear(y; out_scale, out_zero_point) as INT8 / UINT8 codes (out_type) instead of y.  With num_groups G > 1 (group norm) the channels
 * (dim 1) split into G groups and the statistics run over the group's channels times `axes`.
 * scale and bias are tensors of x's rank, each dim 1 or equal to x's (broadcast); for group norm
 * their dim 1 may also be G (one value per group, TensorRT 8.6's form) instead of C. */
#include <math.h>
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_normalization[] = {
    TRTL_A("epsilon", TRTL_ATTR_FLOAT, norm.epsilon),
    TRTL_A("axes", TRTL_ATTR_AXES, norm.axes),
    TRTL_A("num_groups", TRTL_ATTR_INT, norm.num_groups),
    TRTL_A("compute_precision", TRTL_ATTR_DTYPE, norm.compute_precision),
    TRTL_A_FLAGS("out_quant", TRTL_ATTR_INT, norm.out_quant, TRTL_ATTRF_INTERNAL),
    TRTL_A_FLAGS("out_scale", TRTL_ATTR_FLOAT, norm.out_scale, TRTL_ATTRF_INTERNAL),
    TRTL_A_FLAGS("out_zero_point", TRTL_ATTR_INT, norm.out_zero_point, TRTL_ATTRF_INTERNAL),
    TRTL_A_FLAGS("out_type", TRTL_ATTR_DTYPE, norm.out_type, TRTL_ATTRF_INTERNAL),
};
TRTL_NATTRS(normalization);

void trtl_init_normalization(trtl_params *p)
{
    p->norm.epsilon = 1e-5f;
    p->norm.axes = 0;
    p->norm.num_groups = 1;
    p->norm.compute_precision = TRTL_FLOAT;
    p->norm.out_quant = 0;
    p->norm.out_scale = 1.0f;
    p->norm.out_zero_point = 0;
    p->norm.out_type = TRTL_INT8;
}

static trtl_status check_norm(const trtl_normalization_params *p, int32_t rank, const char *layer)
{
    if (!(p->epsilon >= 0.0f) || !isfinite(p->epsilon))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': epsilon %g must be >= 0", layer, (double)p->epsilon);
    if (p->num_groups < 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': num_groups %d must be >= 1", layer,
                          (int)p->num_groups);
    if (p->compute_precision != TRTL_FLOAT && p->compute_precision != TRTL_HALF)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': compute_precision must be FLOAT or HALF, got %s",
                          layer, trtl_dtype_name((trtl_dtype)p->compute_precision));
    if (p->axes == 0 && p->num_groups == 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes is empty (no dimension to normalize over)",
                          layer);
    if (rank >= 0 && rank < 32 && (p->axes >> rank))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': axes 0x%x name a dimension beyond the input's %d (batch included)", layer,
                          (unsigned)p->axes, (int)rank);
    /* the codes output (a plan may carry it wrong; the builder always makes it right) */
    if ((p->out_quant != 0 && p->out_quant != 2) ||
        (p->out_quant &&
         (!(p->out_scale > 0.0f) || !isfinite(p->out_scale) || p->compute_precision != TRTL_FLOAT ||
          (p->out_type == TRTL_INT8 ? p->out_zero_point < -128 || p->out_zero_point > 127
                                    : p->out_type != TRTL_UINT8 || p->out_zero_point < 0 || p->out_zero_point > 255))))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': bad output quantization (out_quant %d: 0, or 2 with a finite scale > 0, an "
                          "INT8 / UINT8 type and its zero point, FLOAT compute precision)", layer, (int)p->out_quant);
    return TRTL_OK;
}

trtl_status trtl_lower_normalization(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch) {
        if (p->norm.axes & 0x80000000u)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes 0x%x out of range", c->layer_name,
                              (unsigned)p->norm.axes);
        p->norm.axes <<= 1;
    }
    return check_norm(&p->norm, c->n_in > 0 && c->in ? c->in[0].nb_dims : -1, c->layer_name);
}

trtl_status trtl_infer_normalization(const trtl_infer_ctx *c)
{
    const trtl_normalization_params *p = &c->p->norm;
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    static const char *const names[3] = {"input", "scale", "bias"};
    TRTL_TRY(check_norm(p, x->nb_dims, c->layer_name));
    for (int i = 0; i < 3; i++)
        if (c->in_type[i] != TRTL_FLOAT)
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': normalization needs FLOAT tensors, %s is %s",
                              c->layer_name, names[i], trtl_dtype_name(c->in_type[i]));
    for (int i = 1; i < 3; i++) {
        const trtl_dims *w = &c->in[i];
        if (w->nb_dims != x->nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s %s must have the input's rank %d (input %s)",
                              c->layer_name, names[i], trtl_dims_str(w, s, sizeof s), (int)x->nb_dims,
                              trtl_dims_str(x, s2, sizeof s2));
        for (int32_t d = 0; d < x->nb_dims; d++)
            if (w->d[d] >= 0 && x->d[d] >= 0 && w->d[d] != 1 && w->d[d] != x->d[d] &&
                !(d == 1 && p->num_groups > 1 && w->d[d] == p->num_groups)) /* TensorRT 8.6: per-group */
                return trtl_error(TRTL_ERR_SHAPE,
                                  "layer '%s': %s %s does not broadcast to input %s (dim %d must be 1 or %lld)",
                                  c->layer_name, names[i], trtl_dims_str(w, s, sizeof s),
                                  trtl_dims_str(x, s2, sizeof s2), (int)d, (long long)x->d[d]);
    }
    if (p->num_groups > 1) {
        if (x->nb_dims < 2)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': num_groups %d needs a channel dim (dim 1); input %s",
                              c->layer_name, (int)p->num_groups, trtl_dims_str(x, s, sizeof s));
        if (x->d[1] >= 0 && x->d[1] % p->num_groups)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld channels are not divisible by num_groups %d",
                              c->layer_name, (long long)x->d[1], (int)p->num_groups);
    }
    c->out[0] = *x;
    c->out_type[0] = p->out_quant == 2 ? (trtl_dtype)p->out_type : TRTL_FLOAT;
    return TRTL_OK;
}
