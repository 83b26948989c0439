/* fused_epilogue.c -- epilogue pieces for the optimized kernels (AVX2 path + portable path; the
 * other activations, internal codes included, through the vector math of vmath.h). */
#include "kernels/x86/fused_epilogue.h"
#include "core/cpu.h"
#include "kernels/x86/vmath.h"

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_AVX2_PATH 1
static int use_avx2(void) { return trtl_cpu_has(TRTL_CPU_AVX2 | TRTL_CPU_FMA); }

__attribute__((target("avx2,fma"))) static void prefill_avx2(float *y, const float *res, float bias,
                                                              const float *vbias, int64_t n)
{
    __m256 vb = _mm256_set1_ps(bias);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = vbias ? _mm256_loadu_ps(vbias + i) : vb;
        if (res)
            v = _mm256_add_ps(v, _mm256_loadu_ps(res + i));
        _mm256_storeu_ps(y + i, v);
    }
    for (; i < n; i++)
        y[i] = (vbias ? vbias[i] : bias) + (res ? res[i] : 0.0f);
}

__attribute__((target("avx2,fma"))) static void act_avx2(const trtl_epilogue *e, float *y, int64_t n)
{
    __m256 va = _mm256_set1_ps(e->alpha), vbe = _mm256_set1_ps(e->beta);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, trtl_act8(_mm256_loadu_ps(y + i), e->act, va, vbe));
    for (; i < n; i++)
        y[i] = trtl_activation_eval(e->act, e->alpha, e->beta, y[i]);
}
#endif

void trtl_epi_prefill(float *y, const float *res, float bias, const float *vbias, int64_t n)
{
#ifdef HAVE_AVX2_PATH
    if (use_avx2()) {
        prefill_avx2(y, res, bias, vbias, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++)
        y[i] = (vbias ? vbias[i] : bias) + (res ? res[i] : 0.0f);
}

void trtl_epi_act(const trtl_epilogue *e, float *y, int64_t n)
{
    switch (e->act) {
    case TRTL_ACT_NONE: return;
    case TRTL_ACT_RELU:
    case TRTL_ACT_CLIP:
    case TRTL_ACT_LEAKY_RELU:
#ifdef HAVE_AVX2_PATH
        if (use_avx2()) {
            act_avx2(e, y, n);
            return;
        }
#endif
        /* fall through */
    default: /* vectorized (AVX-512 / AVX2) or the scalar formulas, vmath.h */
        trtl_vm_act(e->act, e->alpha, e->beta, y, y, n);
    }
}
