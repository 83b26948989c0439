/*
 * fields.h -- the byte encoding of a plugin's fields, shared by plans (serialize/) and by
 * IPluginV2.serialize() / IPluginCreator.deserialize_plugin():
 *
 *   u32 n_fields, then per field: u32 name length + name bytes, i32 type, i32 length,
 *   u64 n_bytes + n_bytes of data            (little-endian; n_bytes = length * element size)
 */
#ifndef TRTL_PLUGINS_FIELDS_H
#define TRTL_PLUGINS_FIELDS_H

#include <stddef.h>
#include "trtlite/plugin.h"

/* Bytes of one element of a field type (0 for an unknown type). */
size_t trtl_plugin_field_elem_size(int32_t type);
/* Whether `f` can be encoded and read back: at most TRTL_PLUGIN_FIELDS_MAX fields, each with a
 * name, a PluginFieldType, a length >= 0 and data for that length.  The message names the field
 * (callers prefix the plugin and layer).  Check before trtl_plugin_fields_size/_write, which
 * assume it. */
#define TRTL_PLUGIN_FIELDS_MAX 4096
trtl_status trtl_plugin_fields_check(const trtl_plugin_fields *f);
/* Encoded size of `f`. */
size_t trtl_plugin_fields_size(const trtl_plugin_fields *f);
/* Writes exactly trtl_plugin_fields_size(f) bytes to dst. */
void trtl_plugin_fields_write(const trtl_plugin_fields *f, uint8_t *dst);
/* Decodes fields from src[0..n) (bounds-checked); *used receives the bytes consumed.  On success
 * *storage holds one allocation (free() it) that `out` points into. */
trtl_status trtl_plugin_fields_read(const uint8_t *src, size_t n, size_t *used, trtl_plugin_fields *out,
                                    void **storage);

#endif
