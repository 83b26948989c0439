/*
 * qconv_mnv2_bench.c -- the int8 convolution library (kernels/qconv.h) on MobileNetV2's layer shapes as the QDQ
 * model runs them (int8 codes in and out, per-channel weights, ReLU6 as a clip, batch 1): one thread, the
 * thread's CPU time (minimum of the runs), per layer and summed, for the kernel that trtl_qconv_prepare_amx picks
 * with AMX allowed (AUTO) and without (NEVER); for the depthwise layers the columns are the kernel prepare picks
 * (the channel-interleaved one where it applies) and the plane kernel (the state's dwc turned off).
 * TRTL_CPU_MASK selects the ISA as in the library.  Not part of CI.
 *
 *   make build && gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/qconv_mnv2_bench.c \
 *       -Lbuild -ltrtlite -Wl,-rpath,$PWD/build -o build/qconv_mnv2_bench
 *   build/qconv_mnv2_bench [reps] [batch] [layer index]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/qconv.h"
#include "kernels/qconv_internal.h"
#include "core/status.h"
#include "trtlite/trtlite.h"
#include "bench_util.h"

typedef struct layer {
    int C, K, H, ks, stride, dw, mult;
} layer;

/* MobileNetV2 (width 1.0, 224x224): expansion 1x1, depthwise 3x3, projection 1x1; mult = occurrences. */
static const layer L[] = {
    {3, 32, 224, 3, 2, 0, 1},    {32, 32, 112, 3, 1, 1, 1},   {32, 16, 112, 1, 1, 0, 1},  {16, 96, 112, 1, 1, 0, 1},
    {96, 96, 112, 3, 2, 1, 1},   {96, 24, 56, 1, 1, 0, 1},    {24, 144, 56, 1, 1, 0, 2},  {144, 144, 56, 3, 1, 1, 1},
    {144, 24, 56, 1, 1, 0, 1},   {144, 144, 56, 3, 2, 1, 1},  {144, 32, 28, 1, 1, 0, 1},  {32, 192, 28, 1, 1, 0, 3},
    {192, 192, 28, 3, 1, 1, 2},  {192, 32, 28, 1, 1, 0, 2},   {192, 192, 28, 3, 2, 1, 1}, {192, 64, 14, 1, 1, 0, 1},
    {64, 384, 14, 1, 1, 0, 4},   {384, 384, 14, 3, 1, 1, 4},  {384, 64, 14, 1, 1, 0, 3},  {384, 96, 14, 1, 1, 0, 1},
    {96, 576, 14, 1, 1, 0, 3},   {576, 576, 14, 3, 1, 1, 2},  {576, 96, 14, 1, 1, 0, 2},  {576, 576, 14, 3, 2, 1, 1},
    {576, 160, 7, 1, 1, 0, 1},   {160, 960, 7, 1, 1, 0, 3},   {960, 960, 7, 3, 1, 1, 3},  {960, 160, 7, 1, 1, 0, 2},
    {960, 320, 7, 1, 1, 0, 1},   {320, 1280, 7, 1, 1, 0, 1},
};

static double time_layer(const layer *l, int amx, int reps, int N, const char **kname)
{
    trtl_qconv_desc d;
    memset(&d, 0, sizeof d);
    d.C = l->C;
    d.K = l->K;
    d.R = d.S = l->ks;
    d.stride_h = d.stride_w = l->stride;
    d.pad_t = d.pad_l = d.pad_b = d.pad_r = l->ks / 2;
    d.dil_h = d.dil_w = 1;
    d.groups = l->dw ? l->C : 1;
    d.in_scale = 0.05f;
    d.in_signed = 1;
    d.act = TRTL_ACT_CLIP;
    d.alpha = 0.0f;
    d.beta = 6.0f;
    d.out_quant = 2;
    d.out_scale = 0.047f;
    d.out_signed = 1;
    const int64_t Cg = l->dw ? 1 : l->C, nw = (int64_t)l->K * Cg * l->ks * l->ks;
    int8_t *w = malloc((size_t)nw);
    float *ws = malloc((size_t)l->K * sizeof(float)), *bias = malloc((size_t)l->K * sizeof(float));
    for (int64_t i = 0; i < nw; i++)
        w[i] = (int8_t)(rand() % 255 - 127);
    for (int k = 0; k < l->K; k++) {
        ws[k] = 0.001f * (float)(1 + k % 7);
        bias[k] = 0.01f * (float)(k % 5 - 2);
    }
    trtl_qconv_state *s = NULL;
    if (trtl_qconv_prepare_amx(&d, w, ws, 1, bias, amx, &s) != TRTL_OK) {
        free(w), free(ws), free(bias);
        return -1;
    }
    *kname = trtl_qconv_kernel_name(s);
    if (l->dw && amx == TRTL_QCONV_AMX_NEVER)
        s->dwc = 0;
    else if (s->dwc)
        *kname = "dw_c16";
    const int64_t H = l->H, OH = trtl_qconv_out_dim(H, l->ks, l->stride, l->ks / 2, l->ks / 2, 1);
    int8_t *x = malloc((size_t)(N * l->C * H * H)), *y = malloc((size_t)(N * l->K * OH * OH));
    for (int64_t i = 0; i < N * l->C * H * H; i++)
        x[i] = (int8_t)(rand() % 128);
    size_t ss = trtl_qconv_scratch(s, N, H, H, 1);
    void *scratch = malloc(ss ? ss : 1);
    double best = 1e9;
    for (int r = 0; r <= reps; r++) {
        double t0 = bench_cpu_s();
        trtl_qconv_run_codes(s, N, H, H, x, 1, y, NULL, scratch, ss, NULL);
        double t = bench_cpu_s() - t0;
        if (r && t < best)
            best = t;
    }
    trtl_qconv_release(s);
    free(w), free(ws), free(bias), free(x), free(y), free(scratch);
    return best;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 20, N = argc > 2 ? atoi(argv[2]) : 1, only = argc > 3 ? atoi(argv[3]) : -1;
    double sum[2] = {0, 0};
    printf("%-22s %-14s %9s   %-14s %9s\n", "layer (C K H k s)", "AUTO", "ms", "NEVER", "ms");
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
        if (only >= 0 && (size_t)only != i)
            continue;
        const char *k0 = "-", *k1 = "-";
        double t0 = time_layer(&L[i], TRTL_QCONV_AMX_AUTO, reps, N, &k0);
        double t1 = time_layer(&L[i], TRTL_QCONV_AMX_NEVER, reps, N, &k1);
        char name[64];
        snprintf(name, sizeof name, "%s%d %d %d %d s%d x%d", L[i].dw ? "dw " : "", L[i].C, L[i].K, L[i].H, L[i].ks,
                 L[i].stride, L[i].mult);
        printf("%-22s %-14s %9.3f   %-14s %9.3f\n", name, k0, t0 * 1e3, k1, t1 * 1e3);
        sum[0] += L[i].mult * (t0 < t1 ? t0 : t1);
        sum[1] += L[i].mult * t1;
    }
    printf("sum (best of both, x mult): %.3f ms; without AMX %.3f ms\n", sum[0] * 1e3, sum[1] * 1e3);
    return 0;
}
