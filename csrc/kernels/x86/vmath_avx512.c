/* vmath_avx512.c -- the AVX-512 variant of the vector math spans (template: vmath_tmpl.h). */
#if defined(__x86_64__) || defined(__i386__)
#define VM_AVX512 1
#include "kernels/x86/vmath_tmpl.h"
#else
typedef int trtl_vmath_avx512_unused;
#endif
