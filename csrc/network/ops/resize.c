/* resize.c -- IResizeLayer (static form: output from `shape` or from `scales`).
 * Output dim i = shape[i] (copy_mask bit i: the input's dim i), else floor(in[i] * scales[i]).
 * NEAREST / LINEAR / CUBIC; the coordinate mapping is in kernels/ref/resize.c. */
#include <math.h>
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "network/shape_values.h"

const trtl_attr_desc trtl_attrs_resize[] = {
    TRTL_A("shape", TRTL_ATTR_DIMS, resize.shape),
    {"scales", TRTL_ATTR_FLOATS, TRTL_PARAM_OFF(resize.nb_scales), TRTL_PARAM_OFF(resize.scales), NULL, 0},
    TRTL_A_ENUM("resize_mode", resize.resize_mode, "InterpolationMode", TRTL_RESIZE_COUNT),
    TRTL_A_ENUM("coordinate_transformation", resize.coordinate_transformation, "ResizeCoordinateTransformation", TRTL_COORD_COUNT),
    TRTL_A_ENUM("selector_for_single_pixel", resize.selector_for_single_pixel, "ResizeSelector", TRTL_SELECT_COUNT),
    TRTL_A_ENUM("nearest_rounding", resize.nearest_rounding, "ResizeRoundMode", TRTL_ROUND_COUNT),
    TRTL_A("cubic_coeff", TRTL_ATTR_FLOAT, resize.cubic_coeff),
    TRTL_A("exclude_outside", TRTL_ATTR_BOOL, resize.exclude_outside),
    TRTL_A_FLAGS("copy_mask", TRTL_ATTR_AXES, resize.copy_mask, TRTL_ATTRF_INTERNAL),
};
TRTL_NATTRS(resize);

void trtl_init_resize(trtl_params *p)
{
    trtl_resize_params *r = &p->resize;
    r->shape.nb_dims = 0;
    r->nb_scales = 0;
    r->resize_mode = TRTL_RESIZE_NEAREST;
    r->coordinate_transformation = TRTL_COORD_ASYMMETRIC;
    r->selector_for_single_pixel = TRTL_SELECT_FORMULA;
    r->nearest_rounding = TRTL_ROUND_FLOOR;
    r->cubic_coeff = -0.75f;
    r->exclude_outside = 0;
    r->copy_mask = 0;
}

static trtl_status check_resize(const trtl_resize_params *r, const char *layer)
{
    if (r->resize_mode < TRTL_RESIZE_NEAREST || r->resize_mode > TRTL_RESIZE_CUBIC)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown resize_mode %d", layer, (int)r->resize_mode);
    if (r->coordinate_transformation < TRTL_COORD_ALIGN_CORNERS || r->coordinate_transformation > TRTL_COORD_HALF_PIXEL)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown coordinate_transformation %d", layer,
                          (int)r->coordinate_transformation);
    if (r->selector_for_single_pixel < TRTL_SELECT_FORMULA || r->selector_for_single_pixel > TRTL_SELECT_UPPER)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown selector_for_single_pixel %d", layer,
                          (int)r->selector_for_single_pixel);
    if (r->nearest_rounding < TRTL_ROUND_HALF_UP || r->nearest_rounding > TRTL_ROUND_CEIL)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown nearest_rounding %d", layer,
                          (int)r->nearest_rounding);
    if (!isfinite(r->cubic_coeff))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': cubic_coeff must be finite", layer);
    if (r->shape.nb_dims < 0 || r->shape.nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape has %d dims", layer, (int)r->shape.nb_dims);
    if (r->shape.nb_dims > 0) {
        for (int32_t i = 0; i < r->shape.nb_dims; i++)
            if (!(r->copy_mask & (1u << i)) && r->shape.d[i] < 1)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape[%d] = %lld must be >= 1", layer,
                                  (int)i, (long long)r->shape.d[i]);
    } else if (r->nb_scales > 0) {
        if (r->nb_scales > TRTL_MAX_SCALES)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %d scales, at most %d", layer,
                              (int)r->nb_scales, TRTL_MAX_SCALES);
        for (int32_t i = 0; i < r->nb_scales; i++)
            if (!(r->scales[i] > 0.0f) || !isfinite(r->scales[i]))
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': scales[%d] = %g must be positive", layer,
                                  (int)i, (double)r->scales[i]);
    } else if (r->nb_scales < 0) {
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %d scales", layer, (int)r->nb_scales);
    }
    return TRTL_OK;
}

trtl_status trtl_lower_resize(trtl_params *p, const trtl_lower_ctx *c)
{
    trtl_resize_params *r = &p->resize;
    r->copy_mask = 0;
    if (c->n_in > 1) {
        /* Output dims from a shape tensor (set_input(1, t)): `shape` only records the rank (values 1, never
         * read: shape inference takes input 1's values, the kernels work from the output dims). */
        if (c->implicit_batch)
            return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': a resize to a shape tensor (input 1) needs an "
                              "explicit-batch network", c->layer_name);
        r->nb_scales = 0;
        r->shape.nb_dims = c->in ? c->in[0].nb_dims : 0;
        for (int32_t i = 0; i < TRTL_MAX_DIMS; i++)
            r->shape.d[i] = 1;
    }
    r->exclude_outside = r->exclude_outside ? 1 : 0;
    TRTL_TRY(check_resize(r, c->layer_name));
    if (r->shape.nb_dims > 0) {
        r->nb_scales = 0; /* shape takes precedence */
        if (c->implicit_batch) {
            if (r->shape.nb_dims >= TRTL_MAX_DIMS)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape has too many dims", c->layer_name);
            r->shape = trtl_dims_prepend(&r->shape, 0);
            r->copy_mask = 1u; /* output batch = input batch */
        }
    } else if (r->nb_scales > 0 && c->implicit_batch) {
        if (r->nb_scales >= TRTL_MAX_SCALES)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': too many scales", c->layer_name);
        for (int32_t i = r->nb_scales; i > 0; i--)
            r->scales[i] = r->scales[i - 1];
        r->scales[0] = 1.0f;
        r->nb_scales++;
    }
    if (c->n_in > 0 && c->in) {
        int32_t rank = c->in[0].nb_dims;
        if (r->shape.nb_dims > 0 && r->shape.nb_dims != rank)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape has %d dims, the input has %d%s",
                              c->layer_name, (int)(r->shape.nb_dims - (c->implicit_batch ? 1 : 0)),
                              (int)(rank - (c->implicit_batch ? 1 : 0)), c->implicit_batch ? " (batch excluded)" : "");
        if (r->shape.nb_dims == 0 && r->nb_scales > 0 && r->nb_scales != rank)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %d scales given, the input has %d dims%s",
                              c->layer_name, (int)(r->nb_scales - (c->implicit_batch ? 1 : 0)),
                              (int)(rank - (c->implicit_batch ? 1 : 0)), c->implicit_batch ? " (batch excluded)" : "");
    }
    return TRTL_OK;
}

trtl_status trtl_infer_resize(const trtl_infer_ctx *c)
{
    const trtl_resize_params *r = &c->p->resize;
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_resize(r, c->layer_name));
    trtl_dtype t = c->in_type[0];
    if (!(t == TRTL_FLOAT || (t == TRTL_INT32 && r->resize_mode == TRTL_RESIZE_NEAREST)))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': resize needs a FLOAT input (or INT32 with NEAREST), got %s",
                          c->layer_name, trtl_dtype_name(t));
    trtl_dims o = *x;
    if (c->n_in > 1) {
        const int64_t *v = c->in_values ? c->in_values[1] : NULL;
        if (c->in_type[1] != TRTL_INT32 || c->in[1].nb_dims != 1 || c->in[1].d[0] != x->nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the output shape (input 1) must be a 1-D INT32 shape tensor "
                              "of %d values (the input's rank), got %s %s", c->layer_name, (int)x->nb_dims,
                              trtl_dtype_name(c->in_type[1]), trtl_dims_str(&c->in[1], s, sizeof s));
        for (int32_t i = 0; i < x->nb_dims; i++) {
            o.d[i] = v ? v[i] : TRTL_SV_UNKNOWN;
            if (o.d[i] == TRTL_SV_UNKNOWN) {
                if (c->need_values)
                    return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the output shape (input 1) is not known before "
                                      "execution: a shape tensor must be computed from input shapes (shape layers), "
                                      "constants and shape-tensor network inputs only", c->layer_name);
                o.d[i] = -1;
            } else if (o.d[i] < 1) {
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output shape (input 1) value %lld in dimension %d must be "
                                  ">= 1", c->layer_name, (long long)o.d[i], (int)i);
            }
        }
    } else if (r->shape.nb_dims > 0) {
        if (r->shape.nb_dims != x->nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': shape has %d dims but input %s has %d", c->layer_name,
                              (int)r->shape.nb_dims, trtl_dims_str(x, s, sizeof s), (int)x->nb_dims);
        for (int32_t i = 0; i < x->nb_dims; i++)
            o.d[i] = (r->copy_mask & (1u << i)) ? x->d[i] : r->shape.d[i];
    } else if (r->nb_scales > 0) {
        if (r->nb_scales != x->nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %d scales given but input %s has %d dims", c->layer_name,
                              (int)r->nb_scales, trtl_dims_str(x, s, sizeof s), (int)x->nb_dims);
        for (int32_t i = 0; i < x->nb_dims; i++) {
            if (x->d[i] < 0) {
                o.d[i] = -1;
                continue;
            }
            /* float arithmetic, as TensorRT/ONNX Runtime compute it: 10 * 0.7f gives 7, not 6 */
            float v = (float)x->d[i] * r->scales[i];
            if (!(v < 1099511627776.0f)) /* 2^40, the element bound; also NaN (converting it would be UB) */
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scales[%d] = %g turns input dim %lld into %g, more "
                                  "than the 2^40 bound", c->layer_name, (int)i, (double)r->scales[i],
                                  (long long)x->d[i], (double)v);
            o.d[i] = (int64_t)floorf(v);
            if (o.d[i] < 1 && x->d[i] > 0)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': scales[%d] = %g turns input dim %lld into %lld",
                                  c->layer_name, (int)i, (double)r->scales[i], (long long)x->d[i], (long long)o.d[i]);
        }
    }
    /* neither set: identity resize (output shape = input shape) */
    c->out[0] = o;
    c->out_type[0] = t;
    return TRTL_OK;
}
