/* scale.c -- IScaleLayer: y = (x * scale + shift) ^ power, weights per tensor (UNIFORM), per
 * channel_axis index (CHANNEL) or per element of dims [channel_axis, rank) (ELEMENTWISE).
 * A weight with count 0 is absent: shift 0, scale 1, power 1 (and no pow is taken). */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_scale[] = {
    TRTL_A_ENUM("mode", scale.mode, "ScaleMode", TRTL_SCALE_COUNT),
    TRTL_A("shift", TRTL_ATTR_WEIGHTS, scale.shift),
    TRTL_A("scale", TRTL_ATTR_WEIGHTS, scale.scale),
    TRTL_A("power", TRTL_ATTR_WEIGHTS, scale.power),
    TRTL_A("channel_axis", TRTL_ATTR_INT, scale.channel_axis),
};
TRTL_NATTRS(scale);

/* channel_axis is set by the network from the input (TensorRT: 0 for implicit batch, 1 else). */
void trtl_init_scale(trtl_params *p)
{
    p->scale.mode = TRTL_SCALE_UNIFORM;
    p->scale.channel_axis = 0;
}

static trtl_status check_scale(const trtl_scale_params *p, int32_t rank, const char *layer)
{
    if (p->mode < TRTL_SCALE_UNIFORM || p->mode > TRTL_SCALE_ELEMENTWISE)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown scale mode %d", layer, (int)p->mode);
    if (p->mode != TRTL_SCALE_UNIFORM && (p->channel_axis < 0 || (rank >= 0 && p->channel_axis >= rank)))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': channel_axis %d is out of range for an input of %d dims (batch included)",
                          layer, (int)p->channel_axis, (int)rank);
    return TRTL_OK;
}

trtl_status trtl_lower_scale(trtl_params *p, const trtl_lower_ctx *c)
{
    if (p->scale.channel_axis < 0)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': channel_axis %d must be >= 0", c->layer_name,
                          (int)p->scale.channel_axis);
    if (c->implicit_batch)
        p->scale.channel_axis += 1;
    return check_scale(&p->scale, c->n_in > 0 && c->in ? c->in[0].nb_dims : -1, c->layer_name);
}

trtl_status trtl_infer_scale(const trtl_infer_ctx *c)
{
    const trtl_scale_params *p = &c->p->scale;
    const trtl_dims *x = &c->in[0];
    char s[TRTL_DIMS_STR_MAX];
    TRTL_TRY(check_scale(p, x->nb_dims, c->layer_name));
    if (c->in_type[0] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': scale needs a FLOAT input, got %s", c->layer_name,
                          trtl_dtype_name(c->in_type[0]));
    int64_t want;
    const char *why;
    if (p->mode == TRTL_SCALE_UNIFORM) {
        want = 1;
        why = "UNIFORM mode";
    } else if (p->mode == TRTL_SCALE_CHANNEL) {
        want = x->d[p->channel_axis];
        why = "CHANNEL mode: the input's dim at channel_axis";
    } else {
        want = 1;
        for (int32_t i = p->channel_axis; i < x->nb_dims; i++)
            want = (want < 0 || x->d[i] < 0) ? -1 : want * x->d[i];
        why = "ELEMENTWISE mode: the volume of the input's dims from channel_axis on";
    }
    const struct { const char *name; const trtl_weights *w; } w[] = {
        {"shift", &p->shift}, {"scale", &p->scale}, {"power", &p->power}};
    for (int i = 0; i < 3; i++)
        if (w[i].w->count != 0 && want >= 0 && w[i].w->count != want)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %s has %lld values, expected %lld (%s, input %s, channel_axis %d)",
                              c->layer_name, w[i].name, (long long)w[i].w->count, (long long)want, why,
                              trtl_dims_str(x, s, sizeof s), (int)p->channel_axis);
    c->out[0] = *x;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
