/*
 * refit_names.h -- the names a built engine keeps for its refittable weights (engine/refit.c).
 */
#ifndef TRTL_ENGINE_REFIT_NAMES_H
#define TRTL_ENGINE_REFIT_NAMES_H

#include "trtlite/trtlite.h"

/* Gives the engine the network's weights names (trtl_network_add_weights_name) plus one record per
 * constant layer, "<its output tensor>\t4\t<layer name>\n", so that a constant is refitted by its
 * layer's name (TensorRT's set_weights(layer, WeightsRole.CONSTANT, ...)) where the engine knows
 * only the tensor. */
trtl_status trtl_engine_take_weights_names(trtl_engine *e, const trtl_network *net);

#endif
