/*
 * conv_geometry.h -- the geometry of a convolution node as the GEMM-based convolution kernels see
 * it (convolution.packed_gemm in x86/, convolution.im2col_sgemm in blas/).
 *
 * Spatial dims are right-aligned into 3 slots (depth, height, width); unused leading slots have
 * size 1.  Col, the im2col matrix of one image and group, has ckk = Cg*kvol rows (c, kd, kh, kw)
 * and P = output pixels columns.
 */
#ifndef TRTL_KERNELS_CONV_GEOMETRY_H
#define TRTL_KERNELS_CONV_GEOMETRY_H

#include <stdint.h>
#include "kernels/kernel.h"

typedef struct trtl_conv_geom {
    int64_t N, C, K, G, Cg, Kg;
    int64_t in[3], out[3], k[3], s[3], dl[3], pad[3];
    int64_t in_sp, P, kvol, ckk;
    int direct; /* 1x1, stride 1, no padding: Col rows are rows of the activations */
} trtl_conv_geom;

/* Geometry of node nd (lowered convolution params) for input dims xd; yd (may be NULL) is
 * checked against the output size the params give.  Fails with a message naming the layer. */
trtl_status trtl_conv_geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, trtl_conv_geom *g);

/* The start of every FLOAT convolution kernel's applies(): FLOAT weights (and bias), at least one output map, as many
 * weights as a whole number of maps, and a geometry for input dims xd (that error cleared: a kernel that does not
 * apply is no error).  1 with *g set, else 0. */
int trtl_conv_float_applies(const trtl_node *nd, const trtl_dims *xd, trtl_conv_geom *g);

/* Whether the first of the three spatial axes is trivial (one input, one output, a 1-tap window reading input 0:
 * no padding before it), so that kernels may run the convolution as 2-D over axes 1 and 2.  A 3-D input of depth 1
 * with pre-padding on that axis is not: its outputs all lie in the padding (found by the C kernel test). */
static inline int trtl_conv_geom_2d(const trtl_conv_geom *g)
{
    return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->pad[0] == 0;
}

/* Of the `seg` output columns t reading input column iw0 + t*sw (stride sw > 0) of a row of in2
 * columns, those in [*lo, *hi) read inside the row; the others read padding. */
static inline void trtl_conv_row_span(int64_t iw0, int64_t sw, int64_t in2, int64_t seg, int64_t *lo, int64_t *hi)
{
    int64_t l = iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw;
    int64_t h = iw0 > in2 - 1 ? 0 : (in2 - 1 - iw0) / sw + 1;
    if (h > seg)
        h = seg;
    if (l > h)
        l = h;
    *lo = l;
    *hi = h;
}

/* Depthwise 2-D convolutions (groups == input channels == output channels), as the depthwise
 * kernels in x86/ see them.  A kernel embeds the fields in its own geometry through
 * TRTL_DW_GEOM_FIELDS (an anonymous member beside `base`) and adds what it derives. */
#define TRTL_DW_GEOM_FIELDS int64_t N, C, H, W, OH, OW, R, S, sh, sw, dh, dw, pt, pl
typedef struct trtl_dw_geom {
    TRTL_DW_GEOM_FIELDS;
} trtl_dw_geom;

/* What a depthwise kernel accepts beyond groups == C: kernel rows/cols at most max_r/max_s
 * (0: no limit), dilation other than 1 only when `dilated` is set. */
typedef struct trtl_dw_limits {
    int64_t max_r, max_s;
    int dilated;
} trtl_dw_limits;

/* Whether params p are a depthwise 2-D convolution over C channels with FLOAT weights (and bias),
 * strides 1 or 2 and weight / bias counts that fit, within lim. */
int trtl_dw_params_ok(const trtl_conv_params *p, int64_t C, const trtl_dw_limits *lim);

/* Geometry of depthwise node nd for 4-D input xd; yd (may be NULL) is checked against the
 * output size.  Refuses (TRTL_ERR_UNSUPPORTED) what trtl_dw_params_ok refuses, naming the layer. */
trtl_status trtl_dw_geom_init(const trtl_node *nd, const trtl_dims *xd, const trtl_dims *yd, const trtl_dw_limits *lim,
                              trtl_dw_geom *g);

#endif
