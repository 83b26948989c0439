/*
 * conv_speed_bench.c -- milliseconds of the issue #10 kernels (deconvolution.packed_gemm, the depthwise
 * convolution kernel, the resize kernel) against their reference kernels on the shapes, with the
 * pool of all available CPUs (the reference runs on one thread, as in the engine).  Not part of CI.
 *
 *   gcc -std=c11 -O2 -D_GNU_SOURCE -Icsrc -Icsrc/include benchmarks/conv_speed_bench.c \
 *       csrc/core/{cpu,status,dims,threadpool,shape}.c csrc/kernels/{epilogue,conv_geometry}.c \
 *       csrc/kernels/ref/{convolution,deconvolution,resize}.c $(ls csrc/kernels/x86/[a-z]*.c csrc/kernels/blas/[a-z]*.c) \
 *       -o build/conv_speed_bench -lopenblas -lm -lpthread
 *   build/conv_speed_bench
 *
 * Optimized kernels: the median of >= 10 runs and >= 0.2 s after a warm-up run; the reference: the best of 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/ref/ref.h"
#include "kernels/kernel.h"
#include "core/threadpool.h"
#include "core/dims.h"
#include "core/status.h"
#include "bench_util.h"

extern const trtl_kernel trtl_kernel_deconv_packed_gemm;
extern const trtl_kernel trtl_kernel_conv_depthwise;
extern const trtl_kernel trtl_kernel_conv_depthwise_avx2;
extern const trtl_kernel trtl_kernel_resize_tables;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Milliseconds of kernel k (NULL: the reference kernel `ref`, single-threaded). */
static double time_ms(const trtl_kernel *k, trtl_kernel_fn ref, trtl_node *nd, const trtl_tensor_view *in,
                      trtl_tensor_view *out, trtl_threadpool *pool)
{
    if (!k) {
        trtl_kernel_args a = {nd, in, out, NULL, 0, NULL, NULL, NULL};
        double best = 1e30;
        for (int r = 0; r < 2; r++) {
            double t0 = bench_wall_s();
            if (ref(&a) != TRTL_OK)
                return -1.0;
            double t = bench_wall_s() - t0;
            best = t < best ? t : best;
        }
        return best * 1e3;
    }
    void *state = NULL;
    if (k->applies && !k->applies(nd, &in[0].dims))
        return -1.0;
    if (k->prepare && k->prepare(nd, &state) != TRTL_OK)
        return -1.0;
    nd->kstate = state;
    size_t ss = k->scratch ? k->scratch(nd, in, out) : 0;
    void *scratch = ss ? malloc(ss) : NULL;
    trtl_kernel_args a = {nd, in, out, scratch, ss, state, pool, NULL};
    double ts[200];
    int n = 0;
    k->run(&a);
    double start = bench_wall_s();
    while (n < 200 && (n < 10 || bench_wall_s() - start < 0.2)) {
        double t0 = bench_wall_s();
        k->run(&a);
        ts[n++] = bench_wall_s() - t0;
    }
    qsort(ts, (size_t)n, sizeof ts[0], cmp_d);
    free(scratch);
    if (k->release)
        k->release(state);
    nd->kstate = NULL;
    return ts[n / 2] * 1e3;
}

static trtl_dims d4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    trtl_dims r = {0};
    r.nb_dims = 4;
    r.d[0] = a;
    r.d[1] = b;
    r.d[2] = c;
    r.d[3] = d;
    return r;
}

static trtl_dims d2(int64_t a, int64_t b)
{
    trtl_dims r = {0};
    r.nb_dims = 2;
    r.d[0] = a;
    r.d[1] = b;
    return r;
}

static void report(const char *what, const trtl_kernel *k, trtl_kernel_fn ref, trtl_node *nd, trtl_tensor_view *in,
                   trtl_dims yd, trtl_threadpool *pool)
{
    trtl_tensor_view out = {bench_rand_buf(trtl_volume(&yd), 1.0f), yd, TRTL_FLOAT};
    double tr = time_ms(NULL, ref, nd, in, &out, NULL);
    double to = time_ms(k, ref, nd, in, &out, pool);
    printf("%-44s %-28s %9.3f ms   reference %9.3f ms   x%.1f\n", what, k->name, to, tr, tr / to);
    free(out.data);
}

static void conv_node(trtl_node *nd, trtl_op op, int64_t K, int64_t G, int64_t k, int64_t s, int64_t pad, int64_t nw)
{
    memset(nd, 0, sizeof *nd);
    nd->op = op;
    nd->name = "bench";
    nd->n_in = nd->n_out = 1;
    trtl_conv_params *p = &nd->p.conv;
    p->num_output_maps = (int32_t)K;
    p->num_groups = (int32_t)G;
    p->kernel_size = d2(k, k);
    p->stride = d2(s, s);
    p->dilation = d2(1, 1);
    p->pre_padding = p->post_padding = d2(pad, pad);
    p->kernel = (trtl_weights){TRTL_FLOAT, bench_rand_buf(nw, 1.0f), nw};
    p->bias = (trtl_weights){TRTL_FLOAT, bench_rand_buf(K, 1.0f), K};
    nd->epi.act = TRTL_ACT_NONE;
}

int main(void)
{
    trtl_threadpool *pool = NULL;
    trtl_threadpool_create(0, &pool);
    printf("conv_speed_bench: %d threads\n", trtl_threadpool_size(pool));
    trtl_node nd;
    {
        trtl_dims xd = d4(1, 32, 64, 64);
        trtl_tensor_view in[1] = {{bench_rand_buf(trtl_volume(&xd), 1.0f), xd, TRTL_FLOAT}};
        conv_node(&nd, TRTL_OP_DECONVOLUTION, 16, 1, 2, 2, 0, 32 * 16 * 4);
        report("ConvTranspose 32->16 2x2 s2 [1,32,64,64]", &trtl_kernel_deconv_packed_gemm, trtl_ref_deconvolution,
               &nd, in, d4(1, 16, 128, 128), pool);
        free((void *)nd.p.conv.kernel.values);
        free((void *)nd.p.conv.bias.values);
        conv_node(&nd, TRTL_OP_DECONVOLUTION, 16, 1, 3, 2, 1, 32 * 16 * 9);
        report("ConvTranspose 32->16 3x3 s2 p1 [1,32,64,64]", &trtl_kernel_deconv_packed_gemm,
               trtl_ref_deconvolution, &nd, in, d4(1, 16, 127, 127), pool);
        free((void *)nd.p.conv.kernel.values);
        free((void *)nd.p.conv.bias.values);
        free(in[0].data);
    }
    {
        static const struct { int64_t C, H, k, s, pad; const char *what; } dw[] = {
            {144, 56, 3, 1, 1, "depthwise 3x3 s1 [1,144,56,56]"},
            {240, 28, 5, 2, 2, "depthwise 5x5 s2 [1,240,28,28]"},
            {96, 112, 3, 2, 1, "depthwise 3x3 s2 [1,96,112,112]"},
            {480, 14, 5, 1, 2, "depthwise 5x5 s1 [1,480,14,14]"},
        };
        for (size_t i = 0; i < sizeof dw / sizeof dw[0]; i++) {
            trtl_dims xd = d4(1, dw[i].C, dw[i].H, dw[i].H);
            int64_t o = (dw[i].H + 2 * dw[i].pad - dw[i].k) / dw[i].s + 1;
            trtl_tensor_view in[1] = {{bench_rand_buf(trtl_volume(&xd), 1.0f), xd, TRTL_FLOAT}};
            conv_node(&nd, TRTL_OP_CONVOLUTION, dw[i].C, dw[i].C, dw[i].k, dw[i].s, dw[i].pad, dw[i].C * dw[i].k * dw[i].k);
            nd.epi.act = TRTL_ACT_RELU;
            report(dw[i].what, &trtl_kernel_conv_depthwise, trtl_ref_convolution, &nd, in, d4(1, dw[i].C, o, o), pool);
            report(dw[i].what, &trtl_kernel_conv_depthwise_avx2, trtl_ref_convolution, &nd, in, d4(1, dw[i].C, o, o),
                   pool);
            free((void *)nd.p.conv.kernel.values);
            free((void *)nd.p.conv.bias.values);
            free(in[0].data);
        }
    }
    {
        static const struct { int64_t C, H, f; int mode, coord; const char *what; } rs[] = {
            {32, 64, 2, TRTL_RESIZE_NEAREST, TRTL_COORD_ASYMMETRIC, "nearest 2x [1,32,64,64]"},
            {128, 28, 4, TRTL_RESIZE_LINEAR, TRTL_COORD_HALF_PIXEL, "bilinear 4x half_pixel [1,128,28,28]"},
            {128, 28, 4, TRTL_RESIZE_LINEAR, TRTL_COORD_ALIGN_CORNERS, "bilinear 4x align_corners [1,128,28,28]"},
            {32, 28, 2, TRTL_RESIZE_CUBIC, TRTL_COORD_HALF_PIXEL, "bicubic 2x [1,32,28,28]"},
        };
        for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
            trtl_dims xd = d4(1, rs[i].C, rs[i].H, rs[i].H), yd = d4(1, rs[i].C, rs[i].H * rs[i].f, rs[i].H * rs[i].f);
            trtl_tensor_view in[1] = {{bench_rand_buf(trtl_volume(&xd), 1.0f), xd, TRTL_FLOAT}};
            memset(&nd, 0, sizeof nd);
            nd.op = TRTL_OP_RESIZE;
            nd.name = "bench";
            nd.n_in = nd.n_out = 1;
            nd.p.resize.shape = yd;
            nd.p.resize.resize_mode = rs[i].mode;
            nd.p.resize.coordinate_transformation = rs[i].coord;
            nd.p.resize.nearest_rounding = TRTL_ROUND_FLOOR;
            nd.p.resize.cubic_coeff = -0.75f;
            nd.epi.act = TRTL_ACT_NONE;
            report(rs[i].what, &trtl_kernel_resize_tables, trtl_ref_resize, &nd, in, yd, pool);
            free(in[0].data);
        }
    }
    trtl_threadpool_destroy(pool);
    return 0;
}
