/* builtins.c -- the list of built-in plugin creators (one file per plugin in this folder). */
#include "plugins/builtin/builtins.h"

#define TRTL_BUILTIN_PLUGINS(X) \
    X(trtl_creator_adder2d) \
    X(trtl_creator_l2norm_helper) \
    X(trtl_creator_spp) \
    X(trtl_creator_lrelu) \
    X(trtl_creator_clip) \
    X(trtl_creator_normalize) \
    X(trtl_creator_flatten_concat) \
    X(trtl_creator_grid_anchor) \
    X(trtl_creator_nms) \
    X(trtl_creator_prior_box) \
    X(trtl_creator_reorg) \
    X(trtl_creator_region) \
    X(trtl_creator_resize_nearest) \
    X(trtl_creator_instance_norm)
#define DECLARE(c) extern const trtl_plugin_creator c;
TRTL_BUILTIN_PLUGINS(DECLARE)
#undef DECLARE

static const trtl_plugin_creator *const creators[] = {
#define ENTRY(c) &c,
    TRTL_BUILTIN_PLUGINS(ENTRY)
#undef ENTRY
    NULL};

const trtl_plugin_creator *const *trtl_builtin_plugin_creators(int32_t *count)
{
    *count = (int32_t)(sizeof creators / sizeof creators[0]) - 1;
    return creators;
}
