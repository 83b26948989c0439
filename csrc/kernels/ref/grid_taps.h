/*
 * grid_taps.h -- the per-position taps of grid sampling, shared by the reference kernel (ref/grid_sample.c) and
 * grid_sample.tables (x86/grid_sample.c), so both weigh the same input elements with the same doubles.
 *
 * For one output position, trtl_grid_taps() gives its ncomb = ntap^k tap combinations in the reference's order
 * (the last spatial dim's tap fastest): each an element offset into one (image, channel) plane, the product of its
 * per-dim weights (in double, dims multiplied from the last to the first) and whether it lies inside the input
 * (FILL).  The output of one channel is then, in double and in this order,
 *     acc = 0;  for each combination: acc += valid ? w * x[off] : (w is NaN ? w : nothing);  y = (float)acc.
 */
#ifndef TRTL_KERNELS_REF_GRID_TAPS_H
#define TRTL_KERNELS_REF_GRID_TAPS_H

#include "kernels/kernel.h"

#define TRTL_GRID_MAX_COMB 64 /* 4 cubic taps in 3 dims */

typedef struct trtl_grid_geom {
    int32_t k, mode, pad, align_corners, ntap;
    int64_t ncomb;
    double d[3];  /* spatial input dims */
    int64_t st[3]; /* their element strides in a plane */
} trtl_grid_geom;

/* The geometry of a node's shapes: X [N, C, spatial...], k = 2 or 3 (checked by the caller). */
void trtl_grid_geom_init(trtl_grid_geom *g, const trtl_grid_sample_params *q, const trtl_dims *X);

/* The taps of the position whose grid coordinates (k floats, x first) are gp. */
void trtl_grid_taps(const trtl_grid_geom *g, const float *gp, int64_t *off, double *w, uint8_t *valid);

#endif
