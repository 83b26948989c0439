/* control_flow.c -- the control-flow ops have no kernel of their own: boundary layers never reach an
 * engine, and the CONTROL_FLOW step is run by the execution context (engine/control_flow.c), which
 * never calls these.  They exist so that every op has a registered reference kernel; constant folding
 * skips CONTROL_FLOW. */
#include "kernels/ref/ref.h"
#include "core/status.h"

static trtl_status not_a_kernel(const trtl_kernel_args *a)
{
    return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': a control-flow layer runs only inside its loop or "
                      "conditional step", a->node->name);
}

trtl_status trtl_ref_condition(const trtl_kernel_args *a) { return not_a_kernel(a); }
trtl_status trtl_ref_conditional_input(const trtl_kernel_args *a) { return not_a_kernel(a); }
trtl_status trtl_ref_conditional_output(const trtl_kernel_args *a) { return not_a_kernel(a); }
trtl_status trtl_ref_trip_limit(const trtl_kernel_args *a) { return not_a_kernel(a); }
trtl_status trtl_ref_recurrence(const trtl_kernel_args *a) { return not_a_kernel(a); }
trtl_status trtl_ref_iterator(const trtl_kernel_args *a) { return not_a_kernel(a); }
trtl_status trtl_ref_loop_output(const trtl_kernel_args *a) { return not_a_kernel(a); }
trtl_status trtl_ref_control_flow(const trtl_kernel_args *a) { return not_a_kernel(a); }
