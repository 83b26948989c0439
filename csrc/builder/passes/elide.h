/* elide.h -- helpers shared by the copy-elision passes (elide_slice.c, elide_concat.c): which
 * tensors the memory plan may place inside others (engine/alias.h). */
#ifndef TRTL_BUILDER_PASSES_ELIDE_H
#define TRTL_BUILDER_PASSES_ELIDE_H

#include <stdint.h>

#include "builder/graph.h"

/* t is an intermediate activation (no network input, output or constant) of static shape. */
int trtl_elide_static(const trtl_bg_tensor *t);

/* Node i is a live one-input slice without epilogue from a static activation to one of the same
 * dtype whose output is one contiguous block of its input: stores the block's byte offset in *off
 * and returns 1; else 0. */
int trtl_elide_slice_offset(const trtl_bgraph *g, int32_t i, int64_t *off);

#endif
