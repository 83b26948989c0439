/* layer_attrs.c -- setting and reading layer attributes by name through the attribute tables,
 * and the typed convenience constructors of the public C API. */
#include <string.h>

#include "network/network.h"
#include "core/status.h"
#include "core/dims.h"

static trtl_status find(const trtl_layer *l, const char *attr, const trtl_attr_desc **out)
{
    const trtl_attr_desc *d = trtl_attr_find(l->op, attr);
    if (!d || (d->flags & TRTL_ATTRF_INTERNAL))
        return trtl_error(TRTL_ERR_NOT_FOUND, "layer '%s' (%s) has no attribute '%s'", l->name,
                          trtl_op_table[l->op].py_class, attr ? attr : "(null)");
    *out = d;
    return TRTL_OK;
}

#define FIELD(l, d, T) ((T *)((char *)&(l)->p + (d)->offset))

static const char *type_word(trtl_attr_type t)
{
    switch (t) {
    case TRTL_ATTR_INT: return "an int";
    case TRTL_ATTR_FLOAT: return "a float";
    case TRTL_ATTR_BOOL: return "a bool";
    case TRTL_ATTR_ENUM: return "an enum value";
    case TRTL_ATTR_AXES: return "an axes bitmask";
    case TRTL_ATTR_DIMS:
    case TRTL_ATTR_DIMS_SYM: return "dims";
    case TRTL_ATTR_WEIGHTS: return "weights";
    case TRTL_ATTR_FLOATS: return "a list of floats";
    case TRTL_ATTR_DTYPE: return "a DataType";
    case TRTL_ATTR_STRING: return "a string";
    }
    return "?";
}

static trtl_status wrong_type(const trtl_layer *l, const trtl_attr_desc *d)
{
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': attribute '%s' takes %s", l->name, d->name,
                      type_word(d->type));
}

/* Default alpha / beta of each activation type.  TensorRT's documentation names none; clients
 * rely on the natural ones (torch2trt's and NVIDIA's Caffe BNLL mapping add SOFTPLUS without
 * setting either and expect log(1 + e^x)), so these are ONNX's operator defaults, which are also
 * what TensorRT's ONNX parser passes.  Types without parameters, and CLIP (no finite natural
 * bounds), keep 0 / 0. */
static void activation_defaults(int32_t type, float *alpha, float *beta)
{
    *alpha = 0.0f;
    *beta = 0.0f;
    switch (type) {
    case TRTL_ACT_LEAKY_RELU: *alpha = 0.01f; break;
    case TRTL_ACT_ELU: *alpha = 1.0f; break;
    case TRTL_ACT_SELU:
        *alpha = 1.67326319217681884765625f;
        *beta = 1.05070102214813232421875f;
        break;
    case TRTL_ACT_SOFTPLUS:
    case TRTL_ACT_SCALED_TANH:
        *alpha = 1.0f;
        *beta = 1.0f;
        break;
    case TRTL_ACT_HARD_SIGMOID:
        *alpha = 0.2f;
        *beta = 0.5f;
        break;
    case TRTL_ACT_THRESHOLDED_RELU: *alpha = 1.0f; break;
    default: break;
    }
}

/* When an activation's type changes, alpha and beta still at the old type's defaults follow to
 * the new type's (as follow_spatial_rank below does for spatial attributes): add_activation(x,
 * SOFTPLUS) gets alpha = beta = 1, and values the user set are kept. */
static void follow_activation_type(trtl_activation_params *a, int32_t type)
{
    float oa, ob, na, nb;
    activation_defaults(a->type, &oa, &ob);
    activation_defaults(type, &na, &nb);
    if (a->alpha == oa)
        a->alpha = na;
    if (a->beta == ob)
        a->beta = nb;
}

trtl_status trtl_layer_set_int(trtl_layer *l, const char *attr, int64_t v)
{
    TRTL_CHECK_ARG(l);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    switch (d->type) {
    case TRTL_ATTR_INT:
        if (v < INT32_MIN || v > INT32_MAX)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s = %lld is out of range", l->name, d->name,
                              (long long)v);
        *FIELD(l, d, int32_t) = (int32_t)v;
        break;
    case TRTL_ATTR_ENUM:
        /* Checked here, the one place every enum attribute is set through (add_* arguments, Python
         * properties, the C API), so that a bad value fails where it is given, not at build. */
        if (v < 0 || v >= (int64_t)d->offset2)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s = %lld is not a valid %s (0..%d)", l->name,
                              d->name, (long long)v, d->enum_name, (int)d->offset2 - 1);
        if (l->op == TRTL_OP_ACTIVATION && !strcmp(d->name, "type"))
            follow_activation_type(&l->p.act, (int32_t)v);
        *FIELD(l, d, int32_t) = (int32_t)v;
        break;
    case TRTL_ATTR_BOOL: *FIELD(l, d, int32_t) = v != 0; break;
    case TRTL_ATTR_AXES:
        if (v < 0 || v > (int64_t)((1u << TRTL_MAX_DIMS) - 1))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': axes bitmask %lld is out of range (0..%u)",
                              l->name, (long long)v, (1u << TRTL_MAX_DIMS) - 1);
        *FIELD(l, d, uint32_t) = (uint32_t)v;
        break;
    case TRTL_ATTR_DTYPE:
        if (v < 0 || v >= TRTL_DTYPE_COUNT || !trtl_dtype_valid((int)v))
            return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s: unknown data type %lld", l->name, d->name, (long long)v);
        *FIELD(l, d, int32_t) = (int32_t)v;
        break;
    case TRTL_ATTR_FLOAT: *FIELD(l, d, float) = (float)v; break;
    default: return wrong_type(l, d);
    }
    trtl_layer_touch(l);
    return TRTL_OK;
}

trtl_status trtl_layer_get_int(const trtl_layer *l, const char *attr, int64_t *out)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(out);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    switch (d->type) {
    case TRTL_ATTR_INT:
    case TRTL_ATTR_ENUM:
    case TRTL_ATTR_BOOL:
    case TRTL_ATTR_DTYPE: *out = *FIELD(l, d, int32_t); return TRTL_OK;
    case TRTL_ATTR_AXES: *out = *FIELD(l, d, uint32_t); return TRTL_OK;
    default: return wrong_type(l, d);
    }
}

trtl_status trtl_layer_set_float(trtl_layer *l, const char *attr, double v)
{
    TRTL_CHECK_ARG(l);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_FLOAT)
        return wrong_type(l, d);
    *FIELD(l, d, float) = (float)v;
    trtl_layer_touch(l);
    return TRTL_OK;
}

trtl_status trtl_layer_get_float(const trtl_layer *l, const char *attr, double *out)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(out);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_FLOAT)
        return wrong_type(l, d);
    *out = *FIELD(l, d, float);
    return TRTL_OK;
}

/* When a (de)convolution's kernel size or a pooling window changes rank, spatial attributes
 * still at their defaults follow it, so add_convolution_nd(kernel_shape=(3,3,3)) gets
 * 3-D strides without the user setting them. */
static void follow_spatial_rank(trtl_layer *l, const char *attr)
{
    trtl_dims *lead = NULL, *fields[4] = {0};
    int64_t defaults[4] = {1, 1, 0, 0};
    if ((l->op == TRTL_OP_CONVOLUTION || l->op == TRTL_OP_DECONVOLUTION) &&
        (!strcmp(attr, "kernel_size_nd") || !strcmp(attr, "kernel_size"))) {
        trtl_conv_params *c = &l->p.conv;
        lead = &c->kernel_size;
        fields[0] = &c->stride;
        fields[1] = &c->dilation;
        fields[2] = &c->pre_padding;
        fields[3] = &c->post_padding;
    } else if (l->op == TRTL_OP_POOLING && (!strcmp(attr, "window_size_nd") || !strcmp(attr, "window_size"))) {
        trtl_pooling_params *p = &l->p.pool;
        lead = &p->window_size;
        fields[0] = &p->stride;
        fields[2] = &p->pre_padding;
        fields[3] = &p->post_padding;
    }
    if (!lead)
        return;
    for (int i = 0; i < 4; i++) {
        trtl_dims *f = fields[i];
        if (!f || f->nb_dims == lead->nb_dims)
            continue;
        int all_default = 1;
        for (int32_t k = 0; k < f->nb_dims; k++)
            all_default &= f->d[k] == defaults[i];
        if (!all_default)
            continue;
        f->nb_dims = lead->nb_dims;
        for (int32_t k = 0; k < f->nb_dims; k++)
            f->d[k] = defaults[i];
    }
}

trtl_status trtl_layer_set_dims(trtl_layer *l, const char *attr, const trtl_dims *v)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(v);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_DIMS && d->type != TRTL_ATTR_DIMS_SYM)
        return wrong_type(l, d);
    if (v->nb_dims < -1 || v->nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s has %d dims (at most %d)", l->name, d->name,
                          (int)v->nb_dims, TRTL_MAX_DIMS);
    if ((d->flags & TRTL_ATTRF_HW) && v->nb_dims != 2)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s takes 2 values (DimsHW), got %d; use %s_nd",
                          l->name, d->name, (int)v->nb_dims, d->name);
    *FIELD(l, d, trtl_dims) = *v;
    if (d->type == TRTL_ATTR_DIMS_SYM)
        *(trtl_dims *)((char *)&l->p + d->offset2) = *v;
    follow_spatial_rank(l, attr);
    if (l->op == TRTL_OP_RESIZE && !strcmp(attr, "shape"))
        l->p.resize.nb_scales = 0; /* the last of shape/scales set wins, as in TensorRT */
    trtl_layer_touch(l);
    return TRTL_OK;
}

trtl_status trtl_layer_get_dims(const trtl_layer *l, const char *attr, trtl_dims *out)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(out);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_DIMS && d->type != TRTL_ATTR_DIMS_SYM)
        return wrong_type(l, d);
    *out = *FIELD(l, d, trtl_dims);
    return TRTL_OK;
}

trtl_status trtl_layer_set_weights(trtl_layer *l, const char *attr, trtl_weights w)
{
    TRTL_CHECK_ARG(l);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_WEIGHTS)
        return wrong_type(l, d);
    if (w.count < 0 || (w.count > 0 && !w.values))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s: %lld weights but no data", l->name, d->name,
                          (long long)w.count);
    int constant_codes = l->op == TRTL_OP_CONSTANT && (w.type == TRTL_INT64 || trtl_dtype_is_storage(w.type));
    if (w.count > 0 && w.type != TRTL_FLOAT && w.type != TRTL_HALF && w.type != TRTL_BF16 && w.type != TRTL_INT32 && w.type != TRTL_BOOL &&
        w.type != TRTL_INT8 && w.type != TRTL_UINT8 && !constant_codes) /* storage codes: constants only */
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': %s: weights of type %s are not supported", l->name, d->name,
                          trtl_dtype_name(w.type));
    *FIELD(l, d, trtl_weights) = w;
    trtl_layer_touch(l);
    return TRTL_OK;
}

trtl_status trtl_layer_get_weights(const trtl_layer *l, const char *attr, trtl_weights *out)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(out);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_WEIGHTS)
        return wrong_type(l, d);
    *out = *FIELD(l, d, trtl_weights);
    return TRTL_OK;
}

trtl_status trtl_layer_set_floats(trtl_layer *l, const char *attr, const float *v, int32_t n)
{
    TRTL_CHECK_ARG(l);
    if (!v && n > 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "%s: v is NULL", __func__);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_FLOATS)
        return wrong_type(l, d);
    if (n < 0 || n > TRTL_MAX_SCALES)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s takes at most %d values, got %d", l->name,
                          d->name, TRTL_MAX_SCALES, (int)n);
    *FIELD(l, d, int32_t) = n;
    float *dst = (float *)((char *)&l->p + d->offset2);
    for (int32_t i = 0; i < n; i++)
        dst[i] = v[i];
    if (l->op == TRTL_OP_RESIZE)
        l->p.resize.shape.nb_dims = 0; /* the last of shape/scales set wins */
    trtl_layer_touch(l);
    return TRTL_OK;
}

trtl_status trtl_layer_get_floats(const trtl_layer *l, const char *attr, float *v, int32_t *n)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(v);
    TRTL_CHECK_ARG(n);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_FLOATS)
        return wrong_type(l, d);
    *n = *FIELD(l, d, int32_t);
    const float *src = (const float *)((const char *)&l->p + d->offset2);
    for (int32_t i = 0; i < *n && i < TRTL_MAX_SCALES; i++)
        v[i] = src[i];
    return TRTL_OK;
}

trtl_status trtl_layer_set_string(trtl_layer *l, const char *attr, const char *v)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(v);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_STRING)
        return wrong_type(l, d);
    size_t n = strlen(v);
    if (n >= d->offset2)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s is %zu bytes long (at most %zu)", l->name, d->name, n,
                          d->offset2 - 1);
    memcpy(FIELD(l, d, char), v, n + 1);
    trtl_layer_touch(l);
    return TRTL_OK;
}

trtl_status trtl_layer_get_string(const trtl_layer *l, const char *attr, const char **out)
{
    TRTL_CHECK_ARG(l);
    TRTL_CHECK_ARG(out);
    const trtl_attr_desc *d;
    trtl_clear_error();
    TRTL_TRY(find(l, attr, &d));
    if (d->type != TRTL_ATTR_STRING)
        return wrong_type(l, d);
    *out = (const char *)&l->p + d->offset;
    return TRTL_OK;
}

/* ---- typed constructors (C convenience) --------------------------------------------------- */

/* Finishes a constructor: validate, or remove the layer again and return the first error. */
static trtl_status finish(trtl_network *net, trtl_layer *l, trtl_status st, trtl_layer **out)
{
    if (st == TRTL_OK)
        st = trtl_layer_validate(l);
    if (st != TRTL_OK) {
        char msg[TRTL_MSG_MAX];
        strncpy(msg, trtl_last_error(), sizeof msg - 1);
        msg[sizeof msg - 1] = '\0';
        trtl_network_remove_layer(net, l);
        return trtl_error(st, "%s", msg);
    }
    if (out)
        *out = l;
    return TRTL_OK;
}

trtl_status trtl_network_add_convolution(trtl_network *net, trtl_tensor *input, int32_t num_output_maps,
                                         const trtl_dims *kernel_size, trtl_weights kernel, trtl_weights bias,
                                         trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(kernel_size);
    trtl_layer *l;
    TRTL_TRY(trtl_network_add_layer(net, TRTL_OP_CONVOLUTION, &input, 1, &l));
    trtl_status st = trtl_layer_set_int(l, "num_output_maps", num_output_maps);
    if (st == TRTL_OK)
        st = trtl_layer_set_dims(l, "kernel_size_nd", kernel_size);
    if (st == TRTL_OK)
        st = trtl_layer_set_weights(l, "kernel", kernel);
    if (st == TRTL_OK)
        st = trtl_layer_set_weights(l, "bias", bias);
    return finish(net, l, st, out);
}

trtl_status trtl_network_add_activation(trtl_network *net, trtl_tensor *input, trtl_activation_type type,
                                        trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    trtl_layer *l;
    TRTL_TRY(trtl_network_add_layer(net, TRTL_OP_ACTIVATION, &input, 1, &l));
    return finish(net, l, trtl_layer_set_int(l, "type", type), out);
}

trtl_status trtl_network_add_pooling(trtl_network *net, trtl_tensor *input, trtl_pooling_type type,
                                     const trtl_dims *window, trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(window);
    trtl_layer *l;
    TRTL_TRY(trtl_network_add_layer(net, TRTL_OP_POOLING, &input, 1, &l));
    trtl_status st = trtl_layer_set_int(l, "type", type);
    if (st == TRTL_OK)
        st = trtl_layer_set_dims(l, "window_size_nd", window);
    return finish(net, l, st, out);
}

trtl_status trtl_network_add_fully_connected(trtl_network *net, trtl_tensor *input, int32_t num_outputs,
                                             trtl_weights kernel, trtl_weights bias, trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    trtl_layer *l;
    TRTL_TRY(trtl_network_add_layer(net, TRTL_OP_FULLY_CONNECTED, &input, 1, &l));
    trtl_status st = trtl_layer_set_int(l, "num_output_channels", num_outputs);
    if (st == TRTL_OK)
        st = trtl_layer_set_weights(l, "kernel", kernel);
    if (st == TRTL_OK)
        st = trtl_layer_set_weights(l, "bias", bias);
    return finish(net, l, st, out);
}

trtl_status trtl_network_add_elementwise(trtl_network *net, trtl_tensor *a, trtl_tensor *b, trtl_elementwise_op op,
                                         trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    trtl_layer *l;
    trtl_tensor *in[2] = {a, b};
    TRTL_TRY(trtl_network_add_layer(net, TRTL_OP_ELEMENTWISE, in, 2, &l));
    return finish(net, l, trtl_layer_set_int(l, "op", op), out);
}

trtl_status trtl_network_add_softmax(trtl_network *net, trtl_tensor *input, trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    trtl_layer *l;
    TRTL_TRY(trtl_network_add_layer(net, TRTL_OP_SOFTMAX, &input, 1, &l));
    return finish(net, l, TRTL_OK, out);
}

trtl_status trtl_network_add_constant(trtl_network *net, const trtl_dims *shape, trtl_weights w, trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(shape);
    trtl_layer *l;
    TRTL_TRY(trtl_network_add_layer(net, TRTL_OP_CONSTANT, NULL, 0, &l));
    trtl_status st = trtl_layer_set_dims(l, "shape", shape);
    if (st == TRTL_OK)
        st = trtl_layer_set_weights(l, "weights", w);
    return finish(net, l, st, out);
}

/* ---- attribute descriptions for bindings (trtl_op_attr) ---- */

static trtl_attr_kind attr_kind(trtl_attr_type t)
{
    switch (t) {
    case TRTL_ATTR_INT: return TRTL_ATTR_KIND_INT;
    case TRTL_ATTR_FLOAT: return TRTL_ATTR_KIND_FLOAT;
    case TRTL_ATTR_BOOL: return TRTL_ATTR_KIND_BOOL;
    case TRTL_ATTR_ENUM: return TRTL_ATTR_KIND_ENUM;
    case TRTL_ATTR_AXES: return TRTL_ATTR_KIND_AXES;
    case TRTL_ATTR_DIMS:
    case TRTL_ATTR_DIMS_SYM: return TRTL_ATTR_KIND_DIMS;
    case TRTL_ATTR_WEIGHTS: return TRTL_ATTR_KIND_WEIGHTS;
    case TRTL_ATTR_FLOATS: return TRTL_ATTR_KIND_FLOATS;
    case TRTL_ATTR_DTYPE: return TRTL_ATTR_KIND_DTYPE;
    case TRTL_ATTR_STRING: return TRTL_ATTR_KIND_STRING;
    }
    return TRTL_ATTR_KIND_INT;
}

static void attr_info(const trtl_attr_desc *d, trtl_attr_info *out)
{
    out->name = d->name;
    out->kind = attr_kind(d->type);
    out->enum_name = d->type == TRTL_ATTR_ENUM ? d->enum_name : NULL;
    out->max_count = d->type == TRTL_ATTR_FLOATS ? TRTL_MAX_SCALES : d->type == TRTL_ATTR_STRING ? (int32_t)d->offset2 : 0;
}

int32_t trtl_op_num_attrs(trtl_op op)
{
    if ((int)op < 0 || op >= TRTL_OP_COUNT)
        return 0;
    const trtl_op_info *info = &trtl_op_table[op];
    int32_t n = 0;
    for (int32_t i = 0; i < *info->nattrs; i++)
        n += !(info->attrs[i].flags & TRTL_ATTRF_INTERNAL);
    return n;
}

trtl_status trtl_op_attr(trtl_op op, int32_t i, trtl_attr_info *out)
{
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    if ((int)op < 0 || op >= TRTL_OP_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "trtl_op_attr: op %d is not a trtl_op", (int)op);
    const trtl_op_info *info = &trtl_op_table[op];
    for (int32_t k = 0, seen = 0; k < *info->nattrs; k++) {
        if (info->attrs[k].flags & TRTL_ATTRF_INTERNAL)
            continue;
        if (seen++ == i) {
            attr_info(&info->attrs[k], out);
            return TRTL_OK;
        }
    }
    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "trtl_op_attr: %s has no attribute %d (it has %d)", info->py_class,
                      (int)i, (int)trtl_op_num_attrs(op));
}

trtl_status trtl_op_find_attr(trtl_op op, const char *name, trtl_attr_info *out)
{
    TRTL_CHECK_ARG(name);
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    if ((int)op < 0 || op >= TRTL_OP_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "trtl_op_find_attr: op %d is not a trtl_op", (int)op);
    const trtl_attr_desc *d = trtl_attr_find(op, name);
    if (!d || (d->flags & TRTL_ATTRF_INTERNAL))
        return trtl_error(TRTL_ERR_NOT_FOUND, "%s has no attribute '%s'", trtl_op_table[op].py_class, name);
    attr_info(d, out);
    return TRTL_OK;
}
