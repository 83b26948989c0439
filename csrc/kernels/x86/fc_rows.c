/* fc_rows.c -- the checks, scratch and work split the row-GEMM fully connected kernels share (fc_rows.h). */
#include "kernels/x86/fc_rows.h"
#include "kernels/blas/blas_common.h"
#include "core/dims.h"
#include "core/status.h"

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int trtl_fc_rows_applies(const trtl_node *nd, const trtl_dims *in_dims)
{
    const trtl_fc_params *p = &nd->p.fc;
    int64_t vol = trtl_volume(&in_dims[0]);
    return p->num_output_channels > 0 && p->kernel.count > 0 && p->kernel.type == TRTL_FLOAT &&
           (!p->bias.count || p->bias.type == TRTL_FLOAT) && p->kernel.count % p->num_output_channels == 0 &&
           vol >= 0 && vol % (p->kernel.count / p->num_output_channels) == 0;
}

trtl_status trtl_fc_rows_params(const trtl_node *nd, int64_t *K, int64_t *D)
{
    const trtl_fc_params *p = &nd->p.fc;
    if (p->num_output_channels < 1 || p->kernel.count < 1 || p->kernel.count % p->num_output_channels ||
        p->kernel.type != TRTL_FLOAT || (p->bias.count && p->bias.count != p->num_output_channels))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': %lld weights / %lld biases do not fit %d output channels",
                          nd->name, (long long)p->kernel.count, (long long)p->bias.count, p->num_output_channels);
    *K = p->num_output_channels;
    *D = p->kernel.count / *K;
    return TRTL_OK;
}

trtl_status trtl_fc_rows_shapes(const trtl_kernel_args *a, int64_t K, int64_t D, int64_t *M)
{
    const trtl_node *nd = a->node;
    char s1[TRTL_DIMS_STR_MAX];
    const int64_t vol = trtl_volume(&a->in[0].dims);
    if (a->in[0].dtype != TRTL_FLOAT || vol < 0 || vol % D)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s does not split into rows of %lld values", nd->name,
                          trtl_dims_str(&a->in[0].dims, s1, sizeof s1), (long long)D);
    *M = vol / D;
    if (trtl_volume(&a->out[0].dims) != *M * K)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %s does not hold %lld x %lld values", nd->name,
                          trtl_dims_str(&a->out[0].dims, s1, sizeof s1), (long long)*M, (long long)K);
    return TRTL_OK;
}

size_t trtl_fc_rows_scratch(const trtl_node *nd, const trtl_tensor_view *in, int64_t max_slots,
                            size_t (*slot_bytes)(int64_t D))
{
    const trtl_fc_params *p = &nd->p.fc;
    if (p->num_output_channels < 1 || p->kernel.count % p->num_output_channels)
        return 0;
    int64_t D = p->kernel.count / p->num_output_channels, vol = trtl_volume(&in[0].dims);
    if (D < 1 || vol < 1)
        return 0;
    int64_t slots = trtl_scratch_threads(); /* the context's pool, not every CPU: 2 MiB a slot at depth > ~1700 */
    double want = 2.0 * (double)vol * (double)p->num_output_channels / TRTL_MIN_FLOPS_PER_THREAD;
    if (want < (double)slots)
        slots = want < 1.0 ? 1 : (int64_t)want;
    if (slots > max_slots)
        slots = max_slots;
    return (size_t)slots * slot_bytes(D) + 64;
}

int64_t trtl_fc_rows_avail(const trtl_kernel_args *a, int64_t slot_elems, size_t elem_size, void **scratch_aligned)
{
    *scratch_aligned = (void *)(((uintptr_t)a->scratch + 63) & ~(uintptr_t)63);
    if (!a->scratch || a->scratch_size <= 64)
        return 0;
    return (int64_t)((a->scratch_size - 64) / elem_size) / slot_elems;
}

trtl_fc_split trtl_fc_rows_split(int64_t M, int64_t K, int64_t mb, int64_t nr, int64_t threads)
{
    trtl_fc_split s;
    const int64_t ntiles = ceil_div(K, nr);
    s.nmb = ceil_div(M, mb);
    /* channel chunks: enough items for every slot, each a run of whole tiles */
    s.nnb = s.nmb >= 2 * threads ? 1 : ceil_div(threads, s.nmb);
    if (s.nnb > ntiles)
        s.nnb = ntiles;
    s.nb = ceil_div(ntiles, s.nnb) * nr;
    s.nnb = ceil_div(K, s.nb);
    s.slots = threads < s.nmb * s.nnb ? threads : s.nmb * s.nnb;
    if (s.slots < 1)
        s.slots = 1;
    return s;
}
