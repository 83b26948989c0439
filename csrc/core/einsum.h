/*
 * einsum.h -- parsing an einsum equation ("ij,jk->ik", "bij,bjk", "ii->", ...): shape arithmetic shared
 * by IEinsumLayer's shape inference (network/ops/einsum.c) and its reference kernel (kernels/ref/einsum.c).
 *
 * Terms hold letters a-z and A-Z (spaces ignored); a letter may repeat within a term (a diagonal or a
 * trace).  With "->" the output lists letters of the inputs, each once; without it the output is the
 * letters that occur exactly once, in ASCII order (numpy's implicit mode).  No ellipsis ("..."), as in
 * TensorRT.  Letters not in the output are summed over.
 */
#ifndef TRTL_CORE_EINSUM_H
#define TRTL_CORE_EINSUM_H

#include "trtlite/types.h"

#define TRTL_EINSUM_MAX_INPUTS 8
#define TRTL_EINSUM_MAX_LETTERS 52

typedef struct trtl_einsum_eq {
    int32_t n_in;
    int32_t n_letters;                                       /* distinct letters, 0..n_letters-1 */
    char letter[TRTL_EINSUM_MAX_LETTERS];
    int32_t in_rank[TRTL_EINSUM_MAX_INPUTS];
    int8_t in_lab[TRTL_EINSUM_MAX_INPUTS][TRTL_MAX_DIMS];    /* letter id per dim of each input */
    int32_t out_rank;
    int8_t out_lab[TRTL_MAX_DIMS];
} trtl_einsum_eq;

/* Parses `eq` for n_in inputs; errors name `layer`. */
trtl_status trtl_einsum_parse(const char *layer, const char *eq, int32_t n_in, trtl_einsum_eq *out);

/* Per-letter sizes from the input dims (each input's rank must match its term): every occurrence of
 * a letter has one size, or 1 (broadcast); -1 (dynamic) takes the others'.  size[] gets
 * n_letters entries. */
trtl_status trtl_einsum_sizes(const char *layer, const trtl_einsum_eq *e, const trtl_dims *in, int64_t *size);

#endif
