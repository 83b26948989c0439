/*
 * axes_values.h -- axes given as values of a tensor at run time (internal).
 *
 * Reduce, squeeze and unsqueeze layers may take their axes from a shape tensor (trtlite's extension:
 * TensorRT takes reduce axes only as a build-time bitmask).  The network's shape inference (network/)
 * and the kernels (kernels/) turn those values into the same bitmask through this one function, so
 * both agree on the meaning: a negative axis counts from the end (axis + rank), each axis may appear
 * once, and every axis lies in [-rank, rank - 1].
 */
#ifndef TRTL_CORE_AXES_VALUES_H
#define TRTL_CORE_AXES_VALUES_H

#include <stdint.h>
#include "trtlite/trtlite.h"

/* Bitmask of the n axes in v for a tensor of `rank` dims (rank <= 31).  On a bad value returns an error
 * naming `layer` and `what` (e.g. "the reduce axes (input 1)") with the offending value and position. */
trtl_status trtl_axes_values_mask(const char *layer, const char *what, const int64_t *v, int64_t n, int32_t rank,
                                  uint32_t *mask);

#endif
