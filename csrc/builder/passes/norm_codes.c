/* norm_codes.c -- a layer norm whose every reader quantizes its output with the same parameters writes the int8
 * codes itself.
 *
 *     NORMALIZATION(x, scale, bias) -> y (FLOAT) -> QLINEAR readers quantizing y with (s, z) as input 0 / residual,
 *                                                   Q (s, z) layers (their codes read by int8 layers)
 *   ==>  NORMALIZATION(x, scale, bias; out_quant 2 (s, z)) -> y (codes) -> the QLINEAR readers take the codes, the
 *        Q layers' readers read y (qdq_int8_io's rule for a QLINEAR producer: trtl_qio_consumers_take_codes,
 *        trtl_qio_retype)
 *
 * In an int8 transformer (onnxruntime quantize_static) each LayerNormalization's output is quantized by the next
 * int8 matrix multiply (fuse_qdq took its Q -> DQ) and by a Q layer for the int8 residual add that reads it: the
 * float rows written, read twice, divided and rounded twice; now written once as codes (a quarter of the bytes),
 * and the matrix multiply packs codes.  Exact: normalization.rows computes each y by
 * the same operations as before and quantizes it in the register as quantize.simd does (the IEEE quotient y / s,
 * round half to even, saturation, NaN to the lowest code), so the codes are bit for bit those of the two steps
 * (kernels/x86/normalization.c), and the int8 library's quantizer gives the same integers from y as from its codes
 * (kernels/qconv.h: the correctly rounded quotient).  Preconditions: a layer norm that normalization.rows runs with
 * the affine vectors inside the row (one group, the normalized axes a trailing block, scale and bias 1 along the kept
 * dims, FLOAT compute precision; the reference normalization writes codes too, but from other floats), no fused
 * epilogue; y no network output, and every reader takes the codes of one (s, z, type). */
#include <math.h>

#include "builder/passes/passes.h"
#include "builder/passes/match.h"
#include "core/status.h"

/* The normalization's geometry is normalization.rows' per-row form (its kernel's MODE_VEC): checked on the max dims
 * (the ranks and the 1s of scale and bias do not change with the profile). */
static int row_norm(const trtl_bgraph *g, const trtl_node *n)
{
    const trtl_normalization_params *p = &n->p.norm;
    if (n->n_in != 3 || n->n_out != 1 || p->num_groups != 1 || p->compute_precision != TRTL_FLOAT || p->out_quant)
        return 0;
    const trtl_dims *x = &g->t[n->in[0]].dmax, *s = &g->t[n->in[1]].dmax, *b = &g->t[n->in[2]].dmax;
    const int r = x->nb_dims;
    if (r < 1 || r > 31 || s->nb_dims != r || b->nb_dims != r || !p->axes || p->axes >> r)
        return 0;
    int first = 0;
    while (!(p->axes >> first & 1u))
        first++;
    if (p->axes != ((1u << r) - 1) - ((1u << first) - 1)) /* a trailing block [first, r) */
        return 0;
    for (int d = 0; d < first; d++)
        if (s->d[d] != 1 || b->d[d] != 1)
            return 0;
    for (int i = 0; i < 3; i++)
        if (g->t[n->in[i]].dtype != TRTL_FLOAT)
            return 0;
    return 1;
}

trtl_status trtl_pass_norm_codes(trtl_bgraph *g)
{
    trtl_pass_log log;
    trtl_pass_log_init(&log, "layer norm writing int8 codes");
    for (int32_t i = 0; i < g->nn; i++) {
        trtl_node *n = &g->n[i].n;
        if (g->n[i].dead || n->op != TRTL_OP_NORMALIZATION || n->epi.act != TRTL_ACT_NONE || n->epi.has_residual ||
            g->n[i].fixed_kernel || !row_norm(g, n))
            continue;
        const int32_t y = n->out[0];
        trtl_qlinear_params c = {0}; /* out_scale, out_zero_point, out_type: the codes its readers take */
        if (g->t[y].dtype != TRTL_FLOAT || trtl_bg_is_output(g, y) || !trtl_qio_reader_params(g, y, &c, 0) ||
            !trtl_qio_consumers_take_codes(g, y, &c, 0) || !(c.out_scale > 0.0f) || !isfinite(c.out_scale))
            continue;
        const int32_t readers = trtl_bg_consumers(g, y, NULL);
        n->p.norm.out_quant = 2;
        n->p.norm.out_scale = c.out_scale;
        n->p.norm.out_zero_point = c.out_zero_point;
        n->p.norm.out_type = c.out_type;
        const int32_t pools = trtl_qio_retype(g, y, (trtl_dtype)c.out_type, &c);
        trtl_pass_log_add(&log, "'%s' writes %s codes (scale %g, zero point %d) for %d reader(s)%s", n->name,
                          trtl_dtype_name((trtl_dtype)c.out_type), (double)c.out_scale, (int)c.out_zero_point,
                          (int)readers, pools ? ", max pooling them on the way" : "");
    }
    trtl_pass_log_done(&log);
    return TRTL_OK;
}
