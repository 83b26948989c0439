/*
 * data_dependent.h -- data-dependent output shapes (NonZero, NMS: the count is known only once the
 * step has run).  The engine plans every buffer at the upper bound its shape inference gives; the
 * execution context takes the real extent from the step's output view, re-infers the shapes of the
 * later steps with it (trtl_engine_infer_kept) and hands data-dependent outputs to the user's output
 * allocator (trtlite.h, trtl_output_allocator).  docs/ARCHITECTURE.md, "Data-dependent shapes".
 */
#ifndef TRTL_ENGINE_DATA_DEPENDENT_H
#define TRTL_ENGINE_DATA_DEPENDENT_H

#include "engine/engine.h"

/* Is this a step whose output extents are data-dependent? */
int trtl_dd_op(trtl_op op);
/* Per tensor: 1 when its dims may depend on a data-dependent step's result (reached from one through
 * the nodes).  NULL when the engine has no data-dependent step (or out of memory: *oom set). */
char *trtl_dd_tensors(const trtl_engine *e, int *oom);
/* Shape inference as trtl_engine_infer, except that the outputs of nodes with kept[k] set keep the dims
 * in `dims` (the real extents their steps reported). */
trtl_status trtl_engine_infer_kept(const trtl_engine *e, trtl_dims *dims, const trtl_dims *values, const char *kept);

#endif
