/*
 * convolution_gemm.h -- internals shared by convolution_gemm.c ("convolution.packed_gemm") and
 * convolution_gemm_pack.c (building B tiles of the im2col matrix).
 *
 * Geometry (trtl_conv_geom, Col, ckk, P): kernels/conv_geometry.h.
 */
#ifndef TRTL_KERNELS_X86_CONVOLUTION_GEMM_H
#define TRTL_KERNELS_X86_CONVOLUTION_GEMM_H

#include "kernels/kernel.h"
#include "kernels/x86/gemm_packed.h"
#include "kernels/conv_geometry.h"


/* One piece of a row of B: `len` columns starting at dst offset `dst` (tile * tile stride +
 * lane), read from window offset `src` (-1: zeros); `nvec` whole 8-float vectors are written
 * (the last may run past len inside the tile row, to be overwritten by the next piece), then
 * `len - 8*nvec` single floats if positive. */
typedef struct trtl_cg_piece {
    int64_t dst, src;
    int32_t len, nvec;
} trtl_cg_piece;

/* PREACT_CONV's input transform of a 1x1 convolution's input rows: act(x * p->in_scale[c] + p->in_shift[c]) (a
 * count of 0: 1 / 0).  clamp: the activation is a clamp to [lo, hi] after the affine and both arrays are whole,
 * which the packing tiles apply as they pack (trtl_gemm_pack_b_pre); else rows are mapped one by one. */
typedef struct trtl_cg_pre {
    const trtl_preact_conv_params *p;
    int clamp;
    float lo, hi;
} trtl_cg_pre;

/* A slot's packer for pixels [p0, p0 + pw) and channels [c0, c1) of one image and group.
 * Col rows are numbered (c, tap) -- row c*kvol + tap -- unless tap_major (set after trtl_cg_packer_begin, for
 * weights packed tap-major: row tap*Cg + c; convolution.packed_gemm's kx1 convolutions).
 * Windowed path (2-D/1-D, stride 1 or 2 along W): the input rows the panel needs are copied once
 * with their zero padding into `win` ([c1 - c0][wh][wp]); every Col row is then the same list
 * of pieces read at a per-row offset.  Other convolutions build each row by bounds checks. */
typedef struct trtl_cg_packer {
    const trtl_conv_geom *g;
    trtl_gemm_isa isa;
    int64_t nr, ts;       /* tile width and stride of the B being written */
    const float *xg;      /* the image's group input */
    int64_t p0, pw, c0, c1;
    int windowed;
    float *win, *tmp;
    int64_t wh, wp;
    trtl_cg_piece *pc;
    int64_t npc;
    int tap_major;
    /* PREACT_CONV's input transform (NULL: none), set after trtl_cg_packer_begin; only the 1x1 stride-1 path
     * applies it, to rows (channels) pre_c0 + r of the whole input */
    const struct trtl_cg_pre *pre;
    int64_t pre_c0;
} trtl_cg_packer;

/* Floats of workspace a packer needs for panels of up to pw pixels and nch channels. */
int64_t trtl_cg_packer_floats(const trtl_conv_geom *g, int64_t pw, int64_t nch);

/* Prepares a packer (window copy, pieces) in `work` (trtl_cg_packer_floats, 64-byte aligned). */
void trtl_cg_packer_begin(trtl_cg_packer *pk, const trtl_conv_geom *g, trtl_gemm_isa isa, float *work,
                          const float *xg, int64_t c0, int64_t c1, int64_t p0, int64_t pw, int64_t tile_stride);

/* Col rows [r0, r1) (inside channels [c0, c1)) into B tiles: row r at dst + (r - r0)*nr, tiles
 * tile_stride apart, columns pw..the last tile's end zeroed. */
/* Whether the packer's tap-major Col rows are contiguous runs of its window (a kx1 window, stride 1, no padding along
 * W: the window is W wide and the panel's pixels follow each other in it); then row (tap t, channel c) is the pw
 * floats at trtl_cg_tap_row(pk, t, c), and the rows of one tap are wh * wp floats apart. */
int trtl_cg_tap_rows(const trtl_cg_packer *pk);
const float *trtl_cg_tap_row(const trtl_cg_packer *pk, int64_t t, int64_t c);

void trtl_cg_pack_rows(const trtl_cg_packer *pk, int64_t r0, int64_t r1, float *dst);

#endif
