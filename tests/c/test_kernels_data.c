/*
 * test_kernels_data.c -- the selection and conversion kernels (topk.select, select.bcast, parametric_relu.simd,
 * cast.simd, grid_sample.tables; session 22: slice.steps, gather.index, elementwise.pow, elementwise.compare, pooling.3d,
 * cumulative.scan) against their reference kernels, bit for bit, on random shapes with tails.
 *
 * Each case runs the reference kernel once, then the optimized kernel with no pool, a 2-thread pool and a
 * 3-thread pool (outputs and scratch pre-filled with a pattern the reference output does not share, so an
 * unwritten element shows), once per ISA pass: every feature this CPU has, AVX-512 hidden, then AVX-512, AVX2,
 * FMA and F16C hidden (the portable loops).  Every output (TopK's values and indices) must equal the
 * reference's byte for byte.  A kernel's cases stop at its first mismatch, which is printed with the case.
 *
 *   test_kernels_data [seed] [cases-per-kernel]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"
#include "test_common.h"
#include "kernels/ref/ref.h"
#include "core/cpu.h"
#include "core/dims.h"
#include "core/status.h"
#include "core/threadpool.h"

extern const trtl_kernel trtl_kernel_topk_select;
extern const trtl_kernel trtl_kernel_select_bcast;
extern const trtl_kernel trtl_kernel_parametric_relu_simd;
extern const trtl_kernel trtl_kernel_cast_simd;
extern const trtl_kernel trtl_kernel_grid_sample_tables;
extern const trtl_kernel trtl_kernel_slice_steps;
extern const trtl_kernel trtl_kernel_slice_rows;
extern const trtl_kernel trtl_kernel_gather_index;
extern const trtl_kernel trtl_kernel_elementwise_pow;
extern const trtl_kernel trtl_kernel_elementwise_compare;
extern const trtl_kernel trtl_kernel_pooling_3d;
extern const trtl_kernel trtl_kernel_cumulative_scan;

static float rfloat(void) { return (float)rnd() / 1073741824.0f - 1.0f; }

static trtl_threadpool *g_pools[3];
static int g_failures, g_cases, g_pass;

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* Runs the reference, then k with each pool; every output byte must match.  outs: the output views (dims and
 * types set, data ignored).  Returns 1 on a mismatch. */
static int check(const trtl_kernel *k, trtl_kernel_fn ref, trtl_node *nd, const trtl_tensor_view *in,
                 const trtl_tensor_view *outs_in)
{
    trtl_tensor_view want[2], got[2];
    size_t bytes[2];
    for (int o = 0; o < nd->n_out; o++) {
        want[o] = got[o] = outs_in[o];
        bytes[o] = (size_t)trtl_volume(&outs_in[o].dims) * trtl_dtype_size(outs_in[o].dtype);
        want[o].data = xalloc(bytes[o]);
        memset(want[o].data, 0xa5, bytes[o]);
    }
    trtl_kernel_args ra = {nd, in, want, NULL, 0, NULL, NULL, NULL};
    int bad = 0;
    if (ref(&ra) != TRTL_OK) {
        fprintf(stderr, "FAIL reference for %s [%s]: %s\n", k->name, g_desc, trtl_last_error());
        bad = 1;
    }
    trtl_dims in_dims[4];
    for (int i = 0; i < nd->n_in; i++)
        in_dims[i] = in[i].dims;
    if (!bad && k->applies && !k->applies(nd, in_dims)) {
        fprintf(stderr, "FAIL %s [%s]: applies() refused the case\n", k->name, g_desc);
        bad = 1;
    }
    /* the kernel reads its inputs and writes its outputs through copies ending at an inaccessible page where
     * guarded_copy can make them (test_common.h): a read or write past a tensor faults */
    g_kernel_name = k->name;
    trtl_tensor_view gin[4];
    size_t gib[4] = {0}, gil[4] = {0};
    void *gic[4] = {NULL};
    const int ng = nd->n_in <= 4 ? nd->n_in : 0;
    for (int i = 0; i < ng; i++) {
        gin[i] = in[i];
        gib[i] = (size_t)trtl_volume(&in[i].dims) * trtl_dtype_size(in[i].dtype);
        gic[i] = guarded_copy(in[i].data, gib[i], &gil[i]);
        if (gic[i])
            gin[i].data = gic[i];
    }
    if (ng)
        in = gin;
    for (int pi = 0; pi < 3 && !bad; pi++) {
        void *plain[2] = {NULL, NULL}, *og[2] = {NULL, NULL};
        size_t ol[2] = {0, 0};
        for (int o = 0; o < nd->n_out; o++) {
            got[o].data = plain[o] = xalloc(bytes[o]);
            memset(got[o].data, 0x5a, bytes[o]);
            og[o] = guarded_copy(plain[o], bytes[o], &ol[o]);
            if (og[o])
                got[o].data = og[o];
        }
        size_t ss = k->scratch ? k->scratch(nd, in, got) : 0;
        void *scratch = ss ? xalloc(ss) : NULL;
        if (scratch)
            memset(scratch, 0xff, ss);
        trtl_kernel_args a = {nd, in, got, scratch, ss, NULL, g_pools[pi], NULL};
        if (k->run(&a) != TRTL_OK) {
            fprintf(stderr, "FAIL %s [%s] pool=%d: run: %s\n", k->name, g_desc, pi, trtl_last_error());
            bad = 1;
        }
        for (int o = 0; o < nd->n_out && !bad; o++) {
            if (memcmp(got[o].data, want[o].data, bytes[o]) == 0)
                continue;
            size_t es = trtl_dtype_size(outs_in[o].dtype), at = 0;
            while (memcmp((char *)got[o].data + at, (char *)want[o].data + at, es) == 0)
                at += es;
            uint64_t g = 0, w = 0;
            memcpy(&g, (char *)got[o].data + at, es < 8 ? es : 8);
            memcpy(&w, (char *)want[o].data + at, es < 8 ? es : 8);
            fprintf(stderr, "MISMATCH %s [%s] pass=%d pool=%d: output %d element %zu got 0x%llx want 0x%llx\n",
                    k->name, g_desc, g_pass, pi == 0 ? 0 : pi + 1, o, at / es, (unsigned long long)g,
                    (unsigned long long)w);
            bad = 1;
        }
        for (int o = 0; o < nd->n_out; o++) {
            guarded_free(og[o], bytes[o], ol[o]);
            free(plain[o]);
        }
        free(scratch);
    }
    for (int i = 0; i < ng; i++)
        guarded_free(gic[i], gib[i], gil[i]);
    for (int o = 0; o < nd->n_out; o++)
        free(want[o].data);
    g_cases++;
    if (bad)
        g_failures++;
    return bad;
}

/* The ISA passes: 0 every feature, 1 AVX-512 hidden, 2 AVX-512 / AVX2 / FMA / F16C hidden. */
static int isa_pass(int pass)
{
    g_pass = pass;
    if (pass == 0) {
        trtl_cpu_set_mask(~0u);
        return 1;
    }
    if (pass == 1) {
        trtl_cpu_set_mask(~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI));
        return 1;
    }
    if (pass == 2) {
        trtl_cpu_set_mask(~(uint32_t)(TRTL_CPU_AVX512F | TRTL_CPU_AVX512BW | TRTL_CPU_AVX512VNNI | TRTL_CPU_AVX2 |
                                      TRTL_CPU_FMA | TRTL_CPU_F16C));
        return 1;
    }
    trtl_cpu_set_mask(~0u);
    return 0;
}

/* ---- TopK ------------------------------------------------------------------------------------- */

/* Values with many ties (a few levels), -0 / +0, NaN and infinities (kind 0: plain random). */
static void topk_fill(void *x, int is_float, int64_t n, int kind)
{
    for (int64_t i = 0; i < n; i++) {
        if (is_float) {
            float v = rfloat() * 100.0f;
            if (kind >= 1)
                v = (float)(int)(rfloat() * 4.0f); /* ties; 0 from both sides gives -0 too */
            if (kind >= 1 && rnd() % 5 == 0)
                v = -0.0f;
            if (kind >= 2 && rnd() % 7 == 0) {
                static const float sp[4] = {NAN, INFINITY, -INFINITY, -NAN};
                v = sp[rnd() % 4];
            }
            if (kind == 3 && rnd() % 2) /* mostly NaN */
                v = NAN;
            ((float *)x)[i] = v;
        } else {
            int32_t v = (int32_t)rnd();
            if (kind >= 1)
                v = (int32_t)rint_in(-3, 3);
            if (kind >= 2 && rnd() % 7 == 0)
                v = rnd() % 2 ? INT32_MAX : INT32_MIN;
            ((int32_t *)x)[i] = v;
        }
    }
}

static int topk_case(int rank, const int64_t *d, int axis, int64_t K, int max, int is_float, int kind, int k_tensor)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_TOPK;
    nd.name = "topk";
    nd.p.topk.op = max ? TRTL_TOPK_MAX : TRTL_TOPK_MIN;
    nd.p.topk.k = k_tensor ? 0 : (int32_t)K;
    nd.p.topk.axes = 1u << axis;
    nd.n_in = k_tensor ? 2 : 1;
    nd.n_out = 2;
    trtl_dims xd = trtl_dims_make(rank, d), yd = xd;
    yd.d[axis] = K;
    int64_t n = trtl_volume(&xd);
    void *x = xalloc((size_t)n * 4);
    topk_fill(x, is_float, n, kind);
    int32_t kval = (int32_t)K;
    trtl_dims kd = trtl_dims_make(0, NULL);
    trtl_tensor_view in[2] = {{x, xd, is_float ? TRTL_FLOAT : TRTL_INT32}, {&kval, kd, TRTL_INT32}};
    trtl_tensor_view out[2] = {{NULL, yd, is_float ? TRTL_FLOAT : TRTL_INT32}, {NULL, yd, TRTL_INT32}};
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s axis=%d k=%lld %s %s values=%d%s", trtl_dims_str(&xd, xs, sizeof xs), axis,
             (long long)K, max ? "max" : "min", is_float ? "float" : "int32", kind, k_tensor ? " k-tensor" : "");
    int r = check(&trtl_kernel_topk_select, trtl_ref_topk, &nd, in, out);
    free(x);
    return r;
}

static int64_t rand_k(int64_t D)
{
    switch (rnd() % 5) {
    case 0: return 1;
    case 1: return D;
    case 2: return D > 5 ? 5 : D;
    case 3: return D > 0 ? D - (D > 1) : 0;
    default: return rint_in(0, D);
    }
}

static void test_topk(int ncases)
{
    static const struct { int rank; int64_t d[4]; int axis; } sh[] = {
        {1, {10000}, 0}, {2, {3, 5003}, 1}, {2, {2, 65}, 1}, {3, {2, 17, 9}, 1}, {2, {300, 40}, 0},
        {1, {1}, 0}, {2, {64, 1000}, 1}, {3, {4, 3000, 3}, 1},
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            int64_t D = sh[i].d[sh[i].axis];
            const int64_t ks[] = {1, D < 5 ? D : 5, D < 100 ? D : 100, D};
            for (int ki = 0; ki < 4; ki++)
                for (int m = 0; m < 2; m++)
                    for (int f = 0; f < 2; f++)
                        for (int kind = 0; kind < (f ? 4 : 3); kind++)
                            if (topk_case(sh[i].rank, sh[i].d, sh[i].axis, ks[ki], m, f, kind, 0))
                                goto out;
        }
        for (int i = 0; i < ncases; i++) {
            int rank = (int)rint_in(1, 4);
            int64_t d[4];
            rand_dims(rank, d, 40000);
            int axis = (int)rint_in(0, rank - 1);
            if (rnd() % 4 == 0) /* a long axis */
                d[axis] = rint_in(100, 3000);
            if (topk_case(rank, d, axis, rand_k(d[axis]), (int)(rnd() % 2), (int)(rnd() % 3 != 0), (int)rint_in(0, 3),
                          rnd() % 8 == 0))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- Select ----------------------------------------------------------------------------------- */

static const trtl_dtype g_types[] = {TRTL_FLOAT, TRTL_INT32, TRTL_HALF, TRTL_INT8, TRTL_BOOL, TRTL_INT64, TRTL_UINT8,
                                     TRTL_BF16};
#define NTYPES ((int)(sizeof g_types / sizeof g_types[0]))

static void rand_bytes(void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)p)[i] = (uint8_t)rnd();
}

/* An operand's dims: each of y's or 1 (bits of `full`: which are y's). */
static trtl_dims operand(const trtl_dims *y, uint32_t full)
{
    trtl_dims d = *y;
    for (int i = 0; i < y->nb_dims; i++)
        if (!(full >> i & 1))
            d.d[i] = 1;
    return d;
}

static int select_case(const trtl_dims *yd, uint32_t fc, uint32_t ft, uint32_t fe, trtl_dtype t)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_SELECT;
    nd.name = "select";
    nd.n_in = 3;
    nd.n_out = 1;
    trtl_dims cd = operand(yd, fc), td = operand(yd, ft), ed = operand(yd, fe);
    size_t es = trtl_dtype_size(t);
    int64_t nc = trtl_volume(&cd), nt = trtl_volume(&td), ne = trtl_volume(&ed);
    uint8_t *c = xalloc((size_t)nc);
    for (int64_t i = 0; i < nc; i++) /* true is any nonzero byte */
        c[i] = rnd() % 2 ? 0 : (uint8_t)(rnd() % 4 ? 1 : rint_in(2, 255));
    void *tv = xalloc((size_t)nt * es), *ev = xalloc((size_t)ne * es);
    rand_bytes(tv, (size_t)nt * es);
    rand_bytes(ev, (size_t)ne * es);
    trtl_tensor_view in[3] = {{c, cd, TRTL_BOOL}, {tv, td, t}, {ev, ed, t}};
    trtl_tensor_view out[1] = {{NULL, *yd, t}};
    char ys[TRTL_DIMS_STR_MAX], cs[TRTL_DIMS_STR_MAX], ts[TRTL_DIMS_STR_MAX], es_[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "y%s cond%s then%s else%s %s", trtl_dims_str(yd, ys, sizeof ys),
             trtl_dims_str(&cd, cs, sizeof cs), trtl_dims_str(&td, ts, sizeof ts), trtl_dims_str(&ed, es_, sizeof es_),
             trtl_dtype_name(t));
    int r = check(&trtl_kernel_select_bcast, trtl_ref_select, &nd, in, out);
    free(c);
    free(tv);
    free(ev);
    return r;
}

static void test_select(int ncases)
{
    static const struct { int rank; int64_t d[4]; uint32_t fc, ft, fe; } sh[] = {
        {4, {2, 4, 33, 33}, 0xd, 0xf, 0x0},   /* attention mask [B,1,S,S] over scores, scalar -inf */
        {4, {1, 12, 77, 77}, 0xc, 0xf, 0x0},  /* causal mask [1,1,S,S] */
        {4, {2, 3, 1, 130}, 0x9, 0xf, 0xf},   /* key padding mask [B,1,1,S] */
        {1, {100003}, 0x1, 0x1, 0x1},         /* same shape, several chunks */
        {2, {300, 257}, 0x1, 0x3, 0x2},       /* per-row condition */
        {1, {7}, 0x0, 0x1, 0x0},              /* one condition */
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            trtl_dims yd = trtl_dims_make(sh[i].rank, sh[i].d);
            for (int t = 0; t < NTYPES; t++)
                if (select_case(&yd, sh[i].fc, sh[i].ft, sh[i].fe, g_types[t]))
                    goto out;
        }
        for (int i = 0; i < ncases; i++) {
            int rank = (int)rint_in(1, 5);
            int64_t d[5];
            rand_dims(rank, d, 60000);
            trtl_dims yd = trtl_dims_make(rank, d);
            uint32_t all = (1u << rank) - 1;
            uint32_t f[3];
            for (int k = 0; k < 3; k++)
                f[k] = rnd() % 3 == 0 ? all : rnd() % 4 == 0 ? 0 : rnd() & all;
            f[rnd() % 3] = all; /* one operand sets the output dims (the others need not) */
            if (select_case(&yd, f[0], f[1], f[2], g_types[rnd() % NTYPES]))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- Parametric ReLU ---------------------------------------------------------------------------- */

static void special_floats(float *x, int64_t n)
{
    static const float sp[6] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f};
    for (int64_t i = 0; i < n; i++)
        if (rnd() % 8 == 0)
            x[i] = sp[rnd() % 6];
}

static int prelu_case(const trtl_dims *xd, uint32_t fs)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_PARAMETRIC_RELU;
    nd.name = "prelu";
    nd.n_in = 2;
    nd.n_out = 1;
    trtl_dims sd = operand(xd, fs);
    int64_t n = trtl_volume(xd), ns = trtl_volume(&sd);
    float *x = xalloc((size_t)n * 4), *s = xalloc((size_t)ns * 4);
    for (int64_t i = 0; i < n; i++)
        x[i] = rfloat() * 3.0f;
    for (int64_t i = 0; i < ns; i++)
        s[i] = rfloat();
    special_floats(x, n);
    if (rnd() % 4 == 0)
        special_floats(s, ns);
    trtl_tensor_view in[2] = {{x, *xd, TRTL_FLOAT}, {s, sd, TRTL_FLOAT}};
    trtl_tensor_view out[1] = {{NULL, *xd, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX], ss[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s slopes%s", trtl_dims_str(xd, xs, sizeof xs), trtl_dims_str(&sd, ss, sizeof ss));
    int r = check(&trtl_kernel_parametric_relu_simd, trtl_ref_parametric_relu, &nd, in, out);
    free(x);
    free(s);
    return r;
}

static void test_prelu(int ncases)
{
    static const struct { int rank; int64_t d[4]; uint32_t fs; } sh[] = {
        {4, {1, 64, 56, 56}, 0x2}, {4, {2, 3, 7, 5}, 0x2}, {4, {1, 9, 9, 33}, 0x8}, {3, {1, 1, 1}, 0x0},
        {2, {5, 100003}, 0x0}, {3, {2, 19, 17}, 0x7},
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            trtl_dims xd = trtl_dims_make(sh[i].rank, sh[i].d);
            if (prelu_case(&xd, sh[i].fs))
                goto out;
        }
        for (int i = 0; i < ncases; i++) {
            int rank = (int)rint_in(1, 5);
            int64_t d[5];
            rand_dims(rank, d, 60000);
            trtl_dims xd = trtl_dims_make(rank, d);
            if (prelu_case(&xd, rnd() & ((1u << rank) - 1)))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- Cast ------------------------------------------------------------------------------------- */

static const trtl_dtype g_cast_types[] = {TRTL_FLOAT, TRTL_HALF, TRTL_INT32, TRTL_INT64, TRTL_INT8, TRTL_UINT8,
                                          TRTL_BOOL, TRTL_BF16, TRTL_FP8};
#define NCAST ((int)(sizeof g_cast_types / sizeof g_cast_types[0]))

/* Source values: ordinary ones, specials (NaN with payloads, infinities, +-0, subnormals, the saturation and
 * rounding edges of the integer and half targets) and random bit patterns (integers: extremes). */
static void cast_fill(void *x, trtl_dtype t, int64_t n)
{
    static const float fsp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -3e-8f, 2.9802322e-8f,
                                65504.0f, 65520.0f, 65519.99f, 70000.0f, 2147483648.0f, -2147483648.0f, 2147483520.0f,
                                -2147483904.0f, 3e9f, -3e9f, 255.5f, 256.0f, -0.9f, 127.9f, -128.9f, 0.5f, 1.5f};
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = rnd();
        switch (t) {
        case TRTL_FLOAT: {
            float v = r % 4 == 0 ? fsp[rnd() % (sizeof fsp / sizeof fsp[0])] : rfloat() * (r % 3 ? 300.0f : 1e5f);
            if (r % 16 == 1) { /* any bits: NaN payloads, signalling ones too */
                uint32_t b = rnd() | (rnd() << 31);
                memcpy(&v, &b, 4);
            }
            ((float *)x)[i] = v;
            break;
        }
        case TRTL_HALF: case TRTL_BF16: ((uint16_t *)x)[i] = (uint16_t)rnd(); break;
        case TRTL_INT32:
            ((int32_t *)x)[i] = r % 4 == 0 ? (int32_t)rnd() : r % 4 == 1 ? (rnd() % 2 ? INT32_MAX : INT32_MIN)
                                                                          : (int32_t)rint_in(-300, 300);
            break;
        case TRTL_INT64:
            ((int64_t *)x)[i] = r % 4 == 0 ? (int64_t)(((uint64_t)rnd() << 32) | rnd()) : (int64_t)rint_in(-70000, 70000);
            break;
        default: ((uint8_t *)x)[i] = (uint8_t)rnd(); break;
        }
    }
}

static int cast_case(int64_t n, trtl_dtype st, trtl_dtype dt, int saturate)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_CAST;
    nd.name = "cast";
    nd.p.cast.to_type = dt;
    nd.p.cast.saturate = saturate;
    nd.n_in = nd.n_out = 1;
    int64_t d[2] = {n > 3 && n % 3 == 0 ? 3 : 1, n > 3 && n % 3 == 0 ? n / 3 : n};
    trtl_dims xd = trtl_dims_make(2, d);
    void *x = xalloc((size_t)n * trtl_dtype_size(st));
    cast_fill(x, st, n);
    trtl_tensor_view in[1] = {{x, xd, st}};
    trtl_tensor_view out[1] = {{NULL, xd, dt}};
    snprintf(g_desc, sizeof g_desc, "n=%lld %s -> %s saturate=%d", (long long)n, trtl_dtype_name(st),
             trtl_dtype_name(dt), saturate);
    int r = check(&trtl_kernel_cast_simd, trtl_ref_cast, &nd, in, out);
    free(x);
    return r;
}

static void test_cast(int ncases)
{
    for (int pass = 0; isa_pass(pass); pass++) {
        for (int s = 0; s < NCAST; s++)
            for (int t = 0; t < NCAST; t++) {
                const int64_t ns[] = {1, 7, 8, 31, 1000, 70001};
                for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
                    if (cast_case(ns[k], g_cast_types[s], g_cast_types[t], 1))
                        goto out;
            }
        for (int i = 0; i < ncases; i++)
            if (cast_case(rint_in(1, rnd() % 4 ? 2000 : 120000), g_cast_types[rnd() % NCAST],
                          g_cast_types[rnd() % NCAST], (int)(rnd() % 2)))
                goto out;
    }
out:
    isa_pass(99);
}

/* ---- Slice with any step (slice.steps; slice.rows for a last step of 1) ------------------------- */

/* Output dims od, per-dim step st (any sign, 0 included) and start; the input dims are the smallest holding every
 * sampled index plus a random margin. */
static int slice_case(int r, const int64_t *od, const int64_t *st, trtl_dtype t)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_SLICE;
    nd.name = "slice";
    nd.n_in = 1;
    nd.n_out = 1;
    int64_t xd[TRTL_MAX_DIMS], start[TRTL_MAX_DIMS];
    for (int k = 0; k < r; k++) {
        int64_t span = (od[k] - 1) * (st[k] < 0 ? -st[k] : st[k]), lo = rint_in(0, 3), hi = rint_in(0, 3);
        xd[k] = span + 1 + lo + hi;
        start[k] = st[k] < 0 ? lo + span : lo;
    }
    nd.p.slice.start = trtl_dims_make(r, start);
    nd.p.slice.stride = trtl_dims_make(r, st);
    nd.p.slice.shape = trtl_dims_make(r, od);
    nd.p.slice.mode = TRTL_SLICE_DEFAULT;
    trtl_dims X = trtl_dims_make(r, xd), O = trtl_dims_make(r, od);
    size_t es = trtl_dtype_size(t);
    void *x = xalloc((size_t)trtl_volume(&X) * es);
    rand_bytes(x, (size_t)trtl_volume(&X) * es);
    trtl_tensor_view in[1] = {{x, X, t}};
    trtl_tensor_view out[1] = {{NULL, O, t}};
    char xs[TRTL_DIMS_STR_MAX], os[TRTL_DIMS_STR_MAX], ss[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s y%s step%s %s", trtl_dims_str(&X, xs, sizeof xs),
             trtl_dims_str(&O, os, sizeof os), trtl_dims_str(&nd.p.slice.stride, ss, sizeof ss), trtl_dtype_name(t));
    /* a last step of 1 is slice.rows' form (every type since session 22; slice.steps' applies() refuses it) */
    int bad = check(st[r - 1] == 1 ? &trtl_kernel_slice_rows : &trtl_kernel_slice_steps, trtl_ref_slice, &nd, in, out);
    free(x);
    return bad;
}

static void test_slice_steps(int ncases)
{
    static const struct { int rank; int64_t d[5], st[5]; } sh[] = {
        {4, {1, 3, 33, 37}, {1, 1, 1, -1}},      /* torch.flip of the width */
        {4, {2, 5, 9, 35}, {1, -1, 1, -1}},      /* two flips */
        {4, {2, 16, 7, 41}, {0, 1, 1, 0}},       /* Expand [1,C,H,1] -> [N,C,H,W] */
        {4, {3, 4, 9, 67}, {1, 0, 0, 1}},        /* Expand [N,1,1,S] -> [N,H,S,S] */
        {2, {4, 131}, {0, 1}},                   /* position ids [1,S] -> [B,S] */
        {3, {2, 9, 70}, {1, 1, 2}},              /* Focus x[..., ::2] */
        {3, {2, 9, 23}, {1, -2, -3}},
        {1, {100003}, {-1}},                     /* one long reversed row: the pool */
        {2, {70000, 1}, {-1, 1}},                /* rows of one: merged into one reversed row */
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t c = 0; c < sizeof sh / sizeof sh[0]; c++)
            for (int ti = 0; ti < NTYPES; ti++)
                if (slice_case(sh[c].rank, sh[c].d, sh[c].st, g_types[ti]))
                    goto out;
        for (int i = 0; i < ncases; i++) {
            int r = (int)rint_in(1, 5);
            int64_t d[5], st[5];
            rand_dims(r, d, 60000);
            for (int k = 0; k < r; k++)
                st[k] = rnd() % 3 == 0 ? rint_in(-3, 3) : (rnd() % 2 ? 1 : -1);
            if (slice_case(r, d, st, g_types[rnd() % NTYPES]))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- GatherElements / GatherND (gather.index) ------------------------------------------------- */

static void rand_indices(void *p, int is64, int64_t n, const int64_t *range, int64_t period)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t A = range[i % period], v = A ? rint_in(-A, A - 1) : 0;
        if (is64)
            ((int64_t *)p)[i] = v;
        else
            ((int32_t *)p)[i] = (int32_t)v;
    }
}

/* bad: one index made out of range (both kernels must fail, neither crash). */
static int gather_case(int mode, int b, const trtl_dims *D, const trtl_dims *I, const trtl_dims *O, int axis,
                       int is64, trtl_dtype t, int bad)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_GATHER;
    nd.name = "gather";
    nd.n_in = 2;
    nd.n_out = 1;
    nd.p.gather.mode = mode;
    nd.p.gather.axis = axis;
    nd.p.gather.num_elementwise_dims = b;
    size_t es = trtl_dtype_size(t);
    int64_t nx = trtl_volume(D), ni = trtl_volume(I);
    void *x = xalloc((size_t)nx * es), *ind = xalloc((size_t)ni * (is64 ? 8 : 4));
    rand_bytes(x, (size_t)nx * es);
    int64_t range[TRTL_MAX_DIMS], period = 1;
    if (mode == TRTL_GATHER_ELEMENT) {
        range[0] = D->d[axis];
    } else {
        period = I->d[I->nb_dims - 1];
        for (int64_t k = 0; k < period; k++)
            range[k] = D->d[b + k];
    }
    rand_indices(ind, is64, ni, range, period);
    if (bad && ni > 0) {
        int64_t at = (int64_t)(rnd() % (uint32_t)ni), v = rnd() % 2 ? range[at % period] : -range[at % period] - 1;
        if (is64)
            ((int64_t *)ind)[at] = v;
        else
            ((int32_t *)ind)[at] = (int32_t)v;
    }
    trtl_tensor_view in[2] = {{x, *D, t}, {ind, *I, is64 ? TRTL_INT64 : TRTL_INT32}};
    trtl_tensor_view out[1] = {{NULL, *O, t}};
    char ds[TRTL_DIMS_STR_MAX], is[TRTL_DIMS_STR_MAX], os[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "%s b=%d axis=%d data%s ind%s%s y%s %s%s", mode == TRTL_GATHER_ND ? "ND" : "ELEMENT",
             b, axis, trtl_dims_str(D, ds, sizeof ds), trtl_dims_str(I, is, sizeof is), is64 ? "i64" : "i32",
             trtl_dims_str(O, os, sizeof os), trtl_dtype_name(t), bad ? " bad index" : "");
    int r;
    if (!bad) {
        r = check(&trtl_kernel_gather_index, trtl_ref_gather, &nd, in, out);
    } else { /* the kernel's error is the reference's */
        trtl_tensor_view y = out[0];
        y.data = xalloc((size_t)trtl_volume(O) * es);
        trtl_kernel_args ka = {&nd, in, &y, NULL, 0, NULL, g_pools[rnd() % 3], NULL};
        trtl_status s = trtl_kernel_gather_index.run(&ka);
        r = s == TRTL_OK || !strstr(trtl_last_error(), "out of range") || !strstr(trtl_last_error(), "'gather'");
        if (r)
            fprintf(stderr, "FAIL gather.index [%s]: status %d, error '%s'\n", g_desc, (int)s, trtl_last_error());
        free(y.data);
        g_cases++;
        g_failures += r;
    }
    free(x);
    free(ind);
    return r;
}

static int gather_element_case(int r, const int64_t *dd, int axis, int64_t aout, int is64, trtl_dtype t, int bad)
{
    int64_t od[TRTL_MAX_DIMS];
    for (int i = 0; i < r; i++)
        od[i] = i == axis ? aout : i < axis ? rint_in(1, dd[i]) : dd[i];
    trtl_dims D = trtl_dims_make(r, dd), O = trtl_dims_make(r, od);
    return gather_case(TRTL_GATHER_ELEMENT, 0, &D, &O, &O, axis, is64, t, bad);
}

/* ND: b paired dims (each operand's or 1), J index dims, tuples of k. */
static int gather_nd_case(int r, const int64_t *dd, int b, int k, int nj, const int64_t *jd, int is64, trtl_dtype t,
                          int bad)
{
    int64_t id[TRTL_MAX_DIMS], od[TRTL_MAX_DIMS], dd2[TRTL_MAX_DIMS];
    int q = b + nj + 1, ro = 0;
    for (int i = 0; i < r; i++)
        dd2[i] = dd[i];
    for (int i = 0; i < b; i++) {
        od[ro++] = dd[i];
        id[i] = rnd() % 4 == 0 ? 1 : dd[i];
        if (id[i] == dd[i] && rnd() % 4 == 0)
            dd2[i] = 1; /* the data broadcast instead */
    }
    for (int i = 0; i < nj; i++)
        id[b + i] = od[ro++] = jd[i];
    id[q - 1] = k;
    for (int i = b + k; i < r; i++)
        od[ro++] = dd[i];
    trtl_dims D = trtl_dims_make(r, dd2), I = trtl_dims_make(q, id), O = trtl_dims_make(ro, od);
    return gather_case(TRTL_GATHER_ND, b, &D, &I, &O, 0, is64, t, bad);
}

static void test_gather_index(int ncases)
{
    for (int pass = 0; isa_pass(pass); pass++) {
        static const struct { int r, axis; int64_t d[4], aout; } el[] = {
            {3, 1, {1, 840, 85}, 300},      /* the top-k boxes' rows */
            {4, 3, {2, 3, 16, 129}, 131},   /* last axis */
            {4, 1, {2, 64, 7, 9}, 64},      /* a channel permutation */
            {1, 0, {1000}, 70000},          /* one long row: the pool */
            {2, 0, {50, 1}, 9},
        };
        for (size_t c = 0; c < sizeof el / sizeof el[0]; c++)
            for (int ti = 0; ti < NTYPES; ti++)
                for (int is64 = 0; is64 < 2; is64++)
                    if (gather_element_case(el[c].r, el[c].d, el[c].axis, el[c].aout, is64, g_types[ti], 0))
                        goto out;
        {
            const int64_t d1[3] = {1, 840, 85}, j1[1] = {300}, d2[3] = {64, 64, 64}, j2[1] = {20000};
            for (int ti = 0; ti < NTYPES; ti++)
                for (int is64 = 0; is64 < 2; is64++)
                    if (gather_nd_case(3, d1, 1, 1, 1, j1, is64, g_types[ti], 0) ||
                        gather_nd_case(3, d2, 0, 3, 1, j2, is64, g_types[ti], 0))
                        goto out;
        }
        for (int i = 0; i < ncases; i++) {
            int r = (int)rint_in(1, 4), is64 = (int)(rnd() % 2), bad = rnd() % 8 == 0;
            int64_t d[4];
            rand_dims(r, d, 30000);
            trtl_dtype t = g_types[rnd() % NTYPES];
            if (rnd() % 2) {
                int axis = (int)rint_in(0, r - 1);
                if (gather_element_case(r, d, axis, rint_in(1, rnd() % 3 ? 12 : 300), is64, t, bad))
                    goto out;
            } else {
                int b = (int)rint_in(0, r - 1), k = (int)rint_in(1, r - b), nj = (int)rint_in(0, 2);
                int64_t jd[2] = {rint_in(1, 40), rint_in(1, 9)};
                if (b + nj + 1 > TRTL_MAX_DIMS || b + nj + r - b - k > TRTL_MAX_DIMS)
                    continue;
                if (gather_nd_case(r, d, b, k, nj, jd, is64, t, bad))
                    goto out;
            }
        }
    }
out:
    isa_pass(99);
}

/* ---- Pow by one exponent (elementwise.pow) ---------------------------------------------------- */

/* Random floats of every class: NaN with random payloads and signs, +-0, +-inf, subnormals, huge, negatives. */
static void pow_fill(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = rnd(), k = rnd() % 16;
        float v;
        if (k == 0) {
            u = (u & 0x807fffffu) | 0x7f800000u;
            if (!(u & 0x7fffffu))
                u |= 1;
            memcpy(&v, &u, 4); /* NaN, quiet or signaling, any payload */
        } else if (k == 1) {
            v = (u & 1) ? -0.0f : 0.0f;
        } else if (k == 2) {
            v = (u & 1) ? -INFINITY : INFINITY;
        } else if (k == 3) {
            u &= 0x807fffffu;
            memcpy(&v, &u, 4); /* subnormal */
        } else if (k < 6) {
            memcpy(&v, &u, 4); /* any bits */
        } else {
            v = rfloat() * (k < 10 ? 4.0f : 300.0f);
        }
        x[i] = v;
    }
}

static int pow_case(const trtl_dims *xd, const trtl_dims *ed, float e)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_ELEMENTWISE;
    nd.name = "pow";
    nd.n_in = 2;
    nd.n_out = 1;
    nd.p.ew.op = TRTL_EW_POW;
    int64_t n = trtl_volume(xd);
    float *x = xalloc((size_t)n * sizeof(float));
    pow_fill(x, n);
    trtl_tensor_view in[2] = {{x, *xd, TRTL_FLOAT}, {&e, *ed, TRTL_FLOAT}};
    trtl_tensor_view out[1] = {{NULL, *xd, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX], es_[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s e%s = %g", trtl_dims_str(xd, xs, sizeof xs), trtl_dims_str(ed, es_, sizeof es_),
             (double)e);
    int r = check(&trtl_kernel_elementwise_pow, trtl_ref_elementwise, &nd, in, out);
    free(x);
    return r;
}

static void test_pow(int ncases)
{
    static const float es[] = {2.0f, 0.5f, 0.0f, -0.0f, 3.0f, 1.0f, -1.0f, -0.5f, 2.5f, NAN};
    const int ne = (int)(sizeof es / sizeof es[0]);
    for (int pass = 0; isa_pass(pass); pass++) {
        for (int i = 0; i < ne; i++) {
            const int64_t d1[1] = {100003}, d4[4] = {1, 3, 17, 33}, one[4] = {1, 1, 1, 1};
            trtl_dims x1 = trtl_dims_make(1, d1), x4 = trtl_dims_make(4, d4), e1 = trtl_dims_make(1, one), e4 = trtl_dims_make(4, one); /* equal ranks: TensorRT's broadcast */
            if (pow_case(&x1, &e1, es[i]) || pow_case(&x4, &e4, es[i]))
                goto out;
        }
        for (int i = 0; i < ncases; i++) {
            int r = (int)rint_in(1, 4);
            int64_t d[4], one[4] = {1, 1, 1, 1};
            rand_dims(r, d, 40000);
            trtl_dims xd = trtl_dims_make(r, d), ed = trtl_dims_make(r, one);
            if (pow_case(&xd, &ed, es[rnd() % (uint32_t)ne]))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- Comparisons and BOOL logic (elementwise.compare) --------------------------------------- */

static void cmp_fill(void *p, trtl_dtype t, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t k = rnd() % 8;
        if (t == TRTL_FLOAT) {
            float v = k == 0 ? NAN : k == 1 ? -0.0f : k == 2 ? 0.0f : k == 3 ? -INFINITY : (float)rint_in(-3, 3);
            ((float *)p)[i] = v;
        } else if (t == TRTL_INT32) {
            ((int32_t *)p)[i] = k == 0 ? INT32_MIN : k == 1 ? INT32_MAX : (int32_t)rint_in(-3, 3);
        } else if (t == TRTL_INT64) {
            ((int64_t *)p)[i] = k == 0 ? INT64_MIN : k == 1 ? INT64_MAX : k == 2 ? ((int64_t)1 << 40) : rint_in(-3, 3);
        } else {
            ((uint8_t *)p)[i] = (uint8_t)(k < 4 ? 0 : k < 7 ? 1 : rint_in(2, 255)); /* true: any nonzero byte */
        }
    }
}

static int cmp_case(const trtl_dims *yd, uint32_t fa, uint32_t fb, int32_t op, trtl_dtype t)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_ELEMENTWISE;
    nd.name = "compare";
    nd.n_in = 2;
    nd.n_out = 1;
    nd.p.ew.op = op;
    trtl_dims ad = operand(yd, fa), bd = operand(yd, fb);
    size_t es = trtl_dtype_size(t);
    int64_t na = trtl_volume(&ad), nb = trtl_volume(&bd);
    void *av = xalloc((size_t)na * es), *bv = xalloc((size_t)nb * es);
    cmp_fill(av, t, na);
    cmp_fill(bv, t, nb);
    trtl_tensor_view in[2] = {{av, ad, t}, {bv, bd, t}};
    trtl_tensor_view out[1] = {{NULL, *yd, TRTL_BOOL}};
    char ys[TRTL_DIMS_STR_MAX], as[TRTL_DIMS_STR_MAX], bs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "op %d y%s a%s b%s %s", (int)op, trtl_dims_str(yd, ys, sizeof ys),
             trtl_dims_str(&ad, as, sizeof as), trtl_dims_str(&bd, bs, sizeof bs), trtl_dtype_name(t));
    int r = check(&trtl_kernel_elementwise_compare, trtl_ref_elementwise, &nd, in, out);
    free(av);
    free(bv);
    return r;
}

static void test_compare(int ncases)
{
    static const int32_t cmp_ops[] = {TRTL_EW_EQUAL, TRTL_EW_GREATER, TRTL_EW_LESS};
    static const int32_t logic_ops[] = {TRTL_EW_AND, TRTL_EW_OR, TRTL_EW_XOR};
    static const trtl_dtype cmp_types[] = {TRTL_FLOAT, TRTL_INT32, TRTL_INT64};
    static const struct { int rank; int64_t d[4]; uint32_t fa, fb; } sh[] = {
        {4, {1, 12, 67, 67}, 0xf, 0xd},  /* scores vs a [1,1,S,S] mask */
        {2, {8, 517}, 0x3, 0x0},         /* ids == pad */
        {2, {8, 517}, 0x0, 0x3},
        {3, {3, 45, 70}, 0x5, 0x6},      /* outer product */
        {1, {100003}, 0x1, 0x1},         /* one long row: the pool */
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t c = 0; c < sizeof sh / sizeof sh[0]; c++) {
            trtl_dims yd = trtl_dims_make(sh[c].rank, sh[c].d);
            for (int o = 0; o < 3; o++) {
                for (int t = 0; t < 3; t++)
                    if (cmp_case(&yd, sh[c].fa, sh[c].fb, cmp_ops[o], cmp_types[t]))
                        goto out;
                if (cmp_case(&yd, sh[c].fa, sh[c].fb, logic_ops[o], TRTL_BOOL))
                    goto out;
            }
        }
        for (int i = 0; i < ncases; i++) {
            int r = (int)rint_in(1, 4);
            int64_t d[4];
            rand_dims(r, d, 60000);
            trtl_dims yd = trtl_dims_make(r, d);
            uint32_t fa = rnd() & ((1u << r) - 1), fb = rnd() & ((1u << r) - 1);
            int o = (int)(rnd() % 3);
            if (rnd() % 4 == 0 ? cmp_case(&yd, fa, fb, logic_ops[o], TRTL_BOOL)
                               : cmp_case(&yd, fa, fb, cmp_ops[o], cmp_types[rnd() % 3]))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- 3-D pooling (pooling.3d) ----------------------------------------------------------------- */

/* kind 0: random; 1: many +-0 ties, NaNs with payloads, infinities (the order-dependent cases). */
static void pool3_fill(float *x, int64_t n, int kind)
{
    for (int64_t i = 0; i < n; i++) {
        float v = rfloat() * 10.0f;
        if (kind) {
            uint32_t k = rnd() % 16;
            if (k < 5)
                v = (k & 1) ? -0.0f : 0.0f;
            else if (k < 7)
                v = -(float)(rnd() % 3); /* below zero: zeros win */
            else if (k == 7) {
                uint32_t u = 0x7f800000u | (rnd() & 0x807fffffu) | 1u; /* NaN, signaling or quiet, any sign */
                memcpy(&v, &u, 4);
            } else if (k == 8)
                v = (rnd() & 1) ? INFINITY : -INFINITY;
        }
        x[i] = v;
    }
}

static int pool3_case(int64_t N, int64_t C, const int64_t *in, const int64_t *k, const int64_t *s, const int64_t *pre,
                      const int64_t *post, int type, int excl, int kind)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_POOLING;
    nd.name = "pool3d";
    nd.n_in = 1;
    nd.n_out = 1;
    trtl_pooling_params *p = &nd.p.pool;
    p->type = type;
    p->window_size = trtl_dims_make(3, k);
    p->stride = trtl_dims_make(3, s);
    p->pre_padding = trtl_dims_make(3, pre);
    p->post_padding = trtl_dims_make(3, post);
    p->padding_mode = TRTL_PADMODE_EXPLICIT_ROUND_DOWN;
    p->average_count_excludes_padding = excl;
    int64_t xd[5] = {N, C, in[0], in[1], in[2]}, yd[5] = {N, C, 0, 0, 0};
    for (int i = 0; i < 3; i++) {
        if (in[i] + pre[i] + post[i] < k[i])
            return 0; /* no window fits */
        yd[2 + i] = (in[i] + pre[i] + post[i] - k[i]) / s[i] + 1;
    }
    trtl_dims X = trtl_dims_make(5, xd), Y = trtl_dims_make(5, yd);
    float *x = xalloc((size_t)trtl_volume(&X) * sizeof(float));
    pool3_fill(x, trtl_volume(&X), kind);
    trtl_tensor_view iv[1] = {{x, X, TRTL_FLOAT}};
    trtl_tensor_view ov[1] = {{NULL, Y, TRTL_FLOAT}};
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "%s x%s k%lldx%lldx%lld s%lld,%lld,%lld pre%lld,%lld,%lld post%lld,%lld,%lld excl=%d "
             "kind=%d", type == TRTL_POOL_MAX ? "MAX" : "AVG", trtl_dims_str(&X, xs, sizeof xs), (long long)k[0],
             (long long)k[1], (long long)k[2], (long long)s[0], (long long)s[1], (long long)s[2], (long long)pre[0],
             (long long)pre[1], (long long)pre[2], (long long)post[0], (long long)post[1], (long long)post[2], excl,
             kind);
    int r = check(&trtl_kernel_pooling_3d, trtl_ref_pooling, &nd, iv, ov);
    free(x);
    return r;
}

static void test_pooling_3d(int ncases)
{
    static const struct { int64_t N, C, in[3], k[3], s[3], pre[3], post[3]; } sh[] = {
        {1, 3, {9, 29, 29}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}},  /* C3D-style */
        {2, 2, {5, 30, 30}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}, {0, 1, 1}},  /* R3D stem */
        {1, 2, {8, 16, 18}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0}},  /* 3-D U-Net */
        {1, 1, {4, 5, 37}, {2, 3, 4}, {1, 1, 3}, {1, 2, 3}, {1, 2, 3}},   /* windows reaching past the padding */
        {1, 1, {3, 4, 300}, {3, 2, 5}, {1, 2, 1}, {0, 1, 2}, {2, 0, 4}},  /* a long row */
    };
    for (int pass = 0; isa_pass(pass); pass++) {
        for (size_t c = 0; c < sizeof sh / sizeof sh[0]; c++)
            for (int type = 0; type < 2; type++)
                for (int kind = 0; kind < 2; kind++)
                    if (pool3_case(sh[c].N, sh[c].C, sh[c].in, sh[c].k, sh[c].s, sh[c].pre, sh[c].post,
                                   type ? TRTL_POOL_AVERAGE : TRTL_POOL_MAX, kind, kind))
                        goto out;
        for (int i = 0; i < ncases; i++) {
            int64_t in[3], k[3], s[3], pre[3], post[3];
            for (int d = 0; d < 3; d++) {
                in[d] = rint_in(1, d == 2 ? 40 : 9);
                k[d] = rint_in(1, 4);
                s[d] = rint_in(1, 3);
                pre[d] = rint_in(0, k[d] - 1);
                post[d] = rint_in(0, k[d]);
            }
            if (pool3_case(rint_in(1, 2), rint_in(1, 3), in, k, s, pre, post,
                           rnd() % 2 ? TRTL_POOL_MAX : TRTL_POOL_AVERAGE, (int)(rnd() % 2), (int)(rnd() % 2)))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- CumSum / CumProd (cumulative.scan) -------------------------------------------------------- */

static int cum_case(int r, const int64_t *d, int32_t axis, int op, int excl, int rev, trtl_dtype t)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_CUMULATIVE;
    nd.name = "cumsum";
    nd.n_in = 2;
    nd.n_out = 1;
    nd.p.cum.op = op;
    nd.p.cum.axis = axis;
    nd.p.cum.exclusive = excl;
    nd.p.cum.reverse = rev;
    trtl_dims X = trtl_dims_make(r, d), A = trtl_dims_make(0, d);
    int64_t n = trtl_volume(&X);
    size_t es = trtl_dtype_size(t);
    void *x = xalloc((size_t)n * es);
    for (int64_t i = 0; i < n; i++) {
        uint32_t k = rnd() % 8;
        if (t == TRTL_FLOAT) {
            float v = op == TRTL_CUM_PROD ? 1.0f + rfloat() * 0.5f : rfloat() * (k < 2 ? 1e7f : k < 4 ? 1e-3f : 10.0f);
            if (rnd() % 200 == 0)
                v = rnd() % 2 ? NAN : INFINITY;
            ((float *)x)[i] = v;
        } else if (t == TRTL_INT32) {
            ((int32_t *)x)[i] = k == 0 ? INT32_MAX : k == 1 ? INT32_MIN : (int32_t)rint_in(-5, 5);
        } else {
            ((int64_t *)x)[i] = k == 0 ? INT64_MAX : k == 1 ? INT64_MIN : rint_in(-5, 5);
        }
    }
    int32_t av = axis - (rnd() % 2 ? r : 0); /* negative axes too */
    trtl_tensor_view in[2] = {{x, X, t}, {&av, A, TRTL_INT32}};
    trtl_tensor_view out[1] = {{NULL, X, t}};
    char xs[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "%s x%s axis %d excl=%d rev=%d %s", op == TRTL_CUM_PROD ? "PROD" : "SUM",
             trtl_dims_str(&X, xs, sizeof xs), (int)av, excl, rev, trtl_dtype_name(t));
    int res = check(&trtl_kernel_cumulative_scan, trtl_ref_cumulative, &nd, in, out);
    free(x);
    return res;
}

static void test_cumulative(int ncases)
{
    static const trtl_dtype ts[] = {TRTL_FLOAT, TRTL_INT32, TRTL_INT64};
    for (int pass = 0; isa_pass(pass); pass++) {
        const int64_t ids[2] = {8, 517}, map[4] = {2, 37, 5, 300}, lng[1] = {70001};
        for (int ti = 0; ti < 3; ti++)
            for (int f = 0; f < 8; f++) {
                int op = f & 4 ? TRTL_CUM_PROD : TRTL_CUM_SUM;
                if (cum_case(2, ids, 1, op, f & 1, (f >> 1) & 1, ts[ti]) ||
                    cum_case(4, map, 1, op, f & 1, (f >> 1) & 1, ts[ti]) ||
                    cum_case(1, lng, 0, op, f & 1, (f >> 1) & 1, ts[ti]))
                    goto out;
            }
        for (int i = 0; i < ncases; i++) {
            int r = (int)rint_in(1, 4);
            int64_t d[4];
            rand_dims(r, d, 40000);
            if (cum_case(r, d, (int32_t)rint_in(0, r - 1), rnd() % 4 ? TRTL_CUM_SUM : TRTL_CUM_PROD, (int)(rnd() % 2),
                         (int)(rnd() % 2), ts[rnd() % 3]))
                goto out;
        }
    }
out:
    isa_pass(99);
}

/* ---- GridSample -------------------------------------------------------------------------------- */

static int grid_case(int k, const int64_t *xs, const int64_t *out_sp, int mode, int pad, int align, int special)
{
    trtl_node nd;
    memset(&nd, 0, sizeof nd);
    nd.op = TRTL_OP_GRID_SAMPLE;
    nd.name = "grid_sample";
    nd.p.grid.interpolation_mode = mode;
    nd.p.grid.sample_mode = pad;
    nd.p.grid.align_corners = align;
    nd.n_in = 2;
    nd.n_out = 1;
    int64_t gd[5] = {xs[0]}, yd[5] = {xs[0], xs[1]};
    for (int i = 0; i < k; i++)
        gd[1 + i] = yd[2 + i] = out_sp[i];
    gd[k + 1] = k;
    trtl_dims X = trtl_dims_make(k + 2, xs), G = trtl_dims_make(k + 2, gd), Y = trtl_dims_make(k + 2, yd);
    int64_t nx = trtl_volume(&X), ng = trtl_volume(&G);
    float *x = xalloc((size_t)nx * 4), *g = xalloc((size_t)ng * 4);
    for (int64_t i = 0; i < nx; i++)
        x[i] = rfloat() * 4.0f;
    for (int64_t i = 0; i < ng; i++) /* inside and past the edges; exact edges and centres too */
        g[i] = rnd() % 6 == 0 ? (float)rint_in(-4, 4) / 4.0f : rfloat() * 1.4f;
    if (special) {
        special_floats(x, nx);
        for (int64_t i = 0; i < ng; i++)
            if (rnd() % 16 == 0)
                g[i] = rnd() % 3 == 0 ? NAN : rnd() % 2 ? 1e30f : -INFINITY;
    }
    trtl_tensor_view in[2] = {{x, X, TRTL_FLOAT}, {g, G, TRTL_FLOAT}};
    trtl_tensor_view out[1] = {{NULL, Y, TRTL_FLOAT}};
    char a[TRTL_DIMS_STR_MAX], b[TRTL_DIMS_STR_MAX];
    snprintf(g_desc, sizeof g_desc, "x%s grid%s mode=%d pad=%d align=%d special=%d", trtl_dims_str(&X, a, sizeof a),
             trtl_dims_str(&G, b, sizeof b), mode, pad, align, special);
    int r = check(&trtl_kernel_grid_sample_tables, trtl_ref_grid_sample, &nd, in, out);
    free(x);
    free(g);
    return r;
}

static void test_grid_sample(int ncases)
{
    static const int modes[3] = {TRTL_RESIZE_NEAREST, TRTL_RESIZE_LINEAR, TRTL_RESIZE_CUBIC};
    static const int pads[3] = {TRTL_SLICE_FILL, TRTL_SLICE_CLAMP, TRTL_SLICE_REFLECT};
    for (int pass = 0; isa_pass(pass); pass++) {
        const int64_t x2[4] = {2, 3, 9, 13}, o2[2] = {7, 11}, x3[5] = {1, 2, 4, 5, 6}, o3[3] = {3, 4, 5};
        const int64_t xb[4] = {1, 8, 32, 32}, ob[2] = {64, 64}; /* several blocks, some threads */
        for (int m = 0; m < 3; m++)
            for (int pd = 0; pd < 3; pd++)
                for (int al = 0; al < 2; al++)
                    for (int sp = 0; sp < 2; sp++)
                        if (grid_case(2, x2, o2, modes[m], pads[pd], al, sp) ||
                            grid_case(3, x3, o3, modes[m], pads[pd], al, sp))
                            goto out;
        for (int m = 0; m < 3; m++)
            if (grid_case(2, xb, ob, modes[m], TRTL_SLICE_FILL, 0, 0))
                goto out;
        for (int i = 0; i < ncases; i++) {
            int k = rnd() % 4 ? 2 : 3;
            int64_t xs[5], os[3];
            xs[0] = rint_in(1, 2);
            xs[1] = rint_in(1, 5);
            for (int d = 0; d < k; d++) {
                xs[2 + d] = rint_in(1, k == 2 ? 20 : 6);
                os[d] = rint_in(1, k == 2 ? 23 : 7);
            }
            if (grid_case(k, xs, os, modes[rnd() % 3], pads[rnd() % 3], (int)(rnd() % 2), rnd() % 4 == 0))
                goto out;
        }
    }
out:
    isa_pass(99);
}

int main(int argc, char **argv)
{
    test_install_fault_handler();
    g_rng = argc > 1 ? strtoull(argv[1], NULL, 10) : 20261128;
    int ncases = argc > 2 ? atoi(argv[2]) : 60;
    g_pools[0] = NULL;
    if (trtl_threadpool_create(2, &g_pools[1]) != TRTL_OK || trtl_threadpool_create(3, &g_pools[2]) != TRTL_OK) {
        fprintf(stderr, "cannot create thread pools: %s\n", trtl_last_error());
        return 2;
    }
    printf("cpu features 0x%x\n", trtl_cpu_features());
    struct { const char *name; void (*fn)(int); } sections[] = {
        {"topk.select", test_topk}, {"select.bcast", test_select}, {"parametric_relu.simd", test_prelu},
        {"cast.simd", test_cast}, {"grid_sample.tables", test_grid_sample}, {"slice.steps", test_slice_steps},
        {"gather.index", test_gather_index}, {"elementwise.pow", test_pow}, {"elementwise.compare", test_compare},
        {"pooling.3d", test_pooling_3d}, {"cumulative.scan", test_cumulative},
    };
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        int before = g_failures, cases = g_cases;
        sections[i].fn(ncases);
        printf("%-22s %5d cases %s\n", sections[i].name, g_cases - cases, g_failures > before ? "FAILED" : "ok");
    }
    trtl_threadpool_destroy(g_pools[1]);
    trtl_threadpool_destroy(g_pools[2]);
    printf("%d cases, %d failures\n", g_cases, g_failures);
    return g_failures ? 1 : 0;
}
