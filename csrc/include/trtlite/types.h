/*
 * trtlite/types.h -- plain value types shared by the public C API, the plugin ABI and the core.
 *
 * Everything here is a POD: no ownership, no allocation.  Enum values match TensorRT's Python
 * enums so that the bindings can pass integers straight through.
 */
#ifndef TRTLITE_TYPES_H
#define TRTLITE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRTL_MAX_DIMS 8

/* Every public call returns one of these; trtl_last_error() holds the message. */
typedef enum trtl_status {
    TRTL_OK = 0,
    TRTL_ERR_INVALID_ARGUMENT = 1, /* a value the caller passed is out of range or malformed */
    TRTL_ERR_SHAPE = 2,            /* tensor shapes are incompatible with a layer or a binding */
    TRTL_ERR_DTYPE = 3,            /* a data type is not supported where it was used */
    TRTL_ERR_NOT_FOUND = 4,        /* a named tensor, layer, plugin creator or file does not exist */
    TRTL_ERR_UNSUPPORTED = 5,      /* valid request that this build cannot do */
    TRTL_ERR_OUT_OF_MEMORY = 6,
    TRTL_ERR_INVALID_PLAN = 7,     /* truncated, corrupted or foreign plan bytes */
    TRTL_ERR_VERSION = 8,          /* plan or plugin ABI version mismatch */
    TRTL_ERR_CPU = 9,              /* plan needs CPU features this machine lacks */
    TRTL_ERR_PLUGIN = 10,          /* a plugin reported failure */
    TRTL_ERR_STATE = 11,           /* call made in the wrong state (e.g. shapes not set) */
    TRTL_ERR_INTERNAL = 12,        /* a bug in trtlite */
    TRTL_STATUS_COUNT
} trtl_status;

/* Values equal to TensorRT's trt.DataType. */
typedef enum trtl_dtype {
    TRTL_FLOAT = 0,
    TRTL_HALF = 1,
    TRTL_INT8 = 2,
    TRTL_INT32 = 3,
    TRTL_BOOL = 4,
    TRTL_UINT8 = 5,
    /* TensorRT 10's storage types (issue #12).  Every one but INT64 is a storage type: tensors of
     * it are moved (identity, shuffle, concatenation, slice, gather) and converted (cast, quantize,
     * dequantize), never computed on.  One element a byte (kernels/ref/lowbit.h: INT4 / FP4 keep
     * their code in the low nibble, unpacked, as the ml_dtypes arrays of onnx's numpy_helper do). */
    TRTL_FP8 = 6,              /* float8 e4m3fn: bias 7, no Inf, NaN S.1111.111, max 448 */
    TRTL_BF16 = 7,             /* bfloat16: a 2-byte float tensor type (the top half of a float32), and
                                * a compute precision (layer.precision, kernels' precision) */
    TRTL_INT64 = 8,            /* a real integer type: 8 bytes */
    TRTL_INT4 = 9,             /* -8..7 */
    TRTL_FP4 = 10,             /* float4 e2m1: bias 1, no Inf or NaN, max 6 */
    TRTL_E8M0 = 11,            /* float8 e8m0fnu: 2^(code-127), code 255 NaN (TensorRT 10.12) */
    /* trtlite extensions (ONNX types TensorRT has not): storage types as above. */
    TRTL_FP8E5M2 = 32,         /* float8 e5m2: bias 15, Inf and NaN as IEEE, max 57344 */
    TRTL_FP8E4M3FNUZ = 33,     /* float8 e4m3fnuz: bias 8, no Inf, no -0, NaN 0x80, max 240 */
    TRTL_FP8E5M2FNUZ = 34,     /* float8 e5m2fnuz: bias 16, no Inf, no -0, NaN 0x80, max 57344 */
    TRTL_UINT4 = 35,           /* 0..15 */
    TRTL_INT2 = 36,            /* -2..1 */
    TRTL_UINT2 = 37,           /* 0..3 */
    TRTL_DTYPE_COUNT           /* one past the largest value; the values in between are no types */
} trtl_dtype;

/* A shape.  -1 marks a dimension only known at run time (dynamic shapes). */
typedef struct trtl_dims {
    int32_t nb_dims;
    int64_t d[TRTL_MAX_DIMS];
} trtl_dims;

/* Borrowed weights: `values` must stay valid until the network is built (the builder copies). */
typedef struct trtl_weights {
    trtl_dtype type;
    const void *values;
    int64_t count;
} trtl_weights;

/* Log severities, equal to trt.ILogger.Severity. */
typedef enum trtl_severity {
    TRTL_LOG_INTERNAL_ERROR = 0,
    TRTL_LOG_ERROR = 1,
    TRTL_LOG_WARNING = 2,
    TRTL_LOG_INFO = 3,
    TRTL_LOG_VERBOSE = 4
} trtl_severity;

typedef void (*trtl_log_fn)(void *user, trtl_severity severity, const char *msg);

#ifdef __cplusplus
}
#endif
#endif /* TRTLITE_TYPES_H */
