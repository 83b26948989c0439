/* broadcast.c -- coalesced broadcast iteration (see broadcast.h). */
#include "kernels/ref/broadcast.h"
#include "core/dims.h"
#include "core/status.h"

trtl_status trtl_bcast_init(trtl_bcast *b, const char *node, const trtl_dims *out, int nops, const trtl_dims *in)
{
    char so[TRTL_DIMS_STR_MAX], si[TRTL_DIMS_STR_MAX];
    int r = out->nb_dims;
    int64_t s[TRTL_BCAST_MAX_OPS][TRTL_MAX_DIMS];
    b->nops = nops;
    b->empty = 0;
    for (int k = 0; k < nops; k++) {
        if (in[k].nb_dims != r)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %d has shape %s, cannot broadcast to %s", node, k,
                              trtl_dims_str(&in[k], si, sizeof si), trtl_dims_str(out, so, sizeof so));
        int64_t acc = 1;
        for (int i = r - 1; i >= 0; i--) {
            if (in[k].d[i] != out->d[i] && in[k].d[i] != 1)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %d has shape %s, cannot broadcast to %s", node,
                                  k, trtl_dims_str(&in[k], si, sizeof si), trtl_dims_str(out, so, sizeof so));
            s[k][i] = in[k].d[i] == 1 ? 0 : acc;
            acc *= in[k].d[i];
        }
    }
    /* Drop dims of size 1, then merge an outer dim into the next inner one wherever every operand
     * steps across the pair as across one dim (s_outer == s_inner * n_inner; 0 == 0 * n too). */
    int m = 0;
    for (int i = 0; i < r; i++) {
        if (out->d[i] == 0)
            b->empty = 1;
        if (out->d[i] == 1)
            continue;
        int merge = m > 0;
        for (int k = 0; k < nops && merge; k++)
            if (b->s[k][m - 1] != s[k][i] * out->d[i])
                merge = 0;
        if (merge) {
            b->n[m - 1] *= out->d[i];
            for (int k = 0; k < nops; k++)
                b->s[k][m - 1] = s[k][i];
        } else {
            b->n[m] = out->d[i];
            for (int k = 0; k < nops; k++)
                b->s[k][m] = s[k][i];
            m++;
        }
    }
    if (m == 0) { /* a single element */
        b->n[0] = 1;
        for (int k = 0; k < nops; k++)
            b->s[k][0] = 0;
        m = 1;
    }
    b->rank = m;
    return TRTL_OK;
}

void trtl_bcast_run(const trtl_bcast *b, trtl_bcast_row_fn row, void *ctx)
{
    if (b->empty)
        return;
    int r = b->rank, nops = b->nops;
    int64_t idx[TRTL_MAX_DIMS] = {0}, off[TRTL_BCAST_MAX_OPS] = {0}, inner_s[TRTL_BCAST_MAX_OPS];
    int64_t rows = 1, inner = b->n[r - 1];
    for (int i = 0; i < r - 1; i++)
        rows *= b->n[i];
    for (int k = 0; k < nops; k++)
        inner_s[k] = b->s[k][r - 1];
    for (int64_t q = 0; q < rows; q++) {
        row(ctx, q * inner, off, inner, inner_s);
        for (int i = r - 2; i >= 0; i--) {
            for (int k = 0; k < nops; k++)
                off[k] += b->s[k][i];
            if (++idx[i] < b->n[i])
                break;
            for (int k = 0; k < nops; k++)
                off[k] -= b->s[k][i] * b->n[i];
            idx[i] = 0;
        }
    }
}
