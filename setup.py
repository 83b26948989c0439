"""Build of trtlite's C core and CPython bindings (extension module trtlite._C)."""
import glob
import os

from setuptools import Extension, setup

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

setup(ext_modules=[ext])
