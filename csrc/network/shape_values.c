/* shape_values.c -- host evaluation of shape tensors' values (see shape_values.h).
 *
 * Each op follows its reference kernel's INT32 / BOOL semantics exactly, so that a shape tensor
 * that is also read at execution time holds the same values there: SUM/SUB/PROD wrap modulo 2^32,
 * DIV truncates, FLOOR_DIV floors, division by zero gives 0; gather indices wrap once when negative.
 * An unknown element (TRTL_SV_UNKNOWN: a dynamic dim read by a shape layer, before run time) makes
 * every element computed from it unknown. */
#include <string.h>

#include "network/shape_values.h"
#include "core/status.h"
#include "core/dims.h"

#define U TRTL_SV_UNKNOWN

int trtl_sv_carriable(const trtl_dims *d, trtl_dtype t)
{
    if ((t != TRTL_INT32 && t != TRTL_BOOL) || d->nb_dims < 0 || d->nb_dims > TRTL_MAX_DIMS)
        return 0;
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (d->d[i] < 0 || d->d[i] > TRTL_SV_MAX)
            return 0;
        v *= d->d[i];
        if (v > TRTL_SV_MAX)
            return 0;
    }
    return 1;
}

void trtl_sv_from_data(const void *data, trtl_dtype t, int64_t n, int64_t *out)
{
    for (int64_t i = 0; i < n; i++)
        switch (t) {
        case TRTL_INT32: out[i] = ((const int32_t *)data)[i]; break;
        case TRTL_INT8: out[i] = ((const int8_t *)data)[i]; break;
        case TRTL_BOOL: out[i] = ((const uint8_t *)data)[i] != 0; break;
        case TRTL_UINT8: out[i] = ((const uint8_t *)data)[i]; break;
        default: out[i] = U; break;
        }
}

int trtl_sv_shape_input(trtl_op op, int32_t j)
{
    return (op == TRTL_OP_SHUFFLE && j == 1) || (op == TRTL_OP_SLICE && j >= 1 && j <= 3) ||
           (op == TRTL_OP_RESIZE && j == 1) || (op == TRTL_OP_REDUCE && j == 1) || (op == TRTL_OP_TOPK && j == 1) ||
           ((op == TRTL_OP_SQUEEZE || op == TRTL_OP_UNSQUEEZE) && j == 1) || (op == TRTL_OP_FILL && j == 0);
}

int trtl_sv_dims_unbounded(trtl_op op, int32_t n_in)
{
    return (op == TRTL_OP_REDUCE && n_in > 1) || op == TRTL_OP_SQUEEZE || op == TRTL_OP_UNSQUEEZE;
}

int trtl_sv_op_evaluable(trtl_op op)
{
    switch (op) {
    case TRTL_OP_SHAPE: case TRTL_OP_CONSTANT: case TRTL_OP_IDENTITY: case TRTL_OP_CAST: case TRTL_OP_SHUFFLE:
    case TRTL_OP_CONCATENATION: case TRTL_OP_GATHER: case TRTL_OP_ELEMENTWISE: case TRTL_OP_SLICE:
    case TRTL_OP_REDUCE: case TRTL_OP_UNARY: case TRTL_OP_SELECT:
        return 1;
    default:
        return 0;
    }
}

/* Row-major strides of d. */
static void strides(const trtl_dims *d, int64_t *s)
{
    int64_t acc = 1;
    for (int32_t i = d->nb_dims - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= d->d[i];
    }
}

/* Multi-index of linear index `lin` in d. */
static void unravel(const trtl_dims *d, int64_t lin, int64_t *idx)
{
    for (int32_t i = d->nb_dims - 1; i >= 0; i--) {
        idx[i] = d->d[i] ? lin % d->d[i] : 0;
        lin = d->d[i] ? lin / d->d[i] : 0;
    }
}

/* Linear index in `in` of output multi-index `idx` under numpy broadcasting (same rank or lower). */
static int64_t bcast_index(const trtl_dims *in, const trtl_dims *out, const int64_t *idx)
{
    int64_t s[TRTL_MAX_DIMS], lin = 0;
    strides(in, s);
    int32_t off = out->nb_dims - in->nb_dims;
    for (int32_t i = 0; i < in->nb_dims; i++)
        lin += (in->d[i] == 1 ? 0 : idx[i + off]) * s[i];
    return lin;
}

static int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

static int64_t ew_int(int32_t op, int32_t x, int32_t z)
{
    switch (op) {
    case TRTL_EW_SUM: return wrap32((int64_t)x + z);
    case TRTL_EW_PROD: return wrap32((int64_t)x * z);
    case TRTL_EW_MAX: return x > z ? x : z;
    case TRTL_EW_MIN: return x < z ? x : z;
    case TRTL_EW_SUB: return wrap32((int64_t)x - z);
    case TRTL_EW_DIV:
        if (z == 0)
            return 0;
        return z == -1 ? wrap32(-(int64_t)x) : x / z;
    case TRTL_EW_FLOOR_DIV: {
        if (z == 0)
            return 0;
        if (z == -1)
            return wrap32(-(int64_t)x);
        int32_t q = x / z;
        if (x % z != 0 && ((x < 0) != (z < 0)))
            q--;
        return q;
    }
    case TRTL_EW_POW: {
        if (z < 0)
            return x == 1 ? 1 : x == -1 ? ((z & 1) ? -1 : 1) : 0;
        uint32_t r = 1, base = (uint32_t)x;
        for (int32_t e = z; e; e >>= 1) {
            if (e & 1)
                r *= base;
            base *= base;
        }
        return wrap32(r);
    }
    case TRTL_EW_EQUAL: return x == z;
    case TRTL_EW_GREATER: return x > z;
    case TRTL_EW_LESS: return x < z;
    case TRTL_EW_AND: return (x != 0) & (z != 0);
    case TRTL_EW_OR: return (x != 0) | (z != 0);
    case TRTL_EW_XOR: return (x != 0) ^ (z != 0);
    default: return U;
    }
}

/* Shuffle: first transpose, reshape (row-major order kept), second transpose. */
static void eval_shuffle(const trtl_shuffle_params *s, const trtl_dims *x, const trtl_dims *o, const int64_t *xv,
                         int64_t *ov)
{
    int32_t r = x->nb_dims, rm = s->reshape_dims.nb_dims >= 0 ? o->nb_dims : r;
    int64_t p1[TRTL_MAX_DIMS], p2[TRTL_MAX_DIMS], xs[TRTL_MAX_DIMS], ms[TRTL_MAX_DIMS], ts[TRTL_MAX_DIMS];
    trtl_dims T = *x, M = {0};
    for (int32_t i = 0; i < r; i++) {
        p1[i] = s->first_transpose.nb_dims ? s->first_transpose.d[i] : i;
        T.d[i] = x->d[p1[i]];
    }
    M.nb_dims = rm;
    for (int32_t j = 0; j < rm; j++) {
        p2[j] = s->second_transpose.nb_dims ? s->second_transpose.d[j] : j;
        M.d[p2[j]] = o->d[j];
    }
    strides(x, xs);
    strides(&M, ms);
    strides(&T, ts);
    int64_t n = trtl_volume(o), idx[TRTL_MAX_DIMS], tidx[TRTL_MAX_DIMS];
    for (int64_t k = 0; k < n; k++) {
        unravel(o, k, idx);
        int64_t mlin = 0;
        for (int32_t j = 0; j < rm; j++)
            mlin += idx[j] * ms[p2[j]];
        unravel(&T, mlin, tidx);
        int64_t xlin = 0;
        for (int32_t i = 0; i < r; i++)
            xlin += tidx[i] * xs[p1[i]];
        ov[k] = xv[xlin];
    }
}

trtl_status trtl_sv_eval(trtl_op op, const trtl_params *p, const char *layer, int32_t n_in, const trtl_dims *in,
                         const trtl_dtype *in_t, const int64_t *const *in_v, const trtl_dims *out, trtl_dtype out_t,
                         int64_t *out_v, int *done)
{
    *done = 0;
    if (!trtl_sv_carriable(out, out_t))
        return TRTL_OK;
    int64_t n = trtl_volume(out), idx[TRTL_MAX_DIMS];
    if (op == TRTL_OP_SHAPE) {
        for (int32_t i = 0; i < in[0].nb_dims && i < n; i++)
            out_v[i] = in[0].d[i] >= 0 ? in[0].d[i] : U;
        *done = 1;
        return TRTL_OK;
    }
    if (op == TRTL_OP_CONSTANT) {
        const trtl_weights *w = &p->constant.weights;
        if (w->count != n || !w->values)
            return TRTL_OK;
        trtl_sv_from_data(w->values, w->type, n, out_v);
        *done = 1;
        return TRTL_OK;
    }
    if (!trtl_sv_op_evaluable(op) || n_in < 1 || (op == TRTL_OP_REDUCE && n_in > 1))
        return TRTL_OK; /* a reduce with run-time axes is computed by its kernel only */
    /* Every input read for values must carry them; the shuffle's reshape input only decides dims. */
    int32_t nv = (op == TRTL_OP_SHUFFLE || op == TRTL_OP_SLICE) ? 1 : n_in;
    for (int32_t j = 0; j < nv; j++)
        if (!in_v || !in_v[j] || !trtl_sv_carriable(&in[j], in_t[j]))
            return TRTL_OK;
    switch (op) {
    case TRTL_OP_IDENTITY:
    case TRTL_OP_CAST:
        for (int64_t k = 0; k < n; k++)
            out_v[k] = (out_t == TRTL_BOOL && in_v[0][k] != U) ? in_v[0][k] != 0 : in_v[0][k];
        break;
    case TRTL_OP_SHUFFLE:
        eval_shuffle(&p->shuffle, &in[0], out, in_v[0], out_v);
        break;
    case TRTL_OP_CONCATENATION: {
        int32_t ax = p->concat.axis;
        int64_t outer = trtl_volume_range(out, 0, ax), k = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int32_t j = 0; j < n_in; j++) {
                int64_t blk = trtl_volume_range(&in[j], ax, in[j].nb_dims);
                for (int64_t e = 0; e < blk; e++)
                    out_v[k++] = in_v[j][o * blk + e];
            }
        break;
    }
    case TRTL_OP_GATHER: {
        const trtl_gather_params *g = &p->gather;
        if (g->mode != TRTL_GATHER_DEFAULT || g->num_elementwise_dims != 0)
            return TRTL_OK;
        int32_t ax = g->axis, qr = in[1].nb_dims;
        int64_t dn = in[0].d[ax], ds[TRTL_MAX_DIMS];
        strides(&in[0], ds);
        for (int64_t k = 0; k < n; k++) {
            unravel(out, k, idx);
            /* out index: data dims before axis, the indices' dims, data dims after axis */
            int64_t il = 0, is = 1;
            for (int32_t q = qr - 1; q >= 0; q--) {
                il += idx[ax + q] * is;
                is *= in[1].d[q];
            }
            int64_t v = in_v[1][il];
            if (v == U) {
                out_v[k] = U;
                continue;
            }
            if (v < 0)
                v += dn;
            if (v < 0 || v >= dn)
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': gather index %lld is out of range for a dimension of "
                                  "size %lld (in shape tensor values)", layer, (long long)in_v[1][il], (long long)dn);
            int64_t lin = 0;
            for (int32_t i = 0; i < in[0].nb_dims; i++)
                lin += (i < ax ? idx[i] : i == ax ? v : idx[i - 1 + qr]) * ds[i];
            out_v[k] = in_v[0][lin];
        }
        break;
    }
    case TRTL_OP_ELEMENTWISE:
        for (int64_t k = 0; k < n; k++) {
            unravel(out, k, idx);
            int64_t a = in_v[0][bcast_index(&in[0], out, idx)], b = in_v[1][bcast_index(&in[1], out, idx)];
            out_v[k] = (a == U || b == U) ? U : ew_int(p->ew.op, (int32_t)a, (int32_t)b);
        }
        break;
    case TRTL_OP_SELECT:
        for (int64_t k = 0; k < n; k++) {
            unravel(out, k, idx);
            int64_t c = in_v[0][bcast_index(&in[0], out, idx)];
            out_v[k] = c == U ? U : in_v[c ? 1 : 2][bcast_index(&in[c ? 1 : 2], out, idx)];
        }
        break;
    case TRTL_OP_UNARY:
        for (int64_t k = 0; k < n; k++) {
            int64_t v = in_v[0][k];
            if (v == U) {
                out_v[k] = U;
                continue;
            }
            switch (p->unary.op) {
            case TRTL_UN_ABS: out_v[k] = wrap32(v < 0 ? -v : v); break;
            case TRTL_UN_NEG: out_v[k] = wrap32(-v); break;
            case TRTL_UN_NOT: out_v[k] = v == 0; break;
            case TRTL_UN_SIGN: out_v[k] = (v > 0) - (v < 0); break;
            default: return TRTL_OK;
            }
        }
        break;
    case TRTL_OP_SLICE: {
        const trtl_slice_params *s = &p->slice;
        if ((n_in != 1 && !(n_in == 4 && in_v[1] && in_v[3])) || (s->mode != TRTL_SLICE_DEFAULT && s->mode != TRTL_SLICE_CLAMP && s->mode != TRTL_SLICE_WRAP))
            return TRTL_OK;
        int64_t xs[TRTL_MAX_DIMS], st[TRTL_MAX_DIMS], sd[TRTL_MAX_DIMS];
        strides(&in[0], xs);
        for (int32_t i = 0; i < out->nb_dims; i++) {
            st[i] = n_in == 4 ? in_v[1][i] : s->start.d[i];
            sd[i] = n_in == 4 ? in_v[3][i] : s->stride.d[i];
            if (st[i] == U || sd[i] == U || st[i] > INT32_MAX || st[i] < INT32_MIN || sd[i] > INT32_MAX ||
                sd[i] < INT32_MIN)
                return TRTL_OK;
        }
        for (int64_t k = 0; k < n; k++) {
            unravel(out, k, idx);
            int64_t lin = 0;
            for (int32_t i = 0; i < out->nb_dims; i++) {
                int64_t dn = in[0].d[i], j = st[i] + idx[i] * sd[i];
                if (dn <= 0)
                    return TRTL_OK;
                if (s->mode == TRTL_SLICE_CLAMP)
                    j = j < 0 ? 0 : j >= dn ? dn - 1 : j;
                else if (s->mode == TRTL_SLICE_WRAP)
                    j = ((j % dn) + dn) % dn;
                if (j < 0 || j >= dn)
                    return TRTL_OK; /* the slice's own inference reports it */
                lin += j * xs[i];
            }
            out_v[k] = in_v[0][lin];
        }
        break;
    }
    case TRTL_OP_REDUCE: {
        const trtl_reduce_params *r = &p->reduce;
        if (r->op == TRTL_RED_AVG)
            return TRTL_OK;
        int64_t m = trtl_volume(&in[0]), xi[TRTL_MAX_DIMS];
        for (int64_t k = 0; k < n; k++)
            out_v[k] = r->op == TRTL_RED_SUM ? 0 : r->op == TRTL_RED_PROD ? 1 : r->op == TRTL_RED_MAX ? INT32_MIN : INT32_MAX;
        for (int64_t e = 0; e < m; e++) {
            unravel(&in[0], e, xi);
            int64_t o = 0, os = 1;
            for (int32_t i = in[0].nb_dims - 1, q = out->nb_dims - 1; i >= 0; i--) {
                int red = (r->axes >> i) & 1u;
                if (red && !r->keep_dims)
                    continue;
                o += (red ? 0 : xi[i]) * os;
                os *= out->d[q--];
            }
            int64_t v = in_v[0][e], *acc = &out_v[o];
            if (v == U || *acc == U) {
                *acc = U;
                continue;
            }
            switch (r->op) {
            case TRTL_RED_SUM: *acc = wrap32(*acc + v); break;
            case TRTL_RED_PROD: *acc = wrap32(*acc * v); break;
            case TRTL_RED_MAX: *acc = v > *acc ? v : *acc; break;
            default: *acc = v < *acc ? v : *acc; break;
            }
        }
        break;
    }
    default:
        return TRTL_OK;
    }
    if (out_t == TRTL_BOOL)
        for (int64_t k = 0; k < n; k++)
            if (out_v[k] != U)
                out_v[k] = out_v[k] != 0;
    *done = 1;
    return TRTL_OK;
}
