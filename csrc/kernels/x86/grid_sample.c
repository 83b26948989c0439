/*
 * grid_sample.c -- "grid_sample.tables": IGridSampleLayer (ONNX GridSample; 2-D and 3-D, every interpolation and
 * padding mode), the same bits as the reference (kernels/ref/grid_sample.c), split over the pool.
 *
 * The taps of a block of positions (up to 1024 tap combinations: kernels/ref/grid_taps.h, the reference's own
 * function) are computed once into tables laid out [position][combination]; each channel of the block is then
 * summed from them in double and in the reference's order per position, so the sums are the reference's, and
 * written along the positions.  Blocks of (image, positions) are split over the pool.  There is no vector path: an
 * AVX2 one (four positions in the lanes of a double vector, offsets gathered) measured slower than this loop
 * (docs/ARCHITECTURE.md, "Selection, conversion and grid-sampling kernels").
 */
#include <string.h>
#include "kernels/kernel.h"
#include "kernels/ref/ref.h"
#include "kernels/ref/grid_taps.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

#define GS_TABLE 1024 /* combinations x positions of one block */

typedef struct gs_job {
    trtl_grid_geom geo;
    const float *x, *g;
    float *y;
    int64_t N, C, S, P, B, blocks_per_image; /* B: positions per block */
} gs_job;

typedef struct gs_tables {
    int64_t off[GS_TABLE];
    double w[GS_TABLE];
    uint8_t add[GS_TABLE]; /* 1: add w * x; 0: add w if NaN, else nothing */
} gs_tables;

static void gs_channel(const gs_tables *t, int64_t ncomb, int64_t np, const float *xc, float *yc)
{
    for (int64_t p = 0; p < np; p++) {
        double acc = 0;
        for (int64_t cb = 0; cb < ncomb; cb++) {
            int64_t e = p * ncomb + cb;
            if (t->add[e])
                acc += t->w[e] * xc[t->off[e]];
            else if (t->w[e] != t->w[e])
                acc += t->w[e];
        }
        yc[p] = (float)acc;
    }
}


static void gs_task(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const gs_job *j = ctx;
    const int64_t ncomb = j->geo.ncomb, B = j->B, k = j->geo.k;
    gs_tables t;
    int64_t off[TRTL_GRID_MAX_COMB];
    double w[TRTL_GRID_MAX_COMB];
    uint8_t valid[TRTL_GRID_MAX_COMB];
    for (int64_t it = begin; it < end; it++) {
        int64_t n = it / j->blocks_per_image, p0 = (it % j->blocks_per_image) * B, np = j->P - p0;
        if (np > B)
            np = B;
        for (int64_t p = 0; p < np; p++) {
            trtl_grid_taps(&j->geo, j->g + (n * j->P + p0 + p) * k, off, w, valid);
            for (int64_t cb = 0; cb < ncomb; cb++) {
                t.off[p * ncomb + cb] = off[cb];
                t.w[p * ncomb + cb] = w[cb];
                t.add[p * ncomb + cb] = valid[cb];
            }
        }
        for (int64_t c = 0; c < j->C; c++) {
            const float *xc = j->x + (n * j->C + c) * j->S;
            float *yc = j->y + (n * j->C + c) * j->P + p0;
            gs_channel(&t, ncomb, np, xc, yc);
        }
    }
}

static trtl_status gs_run(const trtl_kernel_args *a)
{
    const trtl_dims *X = &a->in[0].dims, *G = &a->in[1].dims;
    int32_t k = X->nb_dims - 2;
    /* the reference checks the shapes and types (and words the errors); an input plane past int32 offsets (the
     * gather's lanes) or no element stays with it too */
    if ((k != 2 && k != 3) || G->nb_dims != k + 2 || trtl_volume_range(X, 2, k + 2) > INT32_MAX ||
        trtl_volume(&a->out[0].dims) == 0 || a->in[0].dtype != TRTL_FLOAT || a->in[1].dtype != TRTL_FLOAT ||
        a->out[0].dtype != TRTL_FLOAT || G->d[0] != X->d[0] || G->d[k + 1] != k || a->out[0].dims.nb_dims != k + 2 ||
        a->out[0].dims.d[0] != X->d[0] || a->out[0].dims.d[1] != X->d[1])
        return trtl_ref_grid_sample(a);
    for (int32_t i = 0; i < k; i++)
        if (a->out[0].dims.d[2 + i] != G->d[1 + i])
            return trtl_ref_grid_sample(a);
    gs_job j;
    trtl_grid_geom_init(&j.geo, &a->node->p.grid, X);
    j.x = a->in[0].data;
    j.g = a->in[1].data;
    j.y = a->out[0].data;
    j.N = X->d[0];
    j.C = X->d[1];
    j.S = trtl_volume_range(X, 2, k + 2);
    j.P = trtl_volume_range(G, 1, k + 1);
    j.B = GS_TABLE / j.geo.ncomb;
    if (j.B > j.P)
        j.B = j.P;
    j.blocks_per_image = (j.P + j.B - 1) / j.B;
    int64_t work = j.B * j.C * j.geo.ncomb; /* multiply-adds of one block */
    trtl_parallel_for(a->pool, j.N * j.blocks_per_image, work >= 32768 ? 1 : 32768 / work + 1, gs_task, &j);
    return TRTL_OK;
}

const trtl_kernel trtl_kernel_grid_sample_tables = {
    .name = "grid_sample.tables",
    .op = TRTL_OP_GRID_SAMPLE,
    .run = gs_run,
};
