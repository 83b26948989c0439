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
 * Compile-time BAD_DESC: the creator (then "BadFieldDesc_TEST") has a broken field list (1: a NULL
 * name, 2: type 42).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trtlite/plugin.h"

#ifndef BAD_DESC
#define BAD_DESC 0
#endif
#if BAD_DESC
#define CREATOR_NAME "BadFieldDesc_TEST"
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
    (void)self;
    (void)nb_in;
    (void)out_desc;
    (void)nb_out;
    (void)workspace;
    (void)msg;
    (void)msg_len;
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
    out->nb_fields = 1;
    out->fields = &m->field;
    return 0;
}

static trtl_plugin *make(const trtl_plugin_creator *cr, int32_t mode);

static trtl_plugin *clone(const trtl_plugin *self)
{
    const misbehaving *m = (const misbehaving *)self;
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
    (void)msg;
    (void)msg_len;
    return make(self, *(const int32_t *)fields->fields[0].data);
}

#if BAD_DESC == 1
static const trtl_plugin_field_desc descs[] = {{"mode", TRTL_PF_INT32, 1}, {NULL, TRTL_PF_INT32, 0}};
#elif BAD_DESC == 2
static const trtl_plugin_field_desc descs[] = {{"mode", TRTL_PF_INT32, 1}, {"gain", 42, 0}};
#else
static const trtl_plugin_field_desc descs[] = {{"mode", TRTL_PF_INT32, 1}};
#endif

static const trtl_plugin_creator creator = {sizeof(trtl_plugin_creator), TRTL_PLUGIN_ABI_VERSION, CREATOR_NAME, "1",
                                            "", descs, (int32_t)(sizeof descs / sizeof descs[0]), create, NULL};
static const trtl_plugin_creator *const creators[] = {&creator};

const trtl_plugin_creator *const *trtl_get_plugin_creators(int32_t *count, uint32_t *abi_version)
{
    *count = 1;
    *abi_version = TRTL_PLUGIN_ABI_VERSION;
    return creators;
}
