/*
 * reduce_binary_simd.h -- reduce_binary.rows's SIMD body, written once over reduce_vec.h's operations
 * and compiled per ISA by reduce_binary.c (rows_avx512, rows_avx2).  Not a header for other files.
 */

/* unary(u ew w) for the fused op's ew (SUM / PROD / SUB) and unary (ABS or none). */
RV_INL rv_v RV_SFX(val)(int ew, int un, rv_v u, rv_v w)
{
    rv_v e = ew == TRTL_EW_SUM ? rv_add(u, w) : ew == TRTL_EW_PROD ? rv_mul(u, w) : rv_sub(u, w);
    return un == TRTL_UN_ABS ? rv_abs(e) : e;
}

/* nv full vectors at column c (nv, op, av, bv constant after inlining). */
RV_INL void RV_SFX(rows_nv)(const rb_row *q, int op, int av, int bv, int nv, int64_t c, float *y, int first)
{
    rv_v acc[8];
    for (int v = 0; v < nv; v++)
        acc[v] = first ? rv_set(rb_identity(op)) : rv_load(y + c + RV_W * v);
    const int ew = q->ew, un = q->un;
    for (int64_t r = 0; r < q->n; r++) {
        const float *a = q->a + r * q->sa + (av ? c : 0), *b = q->b + r * q->sb + (bv ? c : 0);
        rv_v ua = rv_set(a[0]), ub = rv_set(b[0]);
        for (int v = 0; v < nv; v++) {
            rv_v u = av ? rv_load(a + RV_W * v) : ua, w = bv ? rv_load(b + RV_W * v) : ub;
            acc[v] = rv_comb(op, acc[v], RV_SFX(val)(ew, un, u, w));
        }
    }
    for (int v = 0; v < nv; v++)
        rv_store(y + c + RV_W * v, acc[v]);
}

RV_INL void RV_SFX(rows_op)(const rb_row *q, int op, int av, int bv, float *y, int first)
{
    int64_t c = 0, w = q->w;
    for (; c + 8 * RV_W <= w; c += 8 * RV_W)
        RV_SFX(rows_nv)(q, op, av, bv, 8, c, y, first);
    for (int nv = 4; nv >= 1; nv /= 2)
        if (c + nv * RV_W <= w) {
            RV_SFX(rows_nv)(q, op, av, bv, nv, c, y, first);
            c += nv * RV_W;
        }
    if (c < w) {
        rv_k k = rv_tail(w - c);
        rv_v acc = first ? rv_set(rb_identity(op)) : rv_loadm(k, y + c);
        for (int64_t r = 0; r < q->n; r++) {
            const float *a = q->a + r * q->sa, *b = q->b + r * q->sb;
            rv_v u = av ? rv_loadm(k, a + c) : rv_set(a[0]);
            rv_v v = bv ? rv_loadm(k, b + c) : rv_set(b[0]);
            acc = rv_comb(op, acc, RV_SFX(val)(q->ew, q->un, u, v));
        }
        rv_storem(k, y + c, acc);
    }
}

/* One body per (op, which operands run along the row). */
RV_FN void RV_SFX(rows)(const rb_row *q, float *y, int first)
{
    switch (q->op) {
    case TRTL_RED_PROD: RB_OPERANDS(RV_SFX(rows_op), q, TRTL_RED_PROD, y, first); break;
    case TRTL_RED_MAX: RB_OPERANDS(RV_SFX(rows_op), q, TRTL_RED_MAX, y, first); break;
    case TRTL_RED_MIN: RB_OPERANDS(RV_SFX(rows_op), q, TRTL_RED_MIN, y, first); break;
    default: RB_OPERANDS(RV_SFX(rows_op), q, TRTL_RED_SUM, y, first); break;
    }
}
