/*
 * control_flow.h -- loops and conditionals at build time (internal).
 *
 * A loop or conditional is identified by the `owner` id its boundary layers carry.  As in TensorRT,
 * its other layers are found by data flow: a loop's body is everything computed (transitively) from
 * its recurrences and iterators, a conditional's from its conditional inputs, up to its loop /
 * conditional outputs (and trip limits); a structure one of whose boundary layers is in a body is
 * nested in it and belongs to it whole.  Layers that depend on none of these (loop-invariant values,
 * constants) stay outside and are computed once.  Each top-level structure becomes one CONTROL_FLOW
 * step (engine/control_flow.h) whose bodies are sub-networks built into nested engines.
 */
#ifndef TRTL_BUILDER_CONTROL_FLOW_H
#define TRTL_BUILDER_CONTROL_FLOW_H

#include "builder/graph.h"
#include "network/network.h"

typedef struct trtl_cf_plan {
    int32_t n;          /* top-level structures */
    int32_t *owner;     /* their ids */
    int32_t *region;    /* per layer: the top-level structure (index) it belongs to, -1: none */
    int32_t n_owners;   /* all structures, nested ones included */
    int32_t *all;       /* their ids */
    char **set;         /* per structure in `all`: its layers (entries, body, nested structures), per layer */
} trtl_cf_plan;

/* Finds the structures and checks their boundaries (errors name the layer).  Networks without
 * control flow get n == 0 and region all -1. */
trtl_status trtl_cf_analyze(trtl_network *net, trtl_cf_plan *pl);
void trtl_cf_plan_free(trtl_cf_plan *pl);
/* Before lowering the other layers: graph tensors for the structures' outputs (map: network tensor id
 * -> graph tensor id). */
trtl_status trtl_cf_premap(trtl_bgraph *g, trtl_network *net, const trtl_cf_plan *pl, int32_t *map);
/* After lowering them: one CONTROL_FLOW node per structure, reading mapped outer tensors. */
trtl_status trtl_cf_lower(trtl_bgraph *g, trtl_network *net, const trtl_cf_plan *pl, const int32_t *map);
/* Once shapes are final: every CONTROL_FLOW node's bodies are built into engines for the shapes of
 * the node's inputs. */
trtl_status trtl_cf_compile(trtl_bgraph *g);

#endif
