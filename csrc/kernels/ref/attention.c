/* Reference attention (internal op): y = softmax(Q K^T * scale [+ mask]) V over the last axis.
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

static float score(const trtl_attn_geom *g, const float *q, const float *k, const float *m, int64_t i, int64_t j)
{
    double dot = 0.0;
    for (int64_t d = 0; d < g->D; d++)
        dot += (double)q[d] * (double)k[j * g->k_row + d * g->k_col];
    float s = (float)dot * g->scale;
    if (m)
        s += m[i * g->m_row + j * g->m_col];
    return s;
}

trtl_status trtl_ref_attention(const trtl_kernel_args *a)
{
    trtl_attn_geom g;
    TRTL_TRY(trtl_attn_geom_init(a->node, a->in, &a->out[0].dims, &g));
    const float *Q = a->in[0].data, *K = a->in[1].data, *V = a->in[2].data;
    const float *M = g.has_mask ? a->in[3].data : NULL;
    float *Y = a->out[0].data;
    for (int64_t b = 0; b < g.nb; b++) {
        int64_t qo, ko, vo, mo;
        trtl_attn_offsets(&g, b, &qo, &ko, &vo, &mo);
        const float *k = K + ko, *v = V + vo, *m = M ? M + mo : NULL;
        for (int64_t i = 0; i < g.Sq; i++) {
            const float *q = Q + qo + i * g.D;
            float *y = Y + (b * g.Sq + i) * g.Dv;
            double mx = -INFINITY, sum = 0.0;
            for (int64_t j = 0; j < g.Sk; j++) {
                float s = score(&g, q, k, m, i, j);
                if (s > mx)
                    mx = s;
            }
            for (int64_t j = 0; j < g.Sk; j++)
                sum += exp((double)score(&g, q, k, m, i, j) - mx);
            for (int64_t c0 = 0; c0 < g.Dv; c0 += CHUNK) {
                int64_t w = g.Dv - c0 < CHUNK ? g.Dv - c0 : CHUNK;
                double acc[CHUNK] = {0};
                for (int64_t j = 0; j < g.Sk; j++) {
                    float p = (float)(exp((double)score(&g, q, k, m, i, j) - mx) / sum);
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
