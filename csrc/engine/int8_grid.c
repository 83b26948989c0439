/* int8_grid.c -- the per-channel int8 grid of implicit INT8 weights (see int8_grid.h). */
#include <math.h>
#include <string.h>

#include "engine/int8_grid.h"
#include "core/dims.h"

void trtl_int8_grid_round(float *w, int64_t K, int64_t n, int col)
{
    for (int64_t k = 0; k < K; k++) {
        double m = 0;
        for (int64_t i = 0; i < n; i++)
            m = fmax(m, fabs(w[col ? i * K + k : k * n + i]));
        if (!(m > 0) || !isfinite(m))
            continue;
        float s = (float)(m / 127.0);
        for (int64_t i = 0; i < n; i++) {
            float *v = &w[col ? i * K + k : k * n + i];
            *v = (float)(nearbyint(*v / (double)s) * (double)s);
        }
    }
}

/* The node producing tensor t, or -1. */
static int32_t producer(const trtl_engine *e, int32_t t)
{
    for (int32_t k = 0; k < e->n_nodes; k++)
        for (int32_t j = 0; j < e->nodes[k].n_out; j++)
            if (e->nodes[k].out[j] == t)
                return k;
    return -1;
}

/* Is x an implicit INT8 dequantize's output, directly or through one shuffle (quantize_implicit.c quantizes a
 * shuffle's input when the shuffle only feeds the layer)? */
static int implicit_int8_input(const trtl_engine *e, int32_t x)
{
    for (int hop = 0; hop < 2 && x >= 0; hop++) {
        int32_t p = producer(e, x);
        if (p < 0)
            return 0;
        const trtl_node *n = &e->nodes[p];
        size_t len = strlen(n->name), sl = strlen(TRTL_INT8_IMPLICIT_DQ);
        /* the dequantize, or the fake-quantize step passes/fold_fake_quant.c made of it with its quantize (an
         * ACTIVATION, or a producer's epilogue), named after the dequantize last */
        if (n->op == TRTL_OP_DEQUANTIZE || (n->op == TRTL_OP_ACTIVATION && n->p.act.type == TRTL_ACT_QGRID) ||
            n->epi.act == TRTL_ACT_QGRID)
            return len >= sl && strcmp(n->name + len - sl, TRTL_INT8_IMPLICIT_DQ) == 0;
        if (n->op != TRTL_OP_SHUFFLE || n->n_in < 1 || n->epi.has_residual || n->epi.act != TRTL_ACT_NONE)
            return 0; /* a shuffle with an epilogue (a transpose adding a residual) moves no grid */
        x = n->in[0];
    }
    return 0;
}

int trtl_int8_grid_of(const trtl_engine *e, int32_t node, int32_t tensor, int64_t *K, int64_t *n, int *col)
{
    *col = 0;
    if (node >= 0) {
        const trtl_node *nd = &e->nodes[node];
        const trtl_weights *w = nd->op == TRTL_OP_CONVOLUTION ? &nd->p.conv.kernel
                                : nd->op == TRTL_OP_FULLY_CONNECTED ? &nd->p.fc.kernel : NULL;
        if (!w || nd->n_in < 1)
            return 0;
        *K = nd->op == TRTL_OP_CONVOLUTION ? nd->p.conv.num_output_maps : nd->p.fc.num_output_channels;
        if (*K < 1 || w->count % *K)
            return 0;
        *n = w->count / *K;
        return implicit_int8_input(e, nd->in[0]);
    }
    const trtl_etensor *b = &e->tensors[tensor];
    if (b->dims.nb_dims < 2)
        return 0;
    for (int32_t k = 0; k < e->n_nodes; k++) {
        const trtl_node *nd = &e->nodes[k];
        if (nd->op != TRTL_OP_MATRIX_MULTIPLY || nd->n_in < 2 || nd->in[1] != tensor ||
            nd->p.matmul.op0 != TRTL_MATOP_NONE || nd->p.matmul.op1 == TRTL_MATOP_VECTOR ||
            !implicit_int8_input(e, nd->in[0]))
            continue;
        int64_t r0 = b->dims.d[b->dims.nb_dims - 2], r1 = b->dims.d[b->dims.nb_dims - 1];
        *col = nd->p.matmul.op1 == TRTL_MATOP_NONE;
        *K = *col ? r1 : r0;
        *n = *col ? r0 : r1;
        return *K > 0 && *n > 0 && trtl_volume(&b->dims) == *K * *n;
    }
    return 0;
}
