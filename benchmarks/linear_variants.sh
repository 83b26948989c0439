#!/bin/sh
# linear_variants.sh OUTDIR "NAME:CFLAGS" ... -- builds libtrtlite.so variants for benchmarks/linear_ab.c: each
# recompiles fully_connected_gemm.c and gemm_packed.c with the extra CFLAGS (e.g. -DKC_T=128) and relinks the
# other objects of build/obj (run `make build` first).  Writes OUTDIR/NAME.so.  Not part of CI.
set -e
out=$1; shift
mkdir -p "$out"
for v in "$@"; do
    name=${v%%:*}; flags=${v#*:}
    d="$out/$name"; mkdir -p "$d"
    for f in fully_connected_gemm gemm_packed; do
        gcc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC -fno-semantic-interposition -Icsrc -Icsrc/include $flags \
            -c csrc/kernels/x86/$f.c -o "$d/$f.o"
    done
    objs=$(find build/obj -name '*.o' ! -name fully_connected_gemm.o ! -name gemm_packed.o | sort)
    gcc -shared $objs "$d/fully_connected_gemm.o" "$d/gemm_packed.o" -o "$out/$name.so" -lopenblas -lm -lpthread -ldl
    echo "$out/$name.so"
done
