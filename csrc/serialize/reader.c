/* reader.c -- plan bytes -> engine, with every read bounds-checked (format in plan.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serialize/plan.h"
#include "core/alloc.h"
#include "plugins/fields.h"
#include "engine/engine.h"
#include "engine/control_flow.h"
#include "kernels/registry.h"
#include "network/op_table.h"
#include "network/shape_values.h"
#include "core/status.h"
#include "core/dims.h"

typedef struct rbuf {
    const uint8_t *p;
    size_t n, off;
    int bad;        /* a read ran past the end */
    int oom;        /* an allocation failed: reported as out of memory, never as a corrupt plan */
} rbuf;

/* The network API's limits, which every plan the builder writes keeps: inputs of one layer
 * (concatenation, plugins; the engine's shape inference has room for this many) and outputs. */
#define MAX_LAYER_INPUTS 64
#define MAX_LAYER_OUTPUTS 16

static int take(rbuf *r, void *dst, size_t len)
{
    if (r->bad || len > r->n - r->off) {
        r->bad = 1;
        if (dst)
            memset(dst, 0, len);
        return 0;
    }
    if (dst)
        memcpy(dst, r->p + r->off, len);
    r->off += len;
    return 1;
}

static uint32_t u32(rbuf *r)
{
    uint32_t v = 0;
    take(r, &v, 4);
    return v;
}
static int32_t i32(rbuf *r)
{
    int32_t v = 0;
    take(r, &v, 4);
    return v;
}
static uint64_t u64(rbuf *r)
{
    uint64_t v = 0;
    take(r, &v, 8);
    return v;
}
static int64_t i64(rbuf *r)
{
    int64_t v = 0;
    take(r, &v, 8);
    return v;
}
static float f32(rbuf *r)
{
    float v = 0;
    take(r, &v, 4);
    return v;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t k = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
        if (k == 9 || c == 0 || i + k >= n + (k ? 0 : 1))
            return 0;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
        i += k + 1;
    }
    return 1;
}

/* Reads a string into a new allocation (NULL on failure or when it is not UTF-8, so names are
 * always valid for Python). */
static char *str(rbuf *r)
{
    uint32_t n = u32(r);
    if (r->bad || n > r->n - r->off) {
        r->bad = 1;
        return NULL;
    }
    if (!valid_utf8(r->p + r->off, n)) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->oom = 1;
        return NULL;
    }
    take(r, s, n);
    s[n] = '\0';
    return s;
}

/* Shapes (any_values 0) have dims >= -1; attribute dims (strides, paddings) may be negative. */
static int read_dims(rbuf *r, trtl_dims *d, int any_values)
{
    memset(d, 0, sizeof *d);
    d->nb_dims = i32(r);
    if (d->nb_dims < -1 || d->nb_dims > TRTL_MAX_DIMS) {
        r->bad = 1;
        return 0;
    }
    for (int32_t i = 0; i < d->nb_dims; i++) {
        d->d[i] = i64(r);
        if (d->d[i] < -1 && !any_values)
            r->bad = 1;
    }
    return !r->bad;
}

static int dims(rbuf *r, trtl_dims *d) { return read_dims(r, d, 0); }

/* A failed check is a corrupt plan, unless an allocation on the way failed (then the check saw a
 * NULL that is not the plan's fault). */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            st = r.oom ? trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory")         \
                       : trtl_error(TRTL_ERR_INVALID_PLAN, __VA_ARGS__);                           \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
/* An allocation that must succeed. */
#define CHECK_ALLOC(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory");                \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
/* An allocation that failed is the machine's problem, not the plan's. */
#define CHECK_ALLOC(cond)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory");      \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

/* Records a buffer left in the plan for trtl_engine_load_weights (load_weights.c); 0 when out of memory. */
static int add_pending(trtl_engine *e, size_t off, size_t bytes, int32_t node, int32_t tensor, trtl_weights *w)
{
    if (e->n_pending == e->cap_pending) {
        int32_t nc = e->cap_pending ? e->cap_pending * 2 : 64;
        trtl_pending_weights *np = realloc(e->pending, sizeof *np * (size_t)nc);
        if (!np)
            return 0;
        e->pending = np;
        e->cap_pending = nc;
    }
    e->pending[e->n_pending++] = (trtl_pending_weights){off, bytes, node, tensor, w};
    return 1;
}

/* Weights stay in the plan (values point there, readable for the checks) until trtl_engine_load_weights. */
static trtl_status read_weights(rbuf *r, trtl_engine *e, trtl_node *n, trtl_weights *w, const char *attr)
{
    uint32_t dt = u32(r);
    int64_t count = i64(r);
    if (r->bad || !trtl_dtype_valid((int)dt) || count < 0 ||
        (uint64_t)count > (r->n - r->off) / (trtl_dtype_size((trtl_dtype)dt) ? trtl_dtype_size((trtl_dtype)dt) : 1))
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is corrupt: bad weights '%s' of layer '%s'", attr, n->name);
    w->type = (trtl_dtype)dt;
    w->count = count;
    w->values = NULL;
    if (count == 0)
        return TRTL_OK;
    size_t bytes = (size_t)count * trtl_dtype_size(w->type);
    if (!add_pending(e, r->off, bytes, (int32_t)(n - e->nodes), -1, w))
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory for weights of layer '%s'", n->name);
    w->values = r->p + r->off;
    r->off += bytes;
    return TRTL_OK;
}

static trtl_status read_plugin(rbuf *r, trtl_node *n)
{
    trtl_status st = TRTL_OK;
    char *ns = str(r), *name = str(r), *version = str(r);
    void *storage = NULL;
    trtl_plugin_fields fc = {0, NULL};
    size_t used = 0;
    if (r->oom) {
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory for the plugin of layer '%s'", n->name);
        goto done;
    }
    if (r->bad || !ns || !name || !version) {
        st = trtl_error(TRTL_ERR_INVALID_PLAN, "plan is corrupt: bad plugin record of layer '%s'", n->name);
        goto done;
    }
    st = trtl_plugin_fields_read(r->p + r->off, r->n - r->off, &used, &fc, &storage);
    if (st != TRTL_OK) {
        if (st == TRTL_ERR_OUT_OF_MEMORY)
            trtl_error_prefix("loading plan, plugin '%s' (layer '%s')", name, n->name);
        else
            trtl_error_prefix("plan is corrupt in the fields of plugin '%s' (layer '%s')", name, n->name);
        goto done;
    }
    r->off += used;
    const trtl_plugin_creator *cr = trtl_plugin_find(name, version, ns);
    if (!cr) {
        st = trtl_error(TRTL_ERR_PLUGIN,
                        "the plan's layer '%s' needs plugin '%s' version '%s'%s%s%s, which is not registered: call "
                        "trt.init_libnvinfer_plugins(logger, \"%s\") for built-in plugins, "
                        "trt.get_plugin_registry().load_library(path) for a plugin library, or "
                        "register_creator() for a Python plugin, before deserializing",
                        n->name, name, version, *ns ? " in namespace '" : "", ns, *ns ? "'" : "", ns);
        goto done;
    }
    trtl_plugin *pl = NULL;
    st = trtl_plugin_create(cr, n->name, &fc, &pl);
    if (st != TRTL_OK) {
        trtl_error_prefix("loading plan, layer '%s'", n->name);
        goto done;
    }
    n->p.plugin.plugin = pl;
done:
    free(storage);
    free(ns);
    free(name);
    free(version);
    return st;
}

/* Nested plans (control-flow bodies) load recursively; a plan nesting deeper than this is refused
 * rather than allowed to exhaust the stack. */
#define MAX_CF_DEPTH 16
static _Thread_local int cf_depth;

/* A control-flow step's structure and bodies (plan.h, version 5). */
static trtl_status read_cf(rbuf *r, trtl_node *n)
{
#define CF_CHECK(c, ...) do { if (!(c)) { st = trtl_error(TRTL_ERR_INVALID_PLAN, __VA_ARGS__); goto fail; } } while (0)
    trtl_status st = TRTL_OK;
    trtl_cf *cf = trtl_cf_alloc();
    if (!cf)
        return trtl_last_status();
    cf->is_loop = (int32_t)u32(r);
    cf->n_rec = i32(r);
    cf->n_iter = i32(r);
    CF_CHECK(!r->bad && cf->is_loop >= 0 && cf->is_loop <= 1 && cf->n_rec >= 0 && cf->n_rec <= MAX_LAYER_INPUTS &&
                 cf->n_iter >= 0 && cf->n_iter <= MAX_LAYER_INPUTS,
             "plan is corrupt: control-flow step '%s': counts", n->name);
    cf->iter_axis = calloc((size_t)cf->n_iter + 1, sizeof(int32_t));
    cf->iter_rev = calloc((size_t)cf->n_iter + 1, sizeof(int32_t));
    if (!cf->iter_axis || !cf->iter_rev) {
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory loading the plan");
        goto fail;
    }
    for (int32_t k = 0; k < cf->n_iter; k++) {
        cf->iter_axis[k] = i32(r);
        cf->iter_rev[k] = i32(r);
    }
    cf->trip_in = i32(r);
    cf->cond_out = i32(r);
    cf->static_trip = i64(r);
    uint32_t no = u32(r);
    CF_CHECK(!r->bad && no <= MAX_LAYER_OUTPUTS, "plan is corrupt: control-flow step '%s': outputs", n->name);
    cf->n_out = (int32_t)no;
    cf->out = calloc((size_t)no + 1, sizeof *cf->out);
    if (!cf->out) {
        st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory loading the plan");
        goto fail;
    }
    for (uint32_t j = 0; j < no; j++) {
        cf->out[j].kind = i32(r);
        cf->out[j].axis = i32(r);
        cf->out[j].src = i32(r);
        cf->out[j].len = i64(r);
    }
    uint32_t nb = u32(r);
    CF_CHECK(!r->bad && nb == (cf->is_loop ? 1u : 2u), "plan is corrupt: control-flow step '%s': bodies", n->name);
    cf->n_bodies = (int32_t)nb;
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t ni = u32(r);
        CF_CHECK(!r->bad && ni <= (r->n - r->off) / 4, "plan is corrupt: control-flow step '%s': body inputs", n->name);
        cf->n_body_in[b] = (int32_t)ni;
        cf->in_map[b] = calloc((size_t)ni + 1, sizeof(int32_t));
        if (!cf->in_map[b]) {
            st = trtl_error(TRTL_ERR_OUT_OF_MEMORY, "out of memory loading the plan");
            goto fail;
        }
        for (uint32_t k = 0; k < ni; k++)
            cf->in_map[b][k] = i32(r);
        cf->n_body_out[b] = (int32_t)u32(r);
        uint64_t size = u64(r);
        CF_CHECK(!r->bad && size <= r->n - r->off, "plan is corrupt: control-flow step '%s': body %u size", n->name, b);
        CF_CHECK(cf_depth < MAX_CF_DEPTH, "plan is corrupt: control-flow step '%s': bodies nested more than %d deep",
                 n->name, MAX_CF_DEPTH);
        cf_depth++;
        st = trtl_engine_deserialize(r->p + r->off, (size_t)size, &cf->body[b]);
        cf_depth--;
        if (st != TRTL_OK) {
            if (st != TRTL_ERR_OUT_OF_MEMORY) {
                trtl_error_prefix("plan is corrupt: control-flow step '%s', body %u", n->name, b);
                st = TRTL_ERR_INVALID_PLAN;
            }
            goto fail;
        }
        r->off += (size_t)size;
    }
    st = trtl_cf_check(cf, n->name, n->n_in, n->n_out);
    if (st != TRTL_OK)
        goto fail;
    n->p.cf.cf = &cf->head;
    return TRTL_OK;
fail:
    trtl_cf_destroy(cf);
    return st;
#undef CF_CHECK
}

/* Attributes an op gained in a format version, appended to its table: a plan of an older version
 * stores only those before them, and the rest keep their defaults (info->init). */
static int32_t attrs_in_version(trtl_op op, int32_t nattrs, uint32_t version)
{
    if (op == TRTL_OP_QLINEAR && version < 10)
        nattrs -= 1; /* bias_after_mid: the bias add after an int8 matrix multiply's Q/DQ (version 10) */
    if (op == TRTL_OP_QLINEAR && version < 8)
        nattrs -= 1; /* in_grid: float tensors between fp32 tactics (version 8) */
    if (op == TRTL_OP_QLINEAR && version < 5)
        return nattrs - 9; /* mid_quant .. res_type, pool_mode: int8 residual adds and pooling (version 5) */
    if (op == TRTL_OP_CAST && version < 6)
        return nattrs - 1; /* saturate (version 6) */
    if (op == TRTL_OP_ATTENTION && version < 7)
        return nattrs - 5; /* norm_op .. empty_rows_zero: the IAttention layer (version 7) */
    if (op == TRTL_OP_NCHWC_CONV && version < 9)
        return nattrs - 3; /* mid_qgrid, mid_alpha, mid_beta: int8 layers in blocked regions (version 9) */
    if (op == TRTL_OP_NORMALIZATION && version < 10)
        return nattrs - 4; /* out_quant .. out_type: a layer norm writing int8 codes (version 10) */
    return nattrs;
}

static trtl_status read_params(rbuf *r, trtl_engine *e, trtl_node *n, uint32_t version)
{
    if (n->op == TRTL_OP_PLUGIN_V2)
        return read_plugin(r, n);
    if (n->op == TRTL_OP_CONTROL_FLOW)
        return read_cf(r, n);
    const trtl_op_info *info = &trtl_op_table[n->op];
    char *base = (char *)&n->p;
    info->init(&n->p);
    const int32_t nattrs = attrs_in_version(n->op, *info->nattrs, version);
    for (int32_t i = 0; i < nattrs; i++) {
        const trtl_attr_desc *d = &info->attrs[i];
        if (d->flags & TRTL_ATTRF_ALIAS)
            continue;
        char *f = base + d->offset;
        switch (d->type) {
        case TRTL_ATTR_INT:
        case TRTL_ATTR_BOOL:
        case TRTL_ATTR_ENUM:
        case TRTL_ATTR_DTYPE: *(int32_t *)f = i32(r); break;
        case TRTL_ATTR_AXES: *(uint32_t *)f = u32(r); break;
        case TRTL_ATTR_FLOAT: *(float *)f = f32(r); break;
        case TRTL_ATTR_DIMS:
        case TRTL_ATTR_DIMS_SYM: read_dims(r, (trtl_dims *)f, 1); break;
        case TRTL_ATTR_FLOATS: {
            int32_t cnt = i32(r);
            if (cnt < 0 || cnt > TRTL_MAX_SCALES)
                r->bad = 1;
            else {
                *(int32_t *)f = cnt;
                take(r, base + d->offset2, sizeof(float) * (size_t)cnt);
            }
            break;
        }
        case TRTL_ATTR_STRING: {
            uint32_t len = u32(r);
            if (len >= d->offset2) {
                r->bad = 1;
            } else {
                take(r, f, len);
                f[len] = '\0';
                if (strlen(f) != len) /* an embedded NUL */
                    r->bad = 1;
            }
            break;
        }
        case TRTL_ATTR_WEIGHTS: TRTL_TRY(read_weights(r, e, n, (trtl_weights *)f, d->name)); break;
        }
        if (r->bad)
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is truncated or corrupt in attribute '%s' of layer '%s'", d->name,
                              n->name);
    }
    return TRTL_OK;
}

/* Names of the TRTL_CPU_* bits in `bits` ("avx512f, avx512bf16"), for messages. */
static const char *feature_names(uint32_t bits, char *buf, size_t cap)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {TRTL_CPU_SSE41, "sse4.1"},         {TRTL_CPU_AVX, "avx"},           {TRTL_CPU_AVX2, "avx2"},
        {TRTL_CPU_FMA, "fma"},              {TRTL_CPU_F16C, "f16c"},         {TRTL_CPU_AVX512F, "avx512f"},
        {TRTL_CPU_AVX512BW, "avx512bw"},    {TRTL_CPU_AVX512VNNI, "avx512vnni"},
        {TRTL_CPU_AVX512BF16, "avx512bf16 (AVX512_BF16: the plan's bf16 kernels)"},
        {TRTL_CPU_AMX_TILE, "amx_tile (Intel AMX: the plan's amx kernels)"}, {TRTL_CPU_AMX_BF16, "amx_bf16"},
        {TRTL_CPU_AMX_INT8, "amx_int8"}};
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((bits & names[i].bit) && len < cap) {
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", names[i].name);
            bits &= ~names[i].bit;
        }
    if (bits && len < cap)
        snprintf(buf + len, cap - len, "%sunknown bits 0x%x", len ? ", " : "", bits);
    return buf;
}

static trtl_status check_header(const uint8_t *p, size_t size, uint64_t *payload, uint32_t *version_out)
{
    uint32_t version, hsize, crc, cpu;
    if (size < TRTL_PLAN_HEADER_SIZE)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "not a trtlite plan: %zu bytes is shorter than the %u-byte header", size,
                          TRTL_PLAN_HEADER_SIZE);
    if (memcmp(p, TRTL_PLAN_MAGIC, 8) != 0)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "not a trtlite plan (bad magic; is it a TensorRT engine or another file?)");
    memcpy(&version, p + 8, 4);
    memcpy(&hsize, p + 12, 4);
    memcpy(payload, p + 16, 8);
    memcpy(&crc, p + 24, 4);
    memcpy(&cpu, p + 28, 4);
    *version_out = version;
    if (version < TRTL_PLAN_MIN_VERSION || version > TRTL_PLAN_VERSION) {
        char prod[17];
        memcpy(prod, p + 32, 16);
        prod[16] = '\0';
        for (int i = 0; prod[i]; i++) /* outside the checksum: show only printable ASCII */
            if ((unsigned char)prod[i] < 0x20 || (unsigned char)prod[i] > 0x7e)
                prod[i] = '?';
        return trtl_error(TRTL_ERR_VERSION,
                          "plan format version %u (written by trtlite %s) cannot be loaded by trtlite %s, which reads version "
                          "%u (and older versions down to %u); rebuild the engine", version, prod, trtl_version(),
                          TRTL_PLAN_VERSION, TRTL_PLAN_MIN_VERSION);
    }
    if (hsize != TRTL_PLAN_HEADER_SIZE)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plan header size %u is wrong", hsize);
    if (*payload != size - TRTL_PLAN_HEADER_SIZE)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is truncated or padded: header says %llu payload bytes, %zu present",
                          (unsigned long long)*payload, size - TRTL_PLAN_HEADER_SIZE);
    if (trtl_crc32(p + TRTL_PLAN_HEADER_SIZE, (size_t)*payload) != crc)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plan checksum mismatch: the file is corrupted");
    uint32_t missing = cpu & ~trtl_cpu_features();
    if (missing) {
        char names[256];
        return trtl_error(TRTL_ERR_CPU, "plan was built for CPU features this machine lacks: %s (feature bits 0x%x); rebuild it here",
                          feature_names(missing, names, sizeof names), missing);
    }
    return TRTL_OK;
}

/* Profile p of input i (already read) against what the builder guarantees (the checks of
 * builder/config.c and build.c): the input's rank, 0 <= min <= opt <= max, at most 2^40 elements
 * at max, within the input's planned max shape, and equal to the input's static dimensions.  A
 * context trusts these bounds: set_input_shape accepts any shape inside them. */
static trtl_status check_profile(const trtl_engine *e, uint32_t p, uint32_t i)
{
    const trtl_etensor *t = &e->tensors[e->io[i]];
    const trtl_dims *mn = &e->profiles[p].min[i], *opt = &e->profiles[p].opt[i], *mx = &e->profiles[p].max[i];
    char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
    if (mn->nb_dims != t->dims.nb_dims || opt->nb_dims != t->dims.nb_dims || mx->nb_dims != t->dims.nb_dims)
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is corrupt: optimization profile %u for input '%s' has rank "
                          "%d/%d/%d, the input's rank is %d", p, t->name, (int)mn->nb_dims, (int)opt->nb_dims,
                          (int)mx->nb_dims, (int)t->dims.nb_dims);
    for (int32_t k = 0; k < mn->nb_dims; k++)
        if (mn->d[k] < 0 || mn->d[k] > opt->d[k] || opt->d[k] > mx->d[k])
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is corrupt: optimization profile %u for input '%s' breaks "
                              "0 <= min <= opt <= max in dimension %d", p, t->name, (int)k);
    if (trtl_volume_too_large(mx))
        return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is corrupt: optimization profile %u for input '%s': max shape "
                          "%s has more than 2^40 elements", p, t->name, trtl_dims_str(mx, s1, sizeof s1));
    for (int32_t k = 0; k < mx->nb_dims; k++) {
        if (mx->d[k] > t->max_dims.d[k])
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is corrupt: optimization profile %u for input '%s': max "
                              "shape %s exceeds the input's planned max shape %s", p, t->name,
                              trtl_dims_str(mx, s1, sizeof s1), trtl_dims_str(&t->max_dims, s2, sizeof s2));
        if (t->dims.d[k] >= 0 && (mn->d[k] != t->dims.d[k] || mx->d[k] != t->dims.d[k]))
            return trtl_error(TRTL_ERR_INVALID_PLAN, "plan is corrupt: optimization profile %u for input '%s': "
                              "dimension %d is static (%lld), the profile gives %lld..%lld", p, t->name, (int)k,
                              (long long)t->dims.d[k], (long long)mn->d[k], (long long)mx->d[k]);
    }
    return TRTL_OK;
}

trtl_status trtl_engine_deserialize(const void *data, size_t size, trtl_engine **out)
{
    trtl_status st = trtl_engine_deserialize_deferred(data, size, out);
    if (st != TRTL_OK)
        return st;
    st = trtl_engine_load_weights(*out, 0);
    if (st != TRTL_OK) {
        trtl_engine_destroy(*out);
        *out = NULL;
    }
    return st;
}

trtl_status trtl_engine_deserialize_deferred(const void *data, size_t size, trtl_engine **out)
{
    trtl_clear_error();
    const uint32_t one = 1;
    if (*(const uint8_t *)&one != 1)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "plans are little-endian; this host is not");
    TRTL_CHECK_ARG(data);
    TRTL_CHECK_ARG(out);
    uint64_t payload;
    uint32_t version = 0;
    trtl_status st = check_header(data, size, &payload, &version);
    if (st != TRTL_OK)
        return st;
    rbuf r = {(const uint8_t *)data, size, TRTL_PLAN_HEADER_SIZE, 0, 0};
    trtl_engine *e = trtl_engine_alloc();
    trtl_dims *check = NULL, *checkv = NULL;
    char *corner = NULL;
    if (!e)
        return trtl_error(TRTL_ERR_OUT_OF_MEMORY, "loading plan: out of memory");
    e->deferred = 1;
    e->plan = (const uint8_t *)data;
    e->plan_size = size;
    int8_t *made = NULL; /* per tensor: produced yet (inputs and constants from the start) */
    e->refittable = ((const uint8_t *)data)[48] & 1u; /* flags (plan.h) */
    e->implicit_batch = u32(&r) != 0;
    e->max_batch_size = i32(&r);
    e->num_threads = i32(&r);
    CHECK(!r.bad && e->max_batch_size >= 1 && e->num_threads >= 0, "plan is corrupt: bad engine header fields");
    e->name = str(&r);
    CHECK(!r.bad && e->name, "plan is truncated or corrupt in the engine name");
    uint32_t nt = u32(&r);
    CHECK(!r.bad && nt <= (r.n - r.off) / 8, "plan is corrupt: tensor count %u", nt);
    e->tensors = calloc(nt ? nt : 1, sizeof *e->tensors);
    CHECK_ALLOC(e->tensors);
    e->n_tensors = (int32_t)nt;
    for (uint32_t i = 0; i < nt; i++) {
        trtl_etensor *t = &e->tensors[i];
        t->name = str(&r);
        t->dtype = (trtl_dtype)u32(&r);
        t->kind = (int32_t)u32(&r);
        dims(&r, &t->dims);
        dims(&r, &t->max_dims);
        uint64_t nb = u64(&r);
        CHECK(!r.bad && t->name && trtl_dtype_valid(t->dtype) && t->kind >= 0 && t->kind <= TRTL_TK_CONSTANT &&
                  nb <= r.n - r.off && (t->kind == TRTL_TK_CONSTANT || nb == 0),
              "plan is truncated or corrupt at tensor %u", i);
        int64_t v = trtl_volume(&t->max_dims);
        CHECK(v >= 0 && !trtl_volume_too_large(&t->max_dims),
              "plan is corrupt: tensor '%s' has no valid max shape (a dimension is negative, or it has more than "
              "2^40 elements)", t->name);
        int dims_ok = t->max_dims.nb_dims >= 0 && t->dims.nb_dims == t->max_dims.nb_dims;
        for (int32_t k = 0; dims_ok && k < t->dims.nb_dims; k++)
            dims_ok = t->dims.d[k] == t->max_dims.d[k] || (t->dims.d[k] == -1 && t->kind != TRTL_TK_CONSTANT);
        CHECK(dims_ok, "plan is corrupt: tensor '%s' has shape and max shape that disagree", t->name);
        t->max_bytes = v * (int64_t)trtl_dtype_size(t->dtype);
        if (t->kind == TRTL_TK_CONSTANT) {
            CHECK((int64_t)nb == t->max_bytes, "plan is corrupt: constant '%s' has %llu bytes, its shape needs %lld", t->name,
                  (unsigned long long)nb, (long long)t->max_bytes);
            if (nb && !trtl_sv_carriable(&t->max_dims, t->dtype)) { /* shape values are read now: copied */
                CHECK_ALLOC(add_pending(e, r.off, (size_t)nb, -1, (int32_t)i, NULL));
                t->data = (void *)(uintptr_t)(r.p + r.off);
                r.off += (size_t)nb;
            } else {
                t->data = trtl_aligned_alloc(nb ? (size_t)nb : 64);
                CHECK_ALLOC(t->data);
                take(&r, t->data, (size_t)nb);
            }
        }
    }
    uint32_t nio = u32(&r), nin = u32(&r);
    CHECK(!r.bad && nio <= nt && nin <= nio, "plan is corrupt: I/O counts");
    e->io = malloc(sizeof(int32_t) * (nio ? nio : 1));
    CHECK_ALLOC(e->io);
    e->n_io = (int32_t)nio;
    e->n_inputs = (int32_t)nin;
    for (uint32_t i = 0; i < nio; i++) {
        uint32_t id = u32(&r);
        CHECK(!r.bad && id < nt, "plan is corrupt: I/O tensor id %u", id);
        int32_t want = i < nin ? TRTL_TK_INPUT : TRTL_TK_OUTPUT;
        CHECK(e->tensors[id].kind == want, "plan is corrupt: I/O tensor '%s' has the wrong kind", e->tensors[id].name);
        e->io[i] = (int32_t)id;
    }
    for (uint32_t i = 0; i < nt; i++) { /* every input/output tensor is bound exactly once */
        int32_t listed = 0;
        for (uint32_t k = 0; k < nio; k++)
            listed += e->io[k] == (int32_t)i;
        int is_io = e->tensors[i].kind == TRTL_TK_INPUT || e->tensors[i].kind == TRTL_TK_OUTPUT;
        CHECK(listed == (is_io ? 1 : 0), "plan is corrupt: tensor '%s' is %s the I/O list %d time(s)", e->tensors[i].name,
              is_io ? "an input/output but in" : "internal but in", (int)listed);
    }
    e->shape_input = calloc(nin ? nin : 1, sizeof(int32_t));
    CHECK_ALLOC(e->shape_input);
    for (uint32_t i = 0; version >= 4 && i < nin; i++) {
        uint32_t f = u32(&r);
        const trtl_etensor *t = &e->tensors[e->io[i]];
        CHECK(!r.bad && f <= 1, "plan is truncated or corrupt in the shape-input flags");
        CHECK(!f || (t->dtype == TRTL_INT32 && t->dims.nb_dims <= 1 && !trtl_dims_dynamic(&t->dims) &&
                     trtl_volume(&t->dims) <= TRTL_MAX_DIMS),
              "plan is corrupt: shape-tensor input '%s' is not INT32 with a static shape of at most %d values", t->name,
              TRTL_MAX_DIMS);
        e->shape_input[i] = (int32_t)f;
        e->n_shape_inputs += (int32_t)f;
    }
    uint32_t np = u32(&r);
    CHECK(!r.bad && np >= 1 && np <= 1024, "plan is corrupt: %u optimization profiles", np);
    e->profiles = calloc(np, sizeof *e->profiles);
    e->env_min = calloc(nin ? nin : 1, sizeof(trtl_dims));
    e->env_max = calloc(nin ? nin : 1, sizeof(trtl_dims));
    CHECK_ALLOC(e->profiles && e->env_min && e->env_max);
    e->n_profiles = (int32_t)np;
    for (uint32_t p = 0; p < np; p++) {
        trtl_profile *pr = &e->profiles[p];
        pr->min = calloc(nin ? nin : 1, sizeof(trtl_dims));
        pr->opt = calloc(nin ? nin : 1, sizeof(trtl_dims));
        pr->max = calloc(nin ? nin : 1, sizeof(trtl_dims));
        pr->vmin = calloc(nin ? nin : 1, sizeof(trtl_dims));
        pr->vopt = calloc(nin ? nin : 1, sizeof(trtl_dims));
        pr->vmax = calloc(nin ? nin : 1, sizeof(trtl_dims));
        CHECK_ALLOC(pr->min && pr->opt && pr->max && pr->vmin && pr->vopt && pr->vmax);
        for (uint32_t i = 0; i < nin; i++) {
            dims(&r, &pr->min[i]);
            dims(&r, &pr->opt[i]);
            dims(&r, &pr->max[i]);
            CHECK(!r.bad, "plan is truncated or corrupt in optimization profile %u", p);
            if (e->shape_input[i]) {
                read_dims(&r, &pr->vmin[i], 1); /* values: any INT32, negative ones included */
                read_dims(&r, &pr->vopt[i], 1);
                read_dims(&r, &pr->vmax[i], 1);
                CHECK(!r.bad, "plan is truncated or corrupt in optimization profile %u", p);
                int ok = pr->vmin[i].nb_dims == trtl_volume(&e->tensors[e->io[i]].dims) &&
                         pr->vopt[i].nb_dims == pr->vmin[i].nb_dims && pr->vmax[i].nb_dims == pr->vmin[i].nb_dims;
                for (int32_t k = 0; ok && k < pr->vmin[i].nb_dims; k++)
                    ok = pr->vmin[i].d[k] >= INT32_MIN && pr->vmin[i].d[k] <= pr->vopt[i].d[k] &&
                         pr->vopt[i].d[k] <= pr->vmax[i].d[k] && pr->vmax[i].d[k] <= INT32_MAX;
                CHECK(ok, "plan is corrupt: optimization profile %u gives shape-input '%s' bad value ranges", p,
                      e->tensors[e->io[i]].name);
            }
            st = check_profile(e, p, i);
            if (st != TRTL_OK)
                goto fail;
            if (p == 0) {
                e->env_min[i] = pr->min[i];
                e->env_max[i] = pr->max[i];
            }
            for (int32_t k = 0; k < pr->min[i].nb_dims && k < e->env_min[i].nb_dims; k++) {
                if (pr->min[i].d[k] < e->env_min[i].d[k])
                    e->env_min[i].d[k] = pr->min[i].d[k];
                if (pr->max[i].d[k] > e->env_max[i].d[k])
                    e->env_max[i].d[k] = pr->max[i].d[k];
            }
        }
    }
    for (uint32_t i = 0; i < nin; i++) { /* the inputs' planned max shapes are the profiles' union */
        const trtl_etensor *t = &e->tensors[e->io[i]];
        char s1[TRTL_DIMS_STR_MAX], s2[TRTL_DIMS_STR_MAX];
        CHECK(trtl_dims_equal(&e->env_max[i], &t->max_dims),
              "plan is corrupt: input '%s' is planned for max shape %s, its optimization profiles' largest is %s",
              t->name, trtl_dims_str(&t->max_dims, s1, sizeof s1), trtl_dims_str(&e->env_max[i], s2, sizeof s2));
    }
    made = calloc(nt ? nt : 1, 1);
    CHECK_ALLOC(made);
    for (uint32_t i = 0; i < nt; i++)
        made[i] = e->tensors[i].kind == TRTL_TK_INPUT || e->tensors[i].kind == TRTL_TK_CONSTANT;
    uint32_t nn = u32(&r);
    CHECK(!r.bad && nn <= (r.n - r.off) / 8, "plan is corrupt: layer count %u", nn);
    e->nodes = calloc(nn ? nn : 1, sizeof *e->nodes);
    CHECK_ALLOC(e->nodes);
    for (uint32_t k = 0; k < nn; k++) {
        trtl_node *n = &e->nodes[k];
        e->n_nodes = (int32_t)k + 1; /* so that cleanup frees what was read */
        uint32_t op = u32(&r);
        CHECK(!r.bad && op < TRTL_OP_COUNT, "plan is corrupt: unknown layer kind %u at step %u", op, k);
        CHECK(version >= 5 || op < TRTL_OP_CONDITION, "plan is corrupt: layer kind %u at step %u is newer than the "
              "plan's format version %u", op, k, version);
        CHECK(version >= 10 || op != TRTL_OP_PW_CHAIN, "plan is corrupt: layer kind %u at step %u is newer than the "
              "plan's format version %u", op, k, version);
        n->op = (trtl_op)op;
        n->name = str(&r);
        char *kname = str(&r);
        int32_t precision = version >= 3 ? i32(&r) : -1; /* -1: the kernel's (version 2) */
        n->epi.act = i32(&r);
        n->epi.alpha = f32(&r);
        n->epi.beta = f32(&r);
        n->epi.has_residual = (int32_t)u32(&r);
        if (!n->name || !kname) {
            free(kname);
            CHECK(0, "plan is truncated or corrupt at step %u", k);
        }
        if (r.oom) { /* a string after the name could not be allocated */
            free(kname);
            CHECK_ALLOC(0);
        }
        n->kernel = trtl_kernel_find(kname);
        if (!n->kernel) {
            st = trtl_error(TRTL_ERR_INVALID_PLAN, "plan uses kernel '%s' (layer '%s') that this build of trtlite does not have",
                            kname, n->name);
            free(kname);
            goto fail;
        }
        free(kname);
        CHECK(n->kernel->op == n->op, "plan is corrupt: kernel '%s' does not implement layer '%s'", n->kernel->name, n->name);
        CHECK(precision < 0 || precision == n->kernel->precision,
              "plan is corrupt: layer '%s' records precision %d, its kernel '%s' computes in %d", n->name, (int)precision,
              n->kernel->name, (int)n->kernel->precision);
        CHECK((n->epi.act == TRTL_ACT_NONE || trtl_act_code_valid(n->epi.act)) && n->epi.has_residual >= 0 &&
                  n->epi.has_residual <= 1 && (n->epi.act != TRTL_ACT_QGRID || trtl_act_qgrid_scale_ok(n->epi.alpha)),
              "plan is corrupt: bad epilogue of layer '%s'", n->name);
        uint32_t ni = u32(&r);
        CHECK(!r.bad && ni <= MAX_LAYER_INPUTS + 1, "plan is corrupt: layer '%s' has %u inputs (at most %d)", n->name,
              ni, MAX_LAYER_INPUTS);
        n->in = malloc(sizeof(int32_t) * (ni ? ni : 1));
        CHECK_ALLOC(n->in);
        n->n_in = (int32_t)ni;
        for (uint32_t j = 0; j < ni; j++) {
            uint32_t id = u32(&r);
            CHECK(!r.bad && id < nt, "plan is corrupt: input %u of layer '%s'", j, n->name);
            CHECK(made[id], "plan is corrupt: layer '%s' reads tensor '%s' before any step produces it", n->name,
                  e->tensors[id].name);
            n->in[j] = (int32_t)id;
        }
        uint32_t no = u32(&r);
        CHECK(!r.bad && (n->op == TRTL_OP_ASSERTION ? no == 0 : no >= 1) && no <= MAX_LAYER_OUTPUTS,
              "plan is corrupt: output count of layer '%s'", n->name); /* an assertion has none */
        n->out = malloc(sizeof(int32_t) * (no ? no : 1));
        CHECK_ALLOC(n->out);
        n->n_out = (int32_t)no;
        for (uint32_t j = 0; j < no; j++) {
            uint32_t id = u32(&r);
            CHECK(!r.bad && id < nt && e->tensors[id].kind != TRTL_TK_CONSTANT && e->tensors[id].kind != TRTL_TK_INPUT,
                  "plan is corrupt: output %u of layer '%s'", j, n->name);
            CHECK(!made[id], "plan is corrupt: tensor '%s' is produced twice (again by layer '%s'); every tensor has "
                  "exactly one producing step", e->tensors[id].name, n->name);
            made[id] = 1;
            n->out[j] = (int32_t)id;
        }
        const trtl_op_info *info = &trtl_op_table[n->op];
        int32_t real_in = n->n_in - n->epi.has_residual;
        int32_t most = info->max_inputs < 0 ? MAX_LAYER_INPUTS : info->max_inputs;
        CHECK(real_in <= most, "plan is corrupt: layer '%s' has %d inputs; a %s layer takes at most %d", n->name,
              (int)real_in, info->name, (int)most);
        CHECK(real_in >= info->min_inputs && (info->max_inputs < 0 || real_in <= info->max_inputs) &&
                  (info->num_outputs < 0 || n->n_out == info->num_outputs),
              "plan is corrupt: layer '%s' has %d inputs / %d outputs", n->name, (int)real_in, (int)n->n_out);
        st = read_params(&r, e, n, version);
        if (st != TRTL_OK)
            goto fail;
        CHECK(n->op != TRTL_OP_ACTIVATION || trtl_act_code_valid(n->p.act.type),
              "plan is corrupt: activation type %d of layer '%s'", (int)n->p.act.type, n->name);
        if (n->op == TRTL_OP_PLUGIN_V2)
            CHECK(n->p.plugin.plugin->vt->num_outputs(n->p.plugin.plugin) == n->n_out,
                  "plan is corrupt: plugin layer '%s' output count", n->name);
    }
    if (version >= 7) { /* weights names (trtl_engine_weights_names) */
        e->weights_names = str(&r);
        CHECK(!r.bad && e->weights_names, "plan is truncated or corrupt in the weights names");
    }
    CHECK(r.off == r.n, "plan has %zu unexpected trailing bytes", r.n - r.off);
    for (uint32_t i = 0; i < nt; i++)
        CHECK(made[i], "plan is corrupt: tensor '%s' (%s) is not produced by any step", e->tensors[i].name,
              e->tensors[i].kind == TRTL_TK_OUTPUT ? "a network output" : "internal");
    free(made);
    made = NULL;
    /* Self-consistency: inference at the max shapes must reproduce the stored shapes, so no
     * kernel ever sees weights or shapes that disagree. */
    check = calloc(nt ? nt : 1, sizeof *check);
    CHECK_ALLOC(check);
    for (int32_t i = 0; i < e->n_inputs; i++)
        check[e->io[i]] = e->tensors[e->io[i]].max_dims;
    /* shape-tensor inputs at the largest value of every profile, as the builder planned them */
    checkv = calloc(e->n_inputs ? (size_t)e->n_inputs : 1, sizeof *checkv);
    CHECK_ALLOC(checkv);
    for (int32_t i = 0; i < e->n_inputs; i++)
        for (int32_t p = 0; e->shape_input[i] && p < e->n_profiles; p++) {
            const trtl_dims *mx = &e->profiles[p].vmax[i];
            for (int32_t k = 0; k < mx->nb_dims; k++)
                checkv[i].d[k] = (p == 0 || mx->d[k] > checkv[i].d[k]) ? mx->d[k] : checkv[i].d[k];
            checkv[i].nb_dims = mx->nb_dims;
        }
    corner = calloc(nt ? nt : 1, 1);
    CHECK_ALLOC(corner);
    st = trtl_engine_infer_corner(e, check, checkv, corner);
    free(checkv);
    checkv = NULL;
    if (st != TRTL_OK) {
        if (st != TRTL_ERR_OUT_OF_MEMORY) {
            trtl_error_prefix("plan is inconsistent");
            st = TRTL_ERR_INVALID_PLAN;
        }
        goto fail;
    }
    for (int32_t k = 0; k < e->n_nodes; k++)
        for (int32_t j = 0; j < e->nodes[k].n_out; j++) {
            int32_t id = e->nodes[k].out[j];
            CHECK(trtl_dims_equal(&check[id], &e->tensors[id].max_dims), "plan is inconsistent: tensor '%s' shape",
                  e->tensors[id].name);
            CHECK(!corner[id] || trtl_dims_dynamic(&e->tensors[id].dims) || e->tensors[id].dims.nb_dims == 0,
                  "plan is inconsistent: tensor '%s' has a static shape that depends on shape values",
                  e->tensors[id].name);
        }
    st = trtl_engine_check_dtypes(e);
    if (st != TRTL_OK) {
        if (st != TRTL_ERR_OUT_OF_MEMORY) {
            trtl_error_prefix("plan is inconsistent");
            st = TRTL_ERR_INVALID_PLAN;
        }
        goto fail;
    }
    free(check);
    check = NULL;
    free(corner);
    corner = NULL;
    st = trtl_engine_finalize(e); /* kernels are prepared by trtl_engine_load_weights */
    if (st != TRTL_OK)
        goto fail;
    *out = e;
    return TRTL_OK;
fail:
    free(made);
    free(check);
    free(checkv);
    free(corner);
    trtl_engine_destroy(e);
    return st;
}
