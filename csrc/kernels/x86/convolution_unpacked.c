/*
 * convolution_unpacked.c -- the reference fallback of packing convolution kernels whose plain
 * weights the engine freed (see convolution_unpacked.h).
 */
#include <stdint.h>

#include "kernels/x86/convolution_unpacked.h"
#include "kernels/ref/ref.h"
#include "core/dims.h"
#include "core/status.h"

size_t trtl_conv_unpacked_bytes(const trtl_node *nd)
{
    const trtl_weights *w = &nd->p.conv.kernel;
    return w->count > 0 ? (size_t)w->count * trtl_dtype_size(w->type) + 64 : 0;
}

trtl_status trtl_conv_reference_fallback(const trtl_kernel_args *a, const float *res,
                                         void (*unpack)(const trtl_node *n, const void *state, void *dst))
{
    const trtl_node *nd = a->node;
    int64_t n_out = trtl_volume(&a->out[0].dims);
    if (nd->p.conv.kernel.values || nd->p.conv.kernel.count == 0) {
        TRTL_TRY(trtl_ref_convolution(a));
    } else {
        size_t need = trtl_conv_unpacked_bytes(nd);
        if (!a->state || !a->scratch || a->scratch_size < need)
            return trtl_error(TRTL_ERR_INTERNAL,
                              "layer '%s': the reference convolution needs %zu bytes of scratch to rebuild the weights "
                              "the kernel holds packed, has %zu",
                              nd->name, need, a->scratch_size);
        void *w = (void *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
        unpack(nd, a->state, w);
        trtl_node copy = *nd;
        copy.p.conv.kernel.values = w;
        trtl_kernel_args b = *a;
        b.node = &copy;
        TRTL_TRY(trtl_ref_convolution(&b));
    }
    trtl_epilogue_apply(&nd->epi, (float *)a->out[0].data, res, n_out);
    return TRTL_OK;
}
