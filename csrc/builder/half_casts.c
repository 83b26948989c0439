/* half_casts.c -- casts around a layer that computes 16-bit float tensors in float32 (half_casts.h). */
#include <stdio.h>
#include "builder/half_casts.h"
#include "network/half_compute.h"
#include "core/status.h"

static int32_t add_cast(trtl_bgraph *g, const char *layer, const char *what, int32_t j, int32_t src, int32_t dst,
                        trtl_dtype to)
{
    char name[512];
    snprintf(name, sizeof name, "%s [%s %d cast to %s]", layer, what, (int)j, to == TRTL_FLOAT ? "FLOAT" : "16-bit");
    trtl_params p;
    trtl_op_table[TRTL_OP_CAST].init(&p);
    p.cast.to_type = to;
    return trtl_bg_add_node(g, TRTL_OP_CAST, name, &p, 1, &src, 1, &dst) < 0 ? -1 : 0;
}

static int32_t add_float_tensor(trtl_bgraph *g, const char *layer, const char *what, int32_t j)
{
    char name[512];
    snprintf(name, sizeof name, "%s__%s%d_f32", layer, what, (int)j);
    return trtl_bg_add_tensor(g, name, TRTL_FLOAT, TRTL_TK_ACTIVATION);
}

trtl_status trtl_bg_f16_inputs(trtl_bgraph *g, trtl_op op, const char *layer, int32_t n_in, int32_t *in)
{
    if (!trtl_op_promotes_f16(op))
        return TRTL_OK;
    for (int32_t j = 0; j < n_in; j++) {
        if (in[j] < 0 || !trtl_dtype_is_f16((int)g->t[in[j]].dtype))
            continue;
        int32_t f = add_float_tensor(g, layer, "in", j);
        if (f < 0 || add_cast(g, layer, "input", j, in[j], f, TRTL_FLOAT) < 0)
            return trtl_last_status();
        in[j] = f;
    }
    return TRTL_OK;
}

trtl_status trtl_bg_f16_outputs(trtl_bgraph *g, trtl_op op, const char *layer, int32_t n_out, int32_t *out,
                                int32_t *orig)
{
    for (int32_t j = 0; j < n_out; j++) {
        orig[j] = -1;
        if (!trtl_op_promotes_f16(op) || !trtl_dtype_is_f16((int)g->t[out[j]].dtype))
            continue;
        int32_t f = add_float_tensor(g, layer, "out", j);
        if (f < 0)
            return trtl_last_status();
        orig[j] = out[j];
        out[j] = f;
    }
    return TRTL_OK;
}

trtl_status trtl_bg_f16_output_casts(trtl_bgraph *g, const char *layer, int32_t n_out, const int32_t *out,
                                     const int32_t *orig)
{
    for (int32_t j = 0; j < n_out; j++)
        if (orig[j] >= 0 && add_cast(g, layer, "output", j, out[j], orig[j], g->t[orig[j]].dtype) < 0)
            return trtl_last_status();
    return TRTL_OK;
}
