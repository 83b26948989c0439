"""Build of trtlite's C core and CPython bindings (extension module trtlite._C)."""
import glob
import os
import shlex
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "csrc", "**", "*.c"), recursive=True))
# Headers (and ops.def): build_ext rebuilds the extension when one of these is newer than it, as it does for a
# source; without them a change to a header-only template (x86/qconv_tmpl.h) left a stale extension.
DEPENDS = sorted(os.path.relpath(p, HERE) for pat in ("*.h", "*.def")
                 for p in glob.glob(os.path.join(HERE, "csrc", "**", pat), recursive=True))

ext = Extension(
    "trtlite._C",
    sources=SOURCES,
    depends=DEPENDS,
    include_dirs=["csrc", "csrc/include"],
    libraries=["openblas", "m", "pthread", "dl"],
    extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-fvisibility=hidden",
                        "-Wno-missing-field-initializers"],
    define_macros=[("NDEBUG", "1")],
)

EXPORTS_MAP = os.path.join("csrc", "python", "exports.map")


def prebuilt_core(objdir):
    """The C core's objects from the Makefile's library build (`make build` compiles every core source once into
    build/obj/ for libtrtlite.so and passes that folder here as TRTLITE_CORE_OBJDIR), or None when any is missing or
    older than its source: then the extension compiles every source itself, as a plain `pip install` does.  Sharing
    them saves a second compile of the whole core in `make build` and CI."""
    objs = []
    for src in SOURCES:
        rel = os.path.relpath(src, "csrc")
        if rel.startswith("python" + os.sep):
            continue
        obj = os.path.join(objdir, os.path.splitext(rel)[0] + ".o")
        try:
            if os.path.getmtime(obj) < os.path.getmtime(os.path.join(HERE, src)):
                return None
        except OSError:
            return None
        objs.append(obj)
    return objs


CORE_OBJS = prebuilt_core(os.environ["TRTLITE_CORE_OBJDIR"]) if os.environ.get("TRTLITE_CORE_OBJDIR") else None
if CORE_OBJS:
    # Only the bindings are compiled here; the core objects (compiled with default visibility and
    # -fno-semantic-interposition) are linked in, and the version script keeps every symbol but the module's init
    # function local, as -fvisibility=hidden does for a full compile.
    ext.sources = [s for s in SOURCES if os.path.relpath(s, "csrc").startswith("python" + os.sep)]
    ext.extra_objects = CORE_OBJS
    ext.depends = DEPENDS + CORE_OBJS + [EXPORTS_MAP]
    ext.extra_link_args = ["-Wl,--version-script=" + EXPORTS_MAP]



class build_py_with_headers(build_py):
    """Also installs the public C headers as trtlite/include/trtlite/*.h (trtlite.get_include() finds them), so
    that plugin authors can compile against an installed wheel."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "trtlite", "include", "trtlite")
        self.mkpath(dest)
        for h in sorted(glob.glob(os.path.join(HERE, "csrc", "include", "trtlite", "*"))):
            if h.endswith((".h", ".def")):
                self.copy_file(h, os.path.join(dest, os.path.basename(h)))


OPENBLAS_HINT = ("install OpenBLAS's development files: apt-get install libopenblas-dev (Debian/Ubuntu), "
                 "dnf install openblas-devel (Fedora), or point CFLAGS/LDFLAGS at an OpenBLAS with cblas.h")


def openblas_problem(cc, header="cblas.h", library="openblas"):
    """None when `cc` compiles and links a cblas_sgemm call against `library`, else a one-line message saying what
    is missing and what to install.  The BLAS kernels (csrc/kernels/blas) are among the candidates the builder
    times, and the optimized x86 kernels share their helpers: trtlite needs OpenBLAS rather than building without
    it (docs/user_guide.md, "Installing")."""
    prog = ("#include <%s>\nint main(void) { float a = 1, b = 1, c = 0; cblas_sgemm(CblasRowMajor, CblasNoTrans, "
            "CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1); return c != 1; }\n" % header)
    flags = [f for v in ("CPPFLAGS", "CFLAGS") for f in shlex.split(os.environ.get(v, ""))]
    ldflags = shlex.split(os.environ.get("LDFLAGS", ""))
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "blas_check.c")
        with open(src, "w") as f:
            f.write(prog)
        obj = os.path.join(tmp, "blas_check.o")
        try:
            r = subprocess.run(cc + flags + ["-c", src, "-o", obj], capture_output=True, text=True)
        except OSError as e:
            return "trtlite: cannot run the C compiler %r (%s): install gcc or clang" % (" ".join(cc), e)
        if r.returncode != 0:
            return "trtlite: the C compiler finds no %s (OpenBLAS's CBLAS header); %s" % (header, OPENBLAS_HINT)
        r = subprocess.run(cc + [obj, "-o", os.path.join(tmp, "blas_check")] + ldflags + ["-l" + library],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return "trtlite: the linker finds no lib%s; %s" % (library, OPENBLAS_HINT)
    return None


class build_ext_checked(build_ext):
    """Checks for OpenBLAS first, so that a machine without it gets one line saying what to install instead of a
    compiler error from deep inside the kernels."""

    def build_extensions(self):
        words = list(getattr(self.compiler, "compiler_so", None) or shlex.split(os.environ.get("CC", "cc")))
        cc = []
        for w in words:  # the compiler command ("gcc", "ccache clang"), without its flags
            if w.startswith("-"):
                break
            cc.append(w)
        problem = openblas_problem(cc or ["cc"])
        if problem:
            sys.exit(problem)
        super().build_extensions()


if __name__ == "__main__":
    setup(ext_modules=[ext], cmdclass={"build_py": build_py_with_headers, "build_ext": build_ext_checked})
