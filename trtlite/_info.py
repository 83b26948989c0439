"""What `python -m trtlite` prints without arguments: versions, this machine's CPU features, the optimized
kernels of this build and whether each can run here, and where the C headers are (for plugin authors)."""
from __future__ import annotations

import os
import platform
import sys
from typing import List, Optional, TextIO

_HERE = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The directory holding trtlite's public C headers (``trtlite/trtlite.h``, ``types.h``, ``plugin.h``, ...):
    pass it to the compiler (``-I``) to build C plugins.  An installed wheel ships them inside the package; in a
    source checkout they are ``csrc/include``."""
    installed = os.path.join(_HERE, "include")
    if os.path.isfile(os.path.join(installed, "trtlite", "plugin.h")):
        return installed
    source = os.path.join(os.path.dirname(_HERE), "csrc", "include")
    if os.path.isfile(os.path.join(source, "trtlite", "plugin.h")):
        return source
    raise FileNotFoundError("trtlite's C headers are neither in %s nor in %s" % (installed, source))


def report(out: Optional[TextIO] = None) -> None:
    """Print the versions, CPU features, kernels and include directory."""
    import trtlite as trt
    out = out or sys.stdout
    feats: List[str] = trt._C.cpu_features()
    kernels = trt._C.kernels()
    usable = sum(1 for k in kernels if k[3])
    print("trtlite %s (TensorRT API level %s), Python %s, numpy %s" % (
        trt.trtlite_version, trt.__version__, platform.python_version(), __import__("numpy").__version__), file=out)
    print("CPU: %s; features used by the kernels: %s" % (platform.processor() or platform.machine(),
                                                        ", ".join(feats) or "none"), file=out)
    print("optimized kernels: %d in this build, %d usable on this CPU (every layer kind also has a reference "
          "kernel)" % (len(kernels), usable), file=out)
    width = max((len(k[0]) for k in kernels), default=10)
    for name, kind, need, ok in kernels:
        print("  %-*s %-18s needs %-28s %s" % (width, name, kind, "+".join(need) or "-",
                                                "yes" if ok else "no (CPU lacks it)"), file=out)
    try:
        inc = get_include()
    except FileNotFoundError as e:
        inc = "(%s)" % e
    print("C headers: %s" % inc, file=out)
    print("run `trtlite-exec --help` (or `python -m trtlite --help`) for the command line", file=out)
