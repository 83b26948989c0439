/* inplace.h -- kernels of elided copies (x86/inplace.c): a concatenation whose inputs the memory
 * plan put at their slices of its output, and a slice whose output it put inside its input
 * (engine/alias.h).  Both copy nothing when their tensors are where they should be and run the
 * copying kernel otherwise, so a result never depends on the plan.
 *
 * The builder passes elide_concat and elide_slice give these kernels to the nodes they elide; the
 * engine recognises them by name when it plans the arena.  Neither is ever a timed candidate
 * (applies() says no). */
#ifndef TRTL_KERNELS_INPLACE_H
#define TRTL_KERNELS_INPLACE_H

#include <stddef.h>

#include "kernels/kernel.h"

#define TRTL_CONCAT_INPLACE_NAME "concatenation.inplace"
#define TRTL_SLICE_INPLACE_NAME "slice.inplace"
#define TRTL_SHUFFLE_INPLACE_NAME "shuffle.inplace"

extern const trtl_kernel trtl_kernel_concat_inplace;
extern const trtl_kernel trtl_kernel_slice_inplace;
/* A pure reshape (shuffle.inplace, pass elide_reshape): its output is its input's bytes. */
extern const trtl_kernel trtl_kernel_shuffle_inplace;

/* The byte offset of each input's block in a concatenation along `axis` of in[0..n_in) into
 * `out` (elements of es bytes) when every input is one contiguous block of the output: same rank,
 * equal dims but the axis, extents adding up, volume 1 before the axis, no negative dim.  Returns
 * 1 and fills off[], else 0. */
int trtl_inplace_concat_layout(int32_t axis, const trtl_dims *out, const trtl_dims *in, int32_t n_in, size_t es,
                               int64_t *off);

/* The byte offset in `in` of a slice with these start and stride giving `out`, when the slice is
 * one contiguous block of its input: same rank, stride 1 on every dim, in range, and some axis a
 * with output dims 1 before it and whole input dims (start 0) after it.  Returns 1 and sets *off,
 * else 0. */
int trtl_inplace_slice_layout(const trtl_dims *in, const trtl_dims *out, const trtl_dims *start,
                              const trtl_dims *stride, size_t es, int64_t *off);

/* A one-input shuffle from `in` to `out` of equal volume whose transposes are absent, identities or move only axes
 * of extent 1 (the others keep their order): a reshape, whose output bytes are its input's.  Returns 1 or 0. */
int trtl_inplace_shuffle_is_reshape(const trtl_shuffle_params *p, const trtl_dims *in, const trtl_dims *out);

#endif
