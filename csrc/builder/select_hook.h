/* select_hook.h -- a test hook into kernel selection's timing (builder/select.c).
 *
 * With a hook set, every run of a candidate while a build times a node still runs the kernel, but
 * its sample (and the time it counts against the node's budget) is the hook's return value in ms
 * instead of a clock's: tests drive the rounds, cut-offs and the near-tie rule with made-up
 * timings, deterministically (tests/c/test_select_timing.c).  `sample` is 0 for a candidate's
 * warm-up run, then 1, 2, ... (its round).  A negative value counts as a failed run.  Process-wide;
 * NULL removes it.  Not for production use: one hook for every build of the process. */
#ifndef TRTL_BUILDER_SELECT_HOOK_H
#define TRTL_BUILDER_SELECT_HOOK_H

typedef double (*trtl_select_timing_hook)(void *user, const char *layer, const char *kernel, int sample);

void trtl_select_set_timing_hook(trtl_select_timing_hook hook, void *user);

#endif
