/* qdq_check.c -- what a Quantize/Dequantize layer needs beyond shapes and types: its scale and
 * zero point are build-time constants (outputs of constant layers, as TensorRT requires), the
 * scales positive and finite.  Run by shape inference (network.c), so add_*, shape queries and
 * build report it naming the layer and the tensor. */
#include <math.h>
#include "network/network.h"
#include "network/qdq.h"
#include "core/status.h"
#include "core/dims.h"

static const trtl_weights *const_weights(const trtl_tensor *t)
{
    const trtl_layer *src = t ? t->producer : NULL;
    return src && src->op == TRTL_OP_CONSTANT ? &src->p.constant.weights : NULL;
}

trtl_status trtl_qdq_check_layer(const trtl_layer *l)
{
    static const char *const what[3] = {"", "scale (input 1)", "zero point (input 2)"};
    for (int32_t i = 1; i < l->n_in && i < 3; i++) {
        const trtl_weights *w = const_weights(l->in[i]);
        if (!w)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': the %s, tensor '%s', must be a build-time "
                              "constant (the output of a constant layer)", l->name, what[i],
                              l->in[i] ? l->in[i]->name : "?");
        if (i != 1 || !w->values)
            continue;
        for (int64_t k = 0; k < w->count; k++) {
            double v = w->type == TRTL_HALF ? (double)trtl_half_to_float(((const uint16_t *)w->values)[k])
                       : w->type == TRTL_BF16 ? (double)trtl_bf16_to_float(((const uint16_t *)w->values)[k])
                       : w->type == TRTL_FLOAT ? (double)((const float *)w->values)[k] : 1.0;
            if (!(v > 0) || isinf(v))
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': scale value %lld of tensor '%s' is %g; "
                                  "scales must be positive and finite", l->name, (long long)k, l->in[i]->name, v);
        }
    }
    return TRTL_OK;
}
