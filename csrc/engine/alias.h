/*
 * alias.h -- activation tensors that share bytes on purpose: concatenation elision.
 *
 * An in-place concatenation (kernel "concatenation.inplace", chosen by the builder pass
 * elide_concat) has its inputs placed at their slices of its output in the activation arena, so
 * that their producers write the concatenated result directly and the concatenation copies
 * nothing.  That needs each input to be one contiguous block of the output: the dims before the
 * axis have volume 1 (batch 1 for a channel concatenation, or axis 0), all shapes static.
 * Likewise an in-place slice (kernel "slice.inplace", pass elide_slice) has its output placed at
 * its block of its input: its consumers read the input's bytes.
 *
 * Tensors so placed form groups: every member has a byte offset (delta) relative to the group's
 * root, which the memory planner places as one block of the group's extent, live over the union
 * of its members' live ranges.  Members are "views" (outputs of in-place concatenations, which
 * nothing writes) or "leaves" (written by their producers); leaves never overlap.  A DenseNet
 * block is one group: each concatenation's output is a prefix of the next one's.
 *
 * Groups are built one node at a time in node order (trtl_alias_view, trtl_alias_concat); a
 * concatenation that would contradict an earlier placement (an input already placed elsewhere, the same tensor twice) or
 * make two leaves overlap is refused and leaves the state unchanged: that concatenation copies.
 * The builder pass and the engine's memory plan (engine.c, also for loaded plans) run the same
 * procedure on the same nodes, so they agree; the kernel checks at run time that its inputs are
 * in place and copies otherwise, so a refused or re-planned concatenation is still correct.
 */
#ifndef TRTL_ENGINE_ALIAS_H
#define TRTL_ENGINE_ALIAS_H

#include <stdint.h>

#include "core/status.h"

typedef struct trtl_alias {
    int32_t n;        /* tensors */
    int32_t *root;    /* per tensor: its group's root (itself when alone) */
    int64_t *delta;   /* per tensor: byte offset from the root's first byte (may be negative) */
    uint8_t *view;    /* per tensor: 1 for an in-place concatenation's output */
    const int64_t *bytes; /* per tensor: size in bytes (borrowed, for the overlap check) */
} trtl_alias;

/* Every tensor alone.  `bytes` (n entries) is borrowed and must outlive the state. */
trtl_status trtl_alias_init(trtl_alias *a, int32_t n, const int64_t *bytes);
void trtl_alias_free(trtl_alias *a);

/* Places inputs in[0..n_in) at byte offsets off[] of tensor `out` (off[j]: the bytes of the
 * inputs before j).  Returns 1 when placed, 0 when refused (state unchanged), -1 out of memory. */
int trtl_alias_concat(trtl_alias *a, int32_t out, const int32_t *in, const int64_t *off, int32_t n_in);

/* Places `out` (a slice of `in`, nothing writes it) at byte offset `off` of `in`: a view.
 * Returns 1 when placed, 0 when refused (out not alone, or in == out). */
int trtl_alias_view(trtl_alias *a, int32_t out, int32_t in, int64_t off);

/* Arena offsets with the groups honoured: plans every group as one block with trtl_memplan
 * (bytes < 0 or first < 0: not planned, offset -1) and gives each member its root's offset plus
 * its delta.  Returns the arena size or -1 (out of memory / overflow). */
int64_t trtl_alias_memplan(const trtl_alias *a, const int64_t *bytes, const int32_t *first, const int32_t *last,
                           int64_t *offsets);

#endif
