/*
 * network.h -- the network definition's in-memory form (internal).
 *
 * Tensors and layers are allocated one by one so that handles given to users stay valid while
 * the network grows.  Layers are kept in insertion order; set_input() may reorder the data flow,
 * so shape inference sorts topologically (and reports cycles).
 *
 * Shapes: `full` dims include the batch for implicit-batch networks (as -1 until a batch is
 * known; 1 is used during network-level inference); what users see drops it.
 */
#ifndef TRTL_NETWORK_NETWORK_H
#define TRTL_NETWORK_NETWORK_H

#include "trtlite/trtlite.h"
#include "network/op_table.h"
#include "core/namemap.h"

struct trtl_tensor {
    struct trtl_network *net;
    int32_t id;            /* index in net->tensors */
    char *name;
    trtl_dims dims;        /* network inputs: full declared dims; others: last inferred full dims */
    trtl_dtype dtype;      /* inputs: declared; others: last inferred */
    trtl_layer *producer;  /* NULL for network inputs */
    int32_t producer_out;
    int is_input;
    int is_output;
    int32_t n_consumers;   /* layers reading this tensor (a leaf layer's outputs have none) */
    int has_dynamic_range;
    float dyn_min, dyn_max;
    int64_t *sv;           /* shape values from the last inference (network/shape_values.h), owned, or NULL */
    int has_sv;            /* sv is current: the values are (partly) known */
};

struct trtl_layer {
    struct trtl_network *net;
    int32_t id;
    int32_t number;        /* N of its default name "(Unnamed Layer* N) [...]" */
    trtl_op op;
    char *name;
    int32_t n_in;
    trtl_tensor **in;      /* n_in entries; an optional input may be NULL */
    int32_t n_out;
    trtl_tensor **out;
    trtl_params p;         /* user form */
    int has_precision;
    trtl_dtype precision;
    int32_t *out_type_set; /* per output: -1 unset, else trtl_dtype */
    int32_t type_hint;     /* set_output_type on a layer whose outputs stay fp32: the type asked for, a
                            * precision request for the builder (-1: none) */
    /* Result of the last shape inference: the layer whose failure this layer depends on (itself
     * if it failed), so a tensor's shape query reports only failures upstream of it. */
    struct trtl_layer *bad_root;
    trtl_status bad_status;
    char *bad_msg;
    int stale;             /* a leaf whose outputs must be re-inferred (see trtl_layer_touch) */
};

struct trtl_network {
    int implicit_batch;
    char *name;
    trtl_tensor **tensors;
    int32_t n_tensors, cap_tensors;
    trtl_layer **layers;
    int32_t n_layers, cap_layers;
    trtl_tensor **inputs;
    int32_t n_inputs, cap_inputs;
    trtl_tensor **outputs;
    int32_t n_outputs, cap_outputs;
    trtl_namemap names;    /* tensor name -> tensor */
    int32_t next_layer_number; /* for default names "(Unnamed Layer* N) [...]" */
    int32_t n_stale;       /* leaf layers to re-infer before shapes are current */
    int shapes_valid;      /* every non-stale layer's outputs are current; cleared by mutations */
    trtl_status shape_status; /* result of the last inference */
    char shape_error[1024];
    int32_t shape_error_layer; /* id of the layer that failed, -1 if none */
    int32_t next_control_flow; /* id of the next loop / conditional (trtl_network_new_control_flow) */
    char *weights_names;   /* trtl_network_add_weights_name's records, "layer\trole\tname\n" lines (NULL: none) */
};

/* Re-infers all shapes if anything changed.  On failure returns the error of the first failing
 * layer (message stored in net->shape_error too). */
trtl_status trtl_network_infer(trtl_network *net);
/* Marks all shapes stale (inputs changed, rewiring). */
void trtl_network_touch(trtl_network *net);
/* A layer's attributes changed: if nothing consumes its outputs, only it is re-inferred next
 * time (so building a network layer by layer stays linear); otherwise everything is. */
void trtl_layer_touch(trtl_layer *l);
/* Layer order in which every layer comes after the producers of its inputs.  *order holds
 * n_layers entries (caller frees).  Fails on cycles or unset inputs. */
trtl_status trtl_network_topo_order(const trtl_network *net, int32_t **order);
/* Full dims of a tensor as declared/inferred (with batch placeholder for implicit networks). */
trtl_dims trtl_tensor_full_dims(const trtl_tensor *t);
/* trtl_network_add_plugin, also recording the name the plugin was created under (NULL: none) so
 * that the layer's messages name it beside the default layer name. */
trtl_status trtl_network_add_named_plugin(trtl_network *net, trtl_tensor *const *inputs, int32_t nb_inputs,
                                          trtl_plugin *plugin, const char *plugin_name, trtl_layer **out);
/* Shape-tensor roles (TensorRT's ITensor.is_shape_tensor / is_execution_tensor), from the current
 * graph: *shape set when a shape position reads t's values (directly or through ops evaluated on the
 * host), *exec when a layer computing an execution tensor or a network output reads its data. */
trtl_status trtl_network_tensor_roles(trtl_network *net, const trtl_tensor *t, int *shape, int *exec);
/* Tensor lookup by name (NULL when absent). */
trtl_tensor *trtl_network_find_tensor(const trtl_network *net, const char *name);

/* Control flow (builder/control_flow.c): a copy of `src` (params, names, precision) in `dst`, reading
 * `inputs` (src->n_in entries, NULL where src has none); plugin layers are refused. */
trtl_status trtl_network_copy_layer(trtl_network *dst, const trtl_layer *src, trtl_tensor *const *inputs,
                                    trtl_layer **out);

#endif
