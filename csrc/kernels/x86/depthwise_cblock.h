/*
 * depthwise_cblock.h -- the driver shared by the depthwise kernels that vectorize across channels on small maps
 * (convolution.depthwise_c16 on AVX-512 in convolution_depthwise_c16.c, convolution.depthwise_c8 on AVX2 in
 * convolution_depthwise_c8.c): per (image, block of `lanes` channels) the block's planes go into a zero-bordered
 * [Hp][Wp][lanes] plane in the slot's scratch, are computed into an [OH*OW][lanes] tail of the same slot and moved
 * back.  This file keeps the geometry, the weight reorder (prepare/release), the split of the items over the pool,
 * the scratch sizing and applies(); each kernel keeps its own per-item function (gather, taps, scatter).
 */
#ifndef TRTL_KERNELS_X86_DEPTHWISE_CBLOCK_H
#define TRTL_KERNELS_X86_DEPTHWISE_CBLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "kernels/conv_geometry.h"

typedef struct trtl_dwc_geom {
    union {
        trtl_dw_geom base;
        struct {
            TRTL_DW_GEOM_FIELDS;
        };
    };
    int64_t Hp, Wp, nblk, lanes;
} trtl_dwc_geom;

/* weights reordered once: w [nblk][R*S][lanes], b [nblk][lanes] (zero lanes past C) */
typedef struct trtl_dwc_state {
    int64_t C, R, S, lanes;
    float *w, *b;
} trtl_dwc_state;

typedef struct trtl_dwc_job {
    const trtl_dwc_geom *g;
    const trtl_dwc_state *st;
    const trtl_epilogue *epi;
    const float *x, *res;
    float *y, *scratch;
    int64_t slots, items;
} trtl_dwc_job;

/* One (image n, channel block cb) item; xp is the slot's scratch (aligned to 64 bytes): the padded input block at
 * xp, the output block at trtl_dwc_out(g, xp). */
typedef void (*trtl_dwc_item_fn)(const trtl_dwc_job *j, int64_t n, int64_t cb, float *xp);

typedef struct trtl_dwc_kernel {
    const char *name;
    int64_t lanes;
    trtl_dwc_item_fn item;
    int zero_once; /* the driver zeroes each slot's padded plane once per run: the item rewrites only input pixels */
} trtl_dwc_kernel;

/* The output block of a slot: after the padded plane and 4 vectors of gap. */
static inline float *trtl_dwc_out(const trtl_dwc_geom *g, float *xp) { return xp + (g->Hp * g->Wp + 4) * g->lanes; }

trtl_status trtl_dwc_prepare(const trtl_node *nd, int64_t lanes, void **state);
void trtl_dwc_release(void *state);
/* run(): every item over the context's pool; errors name the layer (weights not prepared, scratch too small). */
trtl_status trtl_dwc_run(const trtl_kernel_args *a, const trtl_dwc_kernel *k);
size_t trtl_dwc_scratch(const trtl_node *nd, const trtl_tensor_view *in, const trtl_tensor_view *out, int64_t lanes);
/* applies(): depthwise, kernels up to 7x7, any dilation, a padded plane of at most 1600 pixels (16 lanes) or 4096
 * (8 lanes) at these dims. */
int trtl_dwc_applies(const trtl_node *nd, const trtl_dims *in_dims, int64_t lanes);

#endif
