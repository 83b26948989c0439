/*
 * depthwise_planes.h -- the driver shared by the depthwise kernels that compute one (image, channel) plane at a
 * time from a padded copy in a per-slot buffer (convolution.depthwise_avx2 in convolution_depthwise.c,
 * convolution.depthwise_plane512 in convolution_depthwise_plane512.c): the N x C planes are split into contiguous
 * runs over min(threads, planes, slots the scratch holds) slots, each slot with its own buffer of `slot_floats`
 * floats on a 64-byte boundary.  The kernels keep their geometry and their plane function; this file keeps the
 * split, the scratch sizing, the residual and the bias/weights addressing.
 */
#ifndef TRTL_KERNELS_X86_DEPTHWISE_PLANES_H
#define TRTL_KERNELS_X86_DEPTHWISE_PLANES_H

#include <stddef.h>

#include "kernels/kernel.h"
#include "kernels/conv_geometry.h"

/* Computes output plane y (OH x OW) from input plane x (H x W) with the channel's R x S weights w and bias, adding
 * res (NULL: none) and applying the node's epilogue; buf is the slot's buffer (zeroed at the start of each run when
 * the driver's zero_slot is set).  geom is the kernel's own geometry (whose first member is a trtl_dw_geom). */
typedef void (*trtl_dw_plane_fn)(const void *geom, const float *x, float *buf, const float *w, float bias,
                                 const float *res, float *y, const trtl_epilogue *epi);

typedef struct trtl_dw_planes {
    const void *geom;          /* the kernel's geometry */
    const trtl_dw_geom *base;  /* its shared fields (the same object) */
    trtl_dw_plane_fn plane;
    size_t slot_floats;        /* buffer floats a slot needs */
    int zero_slot;             /* zero each slot's buffer once per run (borders the plane copies leave alone) */
} trtl_dw_planes;

/* run(): every plane of the layer over the context's pool.  An error names the layer when the scratch cannot hold
 * one slot. */
trtl_status trtl_dw_planes_run(const trtl_kernel_args *a, const trtl_dw_planes *d);
/* scratch(): bytes for as many slots as the layer's work gives threads (at most trtl_available_cpus(), 64). */
size_t trtl_dw_planes_scratch(const trtl_dw_planes *d);

#endif
