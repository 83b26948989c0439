/*
 * reduce_axes_simd.h -- reduce.axes's SIMD bodies, written once over reduce_vec.h's operations and
 * compiled per ISA by reduce_axes.c (rows_avx512 / run_avx512, rows_avx2 / run_avx2).  Not a header
 * for other files.
 */

/* rows over nv full vectors (constant after inlining: the accumulators stay in registers). */
RV_INL void RV_SFX(rows_nv)(int op, int nv, const float *x, int64_t st, int64_t n, float *y, int first)
{
    rv_v acc[8];
    for (int v = 0; v < nv; v++)
        acc[v] = first ? rv_set(ra_identity(op)) : rv_load(y + RV_W * v);
    for (int64_t r = 0; r < n; r++) {
        const float *p = x + r * st;
        for (int v = 0; v < nv; v++)
            acc[v] = rv_comb(op, acc[v], rv_load(p + RV_W * v));
    }
    for (int v = 0; v < nv; v++)
        rv_store(y + RV_W * v, acc[v]);
}

RV_INL void RV_SFX(rows_op)(int op, const float *x, int64_t st, int64_t n, int64_t w, float *y, int first)
{
    int64_t i = 0;
    for (; i + 8 * RV_W <= w; i += 8 * RV_W)
        RV_SFX(rows_nv)(op, 8, x + i, st, n, y + i, first);
    for (int nv = 4; nv >= 1; nv /= 2)
        if (i + nv * RV_W <= w) {
            RV_SFX(rows_nv)(op, nv, x + i, st, n, y + i, first);
            i += nv * RV_W;
        }
    if (i < w) {
        rv_k k = rv_tail(w - i);
        rv_v acc = first ? rv_set(ra_identity(op)) : rv_loadm(k, y + i);
        for (int64_t r = 0; r < n; r++)
            acc = rv_comb(op, acc, rv_loadm(k, x + i + r * st));
        rv_storem(k, y + i, acc);
    }
}

/* y[0:w] (= identity when first) op= rows x + r * st, r < n; one body per op. */
RV_FN void RV_SFX(rows)(int op, const float *x, int64_t st, int64_t n, int64_t w, float *y, int first)
{
    switch (op) {
    case TRTL_RED_PROD: RV_SFX(rows_op)(TRTL_RED_PROD, x, st, n, w, y, first); break;
    case TRTL_RED_MAX: RV_SFX(rows_op)(TRTL_RED_MAX, x, st, n, w, y, first); break;
    case TRTL_RED_MIN: RV_SFX(rows_op)(TRTL_RED_MIN, x, st, n, w, y, first); break;
    default: RV_SFX(rows_op)(TRTL_RED_SUM, x, st, n, w, y, first); break;
    }
}

/* op over x[0:n] in four vector partials, their lanes combined left to right, then the scalar tail. */
RV_FN float RV_SFX(run)(int op, const float *x, int64_t n)
{
    rv_v id = rv_set(ra_identity(op));
    rv_v a0 = id, a1 = id, a2 = id, a3 = id;
    int64_t i = 0;
    for (; i + 4 * RV_W <= n; i += 4 * RV_W) {
        a0 = rv_comb(op, a0, rv_load(x + i));
        a1 = rv_comb(op, a1, rv_load(x + i + RV_W));
        a2 = rv_comb(op, a2, rv_load(x + i + 2 * RV_W));
        a3 = rv_comb(op, a3, rv_load(x + i + 3 * RV_W));
    }
    for (; i + RV_W <= n; i += RV_W)
        a0 = rv_comb(op, a0, rv_load(x + i));
    float t[RV_W];
    rv_store(t, rv_comb(op, rv_comb(op, a0, a1), rv_comb(op, a2, a3)));
    float acc = t[0];
    for (int k = 1; k < RV_W; k++)
        acc = comb1(op, acc, t[k]);
    for (; i < n; i++)
        acc = comb1(op, acc, x[i]);
    return acc;
}
