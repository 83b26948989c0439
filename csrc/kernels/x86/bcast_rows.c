/* bcast_rows.c -- trtl_bcast_rows: broadcast rows in chunks over the pool (see bcast_rows.h). */
#include "kernels/x86/bcast_rows.h"
#include "kernels/x86/vmath.h"
#include "core/threadpool.h"

typedef struct br_job {
    const trtl_bcast *b;
    trtl_bcast_row_fn row;
    void *ctx;
    int64_t inner, per_row; /* elements of a row, chunks of a row */
} br_job;

static void br_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const br_job *j = ctx;
    const trtl_bcast *b = j->b;
    const int r = b->rank, nops = b->nops;
    int64_t inner_s[TRTL_BCAST_MAX_OPS], idx[TRTL_MAX_DIMS] = {0}, base[TRTL_BCAST_MAX_OPS] = {0};
    for (int k = 0; k < nops; k++)
        inner_s[k] = b->s[k][r - 1];
    int64_t q = begin / j->per_row, rest = q; /* the row of the first chunk: its multi-index and offsets */
    for (int i = r - 2; i >= 0; i--) {
        idx[i] = rest % b->n[i];
        rest /= b->n[i];
        for (int k = 0; k < nops; k++)
            base[k] += idx[i] * b->s[k][i];
    }
    for (int64_t it = begin; it < end; it++) {
        int64_t c = it % j->per_row, start = c * TRTL_VM_CHUNK, len = j->inner - start;
        if (len > TRTL_VM_CHUNK)
            len = TRTL_VM_CHUNK;
        int64_t off[TRTL_BCAST_MAX_OPS];
        for (int k = 0; k < nops; k++)
            off[k] = base[k] + start * inner_s[k];
        j->row(j->ctx, q * j->inner + start, off, len, inner_s);
        if (c == j->per_row - 1) { /* next row: step the odometer */
            q++;
            for (int i = r - 2; i >= 0; i--) {
                for (int k = 0; k < nops; k++)
                    base[k] += b->s[k][i];
                if (++idx[i] < b->n[i])
                    break;
                for (int k = 0; k < nops; k++)
                    base[k] -= b->s[k][i] * b->n[i];
                idx[i] = 0;
            }
        }
    }
}

void trtl_bcast_rows(const trtl_bcast *b, struct trtl_threadpool *pool, trtl_bcast_row_fn row, void *ctx)
{
    if (b->empty)
        return;
    br_job j = {b, row, ctx, b->n[b->rank - 1], 0};
    int64_t rows = 1;
    for (int i = 0; i < b->rank - 1; i++)
        rows *= b->n[i];
    j.per_row = (j.inner + TRTL_VM_CHUNK - 1) / TRTL_VM_CHUNK;
    int64_t unit = j.inner < TRTL_VM_CHUNK ? j.inner : TRTL_VM_CHUNK;
    trtl_parallel_for(pool, rows * j.per_row, TRTL_VM_GRAIN / unit + 1, br_task, &j);
}
