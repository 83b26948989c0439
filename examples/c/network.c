/*
 * network.c -- using trtlite from C through the public header.
 *
 * Builds  input(1x1x8x8) -> conv 3x3 (2 maps, pad 1) -> relu -> max pool 2x2/2 -> fully connected (3)
 *         -> softmax, builds an engine, serializes it, loads the plan again, runs it, and checks the
 * result against a direct computation in this file.  Exit status 0 when everything agrees.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trtlite/trtlite.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        trtl_status s_ = (call);                                                           \
        if (s_ != TRTL_OK) {                                                               \
            fprintf(stderr, "%s failed: %s (%s)\n", #call, trtl_last_error(), trtl_status_name(s_)); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

static float frand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (float)((*seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The same network computed directly, to check the engine. */
static void reference(const float *x, const float *cw, const float *cb, const float *fw, const float *fb, float *prob)
{
    float conv[2][8][8], pool[2][4][4], logits[3];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) {
                float acc = cb[k];
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        int ii = i + a - 1, jj = j + b - 1;
                        if (ii >= 0 && ii < 8 && jj >= 0 && jj < 8)
                            acc += x[ii * 8 + jj] * cw[k * 9 + a * 3 + b];
                    }
                conv[k][i][j] = acc > 0 ? acc : 0;
            }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                float m = conv[k][2 * i][2 * j];
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++)
                        m = conv[k][2 * i + a][2 * j + b] > m ? conv[k][2 * i + a][2 * j + b] : m;
                pool[k][i][j] = m;
            }
    float mx = -1e30f, sum = 0;
    for (int o = 0; o < 3; o++) {
        float acc = fb[o];
        for (int t = 0; t < 32; t++)
            acc += fw[o * 32 + t] * (&pool[0][0][0])[t];
        logits[o] = acc;
        mx = acc > mx ? acc : mx;
    }
    for (int o = 0; o < 3; o++)
        sum += (prob[o] = expf(logits[o] - mx));
    for (int o = 0; o < 3; o++)
        prob[o] /= sum;
}

int main(void)
{
    unsigned seed = 7;
    float x[64], cw[18], cb[2], fw[96], fb[3], prob[3], want[3];
    for (int i = 0; i < 64; i++) x[i] = frand(&seed);
    for (int i = 0; i < 18; i++) cw[i] = frand(&seed);
    for (int i = 0; i < 2; i++) cb[i] = frand(&seed);
    for (int i = 0; i < 96; i++) fw[i] = frand(&seed) * 0.3f;
    for (int i = 0; i < 3; i++) fb[i] = frand(&seed);

    /* Network definition (explicit batch). */
    trtl_network *net;
    trtl_tensor *in;
    trtl_layer *conv, *relu, *pool, *fc, *sm;
    CHECK(trtl_network_create(0, &net));
    trtl_dims in_dims = {4, {1, 1, 8, 8}}, k3 = {2, {3, 3}}, w2 = {2, {2, 2}}, pad1 = {2, {1, 1}};
    CHECK(trtl_network_add_input(net, "data", TRTL_FLOAT, &in_dims, &in));
    CHECK(trtl_network_add_convolution(net, in, 2, &k3, (trtl_weights){TRTL_FLOAT, cw, 18},
                                       (trtl_weights){TRTL_FLOAT, cb, 2}, &conv));
    CHECK(trtl_layer_set_dims(conv, "padding_nd", &pad1));
    CHECK(trtl_network_add_activation(net, trtl_layer_output(conv, 0), TRTL_ACT_RELU, &relu));
    CHECK(trtl_network_add_pooling(net, trtl_layer_output(relu, 0), TRTL_POOL_MAX, &w2, &pool));
    CHECK(trtl_layer_set_dims(pool, "stride_nd", &w2));
    CHECK(trtl_network_add_fully_connected(net, trtl_layer_output(pool, 0), 3, (trtl_weights){TRTL_FLOAT, fw, 96},
                                           (trtl_weights){TRTL_FLOAT, fb, 3}, &fc));
    CHECK(trtl_network_add_softmax(net, trtl_layer_output(fc, 0), &sm));
    CHECK(trtl_tensor_set_name(trtl_layer_output(sm, 0), "prob"));
    CHECK(trtl_network_mark_output(net, trtl_layer_output(sm, 0)));

    /* Build, serialize, reload. */
    trtl_builder_config *cfg;
    trtl_engine *built, *engine;
    void *plan;
    size_t plan_size;
    CHECK(trtl_builder_config_create(&cfg));
    CHECK(trtl_build(net, cfg, &built));
    CHECK(trtl_engine_serialize(built, &plan, &plan_size));
    CHECK(trtl_engine_deserialize(plan, plan_size, &engine));
    printf("engine: %d steps, plan %zu bytes\n", (int)trtl_engine_num_layers(engine), plan_size);
    for (int32_t i = 0; i < trtl_engine_num_layers(engine); i++)
        printf("  %-70s %s\n", trtl_engine_layer_name(engine, i), trtl_engine_layer_kernel(engine, i));

    /* A truncated plan must be refused with a message, not crash. */
    trtl_engine *bad = NULL;
    if (trtl_engine_deserialize(plan, plan_size / 2, &bad) == TRTL_OK) {
        fprintf(stderr, "a truncated plan was accepted\n");
        return 1;
    }
    printf("truncated plan refused: %s\n", trtl_last_error());

    /* Run. */
    trtl_context *ctx;
    CHECK(trtl_context_create(engine, &ctx));
    CHECK(trtl_context_set_tensor_address(ctx, "data", x));
    CHECK(trtl_context_set_tensor_address(ctx, "prob", prob));
    CHECK(trtl_context_execute(ctx, 0));

    reference(x, cw, cb, fw, fb, want);
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        printf("prob[%d] = %.6f (reference %.6f)\n", i, prob[i], want[i]);
        ok &= fabsf(prob[i] - want[i]) < 1e-5f;
    }
    trtl_context_destroy(ctx);
    trtl_engine_destroy(engine);
    trtl_engine_destroy(built);
    trtl_free(plan);
    trtl_builder_config_destroy(cfg);
    trtl_network_destroy(net);
    puts(ok ? "OK" : "MISMATCH");
    return ok ? 0 : 1;
}
