"""Build of trtlite's C core and CPython bindings (extension module trtlite._C)."""
import glob
import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "csrc", "**", "*.c"), recursive=True))

ext = Extension(
    "trtlite._C",
    sources=SOURCES,
    include_dirs=["csrc", "csrc/include"],
    libraries=["openblas", "m", "pthread", "dl"],
    extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE", "-fvisibility=hidden",
                        "-Wno-missing-field-initializers"],
    define_macros=[("NDEBUG", "1")],
)



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


setup(ext_modules=[ext], cmdclass={"build_py": build_py_with_headers})
