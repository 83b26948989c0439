/* grid_sample.c -- IGridSampleLayer (ONNX GridSample): input (N, C, D_1..D_k), k = 2 or 3 (TensorRT:
 * 2), FLOAT; grid (N, O_1..O_k, k) FLOAT, normalized coordinates in [-1, 1], last entry the first
 * spatial dim's... reversed as in ONNX (grid[..., 0] is the innermost dim).  Output (N, C, O_1..O_k).
 * interpolation_mode: NEAREST (rounded half to even), LINEAR, CUBIC (Keys, a = -0.75);
 * sample_mode: FILL (zeros outside), CLAMP (border), REFLECT (reflection); align_corners as ONNX.
 * The sampling formulas are written out in kernels/ref/grid_sample.c. */
#include "network/op_table.h"
#include "core/status.h"
#include "core/dims.h"

const trtl_attr_desc trtl_attrs_grid_sample[] = {
    TRTL_A_ENUM("interpolation_mode", grid.interpolation_mode, "InterpolationMode", TRTL_RESIZE_COUNT),
    TRTL_A("align_corners", TRTL_ATTR_BOOL, grid.align_corners),
    TRTL_A_ENUM("sample_mode", grid.sample_mode, "SampleMode", TRTL_SLICE_COUNT),
};
TRTL_NATTRS(grid_sample);

void trtl_init_grid_sample(trtl_params *p)
{
    p->grid.interpolation_mode = TRTL_RESIZE_LINEAR;
    p->grid.align_corners = 0;
    p->grid.sample_mode = TRTL_SLICE_FILL;
}

trtl_status trtl_lower_grid_sample(trtl_params *p, const trtl_lower_ctx *c)
{
    (void)p;
    if (c->implicit_batch)
        return trtl_error(TRTL_ERR_UNSUPPORTED, "layer '%s': IGridSampleLayer needs an explicit-batch network",
                          c->layer_name);
    return TRTL_OK;
}

trtl_status trtl_infer_grid_sample(const trtl_infer_ctx *c)
{
    const trtl_grid_sample_params *q = &c->p->grid;
    const char *L = c->layer_name;
    char sx[TRTL_DIMS_STR_MAX], sg[TRTL_DIMS_STR_MAX];
    const trtl_dims *X = &c->in[0], *G = &c->in[1];
    int32_t k = X->nb_dims - 2;
    if (q->interpolation_mode < 0 || q->interpolation_mode >= TRTL_RESIZE_COUNT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': unknown InterpolationMode %d", L,
                          (int)q->interpolation_mode);
    if (q->sample_mode != TRTL_SLICE_FILL && q->sample_mode != TRTL_SLICE_CLAMP && q->sample_mode != TRTL_SLICE_REFLECT)
        return trtl_error(TRTL_ERR_INVALID_ARGUMENT, "layer '%s': sample_mode must be FILL, CLAMP or REFLECT, got %d", L,
                          (int)q->sample_mode);
    if (c->in_type[0] != TRTL_FLOAT || c->in_type[1] != TRTL_FLOAT)
        return trtl_error(TRTL_ERR_DTYPE, "layer '%s': input and grid must be FLOAT, got %s and %s", L,
                          trtl_dtype_name(c->in_type[0]), trtl_dtype_name(c->in_type[1]));
    trtl_dims_str(X, sx, sizeof sx);
    trtl_dims_str(G, sg, sizeof sg);
    if (k != 2 && k != 3)
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input must be (N, C, H, W) or (N, C, D, H, W), got %s", L, sx);
    if (G->nb_dims != k + 2 || (G->d[k + 1] >= 0 && G->d[k + 1] != k))
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': grid must be (N, out spatial..., %d) for input %s, got %s", L,
                          (int)k, sx, sg);
    if (X->d[0] >= 0 && G->d[0] >= 0 && X->d[0] != G->d[0])
        return trtl_error(TRTL_ERR_SHAPE, "layer '%s': input %s and grid %s differ in batch", L, sx, sg);
    trtl_dims o = *X;
    o.d[0] = X->d[0] >= 0 ? X->d[0] : G->d[0];
    for (int32_t i = 0; i < k; i++)
        o.d[2 + i] = G->d[1 + i];
    c->out[0] = o;
    c->out_type[0] = TRTL_FLOAT;
    return TRTL_OK;
}
