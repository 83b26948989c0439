/*
 * misbehaving_plugin.c -- a plugin library for tests/test_plugins_api.py that breaks the plugin
 * contract on request, to check that trtlite refuses each breach with a message instead of
 * crashing or producing a plan it cannot load.  Built only against trtlite/plugin.h.
 *
 * Creator "Misbehaving_TEST" v1, field "mode" (INT32, required); the plugin copies its float32
 * input to its output.  Modes:
 *   0  well behaved
 *   1  get_fields: a field of type 99        2  get_fields: a field of length -5
 *   3  get_fields: a field without a name    4  workspace_size: SIZE_MAX
 *   5  output_desc: -1 as the last dimension 6  vtable struct_size 8 (an older, smaller ABI)
 *   7  enqueue fails, filling all of msg with 'A' and no terminating NUL
 *   8  enqueue fails with a message that is not UTF-8
 *   9  output_desc fails, filling all of msg with 'B' and no NUL
 *   10 clone returns the instance itself     11 clone returns NULL
 *   12 create fails, filling all of msg with 'C' and no NUL (and bytes that are not UTF-8 first)
 *   13 get_fields: a field name that is not UTF-8
 * Compile-time BAD_DESC: the creator (then "BadFieldDesc_TEST") has a broken field list (1: a NULL
 * name, 2: type 42).  BAD_LIB: the library itself breaks the loading contract: 1 reports 2^30
 * creators (it has one), 2 a creator name that is not UTF-8, 3 a field name that is not UTF-8,
 * 4 a version string of 5000 bytes with no NUL, 5 a namespace that is not UTF-8, 6 -1 creators.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trtlite/plugin.h"

#ifndef BAD_DESC
#define BAD_DESC 0
#endif
#ifndef BAD_LIB
#define BAD_LIB 0
#endif
#if BAD_DESC
#define CREATOR_NAME "BadFieldDesc_TEST"
#elif BAD_LIB == 2
#define CREATOR_NAME "BadName\xff\xfe_TEST"
#elif BAD_LIB
#define CREATOR_NAME "BadLib_TEST"
#else
#define CREATOR_NAME "Misbehaving_TEST"
#endif

typedef struct misbehaving {
    trtl_plugin base;
    int32_t mode;
    trtl_plugin_field field;
} misbehaving;

static int32_t num_outputs(const trtl_plugin *self)
{
    (void)self;
    return 1;
}

static int output_desc(const trtl_plugin *self, int32_t index, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                       trtl_plugin_tensor_desc *out, char *msg, size_t msg_len)
{
    const misbehaving *m = (const misbehaving *)self;
    (void)index;
    (void)msg;
    (void)msg_len;
    (void)nb_in;
    *out = in[0];
    if (m->mode == 9) {
        memset(msg, 'B', msg_len);
        return 1;
    }
    if (m->mode == 5)
        out->dims.d[out->dims.nb_dims - 1] = -1;
    return 0;
}

static size_t workspace_size(const trtl_plugin *self, const trtl_plugin_tensor_desc *in, int32_t nb_in,
                             const trtl_plugin_tensor_desc *out, int32_t nb_out)
{
    (void)in;
    (void)nb_in;
    (void)out;
    (void)nb_out;
    return ((const misbehaving *)self)->mode == 4 ? SIZE_MAX : 0;
}

static int enqueue(trtl_plugin *self, const trtl_plugin_tensor_desc *in_desc, const void *const *inputs, int32_t nb_in,
                   const trtl_plugin_tensor_desc *out_desc, void *const *outputs, int32_t nb_out, void *workspace,
                   char *msg, size_t msg_len)
{
    (void)nb_in;
    (void)out_desc;
    (void)nb_out;
    (void)workspace;
    int32_t mode = ((const misbehaving *)self)->mode;
    if (mode == 7) {
        memset(msg, 'A', msg_len);
        return 1;
    }
    if (mode == 8) {
        strncpy(msg, "bad \xff\xfe bytes \xe2\x82", msg_len);
        return 1;
    }
    int64_t n = 1;
    for (int32_t k = 0; k < in_desc[0].dims.nb_dims; k++)
        n *= in_desc[0].dims.d[k];
    memcpy(outputs[0], inputs[0], (size_t)n * sizeof(float));
    return 0;
}

static int get_fields(const trtl_plugin *self, trtl_plugin_fields *out)
{
    misbehaving *m = (misbehaving *)self; /* the field table lives in the instance */
    m->field = (trtl_plugin_field){"mode", &m->mode, TRTL_PF_INT32, 1};
    if (m->mode == 1)
        m->field.type = 99;
    if (m->mode == 2)
        m->field.length = -5;
    if (m->mode == 3)
        m->field.name = NULL;
    if (m->mode == 13)
        m->field.name = "mo\xe9" "de";
    out->nb_fields = 1;
    out->fields = &m->field;
    return 0;
}

static trtl_plugin *make(const trtl_plugin_creator *cr, int32_t mode);

static trtl_plugin *clone(const trtl_plugin *self)
{
    const misbehaving *m = (const misbehaving *)self;
    if (m->mode == 10)
        return (trtl_plugin *)self;
    if (m->mode == 11)
        return NULL;
    return make(m->base.creator, m->mode);
}

static void destroy(trtl_plugin *self) { free(self); }

static const trtl_plugin_vtable vtable = {sizeof(trtl_plugin_vtable), TRTL_PLUGIN_ABI_VERSION, num_outputs, output_desc,
                                          workspace_size, enqueue, get_fields, clone, destroy};
static const trtl_plugin_vtable small_vtable = {8, TRTL_PLUGIN_ABI_VERSION, num_outputs, output_desc, workspace_size,
                                                enqueue, get_fields, clone, destroy};

static trtl_plugin *make(const trtl_plugin_creator *cr, int32_t mode)
{
    misbehaving *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->base.vt = mode == 6 ? &small_vtable : &vtable;
    m->base.creator = cr;
    m->mode = mode;
    return &m->base;
}

static trtl_plugin *create(const trtl_plugin_creator *self, const char *layer_name, const trtl_plugin_fields *fields,
                           char *msg, size_t msg_len)
{
    (void)layer_name;
    int32_t mode = *(const int32_t *)fields->fields[0].data;
    if (mode == 12) {
        memset(msg, 'C', msg_len);
        memcpy(msg, "\xff\xc3", msg_len < 2 ? msg_len : 2);
        return NULL;
    }
    return make(self, mode);
}

#if BAD_DESC == 1
static const trtl_plugin_field_desc descs[] = {{"mode", TRTL_PF_INT32, 1}, {NULL, TRTL_PF_INT32, 0}};
#elif BAD_DESC == 2
static const trtl_plugin_field_desc descs[] = {{"mode", TRTL_PF_INT32, 1}, {"gain", 42, 0}};
#elif BAD_LIB == 3
static const trtl_plugin_field_desc descs[] = {{"mode", TRTL_PF_INT32, 1}, {"ga\xc3in", TRTL_PF_FLOAT32, 0}};
#else
static const trtl_plugin_field_desc descs[] = {{"mode", TRTL_PF_INT32, 1}};
#endif

#if BAD_LIB == 4
/* Followed in memory by the creator, whose bytes are not a NUL for a while. */
static const char long_version[5000] = {[0 ... 4999] = '1'};
#define VERSION long_version
#else
#define VERSION "1"
#endif
#if BAD_LIB == 5
#define NAMESPACE "ns\x80"
#else
#define NAMESPACE ""
#endif

static const trtl_plugin_creator creator = {sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, CREATOR_NAME, VERSION,
                                            NAMESPACE, descs, (int32_t)(sizeof descs / sizeof descs[0]), create, NULL};
static const trtl_plugin_creator *const creators[] = {&creator};

const trtl_plugin_creator *const *trtl_get_plugin_creators(int32_t *count, uint32_t *abi_version)
{
    *count = BAD_LIB == 1 ? (int32_t)1 << 30 : BAD_LIB == 6 ? -1 : 1;
    *abi_version = TRTL_PLUGIN_ABI_VERSION;
    return creators;
}
