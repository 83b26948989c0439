/* shuffle.c -- IShuffleLayer: first_transpose -> reshape -> second_transpose.
 *
 * A permutation p maps output dim i to input dim p[i]; nb_dims 0 means identity.  A longer one is
 * accepted when each extra entry is the identity or 0: TensorRT's Permutation always has 8 entries,
 * 0..7 by default and zero-filled past the given ones when built from a shorter list.
 * reshape_dims: nb_dims -1 means no reshape; 0 copies the corresponding dim of the transposed input
 * when zero_is_placeholder (else it is a literal 0); -1 (at most one) is inferred from the volume.
 * Lowered form: permutations are cut to the rank they apply to, and for implicit-batch networks
 * get the batch as a fixed leading 0; reshape_dims gets the batch prepended through copy_mask
 * bit 0 (bit i set: output dim i of the reshape is dim i of the transposed input).
 * Dynamic reshape (TensorRT's set_input(1, shape)): input 1, a 1-D INT32 shape tensor of static length,
 * gives the reshape dims (same rules: 0 copies, -1 infers) and reshape_dims is ignored; the lowered
 * reshape_dims then only records the rank (its values are 0 and never read, as the kernels work from
 * the output dims).  Where the values are not known yet (the network's inference, before run time)
 * the unknown dims are -1. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"
#include "network/shape_values.h"

const trtl_attr_desc trtl_attrs_shuffle[] = {
    TRTL_A("first_transpose", TRTL_ATTR_DIMS, shuffle.first_transpose),
    TRTL_A("reshape_dims", TRTL_ATTR_DIMS, shuffle.reshape_dims),
    TRTL_A("second_transpose", TRTL_ATTR_DIMS, shuffle.second_transpose),
    TRTL_A("zero_is_placeholder", TRTL_ATTR_BOOL, shuffle.zero_is_placeholder),
    TRTL_A_FLAGS("copy_mask", TRTL_ATTR_AXES, shuffle.copy_mask, TRTL_ATTRF_INTERNAL),
};
TRTL_NATTRS(shuffle);

void trtl_init_shuffle(trtl_params *p)
{
    trtl_shuffle_params *s = &p->shuffle;
    /* TensorRT's default Permutation: the identity over all TRTL_MAX_DIMS axes (lowering cuts it
     * to the rank it applies to). */
    s->first_transpose.nb_dims = TRTL_MAX_DIMS;
    s->second_transpose.nb_dims = TRTL_MAX_DIMS;
    for (int i = 0; i < TRTL_MAX_DIMS; i++)
        s->first_transpose.d[i] = s->second_transpose.d[i] = i;
    s->reshape_dims.nb_dims = -1;
    s->zero_is_placeholder = 1;
    s->copy_mask = 0;
}

/* Checks that `p` permutes 0..rank-1 (extra entries must be their own index or 0). */
static trtl_status check_perm(const char *layer, const char *attr, const trtl_dims *p, int32_t rank)
{
    char s[TRTL_DIMS_STR_MAX];
    if (p->nb_dims == 0)
        return TRTL_OK;
    if (p->nb_dims < rank || p->nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s %s has %d entries, expected %d (one per dimension)",
                          layer, attr, trtl_dims_str(p, s, sizeof s), (int)p->nb_dims, (int)rank);
    int seen[TRTL_MAX_DIMS] = {0};
    for (int32_t i = 0; i < p->nb_dims; i++) {
        int64_t v = p->d[i];
        if (i >= rank ? (v != i && v != 0) : (v < 0 || v >= rank || seen[v]))
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': %s %s is not a permutation of 0..%d", layer,
                              attr, trtl_dims_str(p, s, sizeof s), (int)rank - 1);
        if (i < rank)
            seen[v] = 1;
    }
    return TRTL_OK;
}

/* Cuts a checked permutation to `rank` entries; implicit batch: (0, p0+1, p1+1, ...). */
static trtl_dims lower_perm(const trtl_dims *p, int32_t rank, int implicit)
{
    if (p->nb_dims == 0)
        return *p;
    trtl_dims r = {0};
    r.nb_dims = rank + (implicit ? 1 : 0);
    for (int32_t i = 0; i < rank; i++)
        r.d[i + (implicit ? 1 : 0)] = p->d[i] + (implicit ? 1 : 0);
    return r;
}

static trtl_status check_reshape(const char *layer, const trtl_dims *r)
{
    char s[TRTL_DIMS_STR_MAX];
    if (r->nb_dims == -1)
        return TRTL_OK;
    if (r->nb_dims < 0 || r->nb_dims > TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': reshape_dims has %d dims (0 to %d allowed)", layer,
                          (int)r->nb_dims, TRTL_MAX_DIMS);
    int n_infer = 0;
    for (int32_t i = 0; i < r->nb_dims; i++) {
        if (r->d[i] < -1)
            return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': reshape_dims %s: dimension %d is %lld (must be >= -1)",
                              layer, trtl_dims_str(r, s, sizeof s), (int)i, (long long)r->d[i]);
        n_infer += r->d[i] == -1;
    }
    if (n_infer > 1)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': reshape_dims %s has more than one -1", layer,
                          trtl_dims_str(r, s, sizeof s));
    return TRTL_OK;
}

trtl_status trtl_lower_shuffle(trtl_params *p, const trtl_lower_ctx *c)
{
    trtl_shuffle_params *s = &p->shuffle;
    int imp = c->implicit_batch ? 1 : 0;
    s->copy_mask = 0;
    if (c->n_in > 1) {
        char b[TRTL_DIMS_STR_MAX];
        if (imp)
            return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': a reshape from a shape tensor (input 1) needs an "
                              "explicit-batch network", c->layer_name);
        if (c->in && (c->in[1].nb_dims != 1 || c->in[1].d[0] < 0 || c->in[1].d[0] > TRTL_MAX_DIMS))
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the reshape dims (input 1) must be a 1-D shape tensor of at "
                              "most %d values and static length, got shape %s", c->layer_name, TRTL_MAX_DIMS,
                              trtl_dims_str(&c->in[1], b, sizeof b));
        s->reshape_dims.nb_dims = c->in ? (int32_t)c->in[1].d[0] : 0;
        for (int32_t i = 0; i < TRTL_MAX_DIMS; i++)
            s->reshape_dims.d[i] = 0;
    }
    TRTL_TRY(check_reshape(c->layer_name, &s->reshape_dims));
    if (imp && s->reshape_dims.nb_dims >= TRTL_MAX_DIMS)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT,
                          "layer '%s': reshape_dims has %d dims; with the implicit batch at most %d are allowed",
                          c->layer_name, (int)s->reshape_dims.nb_dims, TRTL_MAX_DIMS - 1);
    /* Ranks the permutations apply to, in the user's view. */
    int32_t in_rank = (c->n_in > 0 && c->in) ? c->in[0].nb_dims - imp : s->first_transpose.nb_dims;
    int32_t mid_rank = s->reshape_dims.nb_dims >= 0 ? s->reshape_dims.nb_dims : in_rank;
    if (in_rank < 0)
        in_rank = 0;
    TRTL_TRY(check_perm(c->layer_name, "first_transpose", &s->first_transpose, in_rank));
    TRTL_TRY(check_perm(c->layer_name, "second_transpose", &s->second_transpose, mid_rank));
    s->first_transpose = lower_perm(&s->first_transpose, in_rank, imp);
    s->second_transpose = lower_perm(&s->second_transpose, mid_rank, imp);
    if (imp && s->reshape_dims.nb_dims >= 0) {
        s->reshape_dims = trtl_dims_prepend(&s->reshape_dims, 0);
        s->copy_mask = 1u;
    }
    return TRTL_OK;
}

trtl_status trtl_infer_shuffle(const trtl_infer_ctx *c)
{
    const trtl_shuffle_params *s = &c->p->shuffle;
    const trtl_dims *x = &c->in[0];
    const char *L = c->layer_name;
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    int32_t r = x->nb_dims;
    TRTL_TRY(check_perm(L, "first_transpose", &s->first_transpose, r));
    /* The reshape dims: the attribute, or input 1's values (bit i of `unk`: dim i not known yet). */
    trtl_dims rdv = s->reshape_dims;
    uint32_t unk = 0;
    if (c->n_in > 1) {
        const int64_t *v = c->in_values ? c->in_values[1] : NULL;
        if (c->in_type[1] != TRTL_INT32 || c->in[1].nb_dims != 1 || c->in[1].d[0] != s->reshape_dims.nb_dims)
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the reshape dims (input 1) must be a 1-D INT32 shape tensor of "
                              "%d values, got %s %s", L, (int)s->reshape_dims.nb_dims, trtl_dtype_name(c->in_type[1]),
                              trtl_dims_str(&c->in[1], s1, sizeof s1));
        for (int32_t i = 0; i < rdv.nb_dims; i++) {
            rdv.d[i] = v ? v[i] : TRTL_SV_UNKNOWN;
            if (rdv.d[i] == TRTL_SV_UNKNOWN) {
                if (c->need_values)
                    return trtl_error(TRTL_ERR_SHAPE, "layer '%s': the reshape dims (input 1) are not known before "
                                      "execution: a shape tensor must be computed from input shapes (shape layers), "
                                      "constants and shape-tensor network inputs only", L);
                unk |= 1u << i;
                rdv.d[i] = 1;
            }
        }
    }
    TRTL_TRY(check_reshape(L, &rdv));

    trtl_dims t = *x; /* after the first transpose */
    if (s->first_transpose.nb_dims)
        for (int32_t i = 0; i < r; i++)
            t.d[i] = x->d[s->first_transpose.d[i]];

    trtl_dims m = t; /* after the reshape */
    if (s->reshape_dims.nb_dims >= 0) {
        const trtl_dims *rd = &rdv;
        int copied[TRTL_MAX_DIMS] = {0}; /* dims of t carried over one-to-one */
        int infer = -1;
        m.nb_dims = rd->nb_dims;
        for (int32_t i = 0; i < rd->nb_dims; i++) {
            int placeholder = ((s->copy_mask >> i) & 1u) || (rd->d[i] == 0 && s->zero_is_placeholder);
            if (placeholder) {
                if (i >= r)
                    return trtl_error(TRTL_ERR_SHAPE,
                                      "layer '%s': reshape_dims %s: 0 at dimension %d copies an input dimension, but "
                                      "the input %s has only %d",
                                      L, trtl_dims_str(rd, s1, sizeof s1), (int)i, trtl_dims_str(&t, s2, sizeof s2),
                                      (int)r);
                m.d[i] = t.d[i];
                copied[i] = 1;
            } else if (rd->d[i] == -1) {
                infer = i;
                m.d[i] = -1;
            } else if ((unk >> i) & 1u) {
                m.d[i] = -1;
            } else {
                m.d[i] = rd->d[i];
            }
        }
        /* Volumes: copied dims cancel out (so a dynamic batch copied by 0 still lets -1 be inferred). */
        int64_t vin = 1, vout = 1;
        int unknown = 0;
        for (int32_t k = 0; k < r; k++) {
            if (copied[k])
                continue;
            if (t.d[k] < 0)
                unknown = 1;
            else if (__builtin_mul_overflow(vin, t.d[k], &vin))
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input volume overflows", L);
        }
        if (unk)
            unknown = 1; /* nothing to check or infer until the values are known */
        for (int32_t i = 0; i < m.nb_dims; i++)
            if (!copied[i] && i != infer && !((unk >> i) & 1u) && __builtin_mul_overflow(vout, m.d[i], &vout))
                return trtl_error(TRTL_ERR_SHAPE, "layer '%s': reshape_dims volume overflows", L);
        if (infer >= 0) {
            if (unknown) {
                m.d[infer] = -1;
            } else if (vout == 0 || vin % vout) {
                return trtl_error(TRTL_ERR_SHAPE,
                                  "layer '%s': cannot reshape %s to %s: no value of the -1 dimension matches the "
                                  "volume (%lld is not a multiple of %lld)",
                                  L, trtl_dims_str(&t, s1, sizeof s1), trtl_dims_str(&m, s2, sizeof s2),
                                  (long long)vin, (long long)vout);
            } else {
                m.d[infer] = vin / vout;
            }
        } else if (!unknown && vin != vout) {
            int64_t vt = trtl_volume(&t), vm = trtl_volume(&m);
            if (vt < 0 || vm < 0) { /* dynamic dims copied by placeholders: compare the rest */
                vt = vin;
                vm = vout;
            }
            return trtl_error(TRTL_ERR_SHAPE, "layer '%s': cannot reshape %s to %s: volumes %lld and %lld differ", L,
                              trtl_dims_str(&t, s1, sizeof s1), trtl_dims_str(&m, s2, sizeof s2), (long long)vt,
                              (long long)vm);
        }
    }

    TRTL_TRY(check_perm(L, "second_transpose", &s->second_transpose, m.nb_dims));
    trtl_dims o = m;
    if (s->second_transpose.nb_dims)
        for (int32_t i = 0; i < m.nb_dims; i++)
            o.d[i] = m.d[s->second_transpose.d[i]];
    c->out[0] = o;
    c->out_type[0] = c->in_type[0];
    return TRTL_OK;
}
