/* vmath_avx2.c -- the AVX2+FMA variant of the vector math spans (template: vmath_tmpl.h). */
#if defined(__x86_64__) || defined(__i386__)
#define VM_AVX2 1
#include "kernels/x86/vmath_tmpl.h"
#else
typedef int trtl_vmath_avx2_unused;
#endif
