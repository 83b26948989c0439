/* Plugin layers run the context's clone of the plugin through its enqueue(). */
#include <stdio.h>

#include "kernels/ref/ref.h"
#include "core/threadpool.h"
#include "core/status.h"

trtl_status trtl_ref_plugin_v2(const trtl_kernel_args *a)
{
    trtl_plugin *pl = (trtl_plugin *)a->plugin;
    const trtl_node *n = a->node;
    trtl_plugin_tensor_desc din[64], dout[16];
    const void *in[64];
    void *out[16];
    char msg[512] = "";
    if (!pl)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s': no plugin instance", n->name);
    if (n->n_in > 64 || n->n_out > 16)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "plugin layer '%s': too many inputs/outputs", n->name);
    for (int32_t i = 0; i < n->n_in; i++) {
        din[i].dims = a->in[i].dims;
        din[i].dtype = a->in[i].dtype;
        in[i] = a->in[i].data;
    }
    for (int32_t i = 0; i < n->n_out; i++) {
        dout[i].dims = a->out[i].dims;
        dout[i].dtype = a->out[i].dtype;
        out[i] = a->out[i].data;
    }
    trtl_threadpool *prev = trtl_current_pool();
    trtl_set_current_pool(a->pool); /* built-in plugins may use the context's threads */
    int rc = pl->vt->enqueue(pl, din, in, n->n_in, dout, out, n->n_out, a->scratch, msg, sizeof msg);
    trtl_set_current_pool(prev);
    msg[sizeof msg - 1] = '\0'; /* a plugin may fill the buffer without terminating it */
    if (rc != 0) {
        char lb[256];
        return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s' (%s): enqueue failed: %s", n->name,
                          trtl_plugin_label(&n->p.plugin, lb, sizeof lb), msg[0] ? msg : "no message");
    }
    return TRTL_OK;
}
