/*
 * nms.c -- NMS_TRT: SSD's DetectionOutput (box decoding, per-class NMS, top-k over classes).
 *
 * Inputs, in the order given by inputOrder (indices of loc, conf, priors; default [0, 2, 1] as
 * TensorRT): loc [N, P*L*4, 1, 1] (L = 1 if shareLocation else numClasses; per sample laid out
 * [P][L][4]), conf [N, P*numClasses, 1, 1] (laid out [P][numClasses]), priors [1 or N, 2, P*4, 1]
 * (row 0 boxes (xmin, ymin, xmax, ymax), row 1 variances).  Only per-sample volumes are checked,
 * so [N, P*L*4] or [N, P, L*4] work too.
 *
 * Per image n (priors of image n when isBatchAgnostic == 0 and the priors have a batch of N,
 * else those of sample 0):
 *   1. decode every loc box against its prior (pw, ph, pcx, pcy: prior width, height, centre;
 *      v = the prior's variances, or 1 when varianceEncodedInTarget and codeType != TF_CENTER):
 *        CORNER (0):      b_k = prior_k + v_k * l_k
 *        CENTER_SIZE (1): cx = v0*l0*pw + pcx, cy = v1*l1*ph + pcy, w = exp(v2*l2)*pw,
 *                         h = exp(v3*l3)*ph, b = (cx - w/2, cy - h/2, cx + w/2, cy + h/2)
 *        CORNER_SIZE (2): b_k = prior_k + v_k * l_k * (pw for k = 0, 2; ph for k = 1, 3)
 *        TF_CENTER (3):   as CENTER_SIZE with l read as (ty, tx, th, tw), always with variances;
 *   2. score s = conf (sigmoid(conf) if confSigmoid); for each class c != backgroundLabelId, the
 *      boxes with s > confidenceThreshold sorted by score (ties: lower prior index first), the
 *      first topK of them, greedy NMS: a box is dropped when its IoU with a kept higher-ranked
 *      box is > nmsThreshold (IoU of the min/max-sorted corners; isNormalized == 0 adds 1 to
 *      widths and heights, Caffe's pixel convention);
 *   3. the survivors of all classes sorted by score (ties: lower class, then lower prior index),
 *      the first keepTopK written.
 * Outputs: detections [N, 1, keepTopK, 7] float32, rows (image_id, label, score, xmin, ymin, xmax,
 * ymax) with the box clamped to [0, 1] when isNormalized; unused rows (n, -1, 0, 0, 0, 0, 0).
 * keep_count [N, 1, 1, 1] int32: the rows used.  (TensorRT declares keep_count float32 but stores
 * int32 bits, which TensorRT scripts read as int32; here the dtype says so.)
 * scoreBits only matters to TensorRT's FP16 sort: accepted, kept, unused.
 */
#include <math.h>
#include <string.h>

#include "plugins/builtin/common.h"

enum {
    F_SHARE_LOCATION, F_VARIANCE_ENCODED, F_BACKGROUND, F_NUM_CLASSES, F_TOP_K, F_KEEP_TOP_K, F_CONF_THRESHOLD,
    F_NMS_THRESHOLD, F_INPUT_ORDER, F_CONF_SIGMOID, F_IS_NORMALIZED, F_CODE_TYPE, F_SCORE_BITS, F_BATCH_AGNOSTIC,
    F_COUNT
};

static const trtl_plugin_field_desc field_descs[F_COUNT] = {
    [F_SHARE_LOCATION] = {"shareLocation", TRTL_PF_INT32, 0},
    [F_VARIANCE_ENCODED] = {"varianceEncodedInTarget", TRTL_PF_INT32, 0},
    [F_BACKGROUND] = {"backgroundLabelId", TRTL_PF_INT32, 0},
    [F_NUM_CLASSES] = {"numClasses", TRTL_PF_INT32, 1},
    [F_TOP_K] = {"topK", TRTL_PF_INT32, 1},
    [F_KEEP_TOP_K] = {"keepTopK", TRTL_PF_INT32, 1},
    [F_CONF_THRESHOLD] = {"confidenceThreshold", TRTL_PF_FLOAT32, 1},
    [F_NMS_THRESHOLD] = {"nmsThreshold", TRTL_PF_FLOAT32, 1},
    [F_INPUT_ORDER] = {"inputOrder", TRTL_PF_INT32, 0},
    [F_CONF_SIGMOID] = {"confSigmoid", TRTL_PF_INT32, 0},
    [F_IS_NORMALIZED] = {"isNormalized", TRTL_PF_INT32, 0},
    [F_CODE_TYPE] = {"codeType", TRTL_PF_INT32, 0},
    [F_SCORE_BITS] = {"scoreBits", TRTL_PF_INT32, 0},
    [F_BATCH_AGNOSTIC] = {"isBatchAgnostic", TRTL_PF_INT32, 0},
};

enum { CODE_CORNER = 0, CODE_CENTER_SIZE = 1, CODE_CORNER_SIZE = 2, CODE_TF_CENTER = 3 };
enum { IN_LOC, IN_CONF, IN_PRIOR };

typedef struct nms {
    trtl_builtin h;
    int32_t share_location, variance_encoded, background, num_classes, top_k, keep_top_k;
    float conf_threshold, nms_threshold;
    int32_t input_order[3];
    int32_t conf_sigmoid, is_normalized, code_type, score_bits, batch_agnostic;
} nms;

/* Where each field lives in the instance; all are one value but inputOrder (3). */
static const size_t scalar_offset[F_COUNT] = {
    [F_SHARE_LOCATION] = offsetof(nms, share_location),
    [F_VARIANCE_ENCODED] = offsetof(nms, variance_encoded),
    [F_BACKGROUND] = offsetof(nms, background),
    [F_NUM_CLASSES] = offsetof(nms, num_classes),
    [F_TOP_K] = offsetof(nms, top_k),
    [F_KEEP_TOP_K] = offsetof(nms, keep_top_k),
    [F_CONF_THRESHOLD] = offsetof(nms, conf_threshold),
    [F_NMS_THRESHOLD] = offsetof(nms, nms_threshold),
    [F_INPUT_ORDER] = offsetof(nms, input_order),
    [F_CONF_SIGMOID] = offsetof(nms, conf_sigmoid),
    [F_IS_NORMALIZED] = offsetof(nms, is_normalized),
    [F_CODE_TYPE] = offsetof(nms, code_type),
    [F_SCORE_BITS] = offsetof(nms, score_bits),
    [F_BATCH_AGNOSTIC] = offsetof(nms, batch_agnostic),
};

/* Sizes of one enqueue, from the input descs (-1: not known yet). */
typedef struct geom {
    int64_t n, priors, loc_classes, prior_batch, k; /* k: boxes per class entering NMS */
} geom;

/* A scored candidate: key = class * P + prior. */
typedef struct entry {
    float score;
    int32_t key;
} entry;

static const trtl_input_spec input_specs[3] = {
    [IN_LOC] = {"loc", 2, TRTL_MAX_DIMS, "[N, values, 1, 1]"},
    [IN_CONF] = {"conf", 2, TRTL_MAX_DIMS, "[N, values, 1, 1]"},
    [IN_PRIOR] = {"priors", 3, TRTL_MAX_DIMS, "[1, 2, numPriors*4, 1]"},
};

static int init(trtl_builtin *h, const trtl_field_reader *r)
{
    nms *p = (nms *)h;
    const trtl_plugin_field *fo;
    /* TensorRT's defaults (TF SSD), and SSD's usual settings for what TensorRT leaves unset */
    p->share_location = 1;
    p->code_type = CODE_TF_CENTER;
    p->input_order[0] = 0;
    p->input_order[1] = 2;
    p->input_order[2] = 1;
    p->is_normalized = 1;
    p->score_bits = 16;
    p->batch_agnostic = 1;
    p->num_classes = p->top_k = p->keep_top_k = -1;
    p->conf_threshold = p->nms_threshold = NAN;
    for (int k = 0; k < F_COUNT; k++)
        if (k != F_INPUT_ORDER && trtl_field_scalar(r, &field_descs[k], (char *)p + scalar_offset[k]))
            return 1;
    if (trtl_field_array(r, &field_descs[F_INPUT_ORDER], 0, TRTL_FIELD_ANY_LENGTH, &fo))
        return 1;
    if (fo) {
        if (fo->length != 3)
            return trtl_field_fail(r, "field 'inputOrder' must hold 3 values (input indices of loc, conf, priors), "
                                   "got %d", (int)fo->length);
        memcpy(p->input_order, fo->data, sizeof p->input_order);
        int seen = 0;
        for (int i = 0; i < 3; i++)
            if (p->input_order[i] >= 0 && p->input_order[i] <= 2)
                seen |= 1 << p->input_order[i];
        if (seen != 7)
            return trtl_field_fail(r, "field 'inputOrder' must be a permutation of 0, 1, 2, got [%d, %d, %d]",
                                   (int)p->input_order[0], (int)p->input_order[1], (int)p->input_order[2]);
    }
    if (p->num_classes < 1)
        return trtl_field_fail(r, "field 'numClasses' must be >= 1, got %d", (int)p->num_classes);
    if (p->background < -1 || p->background >= p->num_classes)
        return trtl_field_fail(r, "field 'backgroundLabelId' must be -1 (none) or a class in [0, %d), got %d",
                               (int)p->num_classes, (int)p->background);
    if (p->top_k < 1 || p->keep_top_k < 1)
        return trtl_field_fail(r, "fields 'topK' (%d) and 'keepTopK' (%d) must be >= 1", (int)p->top_k,
                               (int)p->keep_top_k);
    if (!isfinite(p->conf_threshold))
        return trtl_field_fail(r, "field 'confidenceThreshold' must be finite");
    if (!(p->nms_threshold >= 0.0f && p->nms_threshold <= 1.0f))
        return trtl_field_fail(r, "field 'nmsThreshold' must be in [0, 1], got %g", p->nms_threshold);
    if (p->code_type < CODE_CORNER || p->code_type > CODE_TF_CENTER)
        return trtl_field_fail(r, "field 'codeType' must be 0 (CORNER), 1 (CENTER_SIZE), 2 (CORNER_SIZE) or 3 "
                               "(TF_CENTER), got %d", (int)p->code_type);
    p->share_location = p->share_location != 0;
    p->variance_encoded = p->variance_encoded != 0;
    p->conf_sigmoid = p->conf_sigmoid != 0;
    p->is_normalized = p->is_normalized != 0;
    p->batch_agnostic = p->batch_agnostic != 0;
    for (int k = 0; k < F_COUNT; k++)
        trtl_builtin_field(h, &field_descs[k], (char *)p + scalar_offset[k], k == F_INPUT_ORDER ? 3 : 1);
    return 0;
}

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 2;
}

/* Validates the inputs against the fields and works out the sizes (unknown ones stay -1). */
static int geometry(const nms *p, const trtl_plugin_tensor_desc *in, int32_t nb_in, geom *g, char *msg, size_t msg_len)
{
    trtl_batch b = TRTL_BATCH_UNKNOWN;
    if (nb_in != 3)
        return trtl_plugin_fail(msg, msg_len, "takes 3 inputs (loc, conf, priors in inputOrder), got %d", (int)nb_in);
    const trtl_plugin_tensor_desc *t[3];
    for (int i = 0; i < 3; i++) {
        t[i] = &in[p->input_order[i]];
        if (trtl_check_input(in, p->input_order[i], &input_specs[i], msg, msg_len))
            return 1;
    }
    const trtl_dims *pd = &t[IN_PRIOR]->dims;
    if (pd->d[1] >= 0 && pd->d[1] != 2)
        return trtl_plugin_fail(msg, msg_len, "input %d (priors) must be [1, 2, numPriors*4, 1] (boxes and "
                                "variances), got %lld rows", (int)p->input_order[IN_PRIOR], (long long)pd->d[1]);
    int64_t p4 = trtl_volume_from(pd, 2);
    if (p4 >= 0 && (p4 % 4 != 0 || p4 == 0))
        return trtl_plugin_fail(msg, msg_len, "input %d (priors) holds %lld values per row, not a positive multiple "
                                "of 4", (int)p->input_order[IN_PRIOR], (long long)p4);
    g->priors = p4 < 0 ? -1 : p4 / 4;
    g->loc_classes = p->share_location ? 1 : p->num_classes;
    g->prior_batch = pd->d[0];
    g->k = g->priors < 0 ? p->top_k : (g->priors < p->top_k ? g->priors : p->top_k);
    if (trtl_batch_merge(&b, in, p->input_order[IN_LOC], NULL, msg, msg_len) ||
        trtl_batch_merge(&b, in, p->input_order[IN_CONF], " (loc and conf)", msg, msg_len))
        return 1;
    g->n = b.n;
    if (g->n >= 0 && g->prior_batch >= 0 && g->prior_batch != 1 && g->prior_batch != g->n)
        return trtl_plugin_fail(msg, msg_len, "input %d (priors) has batch %lld; expected 1 or the batch %lld",
                                (int)p->input_order[IN_PRIOR], (long long)g->prior_batch, (long long)g->n);
    if (g->priors > 0 && g->priors * p->num_classes > INT32_MAX)
        return trtl_plugin_fail(msg, msg_len, "numPriors * numClasses = %lld * %d is too large", (long long)g->priors,
                                (int)p->num_classes);
    int64_t lv = trtl_volume_from(&t[IN_LOC]->dims, 1), cv = trtl_volume_from(&t[IN_CONF]->dims, 1);
    if (g->priors >= 0 && lv >= 0 && lv != g->priors * g->loc_classes * 4)
        return trtl_plugin_fail(msg, msg_len, "input %d (loc) holds %lld values per sample; numPriors * %s * 4 = %lld "
                                "* %lld * 4 = %lld", (int)p->input_order[IN_LOC], (long long)lv,
                                p->share_location ? "1 (shareLocation)" : "numClasses", (long long)g->priors,
                                (long long)g->loc_classes, (long long)(g->priors * g->loc_classes * 4));
    if (g->priors >= 0 && cv >= 0 && cv != g->priors * p->num_classes)
        return trtl_plugin_fail(msg, msg_len, "input %d (conf) holds %lld values per sample; numPriors * numClasses = "
                                "%lld * %d = %lld", (int)p->input_order[IN_CONF], (long long)cv, (long long)g->priors,
                                (int)p->num_classes, (long long)(g->priors * p->num_classes));
    return 0;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const nms *p = (const nms *)self;
    geom g;
    if (index < 0 || index > 1)
        return trtl_plugin_fail(msg, msg_len, "output %d does not exist (NMS_TRT has detections and keep_count)",
                                (int)index);
    if (geometry(p, in, nb_in, &g, msg, msg_len))
        return 1;
    memset(&out->dims, 0, sizeof out->dims);
    out->dims.nb_dims = 4;
    out->dims.d[0] = g.n;
    out->dims.d[1] = 1;
    out->dims.d[2] = index == 0 ? p->keep_top_k : 1;
    out->dims.d[3] = index == 0 ? 7 : 1;
    out->dtype = index == 0 ? TRTL_FLOAT : TRTL_INT32;
    return 0;
}

/* Workspace of one image (images are processed one after another). */
typedef struct layout {
    size_t boxes, scores, cand, kept, tmp, flags, total; /* byte offsets and total size */
} layout;

static size_t align16(size_t x) { return (x + 15) & ~(size_t)15; }

static layout plan(const nms *p, const geom *g)
{
    layout l;
    const size_t P = (size_t)g->priors, K = (size_t)g->k, CK = (size_t)p->num_classes * K;
    l.boxes = 0;                                                              /* [P][L][4] decoded */
    l.scores = l.boxes + align16(sizeof(float) * 4 * P * (size_t)g->loc_classes); /* [C][P] */
    l.cand = l.scores + align16(sizeof(float) * P * (size_t)p->num_classes);   /* K: one class's best */
    l.kept = l.cand + align16(sizeof(entry) * K);                             /* C*K: NMS survivors */
    l.tmp = l.kept + align16(sizeof(entry) * CK);                             /* merge sort scratch */
    l.flags = l.tmp + align16(sizeof(entry) * CK);
    l.total = l.flags + align16(K);
    return l;
}

static size_t workspace_size(const trtl_plugin *self, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             const trtl_plugin_tensor_desc *out, int32_t nb_out)
{
    const nms *p = (const nms *)self;
    geom g;
    char msg[8];
    (void)out;
    (void)nb_out;
    if (geometry(p, in, nb_in, &g, msg, sizeof msg) || g.priors < 0)
        return 0;
    return plan(p, &g).total;
}

static int before(const entry *a, const entry *b)
{
    return a->score > b->score || (a->score == b->score && a->key < b->key);
}

/* Sorts a[0..n) by score, descending (ties: smaller key first); tmp holds n entries. */
static void sort_entries(entry *a, entry *tmp, int64_t n)
{
    entry *src = a, *dst = tmp;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        entry *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, sizeof(entry) * (size_t)n);
}

/* Max-heap on "ranks later" (the root is the worst entry kept), for picking a class's best k. */
static void heap_swap(entry *h, int64_t i, int64_t j)
{
    entry t = h[i];
    h[i] = h[j];
    h[j] = t;
}

static void heap_push(entry *h, int64_t n, entry e) /* h holds n entries, room for one more */
{
    int64_t i = n;
    h[i] = e;
    while (i > 0 && before(&h[(i - 1) / 2], &h[i])) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_replace_root(entry *h, int64_t n, entry e)
{
    int64_t i = 0;
    h[0] = e;
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && before(&h[w], &h[l]))
            w = l;
        if (r < n && before(&h[w], &h[r]))
            w = r;
        if (w == i)
            return;
        heap_swap(h, i, w);
        i = w;
    }
}

/* Decodes loc box `l` (4 values) against prior `pr` with variances `v` into `b`. */
static void decode(const nms *p, const float *l, const float *pr, const float *v, float *b)
{
    static const float one[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    if (p->variance_encoded && p->code_type != CODE_TF_CENTER)
        v = one;
    const float pw = pr[2] - pr[0], ph = pr[3] - pr[1];
    switch (p->code_type) {
    case CODE_CORNER:
        for (int k = 0; k < 4; k++)
            b[k] = pr[k] + v[k] * l[k];
        break;
    case CODE_CORNER_SIZE:
        for (int k = 0; k < 4; k++)
            b[k] = pr[k] + v[k] * l[k] * (k % 2 == 0 ? pw : ph);
        break;
    default: { /* CENTER_SIZE, TF_CENTER: the latter stores (ty, tx, th, tw) */
        const int tf = p->code_type == CODE_TF_CENTER;
        const float tx = l[tf ? 1 : 0], ty = l[tf ? 0 : 1], tw = l[tf ? 3 : 2], th = l[tf ? 2 : 3];
        const float pcx = (pr[0] + pr[2]) / 2.0f, pcy = (pr[1] + pr[3]) / 2.0f;
        const float cx = v[0] * tx * pw + pcx, cy = v[1] * ty * ph + pcy;
        const float w = expf(v[2] * tw) * pw, h = expf(v[3] * th) * ph;
        b[0] = cx - w / 2.0f;
        b[1] = cy - h / 2.0f;
        b[2] = cx + w / 2.0f;
        b[3] = cy + h / 2.0f;
    }
    }
}

/* IoU of two boxes whose corners may come in either order. */
static double iou(const float *a, const float *b, int normalized)
{
    const double ax0 = fmin(a[0], a[2]), ax1 = fmax(a[0], a[2]), ay0 = fmin(a[1], a[3]), ay1 = fmax(a[1], a[3]);
    const double bx0 = fmin(b[0], b[2]), bx1 = fmax(b[0], b[2]), by0 = fmin(b[1], b[3]), by1 = fmax(b[1], b[3]);
    if (bx0 > ax1 || bx1 < ax0 || by0 > ay1 || by1 < ay0)
        return 0.0;
    const double pad = normalized ? 0.0 : 1.0;
    const double iw = fmin(ax1, bx1) - fmax(ax0, bx0) + pad, ih = fmin(ay1, by1) - fmax(ay0, by0) + pad;
    if (!(iw > 0.0 && ih > 0.0))
        return 0.0;
    const double inter = iw * ih, sa = (ax1 - ax0 + pad) * (ay1 - ay0 + pad), sb = (bx1 - bx0 + pad) * (by1 - by0 + pad);
    return inter / (sa + sb - inter);
}

static float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs, int32_t nb_in,
                   const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out, void *workspace,
                   char *msg, size_t msg_len)
{
    const nms *p = (const nms *)self;
    geom g;
    (void)out_desc;
    if (geometry(p, in_desc, nb_in, &g, msg, msg_len))
        return 1;
    if (nb_out != 2)
        return trtl_plugin_fail(msg, msg_len, "expected 2 outputs (detections, keep_count), got %d", (int)nb_out);
    const layout l = plan(p, &g);
    if (!workspace && l.total)
        return trtl_plugin_fail(msg, msg_len, "no workspace given (%zu bytes needed)", l.total);
    const int64_t P = g.priors, L = g.loc_classes, C = p->num_classes, K = g.k, KT = p->keep_top_k;
    const float *loc = inputs[p->input_order[IN_LOC]], *conf = inputs[p->input_order[IN_CONF]],
                *priors = inputs[p->input_order[IN_PRIOR]];
    float *det = outputs[0];
    int32_t *count = outputs[1];
    char *ws = workspace;
    float *boxes = (float *)(ws + l.boxes);
    entry *cand = (entry *)(ws + l.cand), *kept = (entry *)(ws + l.kept), *tmp = (entry *)(ws + l.tmp);
    unsigned char *dropped = (unsigned char *)(ws + l.flags);

    for (int64_t n = 0; n < g.n; n++) {
        const int64_t pb = (p->batch_agnostic || g.prior_batch == 1) ? 0 : n;
        const float *pr = priors + pb * 2 * P * 4, *var = pr + P * 4;
        const float *ln = loc + n * P * L * 4, *cn = conf + n * P * C;
        for (int64_t q = 0; q < P; q++)
            for (int64_t c = 0; c < L; c++) {
                float *b = boxes + (q * L + c) * 4;
                if (L > 1 && c == p->background)
                    b[0] = b[1] = b[2] = b[3] = 0.0f; /* never used */
                else
                    decode(p, ln + (q * L + c) * 4, pr + q * 4, var + q * 4, b);
            }

        /* scores class-major, so that each class below reads one contiguous row */
        float *sc = (float *)(ws + l.scores);
        for (int64_t q = 0; q < P; q++)
            for (int64_t c = 0; c < C; c++) {
                const float v = cn[q * C + c];
                sc[c * P + q] = p->conf_sigmoid ? 1.0f / (1.0f + expf(-v)) : v;
            }

        int64_t n_kept = 0;
        for (int64_t c = 0; c < C; c++) {
            if (c == p->background)
                continue;
            /* the class's best K above the threshold, then in rank order */
            int64_t m = 0;
            for (int64_t q = 0; q < P; q++) {
                const entry e = {sc[c * P + q], (int32_t)q};
                if (!(e.score > p->conf_threshold))
                    continue;
                if (m < K)
                    heap_push(cand, m++, e);
                else if (before(&e, &cand[0]))
                    heap_replace_root(cand, m, e);
            }
            sort_entries(cand, tmp, m);
            for (int64_t i = 0; i < m; i++)
                dropped[i] = 0;
            for (int64_t i = 0; i < m; i++) {
                if (dropped[i])
                    continue;
                const float *bi = boxes + ((int64_t)cand[i].key * L + (L > 1 ? c : 0)) * 4;
                kept[n_kept++] = (entry){cand[i].score, (int32_t)(c * P + cand[i].key)};
                for (int64_t j = i + 1; j < m; j++)
                    if (!dropped[j] &&
                        iou(bi, boxes + ((int64_t)cand[j].key * L + (L > 1 ? c : 0)) * 4, p->is_normalized) >
                            p->nms_threshold)
                        dropped[j] = 1;
            }
        }
        sort_entries(kept, tmp, n_kept);

        float *dn = det + n * KT * 7;
        const int64_t used = n_kept < KT ? n_kept : KT;
        for (int64_t i = 0; i < KT; i++) {
            float *row = dn + i * 7;
            row[0] = (float)n;
            if (i >= used) {
                row[1] = -1.0f;
                row[2] = row[3] = row[4] = row[5] = row[6] = 0.0f;
                continue;
            }
            const int64_t c = kept[i].key / P, q = kept[i].key % P;
            const float *b = boxes + (q * L + (L > 1 ? c : 0)) * 4;
            row[1] = (float)c;
            row[2] = kept[i].score;
            for (int k = 0; k < 4; k++)
                row[3 + k] = p->is_normalized ? clamp01(b[k]) : b[k];
        }
        count[n] = (int32_t)used;
    }
    return 0;
}

static const trtl_plugin_vtable vtable = TRTL_BUILTIN_VTABLE(num_outputs, output_desc, workspace_size, enqueue);
static const trtl_builtin_class cls = {.vt = &vtable, .size = sizeof(nms), .init = init};

const trtl_plugin_creator trtl_creator_nms = TRTL_BUILTIN_CREATOR("NMS_TRT", field_descs, cls);
