/* Reference attention: y = softmax(Q K^T * scale [+ mask]) V over the last axis (norm_op NONE: the scores
 * themselves weigh V).  Keys that causality or a BOOL mask rule out are -inf scores (weight 0 with NONE;
 * their Q / K values are never read, their V rows are multiplied by the weight 0 as in the unfused graph);
 * with empty_rows_zero a row whose scores are all -inf weighs every key 0 instead of giving NaN.
 * Faithful to the unfused layers run by their reference kernels: each score is the dot product
 * in double rounded to float, then scaled and masked in float (as the matrix multiply, elementwise
 * product and add would); the softmax is the reference softmax's (double, a maximum that skips
 * NaN, probabilities rounded to float), and the second product sums in double again.  No scratch:
 * scores are recomputed per pass, and the output row is accumulated in double CHUNK columns at a
 * time on the stack. */
#include <math.h>
#include "kernels/ref/ref.h"
#include "kernels/attention_geometry.h"
#include "core/status.h"

#define CHUNK 64

static int allowed(const trtl_attn_geom *g, const unsigned char *mb, int64_t i, int64_t j)
{
    if (j >= trtl_attn_limit(g, i))
        return 0;
    return !mb || mb[i * g->m_row + j * g->m_col] != 0;
}

static float score(const trtl_attn_geom *g, const float *q, const float *k, const void *m, int64_t i, int64_t j)
{
    const unsigned char *mb = g->mask_bool ? m : NULL;
    if (!allowed(g, mb, i, j))
        return -INFINITY;
    double dot = 0.0;
    for (int64_t d = 0; d < g->D; d++)
        dot += (double)q[d] * (double)k[j * g->k_row + d * g->k_col];
    float s = (float)dot * g->scale;
    if (m && !mb)
        s += ((const float *)m)[i * g->m_row + j * g->m_col];
    return s;
}

/* The weight of key j in row i: the softmax probability (max mx, sum sum), or the score itself with NONE
 * (0 for a key ruled out), or 0 for every key of an empty row (dead). */
static float weight(const trtl_attn_geom *g, const float *q, const float *k, const void *m, int64_t i, int64_t j,
                    double mx, double sum, int dead)
{
    if (dead)
        return 0.0f;
    if (g->norm_none && !allowed(g, g->mask_bool ? m : NULL, i, j))
        return 0.0f;
    float s = score(g, q, k, m, i, j);
    if (g->norm_none)
        return s;
    return (float)(exp((double)s - mx) / sum);
}

trtl_status trtl_ref_attention(const trtl_kernel_args *a)
{
    trtl_attn_geom g;
    TRTL_TRY(trtl_attn_geom_init(a->node, a->in, &a->out[0].dims, &g));
    const float *Q = a->in[0].data, *K = a->in[1].data, *V = a->in[2].data;
    const void *M = g.has_mask ? a->in[3].data : NULL;
    size_t msz = g.mask_bool ? 1 : sizeof(float);
    float *Y = a->out[0].data;
    for (int64_t b = 0; b < g.nb; b++) {
        int64_t qo, ko, vo, mo;
        trtl_attn_offsets(&g, b, &qo, &ko, &vo, &mo);
        const float *k = K + ko, *v = V + vo;
        const void *m = M ? (const char *)M + (size_t)mo * msz : NULL;
        for (int64_t i = 0; i < g.Sq; i++) {
            const float *q = Q + qo + i * g.D;
            float *y = Y + (b * g.Sq + i) * g.Dv;
            double mx = -INFINITY, sum = 0.0;
            int nan = 0;
            for (int64_t j = 0; j < g.Sk; j++) {
                float s = score(&g, q, k, m, i, j);
                nan |= s != s;
                if (s > mx)
                    mx = s;
            }
            int dead = !g.norm_none && g.empty_zero && mx == -INFINITY && !nan;
            if (!g.norm_none && !dead)
                for (int64_t j = 0; j < g.Sk; j++)
                    sum += exp((double)score(&g, q, k, m, i, j) - mx);
            for (int64_t c0 = 0; c0 < g.Dv; c0 += CHUNK) {
                int64_t w = g.Dv - c0 < CHUNK ? g.Dv - c0 : CHUNK;
                double acc[CHUNK] = {0};
                for (int64_t j = 0; j < g.Sk; j++) {
                    float p = weight(&g, q, k, m, i, j, mx, sum, dead);
                    for (int64_t c = 0; c < w; c++)
                        acc[c] += (double)p * (double)v[j * g.Dv + c0 + c];
                }
                for (int64_t c = 0; c < w; c++)
                    y[c0 + c] = (float)acc[c];
            }
        }
    }
    return TRTL_OK;
}
