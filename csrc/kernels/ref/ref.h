/*
 * ref.h -- the reference kernels, one per op of ops.def (kernels/ref/<l>.c): plain C, no SIMD,
 * obviously correct.  The registry lists each as "<l>.ref"; the optimized kernels are tested
 * against them (tests/c/test_kernels.c) and constant folding runs them at build time.
 */
#ifndef TRTL_KERNELS_REF_REF_H
#define TRTL_KERNELS_REF_REF_H

#include "kernels/kernel.h"

#define TRTL_OP(E, l, cls, lt, disp, mi, ma, no) trtl_status trtl_ref_##l(const trtl_kernel_args *a);
#include "trtlite/ops.def"
#undef TRTL_OP

/* The NMS reference kernel's scratch (its candidate list); the registry gives it to "nms.ref". */
size_t trtl_ref_nms_scratch(const trtl_node *n, const trtl_tensor_view *in, const trtl_tensor_view *out);

#endif
