/*
 * registry.h -- every kernel this build knows.  The builder asks for the candidates of a node's op
 * (reference kernel last), filters by `applies` and CPU features, and times them when autotuning.
 * Plans store kernel names; loading looks them up here.
 */
#ifndef TRTL_KERNELS_REGISTRY_H
#define TRTL_KERNELS_REGISTRY_H

#include "kernels/kernel.h"

/* The most candidates one op may have, the reference included: the builder's selection holds this many, and a
 * registry listing more for an op would drop the last ones (tests/test_kernels_c.py test_every_op_fits_the_candidate_limit). */
#define TRTL_KERNELS_PER_OP_MAX 32

/* Candidates for `op`, best-first guess order, the reference kernel last. */
int trtl_kernels_for(trtl_op op, const trtl_kernel **out, int max);
const trtl_kernel *trtl_kernel_find(const char *name);
const trtl_kernel *trtl_kernel_ref(trtl_op op);

#endif
