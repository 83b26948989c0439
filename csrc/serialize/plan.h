/*
 * plan.h -- the serialized engine ("plan") format, version 10.
 *
 * Versions: any change to the byte layout below bumps TRTL_PLAN_VERSION.  A reader loads its own
 * version and the older ones listed as readable (TRTL_PLAN_MIN_VERSION..), and refuses others
 * with TRTL_ERR_VERSION naming both (plans are rebuilt from the network, as TensorRT engines are).
 *   1  first format
 *   2  the engine's name (the network's) after num_threads
 *   3  each node's compute precision (i32, trtl_dtype or TRTL_BF16) after its kernel name; it must
 *      be the kernel's own (trtl_kernel.precision).  Version 2 plans are read with the kernels'
 *      precision (every kernel of a version 2 plan computes in fp32).
 *      Also new in 3: ops QUANTIZE, DEQUANTIZE and the internal QLINEAR (and ATTENTION); INT8/UINT8
 *      constants and tensors.
 *   4  shape tensors: after the I/O list, u32 shape_input[n_inputs] (0/1: the input's values decide
 *      shapes; INT32, static, at most 8 values); per profile, after a shape input's dims, its value
 *      ranges as three dims (vmin, vopt, vmax: nb_dims = the input's volume).  Also new in 4: op SHAPE,
 *      and SHUFFLE with a second input (the reshape dims; reshape_dims then only holds their count).
 *   5  control flow: op CONTROL_FLOW (loops and conditionals; the boundary ops never reach a plan), whose
 *      params are its structure and nested plans (below).  Older plans load unchanged.
 *      Nodes added since without a layout change (the op table bounds them): op FILL, and REDUCE / TOPK with a
 *      second input, SLICE with a fifth (run-time shape operands, issue #12).
 *      QLINEAR's attributes gain mid_quant .. res_type and pool_mode, appended (int8 residual adds and
 *      pooling); a version 4 plan stores its QLINEAR nodes without them (reader.c, attrs_in_version).
 *   6  CAST's attribute `saturate` (appended; version 5 plans are read with 1, attrs_in_version); new
 *      dtypes FP8, INT64, INT4, FP4, E8M0 and trtlite's storage extensions 32..37 (types.h).  BF16 (7)
 *      tensors came later without a layout change (a reader from before refuses them as an unknown dtype).
 *   7  ATTENTION's attributes norm_op, causal, decomposable, causal_lower_right, empty_rows_zero (appended;
 *      the IAttention layer; older plans are read with softmax, no causality, NaN for empty rows).  After the
 *      nodes: str weights_names (trtl_engine_weights_names: "layer\trole\tname\n" lines, refit by name).
 *   8  QLINEAR's attribute in_grid (appended; builder/passes/int8_regions.c; older plans are read with 0).
 *      The internal op PREACT_CONV came later without a layout change (appended to ops.def, its own attribute
 *      table: builder/passes/fuse_preact.c); a reader from before refuses it as an unknown op.
 *   9  NCHWC_CONV's attributes mid_qgrid, mid_alpha, mid_beta (appended; int8 layers in blocked regions,
 *      builder/passes/nchwc.c; older plans are read with 0: none).
 *  10  QLINEAR's attribute bias_after_mid (appended; builder/passes/qlinear_bias.c) and NORMALIZATION's out_quant,
 *      out_scale, out_zero_point, out_type (appended, internal; builder/passes/norm_codes.c: a layer norm writing
 *      int8 codes; older plans are read with 0: the bias before the mid quantization, a FLOAT output);
 *      and the internal op PW_CHAIN (builder/passes/fuse_chain.c): a run of pointwise steps as one program, its
 *      attributes `ops` (INT32 weights, kind / code / operand per op) and `args` (FLOAT weights, alpha / beta per op);
 *      shape inference (network/ops/pw_chain.c) checks every op's kind, code, operand index and fake-quantize scale,
 *      the weights' types and counts and the operands' broadcast.  Older plans hold no PW_CHAIN (refused in them).
 *
 * Byte layout (all integers little-endian; floats IEEE-754 binary32):
 *
 *   header, 64 bytes
 *     0  char[8]  magic "TRTLPLAN"
 *     8  u32      format version (TRTL_PLAN_VERSION)
 *    12  u32      header size (64)
 *    16  u64      payload size in bytes
 *    24  u32      CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320) of the payload
 *    28  u32      CPU features the chosen kernels need (TRTL_CPU_* bits)
 *    32  char[16] producer version string, NUL-padded
 *    48  u8       flags: bit 0 refittable (built with BuilderFlag.REFIT; not covered by the CRC, it only
 *                 lets engine/refit.c replace weights); other bits zero
 *    49  u8[15]   reserved, zero
 *   payload
 *     u32 implicit_batch, i32 max_batch_size, i32 num_threads, str name
 *     u32 n_tensors, then per tensor:
 *         str name, u32 dtype, u32 kind, dims dims, dims max_dims,
 *         u64 n_bytes + bytes               (constant data; 0 for other kinds)
 *     u32 n_io, u32 n_inputs, u32 io[n_io]  (tensor ids: inputs first, then outputs)
 *     u32 shape_input[n_inputs]             (version >= 4)
 *     u32 n_profiles, then per profile, per input: dims min, dims opt, dims max
 *         [+ dims vmin, dims vopt, dims vmax for a shape input, version >= 4]
 *     u32 n_nodes, then per node:
 *         u32 op, str name, str kernel name, i32 precision (version >= 3),
 *         i32 act, f32 alpha, f32 beta, u32 has_residual      (fused epilogue)
 *         u32 n_in, u32 in[n_in], u32 n_out, u32 out[n_out]
 *         params: every non-alias attribute of the op, in table order, by type:
 *             INT/BOOL/ENUM/DTYPE i32 | AXES u32 | FLOAT f32 | DIMS/DIMS_SYM dims |
 *             FLOATS i32 n + f32[n] | WEIGHTS u32 dtype + i64 count + raw values |
 *             STRING u32 len + len bytes (no NUL; len below the field's size)
 *         plugin nodes (op PLUGIN_V2) instead: str namespace, str name, str version,
 *             u32 n_fields, per field: str name, i32 type, i32 length, u64 n_bytes + bytes
 *         control-flow nodes (op CONTROL_FLOW, version >= 5) instead (engine/control_flow.h):
 *             u32 is_loop, i32 n_rec, i32 n_iter, per iterator: i32 axis + i32 reverse,
 *             i32 trip_in, i32 cond_out, i64 static_trip,
 *             u32 n_out, per output: i32 kind, i32 axis, i32 src, i64 len,
 *             u32 n_bodies (1 loop, 2 conditional), per body: u32 n_in + i32 in_map[n_in], u32 n_out,
 *             u64 n_bytes + a complete plan (header included; loaded recursively, at most 16 deep)
 *     str weights_names                     (version >= 7)
 *   where  str  = u32 length + bytes (no NUL)
 *          dims = i32 nb_dims + i64[nb_dims]
 *
 * Loading checks, in order: size >= header, magic, header size, version, payload size against
 * the buffer, CRC, CPU features (the error names the missing ones: a plan with bf16 kernels does
 * not load where AVX512_BF16 is missing; rebuild it there and the builder picks fp32 kernels), then every count, id, enum and length against the remaining
 * bytes and the op table, the kernels by name, plugins through the registry, and finally that
 * shape inference over the graph reproduces the stored max shapes.  Every invariant the builder
 * guarantees is checked, as the engine relies on each: tensors of at most 2^40 elements whose
 * shape agrees with their max shape; profiles as the builder validates them (the input's rank,
 * 0 <= min <= opt <= max, at most 2^40 elements, within the input's max shape and equal to its
 * static dimensions), whose union is the inputs' max shape; per layer the network API's input and
 * output counts (at most 64 inputs, 16 outputs); every tensor a step reads is produced before it
 * (inputs and constants count as produced), every tensor is produced exactly once, and every
 * internal tensor and output is produced.  An allocation failure while loading is
 * TRTL_ERR_OUT_OF_MEMORY, never reported as a corrupt plan.  Any failure is an error
 * naming what is wrong; a plan never makes the loader read out of bounds.
 */
#ifndef TRTL_SERIALIZE_PLAN_H
#define TRTL_SERIALIZE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/crc32.h"

#define TRTL_PLAN_MAGIC "TRTLPLAN"
#define TRTL_PLAN_VERSION 10u
#define TRTL_PLAN_MIN_VERSION 2u /* oldest version this reader loads */
#define TRTL_PLAN_HEADER_SIZE 64u

#endif
