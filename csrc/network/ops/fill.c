/* fill.c -- IFillLayer: an output made from parameters, no data input.
 *   LINSPACE        out[i_0, ..., i_{r-1}] = alpha + sum_k beta_k * i_k  (FLOAT or INT32; the attribute beta
 *                   is every dim's delta, input 2 gives one delta per dim)
 *   RANDOM_UNIFORM  uniform in [alpha, beta)  (FLOAT)
 *   RANDOM_NORMAL   normal with mean alpha, standard deviation beta  (FLOAT)
 * Inputs, all optional (TensorRT 10's set_input): 0 the output's dims as a 1-D INT32 shape tensor
 * (network/shape_values.h) in place of `shape`; 1 alpha, a 0-D (or one-element) tensor of the output's
 * type; 2 beta: LINSPACE a 1-D tensor of one delta per output dim, RANDOM_* a 0-D (or one-element)
 * tensor.  1 and 2 are execution tensors that the kernel reads.  Random values are a function of
 * `seed` (trtlite's extension) and the element's index, so every run and thread count gives the same.
 * Explicit batch only. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "network/shape_values.h"

const trtl_attr_desc trtl_attrs_fill[] = {
    TRTL_A("shape", TRTL_ATTR_DIMS, fill.shape),
    TRTL_A_ENUM("operation", fill.op, "FillOperation", TRTL_FILL_COUNT),
    TRTL_A("alpha", TRTL_ATTR_FLOAT, fill.alpha),
    TRTL_A("beta", TRTL_ATTR_FLOAT, fill.beta),
    TRTL_A("to_type", TRTL_ATTR_DTYPE, fill.to_type),
    TRTL_A("seed", TRTL_ATTR_INT, fill.seed),
};
TRTL_NATTRS(fill);

void trtl_init_fill(trtl_params *p)
{
    p->fill.shape.nb_dims = 0;
    p->fill.op = TRTL_FILL_LINSPACE;
    p->fill.alpha = 0.0f;
    p->fill.beta = 1.0f;
    p->fill.to_type = TRTL_FLOAT;
    p->fill.seed = 0;
}

static int has_input(const trtl_infer_ctx *c, int32_t j)
{
    return c->n_in > j && c->in[j].nb_dims >= 0;
}

static trtl_status check_attrs(const trtl_fill_params *f, const char *layer)
{
    if (f->op < 0 || f->op >= TRTL_FILL_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown FillOperation %d", layer, (int)f->op);
    if (f->to_type != TRTL_FLOAT && !(f->to_type == TRTL_INT32 && f->op == TRTL_FILL_LINSPACE))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': fill output type %s: LINSPACE makes FLOAT or INT32, random "
                          "operations FLOAT", layer, trtl_dtype_valid(f->to_type) ? trtl_dtype_name(f->to_type) : "?");
    if (f->op == TRTL_FILL_RANDOM_UNIFORM && !(f->alpha <= f->beta))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': RANDOM_UNIFORM needs alpha (min) %g <= beta (max) %g",
                          layer, (double)f->alpha, (double)f->beta);
    if (f->op == TRTL_FILL_RANDOM_NORMAL && !(f->beta >= 0.0f))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': RANDOM_NORMAL needs beta (the standard deviation) "
                          "%g >= 0", layer, (double)f->beta);
    return TRTL_OK;
}

trtl_status trtl_lower_fill(trtl_params *p, const trtl_lower_ctx *c)
{
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': fill layers need an explicit-batch network",
                          c->layer_name);
    return check_attrs(&p->fill, c->layer_name);
}

/* Input j (1 alpha, 2 beta) has `want` elements (1: 0-D or [1]) of type t. */
static trtl_status check_param(const trtl_infer_ctx *c, int32_t j, int64_t want, int vector)
{
    const char *what = j == 1 ? "alpha (input 1)" : "beta (input 2)";
    const trtl_dims *d = &c->in[j];
    char b[TRTL_DIMS_STR_MAX];
    int ok = c->in_type[j] == (trtl_dtype)c->p->fill.to_type &&
             (vector ? (d->nb_dims == 1 && (want < 0 || d->d[0] < 0 || d->d[0] == want))
                     : (d->nb_dims == 0 || (d->nb_dims == 1 && d->d[0] == 1)));
    if (!ok) {
        if (vector)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s must be a 1-D %s tensor of one delta per output dim "
                              "(%lld), got %s %s", c->layer_name, what, trtl_dtype_name(c->p->fill.to_type),
                              (long long)want, trtl_dtype_name(c->in_type[j]), trtl_dims_str(d, b, sizeof b));
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s must be one %s element (0-D), got %s %s", c->layer_name, what,
                          trtl_dtype_name(c->p->fill.to_type), trtl_dtype_name(c->in_type[j]),
                          trtl_dims_str(d, b, sizeof b));
    }
    return TRTL_OK;
}

trtl_status trtl_infer_fill(const trtl_infer_ctx *c)
{
    const trtl_fill_params *f = &c->p->fill;
    char b[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_attrs(f, c->layer_name));
    trtl_dims o = f->shape;
    if (has_input(c, 0)) {
        const trtl_dims *s = &c->in[0];
        if (c->in_type[0] != TRTL_INT32 || s->nb_dims != 1 || s->d[0] < 0 || s->d[0] > TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the fill shape (input 0) must be a 1-D INT32 shape tensor of "
                              "at most %d values, got %s %s", c->layer_name, TRTL_MAX_DIMS,
                              trtl_dtype_name(c->in_type[0]), trtl_dims_str(s, b, sizeof b));
        o.nb_dims = (int32_t)s->d[0];
        const int64_t *v = c->in_values ? c->in_values[0] : NULL;
        for (int32_t i = 0; i < o.nb_dims; i++) {
            int64_t e = v ? v[i] : TRTL_SV_UNKNOWN;
            if (e == TRTL_SV_UNKNOWN && c->need_values)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the fill shape (input 0) is not known before execution: a "
                                  "shape tensor must be computed from input shapes (shape layers), constants and "
                                  "shape-tensor network inputs only", c->layer_name);
            if (e != TRTL_SV_UNKNOWN && e < 0)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the fill shape (input 0) has a negative value %lld in "
                                  "dimension %d", c->layer_name, (long long)e, (int)i);
            o.d[i] = e == TRTL_SV_UNKNOWN ? -1 : e;
        }
    } else {
        if (o.nb_dims < 0 || o.nb_dims > TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': fill shape has %d dims", c->layer_name, (int)o.nb_dims);
        for (int32_t i = 0; i < o.nb_dims; i++)
            if (o.d[i] < 0)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': fill shape %s has a negative or dynamic dimension (give "
                                  "the shape as a shape tensor, input 0, instead)", c->layer_name,
                                  trtl_dims_str(&o, b, sizeof b));
    }
    if (has_input(c, 1))
        TRTL_TRY(check_param(c, 1, 1, 0));
    if (has_input(c, 2))
        TRTL_TRY(check_param(c, 2, o.nb_dims, f->op == TRTL_FILL_LINSPACE));
    c->out[0] = o;
    c->out_type[0] = (trtl_dtype)f->to_type;
    return TRTL_OK;
}
