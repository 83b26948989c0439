/* builtins.h -- the built-in plugin library registered by init_libnvinfer_plugins. */
#ifndef TRTL_PLUGINS_BUILTINS_H
#define TRTL_PLUGINS_BUILTINS_H

#include "trtlite/plugin.h"

/* Every built-in creator (static storage). */
const trtl_plugin_creator *const *trtl_builtin_plugin_creators(int32_t *count);

#endif
