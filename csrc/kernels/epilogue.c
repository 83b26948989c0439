/* epilogue.c -- activation formulas (TensorRT's) and the fused epilogue applied after an op.
 *
 * NaN and +-Inf follow numpy evaluating the same formula (float64): a NaN input gives NaN for every
 * activation (RELU is numpy.maximum(x, 0), which keeps NaN) except THRESHOLDED_RELU, which is
 * x > alpha ? x : 0 like onnxruntime's ThresholdedRelu and gives 0; +-Inf give what the formula
 * gives (SOFTSIGN and the GELUs give NaN at -Inf or +-Inf, as numpy, onnxruntime and PyTorch do).  The vector paths of the optimized
 * kernels (trtl_act8, act16) give the same results. */
#include <math.h>
#include "kernels/kernel.h"

float trtl_activation_eval(int32_t type, float alpha, float beta, float x)
{
    switch (type) {
    case TRTL_ACT_RELU: return x < 0.0f ? 0.0f : x; /* NaN stays NaN */
    case TRTL_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case TRTL_ACT_TANH: return tanhf(x);
    case TRTL_ACT_LEAKY_RELU: return x >= 0.0f ? x : alpha * x;
    case TRTL_ACT_ELU: return x >= 0.0f ? x : alpha * (expf(x) - 1.0f);
    case TRTL_ACT_SELU: return x > 0.0f ? beta * x : beta * alpha * (expf(x) - 1.0f);
    case TRTL_ACT_SOFTSIGN: return x / (1.0f + fabsf(x));
    case TRTL_ACT_SOFTPLUS: {
        /* alpha * log(1 + exp(beta * x)), computed without overflow */
        float t = beta * x;
        return alpha * (t > 0.0f ? t + log1pf(expf(-t)) : log1pf(expf(t)));
    }
    case TRTL_ACT_CLIP: return x < alpha ? alpha : (x > beta ? beta : x);
    case TRTL_ACT_HARD_SIGMOID: {
        float t = alpha * x + beta;
        return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    }
    case TRTL_ACT_SCALED_TANH: return alpha * tanhf(beta * x);
    case TRTL_ACT_THRESHOLDED_RELU: return x > alpha ? x : 0.0f; /* NaN gives 0, as onnxruntime's */
    case TRTL_ACT_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case TRTL_ACT_GELU_TANH: {
        float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + tanhf(u));
    }
    /* internal codes (core/params.h), made by the fuse_pointwise builder pass */
    case TRTL_ACT_SILU: return x * (1.0f / (1.0f + expf(-x)));
    case TRTL_ACT_HARD_SWISH: {
        float t = alpha * x + beta;
        return x * (t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t));
    }
    case TRTL_ACT_MISH: {
        float sp = x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); /* softplus, alpha = beta = 1 */
        return x * tanhf(sp);
    }
    case TRTL_ACT_QGRID: {
        float lo, hi, q = rintf(x / alpha);
        trtl_act_qgrid_bounds(beta, &lo, &hi);
        q = q > hi ? hi : q;
        return alpha * ((q >= lo ? q : lo) + 0.0f); /* NaN -> lo; + 0: a code 0 is +0 (-0 + 0 = +0), as
                                                     * DequantizeLinear's (q - z) * s */
    }
    default: return x; /* TRTL_ACT_NONE */
    }
}

void trtl_epilogue_apply(const trtl_epilogue *e, float *y, const float *residual, int64_t n)
{
    if (e->has_residual && residual)
        for (int64_t i = 0; i < n; i++)
            y[i] += residual[i];
    if (e->act == TRTL_ACT_NONE)
        return;
    if (e->act == TRTL_ACT_RELU) {
        for (int64_t i = 0; i < n; i++)
            y[i] = y[i] < 0.0f ? 0.0f : y[i]; /* NaN stays NaN */
        return;
    }
    for (int64_t i = 0; i < n; i++)
        y[i] = trtl_activation_eval(e->act, e->alpha, e->beta, y[i]);
}
