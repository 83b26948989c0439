/*
 * attrs.h -- attribute descriptors: named, typed fields of trtl_params.
 *
 * One table per op (network/ops/<op>.c).  The Python bindings turn each entry into a property of
 * the layer class, the C API sets and gets by name through it, and the plan writer/reader
 * serializes the lowered params through it, so a new attribute is declared once.
 */
#ifndef TRTL_NETWORK_ATTRS_H
#define TRTL_NETWORK_ATTRS_H

#include <stddef.h>
#include "core/params.h"

typedef enum trtl_attr_type {
    TRTL_ATTR_INT,      /* int32_t */
    TRTL_ATTR_FLOAT,    /* float */
    TRTL_ATTR_BOOL,     /* int32_t 0/1 */
    TRTL_ATTR_ENUM,     /* int32_t; `enum_name` is the Python enum class (e.g. "ActivationType") */
    TRTL_ATTR_AXES,     /* uint32_t bitmask */
    TRTL_ATTR_DIMS,     /* trtl_dims */
    TRTL_ATTR_DIMS_SYM, /* symmetric padding: set writes offset and offset2, get reads offset */
    TRTL_ATTR_WEIGHTS,  /* trtl_weights */
    TRTL_ATTR_FLOATS,   /* int32_t count at offset, float[TRTL_MAX_SCALES] at offset2 */
    TRTL_ATTR_DTYPE,    /* int32_t trtl_dtype */
    TRTL_ATTR_STRING    /* char[offset2] at offset, NUL-terminated (einsum's equation) */
} trtl_attr_type;

enum {
    TRTL_ATTRF_ALIAS = 1u << 0,   /* another name for a field listed elsewhere: not serialized */
    TRTL_ATTRF_HW = 1u << 1,      /* TensorRT 7 DimsHW view: exactly 2 spatial dims */
    TRTL_ATTRF_INTERNAL = 1u << 2 /* lowered-only field: serialized, not shown to users */
};

typedef struct trtl_attr_desc {
    const char *name;
    trtl_attr_type type;
    size_t offset;   /* into trtl_params */
    size_t offset2;  /* DIMS_SYM: post padding; FLOATS: the values; ENUM: the number of values (0..offset2-1);
                      * STRING: the array's size (the text is shorter by its NUL) */
    const char *enum_name;
    uint32_t flags;
} trtl_attr_desc;

/* The descriptor of `name` for `op`, or NULL. */
const trtl_attr_desc *trtl_attr_find(trtl_op op, const char *name);

#endif
