/* plugin_int8_out.c -- a plugin that reads INT8 codes and can also write them takes the per-channel scale
 * (batch norm) after it and the quantizer of the int8 layers its result reaches into its output stage, so
 * that no float tensor, no scale pass and no quantize pass lie between two int8 layers (AdderNet INT8):
 *
 *   plugin(codes) -> y (FLOAT) -> scale (a_c, b_c) -> z -> [max pooling ->] readers of codes (s, 0, INT8)
 *   ==>  plugin'(codes; outputScale s, outputChannelScale a, outputChannelShift b) -> z (INT8)
 *        -> [max pooling of codes ->] the same readers, reading the codes as they are
 *
 * "Can write codes" is a field convention: the plugin's creator lists the FLOAT32 fields `outputScale`,
 * `outputChannelScale` and `outputChannelShift` (nbFilters values each), meaning that with them its output is
 * INT8 codes saturate(round_half_even((a_c * Y + b_c) / outputScale)) of its float result Y (Adder2d_TRT).
 * The plugin is created again through its creator with its own fields plus these, so plans keep it.
 * Readers of codes are those qdq_int8_io accepts (int8 QLINEAR layers quantizing z with (s, 0), a kept Q
 * layer of those parameters, which is bypassed -- the implicit INT8 quantizer in front of the next plugin --,
 * through max poolings and layout-only layers): a max of codes is the code of the max (the quantizer is
 * monotone, whatever the sign of a_c, since the scale comes before the pooling).
 *
 * Preconditions: the plugin has one input, INT8, and one output, FLOAT, 4-D [N, C, H, W] (the channel axis 1
 * that a per-channel scale uses), no network output; the scale (optional: without one a = 1, b = 0) is the
 * output's only reader, has no power, no activation or residual fused, and its output is no network output;
 * the readers' parameters are symmetric INT8.  The math differs from the unfused steps only in rounding:
 * one fused multiply-add in float32 against the scale's and the quantizer's two roundings (a code can move
 * by one where the value is within a float32 rounding of a half). */
#include <stdlib.h>
#include <string.h>

#include "builder/passes/passes.h"
#include "core/status.h"
#include "trtlite/plugin.h"

#define MAX_FIELDS 64

static const char *const OUT_FIELDS[3] = {"outputScale", "outputChannelScale", "outputChannelShift"};

/* The plugin's creator knows the three output fields (FLOAT32) and the instance has none of them yet. */
static int writes_codes(const trtl_plugin *pl)
{
    const trtl_plugin_creator *cr = pl ? pl->creator : NULL;
    if (!cr || !trtl_plugin_vt2(pl) || !pl->vt->get_fields)
        return 0;
    for (int f = 0; f < 3; f++) {
        int known = 0;
        for (int32_t i = 0; i < cr->nb_fields; i++)
            known |= cr->fields[i].name && strcmp(cr->fields[i].name, OUT_FIELDS[f]) == 0 &&
                     cr->fields[i].type == TRTL_PF_FLOAT32;
        if (!known)
            return 0;
    }
    trtl_plugin_fields fs;
    if (pl->vt->get_fields(pl, &fs) != 0 || fs.nb_fields < 0 || fs.nb_fields > MAX_FIELDS - 3)
        return 0;
    for (int32_t i = 0; i < fs.nb_fields; i++)
        if (fs.fields[i].name && strcmp(fs.fields[i].name, OUT_FIELDS[0]) == 0)
            return 0;
    return 1;
}

/* Node i's plugin again, with the output fields: *out, or an error naming the layer. */
static trtl_status recreate(const trtl_node *n, float scale, const float *a, const float *b, int32_t F,
                            trtl_plugin **out)
{
    const trtl_plugin *pl = n->p.plugin.plugin;
    trtl_plugin_fields fs;
    trtl_plugin_field all[MAX_FIELDS];
    if (pl->vt->get_fields(pl, &fs) != 0)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s': get_fields failed", n->name);
    memcpy(all, fs.fields, sizeof(trtl_plugin_field) * (size_t)fs.nb_fields);
    all[fs.nb_fields] = (trtl_plugin_field){OUT_FIELDS[0], &scale, TRTL_PF_FLOAT32, 1};
    all[fs.nb_fields + 1] = (trtl_plugin_field){OUT_FIELDS[1], a, TRTL_PF_FLOAT32, F};
    all[fs.nb_fields + 2] = (trtl_plugin_field){OUT_FIELDS[2], b, TRTL_PF_FLOAT32, F};
    trtl_plugin_fields nf = {fs.nb_fields + 3, all};
    return trtl_plugin_create(pl->creator, n->name, &nf, out);
}

/* The rewrite of plugin node pi, where it applies (an error: returned). */
static trtl_status fold(trtl_bgraph *g, int32_t pi, trtl_pass_log *log)
{
    trtl_node *p = &g->n[pi].n;
    if (p->op != TRTL_OP_PLUGIN_V2 || p->n_in != 1 || p->n_out != 1 || !writes_codes(p->p.plugin.plugin))
        return TRTL_OK;
    const int32_t y = p->out[0];
    const trtl_bg_tensor *ty = &g->t[y];
    if (g->t[p->in[0]].dtype != TRTL_INT8 || ty->dtype != TRTL_FLOAT || ty->dmax.nb_dims != 4 ||
        trtl_bg_is_output(g, y))
        return TRTL_OK;
    const int64_t F = ty->dmax.d[1];
    if (F < 1 || F > (1 << 20))
        return TRTL_OK;
    /* the scale after it, if any */
    int32_t si = -1, z = y;
    if (trtl_bg_consumers(g, y, &si) == 1 && si >= 0 && g->n[si].n.op == TRTL_OP_SCALE) {
        const trtl_node *s = &g->n[si].n;
        if (s->n_in != 1 || s->epi.act != TRTL_ACT_NONE || s->epi.has_residual || !trtl_scale_foldable(s, F) ||
            trtl_bg_is_output(g, s->out[0]))
            return TRTL_OK;
        z = s->out[0];
    } else {
        si = -1;
    }
    trtl_qlinear_params c;
    memset(&c, 0, sizeof c);
    if (!trtl_qio_reader_params(g, z, &c, 0) || c.out_type != TRTL_INT8 || c.out_zero_point != 0 ||
        !(c.out_scale > 0) || !trtl_qio_consumers_take_codes(g, z, &c, 0))
        return TRTL_OK;
    float *ab = malloc(sizeof(float) * 2 * (size_t)F);
    if (!ab)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int64_t k = 0; k < F; k++) {
        ab[k] = si >= 0 ? trtl_scale_value(&g->n[si].n.p.scale.scale, k, 1.0f) : 1.0f;
        ab[F + k] = si >= 0 ? trtl_scale_value(&g->n[si].n.p.scale.shift, k, 0.0f) : 0.0f;
    }
    trtl_plugin *np = NULL;
    trtl_status st = recreate(p, c.out_scale, ab, ab + F, (int32_t)F, &np);
    free(ab);
    if (st != TRTL_OK)
        return st;
    p->p.plugin.plugin->vt->destroy(p->p.plugin.plugin);
    p->p.plugin.plugin = np;
    if (si >= 0) {
        char *nm = trtl_bg_join_names(p->name, g->n[si].n.name);
        if (!nm)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        free(p->name);
        p->name = nm;
        p->out[0] = z;
        g->t[z].producer = pi;
        g->n[si].dead = 1;
    }
    int32_t pools = trtl_qio_retype(g, z, TRTL_INT8, &c);
    trtl_pass_log_add(log, "'%s' writes INT8 codes (scale %g) for %d consumer(s)%s", p->name, (double)c.out_scale,
                      (int)trtl_bg_consumers(g, z, NULL), pools ? ", max pooling them on the way" : "");
    return TRTL_OK;
}

trtl_status trtl_pass_plugin_int8_out(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "int8 output of plugins");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_status st = g->n[i].dead ? TRTL_OK : fold(g, i, &log);
        if (st != TRTL_OK)
            return st;
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
