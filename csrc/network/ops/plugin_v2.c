/* plugin_v2.c -- IPluginV2Layer: shapes and dtypes come from the plugin's output_desc(). */
#include <stdio.h>

#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

/* A plugin layer's only attribute is the plugin object itself (exposed by the bindings). */
const trtl_attr_desc trtl_attrs_plugin_v2[] = {
    {"__plugin", TRTL_ATTR_INT, 0, 0, NULL, TRTL_ATTRF_INTERNAL},
};
TRTL_NATTRS(plugin_v2);

void trtl_init_plugin_v2(trtl_params *p)
{
    p->plugin.plugin = NULL;
    p->plugin.name[0] = '\0';
}

trtl_status trtl_lower_plugin_v2(trtl_params *p, const trtl_lower_ctx *c)
{
    if (!p->plugin.plugin)
        return trtl_error(TRTL_ERR_PLUGIN, "layer '%s': no plugin attached", c->layer_name);
    return TRTL_OK;
}

trtl_status trtl_infer_plugin_v2(const trtl_infer_ctx *c)
{
    const trtl_plugin *pl = c->p->plugin.plugin;
    trtl_plugin_tensor_desc in[64], out;
    char msg[512] = "", lb[256], s1[TRTL_DIMS_STR_MAX];
    if (c->n_in > 64)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': too many plugin inputs", c->layer_name);
    /* A plugin may answer -1 only for a dimension that follows a dynamic input; with every input
     * static (always so at run time) a -1 would reach the memory plan as a size. */
    int any_dynamic_input = 0;
    for (int32_t i = 0; i < c->n_in; i++) {
        in[i].dims = c->in[i];
        in[i].dtype = c->in_type[i];
        any_dynamic_input |= trtl_dims_dynamic(&c->in[i]);
    }
    for (int32_t i = 0; i < c->n_out; i++) {
        out.dims = c->in ? c->in[0] : c->out[i];
        out.dtype = TRTL_FLOAT;
        int rc = pl->vt->output_desc(pl, i, in, c->n_in, &out, msg, sizeof msg);
        msg[sizeof msg - 1] = '\0'; /* a plugin may fill the buffer without terminating it */
        if (rc != 0)
            return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s' (%s): output %d: %s", c->layer_name,
                              trtl_plugin_label(&c->p->plugin, lb, sizeof lb), (int)i, msg[0] ? msg : "output_desc failed");
        if (out.dims.nb_dims < 0 || out.dims.nb_dims > TRTL_MAX_DIMS)
            return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s' (%s): output %d has an impossible rank %d",
                              c->layer_name, trtl_plugin_label(&c->p->plugin, lb, sizeof lb), (int)i,
                              (int)out.dims.nb_dims);
        for (int32_t k = 0; k < out.dims.nb_dims; k++) {
            if (out.dims.d[k] < -1)
                return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s' (%s): output %d has an impossible dimension %lld",
                                  c->layer_name, trtl_plugin_label(&c->p->plugin, lb, sizeof lb), (int)i,
                                  (long long)out.dims.d[k]);
            if (out.dims.d[k] == -1 && !any_dynamic_input)
                return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s' (%s): output %d has shape %s, but every input "
                                  "is static: -1 (dynamic) is only possible for a dimension that depends on a dynamic "
                                  "input", c->layer_name, trtl_plugin_label(&c->p->plugin, lb, sizeof lb), (int)i,
                                  trtl_dims_str(&out.dims, s1, sizeof s1));
        }
        if (!trtl_dtype_valid((int)out.dtype))
            return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s' (%s): output %d has an unknown dtype %d",
                              c->layer_name, trtl_plugin_label(&c->p->plugin, lb, sizeof lb), (int)i, (int)out.dtype);
        c->out[i] = out.dims;
        c->out_type[i] = out.dtype;
    }
    return TRTL_OK;
}
