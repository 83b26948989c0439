/* quantize_implicit.c -- implicit INT8 (TensorRT 7/8 scripts: BuilderFlag.INT8 with a calibrator
 * or tensor.dynamic_range) becomes explicit quantization before the passes run, so the same
 * fuse_qdq pass and int8 kernels serve both:
 *
 *   for each convolution, fully connected layer and matrix multiply by a constant whose input x
 *   has a dynamic range [-r, r] (symmetric, as TensorRT: r = max(|min|, |max|)):
 *       x  ->  DQ(Q(x; r / 127, INT8))          (one Q/DQ pair per tensor, shared by its readers)
 *       W  ->  per output channel s_k = max|W_k| / 127,  W_k = round(W_k / s_k) * s_k
 *   the output stays float (no output ranges are used: the next int8 layer quantizes its input).
 *
 * A layer whose input has no range stays fp32 with a warning naming the tensor, unless it must
 * run int8 (layer.precision = INT8 under OBEY_PRECISION_CONSTRAINTS or STRICT_TYPES): then the
 * build fails naming the tensor and the layer.  Inputs that are already dequantized (explicit
 * Q/DQ) are left alone.  Runs only with the INT8 flag.
 *
 * Plugin layers (plugin ABI version 2, `supports_format` / `configure`): each FLOAT input with a
 * dynamic range that the plugin accepts as INT8 is proposed the scale r / 127; the plugin may raise
 * it (Adder2d shares one scale between its input and weights) and the input becomes Q(x; scale)
 * codes, INT8 into the plugin (no DQ: the plugin reads the codes).  Version-1 plugins, and inputs
 * without a range, stay FLOAT. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/quantize_implicit.h"
#include "core/alloc.h"
#include "core/dims.h"
#include "core/status.h"
#include "engine/int8_grid.h"
#include "network/network.h"

static const trtl_layer *find_layer(const trtl_network *net, const char *name)
{
    for (int32_t i = 0; i < net->n_layers; i++)
        if (strcmp(net->layers[i]->name, name) == 0)
            return net->layers[i];
    return NULL;
}

/* Is node n a candidate, and where are its float weights: *w (K rows of n, or columns when
 * *col = 1, i.e. a matrix multiply's B [Cin, K])? */
static int candidate(const trtl_bgraph *g, const trtl_node *nd, float **w, int64_t *K, int64_t *n, int *col)
{
    *col = 0;
    if (nd->n_in < 1 || g->t[nd->in[0]].dtype != TRTL_FLOAT || nd->n_out != 1)
        return 0;
    if (nd->op == TRTL_OP_CONVOLUTION || nd->op == TRTL_OP_FULLY_CONNECTED) {
        const trtl_weights *kw = nd->op == TRTL_OP_CONVOLUTION ? &nd->p.conv.kernel : &nd->p.fc.kernel;
        *K = nd->op == TRTL_OP_CONVOLUTION ? nd->p.conv.num_output_maps : nd->p.fc.num_output_channels;
        if (kw->type != TRTL_FLOAT || *K < 1 || !kw->values)
            return 0;
        *n = kw->count / *K;
        *w = (float *)kw->values; /* the graph's own copy */
        return *n > 0;
    }
    if (nd->op != TRTL_OP_MATRIX_MULTIPLY || nd->n_in < 2 || nd->p.matmul.op0 != TRTL_MATOP_NONE ||
        nd->p.matmul.op1 == TRTL_MATOP_VECTOR)
        return 0;
    const trtl_bg_tensor *b = &g->t[nd->in[1]];
    if (b->kind != TRTL_TK_CONSTANT || b->dtype != TRTL_FLOAT || !b->data || b->dmax.nb_dims < 2 ||
        trtl_bg_consumers(g, nd->in[1], NULL) != 1)
        return 0;
    for (int32_t i = 0; i + 2 < b->dmax.nb_dims; i++)
        if (b->dmax.d[i] != 1)
            return 0;
    int64_t r0 = b->dmax.d[b->dmax.nb_dims - 2], r1 = b->dmax.d[b->dmax.nb_dims - 1];
    *col = nd->p.matmul.op1 == TRTL_MATOP_NONE;
    *K = *col ? r1 : r0;
    *n = *col ? r0 : r1;
    *w = b->data;
    return *K > 0 && *n > 0;
}

/* x -> DQ(Q(x)) with scale r/127: the DQ output's tensor id, or -1 (error set). */
static int32_t insert_qdq(trtl_bgraph *g, int32_t x, float scale)
{
    char name[512];
    float *sv = trtl_aligned_alloc(64);
    if (!sv) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    *sv = scale;
    snprintf(name, sizeof name, "%s__int8_scale", g->t[x].name);
    int32_t s = trtl_bg_add_tensor(g, name, TRTL_FLOAT, TRTL_TK_CONSTANT);
    if (s < 0) {
        trtl_aligned_free(sv);
        return -1;
    }
    g->t[s].data = sv;
    g->t[s].dmin.nb_dims = 1;
    g->t[s].dmin.d[0] = 1;
    g->t[s].dopt = g->t[s].dmax = g->t[s].dmin;
    snprintf(name, sizeof name, "%s__int8", g->t[x].name);
    int32_t qt = trtl_bg_add_tensor(g, name, TRTL_INT8, TRTL_TK_ACTIVATION);
    snprintf(name, sizeof name, "%s__int8_dq", g->t[x].name);
    int32_t dt = qt < 0 ? -1 : trtl_bg_add_tensor(g, name, TRTL_FLOAT, TRTL_TK_ACTIVATION);
    if (dt < 0)
        return -1;
    trtl_params p;
    memset(&p, 0, sizeof p);
    trtl_init_quantize(&p);
    int32_t qin[2] = {x, s}, din[2] = {qt, s};
    snprintf(name, sizeof name, "%s [implicit int8 Quantize]", g->t[x].name);
    if (trtl_bg_add_node(g, TRTL_OP_QUANTIZE, name, &p, 2, qin, 1, &qt) < 0)
        return -1;
    trtl_init_dequantize(&p);
    snprintf(name, sizeof name, "%s " TRTL_INT8_IMPLICIT_DQ, g->t[x].name);
    if (trtl_bg_add_node(g, TRTL_OP_DEQUANTIZE, name, &p, 2, din, 1, &dt) < 0)
        return -1;
    return dt;
}

/* x -> Q(x; scale) as an INT8 tensor for plugin layer `layer`: the tensor id, or -1 (error set). */
static int32_t insert_q(trtl_bgraph *g, int32_t x, float scale, const char *layer)
{
    char name[512];
    float *sv = trtl_aligned_alloc(64);
    if (!sv) {
        trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
        return -1;
    }
    *sv = scale;
    snprintf(name, sizeof name, "%s__int8_scale [%s]", g->t[x].name, layer);
    int32_t s = trtl_bg_add_tensor(g, name, TRTL_FLOAT, TRTL_TK_CONSTANT);
    if (s < 0) {
        trtl_aligned_free(sv);
        return -1;
    }
    g->t[s].data = sv;
    g->t[s].dmin.nb_dims = 1;
    g->t[s].dmin.d[0] = 1;
    g->t[s].dopt = g->t[s].dmax = g->t[s].dmin;
    snprintf(name, sizeof name, "%s__int8 [%s]", g->t[x].name, layer);
    int32_t qt = trtl_bg_add_tensor(g, name, TRTL_INT8, TRTL_TK_ACTIVATION);
    if (qt < 0)
        return -1;
    trtl_params p;
    memset(&p, 0, sizeof p);
    trtl_init_quantize(&p);
    int32_t qin[2] = {x, s};
    snprintf(name, sizeof name, "%s [implicit int8 Quantize for %s]", g->t[x].name, layer);
    if (trtl_bg_add_node(g, TRTL_OP_QUANTIZE, name, &p, 2, qin, 1, &qt) < 0)
        return -1;
    return qt;
}

/* The symmetric range of tensor x (0: none). */
static float range_of(const trtl_bgraph *g, const trtl_network *net, int32_t x)
{
    const trtl_tensor *nt = trtl_network_find_tensor(net, g->t[x].name);
    float r = nt && nt->has_dynamic_range ? fmaxf(fabsf(nt->dyn_min), fabsf(nt->dyn_max)) : 0.0f;
    return r > 0 && isfinite(r) ? r : 0.0f;
}

/* Does x come from a plugin layer through scales and activations only (AdderNet's adder -> batch norm
 * -> pooling)?  A plugin's float output never becomes int8 codes, so a Q/DQ there would only add a
 * rounding and two passes. */
static int from_plugin(const trtl_bgraph *g, int32_t x)
{
    for (int hops = 0; hops < 8; hops++) {
        int32_t prod = g->t[x].producer;
        if (prod < 0)
            return 0;
        const trtl_node *n = &g->n[prod].n;
        if (n->op == TRTL_OP_PLUGIN_V2)
            return 1;
        if ((n->op != TRTL_OP_SCALE && n->op != TRTL_OP_ACTIVATION) || n->n_in < 1)
            return 0;
        x = n->in[0];
    }
    return 0;
}

/* Input j of node i reads DQ(Q(x)) (made once per tensor, dq_of) when x has a range: 1 done, 0 no range
 * (or already dequantized, or a plugin's output), -1 error. */
static int quantize_input(trtl_bgraph *g, const trtl_network *net, int32_t i, int32_t j, int32_t *dq_of, int32_t nt0)
{
    int32_t x = g->n[i].n.in[j], prod = g->t[x].producer;
    if (x >= nt0 || g->t[x].dtype != TRTL_FLOAT || (prod >= 0 && g->n[prod].n.op == TRTL_OP_DEQUANTIZE) ||
        from_plugin(g, x))
        return 0;
    float r = range_of(g, net, x);
    if (!(r > 0))
        return 0;
    if (dq_of[x] < 0 && (dq_of[x] = insert_qdq(g, x, r / 127.0f)) < 0)
        return -1;
    g->n[i].n.in[j] = dq_of[x];
    return 1;
}

/* The layers between int8 layers that run on int8 codes once their inputs are quantized (fuse_qdq):
 * residual adds (two inputs of the output's shape), poolings and global average pooling (a mean over
 * H, W); and a layout-only shuffle alone in front of an int8 layer, whose input is quantized instead
 * (the Q/DQ moves through it, so that a pooling before it writes codes).  Their inputs with a range get
 * the same DQ(Q(x)) as the int8 layers' inputs; without a range they stay fp32, silently. */
static int between_int8(const trtl_bgraph *g, const trtl_node *n)
{
    if (n->op == TRTL_OP_ELEMENTWISE)
        return n->p.ew.op == TRTL_EW_SUM && n->n_in == 2 && n->n_out == 1 &&
               trtl_dims_equal(&g->t[n->in[0]].dmax, &g->t[n->out[0]].dmax) &&
               trtl_dims_equal(&g->t[n->in[1]].dmax, &g->t[n->out[0]].dmax);
    if (n->op == TRTL_OP_POOLING)
        return n->n_in == 1 && g->t[n->in[0]].dmax.nb_dims == 4;
    return n->op == TRTL_OP_REDUCE && n->p.reduce.op == TRTL_RED_AVG && n->n_in == 1 &&
           g->t[n->in[0]].dmax.nb_dims == 4;
}

/* Plugin node i (see the top): 1 when some input became INT8, 0 none, -1 error (set). */
static int quantize_plugin(trtl_bgraph *g, const trtl_network *net, int32_t i, int32_t nt0, int must)
{
    trtl_plugin *pl = g->n[i].n.p.plugin.plugin;
    const trtl_plugin_vtable_v2 *vt = trtl_plugin_vt2(pl);
    const int32_t n_in = g->n[i].n.n_in, n_out = g->n[i].n.n_out;
    if (!vt || !vt->supports_format || !vt->configure || n_in > 64 || n_out > 16)
        return 0;
    trtl_plugin_tensor_desc d[80];
    trtl_plugin_quant_desc qin[64], qout[16];
    float proposed[64];
    int any = 0;
    for (int32_t j = 0; j < n_in + n_out; j++) {
        int32_t t = j < n_in ? g->n[i].n.in[j] : g->n[i].n.out[j - n_in];
        d[j].dims = g->t[t].dmax;
        d[j].dtype = g->t[t].dtype;
        trtl_plugin_quant_desc *q = j < n_in ? &qin[j] : &qout[j - n_in];
        q->dtype = g->t[t].dtype;
        q->scale = 0;
    }
    for (int32_t j = 0; j < n_in; j++) {
        int32_t x = g->n[i].n.in[j];
        if (x >= nt0 || g->t[x].dtype != TRTL_FLOAT)
            continue;
        d[j].dtype = TRTL_INT8;
        if (vt->supports_format(pl, j, d, n_in, n_out) != 1) {
            d[j].dtype = TRTL_FLOAT;
            continue;
        }
        float r = range_of(g, net, x);
        if (!(r > 0)) {
            d[j].dtype = TRTL_FLOAT;
            if (must)
                return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "INT8: tensor '%s' (input %d of plugin layer '%s', whose "
                                  "precision is INT8 under precision constraints) has no dynamic range: set "
                                  "tensor.dynamic_range or give config.int8_calibrator", g->t[x].name, (int)j,
                                  g->n[i].n.name), -1;
            trtl_log(TRTL_LOG_WARNING, "INT8: tensor '%s' has no dynamic range; plugin layer '%s' reads it as FLOAT",
                     g->t[x].name, g->n[i].n.name);
            continue;
        }
        qin[j].dtype = TRTL_INT8;
        qin[j].scale = proposed[j] = r / 127.0f;
        any = 1;
    }
    if (!any)
        return 0;
    char msg[512] = "";
    int rc = vt->configure(pl, qin, n_in, qout, n_out, msg, sizeof msg);
    msg[sizeof msg - 1] = '\0'; /* a plugin may fill the buffer without terminating it */
    if (rc != 0)
        return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s': configure() for INT8 inputs failed: %s", g->n[i].n.name,
                          msg[0] ? msg : "no message"), -1;
    for (int32_t j = 0; j < n_in; j++) {
        if (d[j].dtype != TRTL_INT8)
            continue;
        if (qin[j].dtype != TRTL_INT8 || !(qin[j].scale >= proposed[j]) || !isfinite(qin[j].scale))
            return trtl_error(TRTL_ERR_PLUGIN, "plugin layer '%s': configure() returned input %d as %s with scale %g; "
                              "an INT8 input's scale may only be raised (proposed %g)", g->n[i].n.name, (int)j,
                              trtl_dtype_name(qin[j].dtype), (double)qin[j].scale, (double)proposed[j]), -1;
        int32_t x = g->n[i].n.in[j];
        char layer[256];
        snprintf(layer, sizeof layer, "%s", g->n[i].n.name);
        int32_t qt = insert_q(g, x, qin[j].scale, layer);
        if (qt < 0)
            return -1;
        g->n[i].n.in[j] = qt; /* re-indexed: adding nodes may move the node array */
        trtl_log(TRTL_LOG_VERBOSE, "INT8: plugin layer '%s' reads input %d ('%s') as INT8 codes of scale %g (range %g)",
                 layer, (int)j, g->t[x].name, (double)qin[j].scale, (double)(proposed[j] * 127.0f));
    }
    return 1;
}

trtl_status trtl_place_implicit_int8(trtl_bgraph *g, const trtl_network *net)
{
    uint32_t flags = g->cfg->flags;
    if (!((flags >> TRTL_FLAG_INT8) & 1u))
        return TRTL_OK;
    int strict = ((flags >> TRTL_FLAG_OBEY_PRECISION_CONSTRAINTS) & 1u) || ((flags >> TRTL_FLAG_STRICT_TYPES) & 1u);
    int32_t nt0 = g->nt, nn0 = g->nn, placed = 0, kept = 0;
    int32_t *dq_of = malloc(sizeof(int32_t) * (size_t)(nt0 ? nt0 : 1)); /* tensor -> its DQ output, or -1 */
    if (!dq_of)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "builder: out of memory");
    for (int32_t i = 0; i < nt0; i++)
        dq_of[i] = -1;
    trtl_status st = TRTL_OK;
    for (int32_t i = 0; i < nn0 && st == TRTL_OK; i++) {
        float *w;
        int64_t K, n;
        int col;
        if (!g->n[i].dead && g->n[i].n.op == TRTL_OP_PLUGIN_V2) {
            const trtl_layer *pl = find_layer(net, g->n[i].n.name);
            int done = quantize_plugin(g, net, i, nt0, strict && pl && pl->has_precision && pl->precision == TRTL_INT8);
            if (done < 0)
                st = trtl_last_status();
            placed += done > 0;
            continue;
        }
        if (!g->n[i].dead && between_int8(g, &g->n[i].n)) {
            for (int32_t j = 0; j < g->n[i].n.n_in && st == TRTL_OK; j++)
                if (quantize_input(g, net, i, j, dq_of, nt0) < 0)
                    st = trtl_last_status();
            continue;
        }
        if (g->n[i].dead || !candidate(g, &g->n[i].n, &w, &K, &n, &col))
            continue;
        int32_t x = g->n[i].n.in[0];
        int32_t sh = g->t[x].producer;
        if (sh >= 0 && g->n[sh].n.op == TRTL_OP_SHUFFLE && g->n[sh].n.n_in == 1 && x < nt0 &&
            trtl_bg_consumers(g, x, NULL) == 1 && !trtl_bg_is_output(g, x) && range_of(g, net, x) > 0) {
            int done = quantize_input(g, net, sh, 0, dq_of, nt0);
            if (done < 0) {
                st = trtl_last_status();
                break;
            }
            if (done) { /* the shuffle moves quantized values: the layer's input counts as quantized */
                trtl_int8_grid_round(w, K, n, col);
                placed++;
                continue;
            }
        }
        int32_t prod = g->t[x].producer;
        if (prod >= 0 && g->n[prod].n.op == TRTL_OP_DEQUANTIZE)
            continue; /* explicit quantization */
        const trtl_tensor *nt = trtl_network_find_tensor(net, g->t[x].name);
        const trtl_layer *l = find_layer(net, g->n[i].n.name);
        int must = strict && l && l->has_precision && l->precision == TRTL_INT8;
        float r = nt && nt->has_dynamic_range ? fmaxf(fabsf(nt->dyn_min), fabsf(nt->dyn_max)) : 0.0f;
        if (!(r > 0) || !isfinite(r)) {
            if (must) {
                st = trtl_error(TRTL_ERR_INVALID_ARGUMENT, "INT8: tensor '%s' (input of layer '%s', whose precision "
                                "is INT8 under precision constraints) has no dynamic range: set "
                                "tensor.dynamic_range or give config.int8_calibrator", g->t[x].name,
                                g->n[i].n.name);
                break;
            }
            trtl_log(TRTL_LOG_WARNING, "INT8: tensor '%s' has no dynamic range; layer '%s' runs in fp32 (set "
                     "tensor.dynamic_range or give config.int8_calibrator)", g->t[x].name, g->n[i].n.name);
            kept++;
            continue;
        }
        if (dq_of[x] < 0) {
            dq_of[x] = insert_qdq(g, x, r / 127.0f);
            if (dq_of[x] < 0) {
                st = trtl_last_status();
                break;
            }
        }
        g->n[i].n.in[0] = dq_of[x];
        trtl_int8_grid_round(w, K, n, col);
        placed++;
        trtl_log(TRTL_LOG_VERBOSE, "INT8: layer '%s' quantizes its input '%s' with range %g", g->n[i].n.name,
                 g->t[x].name, (double)r);
    }
    free(dq_of);
    if (st != TRTL_OK)
        return st;
    trtl_log(TRTL_LOG_INFO, "INT8: %d layers quantized from dynamic ranges, %d kept in fp32", (int)placed, (int)kept);
    TRTL_TRY(trtl_bg_sort(g));
    return trtl_bg_infer(g);
}
