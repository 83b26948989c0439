/* builtins.c -- the list of built-in plugin creators (one file per plugin in this folder). */
#include "plugins/builtin/builtins.h"

#define TRTL_BUILTIN_PLUGINS(X) /* X(trtl_creator_adder2d) */
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
