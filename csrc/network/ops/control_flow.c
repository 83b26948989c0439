/* control_flow.c -- the boundary layers of TensorRT's ILoop and IIfConditional, and the builder's
 * CONTROL_FLOW step.
 *
 * Network-level shapes (what tensor.shape reports inside and around a loop or conditional):
 *   CONDITION (no output): its input must be a 0-d BOOL.
 *   CONDITIONAL_INPUT: the input, unchanged (the branch's view of an outer tensor).
 *   CONDITIONAL_OUTPUT(true, false): the true input's dims; both branches must agree in dims and type.
 *   TRIP_LIMIT (no output): COUNT takes a 0-d INT32, WHILE a 0-d BOOL.
 *   RECURRENCE(initial[, next]): the initial value's dims (carried values are loop-invariant; the
 *     builder checks `next` against them).  Input 1 closes the cycle; topological orders skip it.
 *   ITERATOR(t): t without dim `axis` (one slice per iteration, from the end when `reverse`).
 *   LOOP_OUTPUT(v[, length]): LAST_VALUE: v's dims; CONCATENATE / REVERSE: v's dims with the trip count
 *     inserted at `axis`, -1 here (the builder knows it from a constant trip limit, the iterators or a
 *     constant `length`).
 * None of these reach an engine: the builder turns each loop / conditional into one CONTROL_FLOW step,
 * whose shapes come from the compiled structure (engine/control_flow.c). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

#define owner_attr TRTL_A("owner", TRTL_ATTR_INT, cf.owner)

const trtl_attr_desc trtl_attrs_condition[] = {owner_attr};
TRTL_NATTRS(condition);
const trtl_attr_desc trtl_attrs_conditional_input[] = {owner_attr};
TRTL_NATTRS(conditional_input);
const trtl_attr_desc trtl_attrs_conditional_output[] = {owner_attr};
TRTL_NATTRS(conditional_output);
const trtl_attr_desc trtl_attrs_trip_limit[] = {
    owner_attr,
    TRTL_A_ENUM("kind", cf.kind, "TripLimit", TRTL_TRIP_LIMIT_COUNT),
};
TRTL_NATTRS(trip_limit);
const trtl_attr_desc trtl_attrs_recurrence[] = {owner_attr};
TRTL_NATTRS(recurrence);
const trtl_attr_desc trtl_attrs_iterator[] = {
    owner_attr,
    TRTL_A("axis", TRTL_ATTR_INT, cf.axis),
    TRTL_A("reverse", TRTL_ATTR_BOOL, cf.reverse),
};
TRTL_NATTRS(iterator);
const trtl_attr_desc trtl_attrs_loop_output[] = {
    owner_attr,
    TRTL_A_ENUM("kind", cf.kind, "LoopOutput", TRTL_LOOP_OUTPUT_COUNT),
    TRTL_A("axis", TRTL_ATTR_INT, cf.axis),
};
TRTL_NATTRS(loop_output);
/* The step's structure is not an attribute: the plan writer stores it (serialize/), nothing sets it. */
const trtl_attr_desc trtl_attrs_control_flow[1] = {{NULL, TRTL_ATTR_INT, 0, 0, NULL, 0}};
const int32_t trtl_nattrs_control_flow = 0;

static void init_cf(trtl_params *p)
{
    p->cf.owner = -1;
    p->cf.kind = 0;
    p->cf.axis = 0;
    p->cf.reverse = 0;
    p->cf.cf = NULL;
}

static trtl_status lower_cf(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': loops and conditionals need an explicit-batch network",
                          c->layer_name);
    return TRTL_OK;
}

static int is_scalar(const trtl_dims *d) { return d->nb_dims == 0; }

void trtl_init_condition(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_condition(trtl_params *p, const trtl_lower_ctx *c) { return lower_cf(p, c); }
trtl_status trtl_infer_condition(const trtl_infer_ctx *c)
{
    char s[TRTL_DIMS_STR_MAX];
    if (c->in_type[0] != TRTL_BOOL || (c->in[0].nb_dims >= 0 && !is_scalar(&c->in[0])))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the condition of an IIfConditional must be a 0-d BOOL tensor, "
                          "got %s %s", c->layer_name, trtl_dtype_name(c->in_type[0]),
                          trtl_dims_str(&c->in[0], s, sizeof s));
    return TRTL_OK;
}

void trtl_init_conditional_input(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_conditional_input(trtl_params *p, const trtl_lower_ctx *c) { return lower_cf(p, c); }
trtl_status trtl_infer_conditional_input(const trtl_infer_ctx *c)
{
    c->out[0] = c->in[0];
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}

void trtl_init_conditional_output(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_conditional_output(trtl_params *p, const trtl_lower_ctx *c) { return lower_cf(p, c); }
trtl_status trtl_infer_conditional_output(const trtl_infer_ctx *c)
{
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    const trtl_dims *a = &c->in[0], *b = &c->in[1];
    int same = a->nb_dims == b->nb_dims;
    for (int32_t k = 0; same && k < a->nb_dims; k++)
        same = a->d[k] < 0 || b->d[k] < 0 || a->d[k] == b->d[k];
    if (!same || c->in_type[0] != c->in_type[1])
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the branches of the conditional give different outputs: true "
                          "branch %s %s, false branch %s %s (both must have the same shape and type)", c->layer_name,
                          trtl_dtype_name(c->in_type[0]), trtl_dims_str(a, s1, sizeof s1),
                          trtl_dtype_name(c->in_type[1]), trtl_dims_str(b, s2, sizeof s2));
    c->out[0] = *a;
    for (int32_t k = 0; k < a->nb_dims; k++)
        if (a->d[k] < 0)
            c->out[0].d[k] = b->d[k];
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}

void trtl_init_trip_limit(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_trip_limit(trtl_params *p, const trtl_lower_ctx *c) { return lower_cf(p, c); }
trtl_status trtl_infer_trip_limit(const trtl_infer_ctx *c)
{
    char s[TRTL_DIMS_STR_MAX];
    trtl_dtype want = c->p->cf.kind == TRTL_TRIP_WHILE ? TRTL_BOOL : TRTL_INT32;
    if (c->in_type[0] != want || (c->in[0].nb_dims >= 0 && !is_scalar(&c->in[0])))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': a %s trip limit must be a 0-d %s tensor, got %s %s",
                          c->layer_name, want == TRTL_BOOL ? "WHILE" : "COUNT", trtl_dtype_name(want),
                          trtl_dtype_name(c->in_type[0]), trtl_dims_str(&c->in[0], s, sizeof s));
    return TRTL_OK;
}

void trtl_init_recurrence(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_recurrence(trtl_params *p, const trtl_lower_ctx *c) { return lower_cf(p, c); }
trtl_status trtl_infer_recurrence(const trtl_infer_ctx *c)
{
    /* input 1 (next) is computed from this output: its dims are checked by the builder */
    c->out[0] = c->in[0];
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}

void trtl_init_iterator(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_iterator(trtl_params *p, const trtl_lower_ctx *c) { return lower_cf(p, c); }
trtl_status trtl_infer_iterator(const trtl_infer_ctx *c)
{
    const trtl_dims *d = &c->in[0];
    int32_t axis = c->p->cf.axis;
    if (d->nb_dims < 0) {
        c->out[0].nb_dims = -1;
    } else {
        if (axis < 0 || axis >= d->nb_dims)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': iterator axis %d is out of range for an input of "
                              "%d dims", c->layer_name, (int)axis, (int)d->nb_dims);
        trtl_dims o = {0};
        for (int32_t k = 0; k < d->nb_dims; k++)
            if (k != axis)
                o.d[o.nb_dims++] = d->d[k];
        c->out[0] = o;
    }
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}

void trtl_init_loop_output(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_loop_output(trtl_params *p, const trtl_lower_ctx *c) { return lower_cf(p, c); }
trtl_status trtl_infer_loop_output(const trtl_infer_ctx *c)
{
    const trtl_dims *d = &c->in[0];
    c->out_type[0] = c->in_type[0];
    if (c->p->cf.kind == TRTL_LOOP_LAST_VALUE || d->nb_dims < 0) {
        c->out[0] = *d;
        return TRTL_OK;
    }
    int32_t axis = c->p->cf.axis;
    if (axis < 0 || axis > d->nb_dims || d->nb_dims >= TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': loop output axis %d is out of range for a value of "
                          "%d dims", c->layer_name, (int)axis, (int)d->nb_dims);
    int64_t len = -1;
    if (c->n_in > 1 && c->in_values && c->in_values[1] && c->in[1].nb_dims == 0)
        len = c->in_values[1][0];
    trtl_dims o = {0};
    for (int32_t k = 0; k <= d->nb_dims; k++)
        o.d[o.nb_dims++] = k == axis ? len : d->d[k < axis ? k : k - 1];
    c->out[0] = o;
    return TRTL_OK;
}

void trtl_init_control_flow(trtl_params *p) { init_cf(p); }
trtl_status trtl_lower_control_flow(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    (void)c;
    return TRTL_OK;
}
trtl_status trtl_infer_control_flow(const trtl_infer_ctx *c)
{
    const trtl_cf_head *cf = c->p->cf.cf;
    if (!cf || !cf->vt || !cf->vt->infer)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "layer '%s': control-flow step without its structure", c->layer_name);
    return cf->vt->infer(cf, c->layer_name, c->n_in, c->in, c->in_type, c->n_out, c->out, c->out_type);
}
