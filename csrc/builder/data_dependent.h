/* data_dependent.h -- build-time checks for data-dependent shapes (builder/data_dependent.c). */
#ifndef TRTL_BUILDER_DATA_DEPENDENT_H
#define TRTL_BUILDER_DATA_DEPENDENT_H

#include "builder/graph.h"

/* Fails naming the first layer that reads a data-dependent tensor and cannot (plugins, loops and conditionals). */
trtl_status trtl_check_data_dependent(const trtl_bgraph *g);

#endif
