/* quantize_implicit.h -- implicit INT8 placement (quantize_implicit.c). */
#ifndef TRTL_BUILDER_QUANTIZE_IMPLICIT_H
#define TRTL_BUILDER_QUANTIZE_IMPLICIT_H

#include "builder/graph.h"
#include "trtlite/trtlite.h"

/* With the config's INT8 flag: Q/DQ pairs from the network's dynamic ranges before the inputs of
 * convolutions, fully connected layers and matrix multiplies by constants, and their weights on a
 * per-channel int8 grid, so that fuse_qdq makes them int8 layers.  Without the flag: nothing. */
trtl_status trtl_place_implicit_int8(trtl_bgraph *g, const trtl_network *net);

#endif
