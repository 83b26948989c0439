/* Reference assertion kernel (ops/assertion.c): fails naming the layer and its message at the first
 * false element of the condition. */
#include <stdint.h>
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_ref_assertion(const trtl_kernel_args *a)
{
    if (a->in[0].dtype != TRTL_BOOL)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': condition must be BOOL", a->node->name);
    const uint8_t *c = (const uint8_t *)a->in[0].data;
    int64_t n = trtl_volume(&a->in[0].dims);
    for (int64_t i = 0; i < n; i++)
        if (!c[i])
            return trtl_error(TRTL_ERR_STATE, "layer '%s': assertion failed: %s", a->node->name,
                              a->node->p.assertion.message);
    return TRTL_OK;
}
