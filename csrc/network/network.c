/* network.c -- the network definition: tensors, layers, names, shape inference over the graph. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "network/network.h"
#include "network/half_compute.h"
#include "network/shape_values.h"
#include "network/qdq.h"
#include "core/status.h"
#include "core/dims.h"

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}

/* Grows a pointer array to hold one more entry. */
static int grow(void ***arr, int32_t n, int32_t *cap)
{
    if (n < *cap)
        return 1;
    int32_t nc = *cap ? *cap * 2 : 16;
    void **na = realloc(*arr, (size_t)nc * sizeof(void *));
    if (!na)
        return 0;
    *arr = na;
    *cap = nc;
    return 1;
}

trtl_status trtl_network_create(int implicit_batch, trtl_network **out)
{
    trtl_clear_error();
    TRTL_CHECK_ARG(out);
    trtl_network *n = calloc(1, sizeof *n);
    if (!n)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "network: out of memory");
    n->implicit_batch = implicit_batch != 0;
    n->name = dup_str("Unnamed Network 0");
    *out = n;
    return TRTL_OK;
}

static void free_layer(trtl_layer *l)
{
    if (!l)
        return;
    if (l->op == TRTL_OP_PLUGIN_V2 && l->p.plugin.plugin)
        l->p.plugin.plugin->vt->destroy(l->p.plugin.plugin);
    free(l->name);
    free(l->in);
    free(l->out);
    free(l->out_type_set);
    free(l->bad_msg);
    free(l);
}

static void free_tensor(trtl_tensor *t)
{
    if (!t)
        return;
    trtl_namemap_del(&t->net->names, t->name, t);
    free(t->name);
    free(t->sv);
    free(t);
}

void trtl_network_destroy(trtl_network *net)
{
    if (!net)
        return;
    for (int32_t i = 0; i < net->n_layers; i++)
        free_layer(net->layers[i]);
    for (int32_t i = 0; i < net->n_tensors; i++)
        free_tensor(net->tensors[i]);
    free(net->layers);
    free(net->tensors);
    free(net->inputs);
    free(net->outputs);
    free(net->name);
    free(net->weights_names);
    trtl_namemap_free(&net->names);
    free(net);
}

int trtl_network_implicit_batch(const trtl_network *net)
{
    TRTL_NULL_GIVES(net, 0);
    return net->implicit_batch;
}

trtl_status trtl_network_set_name(trtl_network *net, const char *name)
{
    TRTL_CHECK_ARG(net);
    char *s = dup_str(name ? name : "");
    if (!s)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "network: out of memory");
    free(net->name);
    net->name = s;
    return TRTL_OK;
}

const char *trtl_network_name(const trtl_network *net)
{
    TRTL_NULL_GIVES(net, NULL);
    return net->name;
}

void trtl_network_touch(trtl_network *net) { net->shapes_valid = 0; }

static int is_leaf(const trtl_layer *l)
{
    for (int32_t i = 0; i < l->n_out; i++)
        if (l->out[i]->n_consumers)
            return 0;
    return 1;
}

void trtl_layer_touch(trtl_layer *l)
{
    trtl_network *net = l->net;
    if (!net->shapes_valid || !is_leaf(l)) {
        trtl_network_touch(net);
        return;
    }
    if (!l->stale) {
        l->stale = 1;
        net->n_stale++;
    }
}

trtl_tensor *trtl_network_find_tensor(const trtl_network *net, const char *name)
{
    return trtl_namemap_get(&net->names, name);
}

static trtl_tensor *new_tensor(trtl_network *net, const char *name)
{
    if (!grow((void ***)&net->tensors, net->n_tensors, &net->cap_tensors))
        return NULL;
    trtl_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->name = dup_str(name);
    if (!t->name) {
        free(t);
        return NULL;
    }
    t->net = net;
    t->id = net->n_tensors;
    t->dtype = TRTL_FLOAT;
    if (!trtl_namemap_get(&net->names, t->name) && !trtl_namemap_put(&net->names, t->name, t)) {
        free(t->name);
        free(t);
        return NULL;
    }
    net->tensors[net->n_tensors++] = t;
    return t;
}

static trtl_status check_input_dims(const trtl_network *net, const char *name, const trtl_dims *dims)
{
    int32_t max = net->implicit_batch ? TRTL_MAX_DIMS - 1 : TRTL_MAX_DIMS;
    if (dims->nb_dims < 0 || dims->nb_dims > max)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "input '%s': %d dims (at most %d allowed)", name,
                          (int)dims->nb_dims, (int)max);
    for (int32_t i = 0; i < dims->nb_dims; i++) {
        if (dims->d[i] < -1)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "input '%s': dimension %d is %lld (use -1 for dynamic)",
                              name, (int)i, (long long)dims->d[i]);
        if (dims->d[i] == -1 && net->implicit_batch)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                              "input '%s': dynamic dimensions (-1) need an explicit-batch network "
                              "(create_network(1 << int(NetworkDefinitionCreationFlag.EXPLICIT_BATCH)))",
                              name);
    }
    return TRTL_OK;
}

trtl_status trtl_network_add_input(trtl_network *net, const char *name, trtl_dtype type, const trtl_dims *dims,
                                   trtl_tensor **out)
{
    TRTL_CHECK_ARG(net);
    trtl_clear_error();
    if (!name || !*name)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_input: the input needs a non-empty name");
    if (!dims)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "input '%s': no shape given", name);
    if (!trtl_dtype_valid(type))
        return trtl_error(TRTL_ERR_DTYPE, "input '%s': unknown data type %d", name, (int)type);
    if (trtl_network_find_tensor(net, name))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "input '%s': a tensor with this name already exists", name);
    TRTL_TRY(check_input_dims(net, name, dims));
    if (trtl_volume_too_large(dims))
        return trtl_error(TRTL_ERR_SHAPE, "input '%s': more than 2^40 elements", name);
    if (!grow((void ***)&net->inputs, net->n_inputs, &net->cap_inputs))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    trtl_tensor *t = new_tensor(net, name);
    if (!t)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    t->is_input = 1;
    t->dtype = type;
    t->dims = net->implicit_batch ? trtl_dims_prepend(dims, 1) : *dims;
    net->inputs[net->n_inputs++] = t;
    trtl_network_touch(net);
    if (out)
        *out = t;
    return TRTL_OK;
}

trtl_status trtl_network_mark_output(trtl_network *net, trtl_tensor *t)
{
    TRTL_CHECK_ARG(net);
    trtl_clear_error();
    if (!t)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "mark_output: no tensor given");
    if (t->net != net)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "mark_output: tensor '%s' belongs to another network", t->name);
    if (t->is_output)
        return TRTL_OK;
    /* As in TensorRT: an engine binding is either an input or an output.  (trtlite used to
     * rename the input to make room for the output, which broke every caller binding it.) */
    if (t->is_input)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "mark_output: tensor '%s' is a network input and cannot also be an output; mark the "
                          "output of an identity layer on it instead", t->name);
    if (!grow((void ***)&net->outputs, net->n_outputs, &net->cap_outputs))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    t->is_output = 1;
    net->outputs[net->n_outputs++] = t;
    return TRTL_OK;
}

trtl_status trtl_network_unmark_output(trtl_network *net, trtl_tensor *t)
{
    TRTL_CHECK_ARG(net);
    trtl_clear_error();
    if (!t || t->net != net || !t->is_output)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "unmark_output: tensor '%s' is not an output of this network",
                          t ? t->name : "(null)");
    int32_t j = 0;
    for (int32_t i = 0; i < net->n_outputs; i++)
        if (net->outputs[i] != t)
            net->outputs[j++] = net->outputs[i];
    net->n_outputs = j;
    t->is_output = 0;
    return TRTL_OK;
}

int32_t trtl_network_num_layers(const trtl_network *net)
{
    TRTL_NULL_GIVES(net, 0);
    return net->n_layers;
}
int32_t trtl_network_num_inputs(const trtl_network *net)
{
    TRTL_NULL_GIVES(net, 0);
    return net->n_inputs;
}
int32_t trtl_network_num_outputs(const trtl_network *net)
{
    TRTL_NULL_GIVES(net, 0);
    return net->n_outputs;
}

trtl_layer *trtl_network_layer(const trtl_network *net, int32_t i)
{
    TRTL_NULL_GIVES(net, NULL);
    return (i >= 0 && i < net->n_layers) ? net->layers[i] : NULL;
}

trtl_tensor *trtl_network_input(const trtl_network *net, int32_t i)
{
    TRTL_NULL_GIVES(net, NULL);
    return (i >= 0 && i < net->n_inputs) ? net->inputs[i] : NULL;
}

trtl_tensor *trtl_network_output(const trtl_network *net, int32_t i)
{
    TRTL_NULL_GIVES(net, NULL);
    return (i >= 0 && i < net->n_outputs) ? net->outputs[i] : NULL;
}

trtl_dims trtl_tensor_full_dims(const trtl_tensor *t) { return t->dims; }

/* ---- shape inference ------------------------------------------------------------------------ */

trtl_status trtl_network_topo_order(const trtl_network *net, int32_t **order_out)
{
    int32_t n = net->n_layers;
    int32_t *order = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int32_t *pending = calloc((size_t)(n ? n : 1), sizeof(int32_t));
    char *done = calloc((size_t)(n ? n : 1), 1);
    if (!order || !pending || !done) {
        free(order);
        free(pending);
        free(done);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* Simple repeated sweep in insertion order: stable (layers keep their order when already
     * topological, which is the common case), O(n^2) worst case only after set_input rewiring. */
    int32_t k = 0;
    int progress = 1;
    while (k < n && progress) {
        progress = 0;
        for (int32_t i = 0; i < n; i++) {
            if (done[i])
                continue;
            const trtl_layer *l = net->layers[i];
            int ready = 1;
            for (int32_t j = 0; j < l->n_in && ready; j++) {
                const trtl_tensor *t = l->in[j];
                if (l->op == TRTL_OP_RECURRENCE && j == 1)
                    continue; /* a loop's carried value: computed from this layer's output */
                if (t && t->producer && !done[t->producer->id])
                    ready = 0;
            }
            if (ready) {
                done[i] = 1;
                order[k++] = i;
                progress = 1;
            }
        }
    }
    free(pending);
    if (k < n) {
        const trtl_layer *stuck = NULL;
        for (int32_t i = 0; i < n && !stuck; i++)
            if (!done[i])
                stuck = net->layers[i];
        free(done);
        free(order);
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "the network has a cycle through layer '%s' (check set_input calls)",
                          stuck ? stuck->name : "?");
    }
    free(done);
    *order_out = order;
    return TRTL_OK;
}

static trtl_status infer_layer(trtl_network *net, trtl_layer *l)
{
    const trtl_op_info *info = &trtl_op_table[l->op];
    trtl_dims in[64], out[16];
    trtl_dtype in_t[64], out_t[16];
    if (l->n_in > 64 || l->n_out > 16)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': too many inputs/outputs", l->name);
    for (int32_t i = 0; i < l->n_in; i++) {
        if (!l->in[i] && ((l->op == TRTL_OP_SLICE && i >= 1) || l->op == TRTL_OP_FILL)) { /* not given: the attribute */
            in[i].nb_dims = -1;
            in_t[i] = TRTL_INT32;
            continue;
        }
        if (!l->in[i])
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': input %d is not set", l->name, (int)i);
        in[i] = l->in[i]->dims;
        in_t[i] = l->in[i]->dtype;
    }
    trtl_params p = l->p;
    trtl_lower_ctx lc = {l->name, net->implicit_batch, l->n_in, in};
    TRTL_TRY(info->lower(&p, &lc));
    trtl_dtype f16 = trtl_f16_promote_inputs(l->op, l->n_in, in_t); /* network/half_compute.h */
    memset(out, 0, sizeof out);
    for (int32_t i = 0; i < l->n_out; i++)
        out_t[i] = TRTL_FLOAT;
    const int64_t *in_v[64];
    for (int32_t i = 0; i < l->n_in; i++)
        in_v[i] = l->in[i] && l->in[i]->has_sv ? l->in[i]->sv : NULL;
    trtl_infer_ctx ic = {l->name, &p, l->n_in, in, in_t, in_v, l->n_out, out, out_t, 0};
    TRTL_TRY(info->infer(&ic));
    for (int32_t i = 0; f16 != TRTL_DTYPE_COUNT && i < l->n_out; i++)
        if (out_t[i] == TRTL_FLOAT)
            out_t[i] = f16;
    /* Shape values, where this layer's output carries them (a shape position may read them). */
    trtl_tensor *o0 = l->n_out > 0 ? l->out[0] : NULL; /* IAssertionLayer has no outputs */
    if (o0)
        o0->has_sv = 0;
    if (l->n_out == 1 && trtl_sv_carriable(&out[0], l->out_type_set[0] >= 0 ? (trtl_dtype)l->out_type_set[0] : out_t[0])) {
        if (!o0->sv && !(o0->sv = malloc(sizeof(int64_t) * TRTL_SV_MAX)))
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        int done = 0;
        TRTL_TRY(trtl_sv_eval(l->op, &p, l->name, l->n_in, in, in_t, in_v, &out[0],
                              l->out_type_set[0] >= 0 ? (trtl_dtype)l->out_type_set[0] : out_t[0], o0->sv, &done));
        o0->has_sv = done;
    }
    if (l->op == TRTL_OP_QUANTIZE || l->op == TRTL_OP_DEQUANTIZE)
        TRTL_TRY(trtl_qdq_check_layer(l));
    for (int32_t i = 0; i < l->n_out; i++) {
        if (net->implicit_batch && (out[i].nb_dims < 1))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %d lost the batch dimension", l->name, (int)i);
        if (trtl_volume_too_large(&out[i]))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': output %d would have more than 2^40 elements", l->name, (int)i);
    }
    for (int32_t i = 0; i < l->n_out; i++) {
        l->out[i]->dims = out[i];
        l->out[i]->dtype = l->out_type_set[i] >= 0 ? (trtl_dtype)l->out_type_set[i] : out_t[i];
    }
    return TRTL_OK;
}

/* Infers one layer whose inputs are current, recording a failure on it (or the upstream failure
 * it inherits).  Returns the layer's own failure status, OK otherwise. */
static trtl_status infer_recorded(trtl_network *net, trtl_layer *l)
{
    free(l->bad_msg);
    l->bad_msg = NULL;
    l->bad_root = NULL;
    for (int32_t j = 0; j < l->n_in && !l->bad_root; j++)
        if (l->in[j] && l->in[j]->producer && l->in[j]->producer->bad_root && !(l->op == TRTL_OP_RECURRENCE && j == 1))
            l->bad_root = l->in[j]->producer->bad_root;
    if (l->bad_root)
        return TRTL_OK;
    trtl_status ls = infer_layer(net, l);
    if (ls != TRTL_OK) {
        l->bad_root = l;
        l->bad_status = ls;
        l->bad_msg = strdup(trtl_last_error());
    }
    return ls;
}

trtl_status trtl_network_infer(trtl_network *net)
{
    if (net->shapes_valid && net->n_stale && net->shape_status == TRTL_OK) {
        /* Only leaves changed (layers added or edited at the end of the graph): infer those. */
        for (int32_t i = 0; i < net->n_layers && net->n_stale; i++) {
            trtl_layer *l = net->layers[i];
            if (!l->stale)
                continue;
            l->stale = 0;
            net->n_stale--;
            trtl_status ls = infer_recorded(net, l);
            if (ls == TRTL_ERR_OUT_OF_MEMORY) { /* not the layer's fault: infer afresh next time */
                net->shapes_valid = 0;
                return ls;
            }
            if (ls != TRTL_OK && net->shape_status == TRTL_OK) {
                net->shape_status = ls;
                net->shape_error_layer = l->id;
                snprintf(net->shape_error, sizeof net->shape_error, "%s", l->bad_msg ? l->bad_msg : "");
            }
        }
    }
    if (net->shapes_valid && !net->n_stale) {
        if (net->shape_status != TRTL_OK)
            return trtl_error(net->shape_status, "%s", net->shape_error);
        return TRTL_OK;
    }
    int32_t *order = NULL;
    trtl_status st = trtl_network_topo_order(net, &order);
    net->shape_error_layer = -1;
    net->n_stale = 0;
    for (int32_t i = 0; i < net->n_layers; i++)
        net->layers[i]->stale = 0;
    /* Infer everything that can be: a failing layer only poisons what depends on it. */
    trtl_status first = TRTL_OK;
    char first_msg[TRTL_MSG_MAX] = "";
    int oom = st == TRTL_ERR_OUT_OF_MEMORY;
    for (int32_t k = 0; st == TRTL_OK && k < net->n_layers; k++) {
        trtl_layer *l = net->layers[order[k]];
        trtl_status ls = infer_recorded(net, l);
        if (ls == TRTL_OK)
            continue;
        oom |= ls == TRTL_ERR_OUT_OF_MEMORY;
        if (first == TRTL_OK) {
            first = ls;
            net->shape_error_layer = order[k];
            snprintf(first_msg, sizeof first_msg, "%s", trtl_last_error());
        }
    }
    if (st == TRTL_OK && first != TRTL_OK)
        st = trtl_error(first, "%s", first_msg);
    free(order);
    /* An allocation failure says nothing about the network: leave the cache invalid so that the
     * next query or build infers again instead of repeating "out of memory" forever. */
    if (oom) {
        net->shapes_valid = 0;
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "network: out of memory during shape inference");
    }
    net->shapes_valid = 1;
    net->shape_status = st;
    snprintf(net->shape_error, sizeof net->shape_error, "%s", st == TRTL_OK ? "" : trtl_last_error());
    return st;
}

/* ---- layers --------------------------------------------------------------------------------- */

/* Defaults TensorRT derives from the input when the layer is created. */
static void input_dependent_defaults(trtl_network *net, trtl_layer *l)
{
    if (l->n_in < 1 || !l->in[0])
        return;
    int32_t user_rank = l->in[0]->dims.nb_dims - (net->implicit_batch ? 1 : 0);
    int32_t def = user_rank - 3 > 0 ? user_rank - 3 : 0; /* "number of non-batch dims minus three" */
    switch (l->op) {
    case TRTL_OP_SOFTMAX: l->p.softmax.axes = 1u << def; break;
    case TRTL_OP_CONCATENATION: l->p.concat.axis = def; break;
    case TRTL_OP_SCALE: l->p.scale.channel_axis = net->implicit_batch ? 0 : 1; break;
    default: break;
    }
}

static trtl_status make_layer(trtl_network *net, trtl_op op, trtl_tensor *const *inputs, int32_t n_in, int32_t n_out,
                              trtl_plugin *plugin, const char *plugin_name, trtl_layer **out)
{
    const trtl_op_info *info = &trtl_op_table[op];
    char name[128], tname[160];
    for (int32_t i = 0; i < n_in; i++) {
        if (!inputs || !inputs[i])
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add %s: input %d is None", info->display, (int)i);
        if (inputs[i]->net != net)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add %s: input '%s' belongs to another network",
                              info->display, inputs[i]->name);
    }
    if (!grow((void ***)&net->layers, net->n_layers, &net->cap_layers))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    trtl_layer *l = calloc(1, sizeof *l);
    if (!l)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    l->net = net;
    l->id = net->n_layers;
    l->op = op;
    l->number = net->next_layer_number;
    snprintf(name, sizeof name, "(Unnamed Layer* %d) [%s]", (int)l->number, info->display);
    l->name = dup_str(name);
    l->n_in = n_in;
    l->in = calloc((size_t)(n_in ? n_in : 1), sizeof *l->in);
    l->n_out = n_out;
    l->out = calloc((size_t)(n_out ? n_out : 1), sizeof *l->out);
    l->out_type_set = malloc(sizeof(int32_t) * (size_t)(n_out ? n_out : 1));
    l->type_hint = -1;
    if (!l->name || !l->in || !l->out || !l->out_type_set) {
        free_layer(l);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int32_t i = 0; i < n_in; i++)
        l->in[i] = inputs[i];
    info->init(&l->p);
    if (op == TRTL_OP_PLUGIN_V2) {
        l->p.plugin.plugin = plugin;
        snprintf(l->p.plugin.name, sizeof l->p.plugin.name, "%s", plugin_name ? plugin_name : "");
    }
    input_dependent_defaults(net, l);
    int32_t first_tensor = net->n_tensors;
    for (int32_t i = 0; i < n_out; i++) {
        l->out_type_set[i] = -1;
        if (n_out == 1)
            snprintf(tname, sizeof tname, "%s_output", name);
        else
            snprintf(tname, sizeof tname, "%s_output_%d", name, (int)i);
        trtl_tensor *t = new_tensor(net, tname);
        if (!t) {
            while (net->n_tensors > first_tensor)
                free_tensor(net->tensors[--net->n_tensors]);
            if (op == TRTL_OP_PLUGIN_V2)
                l->p.plugin.plugin = NULL; /* the caller still owns it on failure */
            free_layer(l);
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        }
        t->producer = l;
        t->producer_out = i;
        l->out[i] = t;
    }
    net->layers[net->n_layers++] = l;
    net->next_layer_number++;
    for (int32_t i = 0; i < n_in; i++)
        inputs[i]->n_consumers++;
    trtl_layer_touch(l); /* a new layer is a leaf: only it needs inferring */
    *out = l;
    return TRTL_OK;
}

/* Layers whose validity usually depends on attributes set after add_* (groups, padding,
 * stride, the concatenation axis, slice modes, group counts): a shape error at creation may be
 * fixed by the next line of the script, so it is reported later (shape queries, build).  Dtype
 * errors do not depend on attributes and are reported at once. */
static int validity_needs_attributes(trtl_op op)
{
    return op == TRTL_OP_CONVOLUTION || op == TRTL_OP_DECONVOLUTION || op == TRTL_OP_POOLING ||
           op == TRTL_OP_CONCATENATION || op == TRTL_OP_SLICE || op == TRTL_OP_NORMALIZATION ||
           op == TRTL_OP_SOFTMAX || op == TRTL_OP_SCALE || op == TRTL_OP_MATRIX_MULTIPLY ||
           op == TRTL_OP_QUANTIZE || op == TRTL_OP_DEQUANTIZE || /* axis, zero point: set after */
           op == TRTL_OP_SCATTER || op == TRTL_OP_REVERSE_SEQUENCE;  /* axis, batch/sequence axes */
}

trtl_status trtl_layer_validate(trtl_layer *l)
{
    TRTL_CHECK_ARG(l);
    trtl_network *net = l->net;
    trtl_status st;
    trtl_clear_error();
    /* Incremental when only leaves changed (the common case of adding layers in order). */
    st = trtl_network_infer(net);
    if (l->bad_root == l) /* this layer's own failure (others are reported by build()) */
        st = trtl_error(l->bad_status, "%s", l->bad_msg ? l->bad_msg : "shape inference failed");
    else if (net->shape_error_layer >= 0 || st == TRTL_OK)
        st = TRTL_OK;
    if (st != TRTL_OK && st != TRTL_ERR_DTYPE && validity_needs_attributes(l->op)) {
        trtl_clear_error(); /* recorded on the layer; shape queries and build() report it */
        return TRTL_OK;
    }
    return st;
}

trtl_status trtl_network_remove_layer(trtl_network *net, trtl_layer *l)
{
    TRTL_CHECK_ARG(net);
    trtl_clear_error();
    if (!l || l->net != net)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "remove_layer: the layer does not belong to this network");
    for (int32_t k = 0; k < l->n_out; k++) {
        trtl_tensor *t = l->out[k];
        if (t->is_output)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': output '%s' is marked as a network output",
                              l->name, t->name);
        for (int32_t i = 0; i < net->n_layers; i++)
            for (int32_t j = 0; j < net->layers[i]->n_in; j++)
                if (net->layers[i]->in[j] == t)
                    return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': its output '%s' is used by layer '%s'",
                                      l->name, t->name, net->layers[i]->name);
    }
    for (int32_t i = 0; i < l->n_in; i++)
        if (l->in[i])
            l->in[i]->n_consumers--;
    if (l->stale)
        net->n_stale--;
    if (l->number == net->next_layer_number - 1) /* a refused add_* gives its number back */
        net->next_layer_number--;
    int32_t j = 0;
    for (int32_t i = 0; i < net->n_tensors; i++) {
        trtl_tensor *t = net->tensors[i];
        if (t->producer == l) {
            free_tensor(t);
            continue;
        }
        t->id = j;
        net->tensors[j++] = t;
    }
    net->n_tensors = j;
    j = 0;
    for (int32_t i = 0; i < net->n_layers; i++) {
        if (net->layers[i] == l)
            continue;
        net->layers[i]->id = j;
        net->layers[j++] = net->layers[i];
    }
    net->n_layers = j;
    free_layer(l);
    trtl_network_touch(net);
    return TRTL_OK;
}

trtl_status trtl_network_add_layer(trtl_network *net, trtl_op op, trtl_tensor *const *inputs, int32_t nb_inputs,
                                   trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    if ((int)op < 0 || op >= TRTL_OP_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_layer: unknown layer kind %d", (int)op);
    if (op == TRTL_OP_PLUGIN_V2)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_layer: use trtl_network_add_plugin for plugin layers");
    if (op == TRTL_OP_LINEAR)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_layer: linear is an internal layer kind of the builder");
    if (op == TRTL_OP_NCHWC_CONV)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_layer: nchwc_conv is an internal layer kind of the builder");
    if (op == TRTL_OP_REDUCE_BINARY)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "add_layer: reduce binary is an internal layer kind of the builder");
    if (op == TRTL_OP_PREACT_CONV)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_layer: preact_conv is an internal layer kind of the builder");
    if (op == TRTL_OP_PW_CHAIN)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_layer: pw_chain is an internal layer kind of the builder");
    const trtl_op_info *info = &trtl_op_table[op];
    if (nb_inputs < info->min_inputs || (info->max_inputs >= 0 && nb_inputs > info->max_inputs))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add %s: %d inputs given, it takes %d..%d", info->display,
                          (int)nb_inputs, (int)info->min_inputs, (int)info->max_inputs);
    return make_layer(net, op, inputs, nb_inputs, info->num_outputs, NULL, NULL, out);
}

trtl_status trtl_network_add_plugin(trtl_network *net, trtl_tensor *const *inputs, int32_t nb_inputs,
                                    trtl_plugin *plugin, trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(out);
    return trtl_network_add_named_plugin(net, inputs, nb_inputs, plugin, NULL, out);
}

trtl_status trtl_network_add_named_plugin(trtl_network *net, trtl_tensor *const *inputs, int32_t nb_inputs,
                                          trtl_plugin *plugin, const char *plugin_name, trtl_layer **out)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    if (!plugin || !plugin->vt)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_plugin_v2: no plugin given");
    int32_t n_out = plugin->vt->num_outputs(plugin);
    if (n_out < 1 || n_out > 16)
        return trtl_error(TRTL_ERR_PLUGIN, "add_plugin_v2: plugin reports %d outputs (1..16 supported)", (int)n_out);
    if (nb_inputs < 0 || nb_inputs > 64)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "add_plugin_v2: %d inputs (0..64 supported)", (int)nb_inputs);
    trtl_layer *l;
    TRTL_TRY(make_layer(net, TRTL_OP_PLUGIN_V2, inputs, nb_inputs, n_out, plugin, plugin_name, &l));
    trtl_status st = trtl_layer_validate(l);
    if (st != TRTL_OK) {
        char msg[TRTL_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", trtl_last_error());
        l->p.plugin.plugin = NULL; /* ownership stays with the caller on failure */
        trtl_network_remove_layer(net, l);
        return trtl_error(st, "%s", msg);
    }
    *out = l;
    return TRTL_OK;
}

trtl_op trtl_layer_op(const trtl_layer *l)
{
    TRTL_NULL_GIVES(l, TRTL_OP_COUNT);
    return l->op;
}
const char *trtl_layer_name(const trtl_layer *l)
{
    TRTL_NULL_GIVES(l, NULL);
    return l->name;
}

trtl_status trtl_layer_set_name(trtl_layer *l, const char *name)
{
    TRTL_CHECK_ARG(l);
    trtl_clear_error();
    if (!name)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': name must be a string", l->name);
    char *s = dup_str(name);
    if (!s)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    free(l->name);
    l->name = s;
    if (l->bad_root == l)
        trtl_layer_touch(l); /* its recorded error names it: infer again under the new name */
    return TRTL_OK;
}

int32_t trtl_layer_num_inputs(const trtl_layer *l)
{
    TRTL_NULL_GIVES(l, 0);
    return l->n_in;
}
int32_t trtl_layer_num_outputs(const trtl_layer *l)
{
    TRTL_NULL_GIVES(l, 0);
    return l->n_out;
}
trtl_tensor *trtl_layer_input(const trtl_layer *l, int32_t i)
{
    TRTL_NULL_GIVES(l, NULL);
    return (i >= 0 && i < l->n_in) ? l->in[i] : NULL;
}
trtl_tensor *trtl_layer_output(const trtl_layer *l, int32_t i)
{
    TRTL_NULL_GIVES(l, NULL);
    return (i >= 0 && i < l->n_out) ? l->out[i] : NULL;
}

/* ISliceLayer input 4 is the FILL value: trtlite takes a one-element constant's value into the attribute. */
static trtl_status set_slice_fill(trtl_layer *l, trtl_tensor *t)
{
    const trtl_layer *src = t->producer;
    const trtl_weights *w = src && src->op == TRTL_OP_CONSTANT ? &src->p.constant.weights : NULL;
    if (!w || w->count != 1 || (w->type != TRTL_FLOAT && w->type != TRTL_INT32))
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': the slice fill value (input 4) must be a one-element "
                          "FLOAT or INT32 constant (add_constant), got tensor '%s'", l->name, t->name);
    if (w->type == TRTL_INT32) { /* kept as a float attribute: only integers a float holds exactly */
        int32_t v = *(const int32_t *)w->values;
        if ((double)(float)v != (double)v)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': the INT32 slice fill value %ld is not exactly "
                              "representable (|value| above 2^24 must be a multiple of a power of two)", l->name,
                              (long)v);
    }
    l->p.slice.fill_value = w->type == TRTL_FLOAT ? *(const float *)w->values : (float)*(const int32_t *)w->values;
    trtl_layer_touch(l);
    return TRTL_OK;
}

trtl_status trtl_layer_set_input(trtl_layer *l, int32_t i, trtl_tensor *t)
{
    TRTL_CHECK_ARG(l);
    trtl_clear_error();
    const trtl_op_info *info = &trtl_op_table[l->op];
    if (l->op == TRTL_OP_SLICE && i == 4 && t && t->net == l->net && t->producer &&
        t->producer->op == TRTL_OP_CONSTANT)
        return set_slice_fill(l, t); /* else an execution tensor read by the kernel (network/ops/slice.c) */
    if (!t || t->net != l->net)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': set_input needs a tensor of the same network", l->name);
    if (i < 0 || (i >= l->n_in && (info->max_inputs >= 0 && i >= info->max_inputs)) ||
        (i > l->n_in && l->op != TRTL_OP_SLICE && l->op != TRTL_OP_FILL))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': input index %d out of range (layer has %d)",
                          l->name, (int)i, (int)l->n_in);
    for (int32_t k = 0; k < l->n_out; k++)
        if (l->out[k] == t)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': cannot use its own output as input", l->name);
    while ((l->op == TRTL_OP_SLICE || l->op == TRTL_OP_FILL) && i > l->n_in) { /* inputs may be given alone */
        trtl_tensor **ni = realloc(l->in, sizeof *ni * (size_t)(l->n_in + 1));
        if (!ni)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        l->in = ni;
        l->in[l->n_in++] = NULL;
    }
    if (i == l->n_in) {
        trtl_tensor **ni = realloc(l->in, sizeof *ni * (size_t)(l->n_in + 1));
        if (!ni)
            return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
        l->in = ni;
        l->in[l->n_in++] = NULL;
    }
    if (l->in[i])
        l->in[i]->n_consumers--;
    l->in[i] = t;
    t->n_consumers++;
    trtl_network_touch(l->net);
    return TRTL_OK;
}

trtl_status trtl_layer_set_precision(trtl_layer *l, trtl_dtype type)
{
    TRTL_CHECK_ARG(l);
    if (!trtl_dtype_valid(type) && (int)type != TRTL_BF16)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': unknown data type %d", l->name, (int)type);
    l->has_precision = 1;
    l->precision = type;
    return TRTL_OK;
}

trtl_status trtl_layer_set_output_type(trtl_layer *l, int32_t i, trtl_dtype type)
{
    TRTL_CHECK_ARG(l);
    if (i < 0 || i >= l->n_out)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': output index %d out of range", l->name, (int)i);
    if (!trtl_dtype_valid(type) && !((int)type == TRTL_BF16 && l->op != TRTL_OP_IDENTITY && l->op != TRTL_OP_CAST))
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': unknown data type %d", l->name, (int)type);
    /* Only identity/cast layers change representation on CPU; elsewhere the request is a
     * precision hint: the builder honours it under OBEY/PREFER_PRECISION_CONSTRAINTS (when
     * layer.precision is not set) and the outputs stay fp32 tensors. */
    if (l->op == TRTL_OP_IDENTITY || l->op == TRTL_OP_CAST)
        l->out_type_set[i] = type;
    else
        l->type_hint = type;
    trtl_layer_touch(l);
    return TRTL_OK;
}

const trtl_plugin *trtl_layer_plugin(const trtl_layer *l)
{
    TRTL_NULL_GIVES(l, NULL);
    return l->op == TRTL_OP_PLUGIN_V2 ? l->p.plugin.plugin : NULL;
}

/* ---- tensors -------------------------------------------------------------------------------- */

const char *trtl_tensor_name(const trtl_tensor *t)
{
    TRTL_NULL_GIVES(t, NULL);
    return t->name;
}

trtl_status trtl_tensor_set_name(trtl_tensor *t, const char *name)
{
    TRTL_CHECK_ARG(t);
    trtl_clear_error();
    if (!name || !*name)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "tensor '%s': name must be non-empty", t->name);
    trtl_tensor *other = trtl_network_find_tensor(t->net, name);
    if (other && other != t)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "tensor '%s': the name '%s' is already used", t->name, name);
    char *s = dup_str(name);
    if (!s)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    /* The map's keys are the tensors' own name strings: swap the entry before freeing. */
    trtl_namemap_del(&t->net->names, t->name, t);
    if (!trtl_namemap_put(&t->net->names, s, t)) {
        trtl_namemap_put(&t->net->names, t->name, t);
        free(s);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    free(t->name);
    t->name = s;
    return TRTL_OK;
}

/* Shape inference for what `t` depends on: its own failure, a failure upstream of it, or a cycle. */
static trtl_status infer_for(const trtl_tensor *t)
{
    trtl_status st = trtl_network_infer(t->net);
    const trtl_layer *root = t->producer ? t->producer->bad_root : NULL;
    if (root)
        return trtl_error(root->bad_status, "%s", root->bad_msg ? root->bad_msg : "shape inference failed");
    if (st != TRTL_OK && t->net->shape_error_layer < 0)
        return st; /* not a layer failure: a cycle */
    trtl_clear_error();
    return TRTL_OK;
}

trtl_status trtl_tensor_dims(const trtl_tensor *t, trtl_dims *out)
{
    TRTL_CHECK_ARG(t);
    TRTL_CHECK_ARG(out);
    trtl_clear_error();
    if (!t->is_input)
        TRTL_TRY(infer_for(t));
    *out = t->net->implicit_batch ? trtl_dims_drop_front(&t->dims) : t->dims;
    return TRTL_OK;
}

trtl_dtype trtl_tensor_dtype(const trtl_tensor *t)
{
    TRTL_NULL_GIVES(t, TRTL_DTYPE_COUNT);
    if (!t->is_input)
        trtl_network_infer(t->net);
    return t->dtype;
}

trtl_status trtl_tensor_set_dtype(trtl_tensor *t, trtl_dtype type)
{
    TRTL_CHECK_ARG(t);
    trtl_clear_error();
    if (!trtl_dtype_valid(type))
        return trtl_error(TRTL_ERR_DTYPE, "tensor '%s': unknown data type %d", t->name, (int)type);
    if (!t->is_input) {
        /* TensorRT lets users request an output's type; on CPU we honour it through a cast at
         * the output when it differs (builder), so record it on the producer. */
        if (t->producer && (t->producer->op == TRTL_OP_IDENTITY || t->producer->op == TRTL_OP_CAST)) {
            t->producer->out_type_set[t->producer_out] = type;
            trtl_network_touch(t->net);
            return TRTL_OK;
        }
        trtl_network_infer(t->net);
        if (t->dtype == type)
            return TRTL_OK;
        if (t->producer && trtl_op_promotes_f16(t->producer->op) && (t->dtype == TRTL_FLOAT || trtl_dtype_is_f16(t->dtype)) &&
            (type == TRTL_FLOAT || trtl_dtype_is_f16(type))) { /* fp32 math, stored as asked (builder/half_casts.c) */
            t->producer->out_type_set[t->producer_out] = type;
            trtl_network_touch(t->net);
            return TRTL_OK;
        }
        return trtl_error(TRTL_ERR_DTYPE, "tensor '%s': only network inputs and identity/cast outputs can change "
                          "dtype (it is %s); add a cast layer", t->name, trtl_dtype_name(t->dtype));
    }
    t->dtype = type;
    trtl_network_touch(t->net);
    return TRTL_OK;
}

trtl_status trtl_tensor_set_dims(trtl_tensor *t, const trtl_dims *dims)
{
    TRTL_CHECK_ARG(t);
    TRTL_CHECK_ARG(dims);
    trtl_clear_error();
    if (!t->is_input)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "tensor '%s': only network inputs can be reshaped", t->name);
    TRTL_TRY(check_input_dims(t->net, t->name, dims));
    t->dims = t->net->implicit_batch ? trtl_dims_prepend(dims, 1) : *dims;
    trtl_network_touch(t->net);
    return TRTL_OK;
}

int trtl_tensor_is_input(const trtl_tensor *t)
{
    TRTL_NULL_GIVES(t, 0);
    return t->is_input;
}
int trtl_tensor_is_output(const trtl_tensor *t)
{
    TRTL_NULL_GIVES(t, 0);
    return t->is_output;
}

trtl_status trtl_tensor_set_dynamic_range(trtl_tensor *t, float min, float max)
{
    TRTL_CHECK_ARG(t);
    if (!(min <= max))
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "tensor '%s': dynamic range min %g > max %g", t->name,
                          (double)min, (double)max);
    t->has_dynamic_range = 1;
    t->dyn_min = min;
    t->dyn_max = max;
    return TRTL_OK;
}

int trtl_tensor_dynamic_range(const trtl_tensor *t, float *min, float *max)
{
    TRTL_NULL_GIVES(t, 0);
    TRTL_NULL_GIVES(min, 0);
    TRTL_NULL_GIVES(max, 0);
    if (t->has_dynamic_range) {
        *min = t->dyn_min;
        *max = t->dyn_max;
    }
    return t->has_dynamic_range;
}

trtl_status trtl_network_validate(trtl_network *net)
{
    TRTL_CHECK_ARG(net);
    trtl_clear_error();
    return trtl_network_infer(net);
}

trtl_dtype trtl_layer_precision(const trtl_layer *l)
{
    TRTL_NULL_GIVES(l, TRTL_DTYPE_COUNT);
    return l->has_precision ? l->precision : TRTL_FLOAT;
}

int trtl_layer_precision_is_set(const trtl_layer *l)
{
    TRTL_NULL_GIVES(l, 0);
    return l->has_precision;
}

trtl_status trtl_layer_reset_precision(trtl_layer *l)
{
    TRTL_CHECK_ARG(l);
    l->has_precision = 0;
    return TRTL_OK;
}

int trtl_layer_output_type_is_set(const trtl_layer *l, int32_t i)
{
    TRTL_NULL_GIVES(l, 0);
    return i >= 0 && i < l->n_out && (l->out_type_set[i] >= 0 || l->type_hint >= 0);
}

trtl_status trtl_layer_reset_output_type(trtl_layer *l, int32_t i)
{
    TRTL_CHECK_ARG(l);
    trtl_clear_error();
    if (i < 0 || i >= l->n_out)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': output index %d out of range (%d outputs)", l->name,
                          (int)i, (int)l->n_out);
    l->type_hint = -1;
    if (l->out_type_set[i] >= 0) {
        l->out_type_set[i] = -1;
        trtl_network_touch(l->net);
    }
    return TRTL_OK;
}

/* ---- shape-tensor roles ----------------------------------------------------------------------- */

trtl_status trtl_network_tensor_roles(trtl_network *net, const trtl_tensor *t, int *shape, int *exec)
{
    int32_t *order = NULL;
    TRTL_TRY(trtl_network_topo_order(net, &order));
    char *sh = calloc((size_t)net->n_tensors + 1, 1), *ex = calloc((size_t)net->n_tensors + 1, 1);
    if (!sh || !ex) {
        free(order);
        free(sh);
        free(ex);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int32_t i = 0; i < net->n_outputs; i++)
        ex[net->outputs[i]->id] = 1;
    for (int32_t k = net->n_layers - 1; k >= 0; k--) {
        const trtl_layer *l = net->layers[order[k]];
        int os = 0, oe = 0;
        for (int32_t j = 0; j < l->n_out; j++) {
            os |= sh[l->out[j]->id];
            oe |= ex[l->out[j]->id];
        }
        for (int32_t j = 0; j < l->n_in; j++) {
            if (!l->in[j])
                continue;
            int32_t id = l->in[j]->id;
            if (trtl_sv_shape_input(l->op, j)) {
                sh[id] = 1;
                continue;
            }
            if (l->op == TRTL_OP_SHAPE)
                continue; /* reads dims only */
            ex[id] |= (char)oe;
            if (os && trtl_sv_op_evaluable(l->op))
                sh[id] = 1;
        }
    }
    *shape = sh[t->id];
    *exec = ex[t->id];
    free(order);
    free(sh);
    free(ex);
    return TRTL_OK;
}

trtl_status trtl_tensor_roles(trtl_tensor *t, int *is_shape, int *is_execution)
{
    TRTL_CHECK_ARG(t);
    TRTL_CHECK_ARG(is_shape);
    TRTL_CHECK_ARG(is_execution);
    trtl_clear_error();
    return trtl_network_tensor_roles(t->net, t, is_shape, is_execution);
}

/* ---- control flow ------------------------------------------------------------------------------ */

trtl_status trtl_network_new_control_flow(trtl_network *net, int32_t *id)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(id);
    *id = net->next_control_flow++;
    return TRTL_OK;
}

trtl_status trtl_network_copy_layer(trtl_network *dst, const trtl_layer *src, trtl_tensor *const *inputs,
                                    trtl_layer **out)
{
    if (src->op == TRTL_OP_PLUGIN_V2)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': plugin layers inside a loop or conditional are not "
                          "supported", src->name);
    trtl_layer *l = NULL;
    TRTL_TRY(make_layer(dst, src->op, NULL, 0, src->n_out, NULL, NULL, &l));
    trtl_tensor **in = calloc((size_t)(src->n_in ? src->n_in : 1), sizeof *in);
    char *name = dup_str(src->name);
    if (!in || !name) {
        free(in);
        free(name);
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory");
    }
    free(l->in);
    l->in = in;
    l->n_in = src->n_in;
    for (int32_t i = 0; i < src->n_in; i++) {
        l->in[i] = inputs[i];
        if (inputs[i])
            inputs[i]->n_consumers++;
    }
    free(l->name);
    l->name = name;
    l->p = src->p;
    l->has_precision = src->has_precision;
    l->precision = src->precision;
    l->type_hint = src->type_hint;
    for (int32_t i = 0; i < src->n_out; i++) {
        l->out_type_set[i] = src->out_type_set[i];
        TRTL_TRY(trtl_tensor_set_name(l->out[i], src->out[i]->name));
        l->out[i]->has_dynamic_range = src->out[i]->has_dynamic_range;
        l->out[i]->dyn_min = src->out[i]->dyn_min;
        l->out[i]->dyn_max = src->out[i]->dyn_max;
    }
    trtl_network_touch(dst);
    *out = l;
    return TRTL_OK;
}

trtl_status trtl_network_add_weights_name(trtl_network *net, const char *layer, int32_t role, const char *name)
{
    TRTL_CHECK_ARG(net);
    TRTL_CHECK_ARG(layer);
    TRTL_CHECK_ARG(name);
    trtl_clear_error();
    if (!name[0] || strpbrk(name, "\t\n") || strpbrk(layer, "\t\n") || role < 0 || role > 99)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "set_weights_name: layer '%s': weights name '%s' (role %d) must be "
                          "non-empty, without tab or newline", layer, name, (int)role);
    size_t have = net->weights_names ? strlen(net->weights_names) : 0;
    size_t add = strlen(layer) + strlen(name) + 8;
    char *s = realloc(net->weights_names, have + add);
    if (!s)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "network: out of memory");
    snprintf(s + have, add, "%s\t%d\t%s\n", layer, (int)role, name);
    net->weights_names = s;
    return TRTL_OK;
}
