/* slice.c -- ISliceLayer: out[i] = in[start + i * stride] per dim (stride may be negative or 0).
 * Out-of-range indices follow `mode` (SampleMode): STRICT_BOUNDS/DEFAULT rejects them (at
 * inference when the dims are known, else in the kernel), WRAP takes them modulo the dim, CLAMP
 * clamps, FILL gives zero, REFLECT mirrors about the edge elements.
 * Lowered form (implicit batch): start 0, stride 1 and the batch dim via copy_mask bit 0 are
 * prepended (bit i set: output dim i is input dim i).
 * Shape-tensor inputs (TensorRT's set_input(1|2|3, t), explicit batch only): 1-D INT32 tensors of the
 * input's rank give start / size / stride in place of the attribute (which lowering sets to that rank,
 * values 0 / 0 / 1, never read): their values decide the output shape (network/shape_values.h), and
 * the kernel reads start and stride from them.  An input left unset keeps its attribute (the builder
 * makes it a constant).  At network level, unset inputs arrive with nb_dims -1.
 * Input 4, the FILL value: a one-element constant becomes the attribute `fill_value` (the bindings);
 * any other tensor (0-D or one element, the input's dtype, FILL mode only) stays an execution input
 * whose element the kernel reads at run time (ONNX Pad's constant_value fed at run time). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "network/shape_values.h"

const trtl_attr_desc trtl_attrs_slice[] = {
    TRTL_A("start", TRTL_ATTR_DIMS, slice.start),
    TRTL_A("shape", TRTL_ATTR_DIMS, slice.shape),
    TRTL_A("stride", TRTL_ATTR_DIMS, slice.stride),
    TRTL_A_ENUM("mode", slice.mode, "SampleMode", TRTL_SLICE_COUNT),
    TRTL_A_FLAGS("copy_mask", TRTL_ATTR_AXES, slice.copy_mask, TRTL_ATTRF_INTERNAL),
    TRTL_A_FLAGS("fill_value", TRTL_ATTR_FLOAT, slice.fill_value, TRTL_ATTRF_INTERNAL),
};
TRTL_NATTRS(slice);

static const char *const mode_names[] = {"STRICT_BOUNDS", "WRAP", "CLAMP", "FILL", "REFLECT"};

void trtl_init_slice(trtl_params *p)
{
    trtl_slice_params *s = &p->slice;
    s->start.nb_dims = 0;
    s->shape.nb_dims = 0;
    s->stride.nb_dims = 0;
    s->mode = TRTL_SLICE_DEFAULT;
    s->copy_mask = 0;
}

/* Attribute ranks agree with each other and with `rank` (the input's, in the same view). */
static trtl_status check_ranks(const char *layer, const trtl_slice_params *s, int32_t rank)
{
    const struct { const char *name; const trtl_dims *d; } f[] = {
        {"start", &s->start}, {"shape", &s->shape}, {"stride", &s->stride}};
    for (int i = 0; i < 3; i++)
        if (f[i].d->nb_dims != rank)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s has %d dims but the input has %d", layer, f[i].name,
                              (int)f[i].d->nb_dims, (int)rank);
    return TRTL_OK;
}

/* Is slice input j (1 start, 2 size, 3 stride) given as a tensor? */
static int dyn_input(int32_t n_in, const trtl_dims *in, int32_t j)
{
    return n_in > j && (!in || in[j].nb_dims >= 0);
}

trtl_status trtl_lower_slice(trtl_params *p, const trtl_lower_ctx *c)
{
    trtl_slice_params *s = &p->slice;
    char b[TRTL_DIMS_STR_MAX];
    int imp = c->implicit_batch ? 1 : 0;
    s->copy_mask = 0;
    if (c->n_in > 1 && c->in) {
        trtl_dims *f[4] = {NULL, &s->start, &s->shape, &s->stride};
        int32_t r = c->in[0].nb_dims;
        for (int32_t j = 1; j < 4; j++) {
            if (!dyn_input(c->n_in, c->in, j))
                continue;
            if (imp)
                return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': slice inputs from shape tensors need an "
                                  "explicit-batch network", c->layer_name);
            f[j]->nb_dims = r;
            for (int32_t i = 0; i < TRTL_MAX_DIMS; i++)
                f[j]->d[i] = j == 3 ? 1 : 0;
        }
    }
    if (s->mode < TRTL_SLICE_DEFAULT || s->mode > TRTL_SLICE_REFLECT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown SampleMode %d (mode)", c->layer_name,
                          (int)s->mode);
    if (s->start.nb_dims != s->shape.nb_dims || s->stride.nb_dims != s->shape.nb_dims)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': start, shape and stride must have the same number "
                          "of dims, got %d, %d and %d", c->layer_name, (int)s->start.nb_dims, (int)s->shape.nb_dims,
                          (int)s->stride.nb_dims);
    for (int32_t i = 0; i < s->shape.nb_dims; i++)
        if (s->shape.d[i] < 0)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': shape %s has a negative dimension",
                              c->layer_name, trtl_dims_str(&s->shape, b, sizeof b));
    if (c->n_in > 0 && c->in)
        TRTL_TRY(check_ranks(c->layer_name, s, c->in[0].nb_dims - imp));
    if (imp) {
        if (s->shape.nb_dims >= TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': too many dims with the implicit batch", c->layer_name);
        s->start = trtl_dims_prepend(&s->start, 0);
        s->stride = trtl_dims_prepend(&s->stride, 1);
        s->shape = trtl_dims_prepend(&s->shape, 0);
        s->copy_mask = 1u;
    }
    return TRTL_OK;
}

/* The FILL value (a float attribute) must be exactly representable in an integer tensor's type: NaN, a
 * fraction or a value out of range would need a conversion that C leaves undefined. */
static trtl_status check_fill(const char *layer, float f, trtl_dtype t)
{
    double lo, hi; /* the representable range of t, [lo, hi) */
    switch (t) {
    case TRTL_INT32: lo = -2147483648.0; hi = 2147483648.0; break;
    case TRTL_INT8: lo = -128.0; hi = 128.0; break;
    case TRTL_UINT8: lo = 0.0; hi = 256.0; break;
    case TRTL_BOOL: lo = 0.0; hi = 2.0; break;
    default: return TRTL_OK;
    }
    double d = (double)f;
    if (!(d >= lo && d < hi) || d != (double)(int64_t)d)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': FILL value %g is not exactly representable in the "
                          "%s input (an integer in [%.0f, %.0f])", layer, d, trtl_dtype_name(t), lo, hi - 1);
    return TRTL_OK;
}

trtl_status trtl_infer_slice(const trtl_infer_ctx *c)
{
    const trtl_slice_params *s = &c->p->slice;
    const trtl_dims *x = &c->in[0];
    char b[TRTL_DIMS_STR_MAX];
    int32_t r = x->nb_dims;
    if (s->mode < TRTL_SLICE_DEFAULT || s->mode > TRTL_SLICE_REFLECT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown SampleMode %d (mode)", c->layer_name,
                          (int)s->mode);
    TRTL_TRY(check_ranks(c->layer_name, s, r));
    /* start / size / stride: the attributes, or the shape-tensor inputs' values (bit i of unk: dim i
     * depends on a value not known yet) */
    trtl_dims v[4] = {{0}, s->start, s->shape, s->stride};
    static const char *const what[4] = {"", "start", "size", "stride"};
    uint32_t unk = 0, unk_size = 0;
    for (int32_t j = 1; j < 4; j++) {
        if (!dyn_input(c->n_in, c->in, j))
            continue;
        if (c->in_type[j] != TRTL_INT32 || c->in[j].nb_dims != 1 || c->in[j].d[0] != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the slice %s (input %d) must be a 1-D INT32 shape tensor of "
                              "%d values (the input's rank), got %s %s", c->layer_name, what[j], (int)j, (int)r,
                              trtl_dtype_name(c->in_type[j]), trtl_dims_str(&c->in[j], b, sizeof b));
        const int64_t *vals = c->in_values ? c->in_values[j] : NULL;
        for (int32_t i = 0; i < r; i++) {
            int64_t e = vals ? vals[i] : TRTL_SV_UNKNOWN;
            if (e == TRTL_SV_UNKNOWN) {
                if (c->need_values)
                    return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the slice %s (input %d) is not known before "
                                      "execution: a shape tensor must be computed from input shapes (shape layers), "
                                      "constants and shape-tensor network inputs only", c->layer_name, what[j], (int)j);
                unk |= 1u << i;
                unk_size |= (j == 2 ? 1u : 0u) << i;
                continue;
            }
            if (j == 2 && e < 0)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': slice size (input 2) has a negative value %lld in "
                                  "dimension %d", c->layer_name, (long long)e, (int)i);
            v[j].d[i] = e;
        }
    }
    trtl_dims o = {0};
    o.nb_dims = r;
    for (int32_t i = 0; i < r; i++) {
        o.d[i] = ((s->copy_mask >> i) & 1u) ? x->d[i] : v[2].d[i];
        if ((unk >> i) & 1u) {
            if ((unk_size >> i) & 1u)
                o.d[i] = -1;
            continue;
        }
        int64_t n = x->d[i], len = o.d[i];
        if (n < 0 || len <= 0)
            continue; /* unknown now (checked by the kernel), or nothing sampled */
        int64_t first = v[1].d[i], last, span;
        if (__builtin_mul_overflow(len - 1, v[3].d[i], &span) || __builtin_add_overflow(first, span, &last))
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': slice indices overflow int64 in dimension %d: start %lld + (size %lld - 1) "
                              "* stride %lld", c->layer_name, (int)i, (long long)first, (long long)len,
                              (long long)v[3].d[i]);
        if (s->mode == TRTL_SLICE_DEFAULT && (first < 0 || first >= n || last < 0 || last >= n))
            return trtl_error(TRTL_ERR_SHAPE,
                              "layer '%s': slice out of bounds in dimension %d of input %s: start %lld, size %lld, "
                              "stride %lld reach index %lld (valid 0..%lld)",
                              c->layer_name, (int)i, trtl_dims_str(x, b, sizeof b), (long long)first, (long long)len,
                              (long long)v[3].d[i], (long long)(first < 0 || first >= n ? first : last),
                              (long long)n - 1);
        if (n == 0 && s->mode != TRTL_SLICE_FILL)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s dimension %d is empty; %s mode has nothing to sample",
                              c->layer_name, trtl_dims_str(x, b, sizeof b), (int)i, mode_names[s->mode]);
    }
    if (c->n_in > 4 && c->in[4].nb_dims >= 0) {
        const trtl_dims *f = &c->in[4];
        if (s->mode != TRTL_SLICE_FILL)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': a fill value (input 4) needs mode FILL, got %s",
                              c->layer_name, mode_names[s->mode]);
        if (c->in_type[4] != c->in_type[0] || f->nb_dims > 1 || (f->nb_dims == 1 && f->d[0] != 1))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the fill value (input 4) must be one %s element (the input's "
                              "type), got %s %s", c->layer_name, trtl_dtype_name(c->in_type[0]),
                              trtl_dtype_name(c->in_type[4]), trtl_dims_str(f, b, sizeof b));
    } else if (s->mode == TRTL_SLICE_FILL) {
        TRTL_TRY(check_fill(c->layer_name, s->fill_value, c->in_type[0]));
    }
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
