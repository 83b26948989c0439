"""The bindings' source layout (issue 8 item 3): csrc/python uses only trtlite's public C API, and its headers form
layers without an include circle."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "csrc", "python")
PUBLIC = {"trtlite/trtlite.h", "trtlite/types.h", "trtlite/plugin.h", "trtlite/ops.h", "trtlite/ops.def"}


def includes(path):
    with open(path) as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), flags=re.M)


def test_bindings_include_only_public_headers_and_their_own():
    bad = [(fn, inc) for fn in sorted(os.listdir(SRC)) for inc in includes(os.path.join(SRC, fn))
           if inc not in PUBLIC and not (inc.startswith("python/") and os.path.exists(os.path.join(ROOT, "csrc", inc)))]
    assert bad == []


def test_binding_headers_have_no_include_circle():
    headers = {"python/" + fn: [i for i in includes(os.path.join(SRC, fn)) if i.startswith("python/")]
               for fn in os.listdir(SRC) if fn.endswith(".h")}
    state = {}

    def visit(h, path):
        if state.get(h) == "done":
            return
        assert state.get(h) != "open", "include circle: " + " -> ".join(path + [h])
        state[h] = "open"
        for d in headers.get(h, []):
            visit(d, path + [h])
        state[h] = "done"

    for h in headers:
        visit(h, [])
    assert len(headers) >= 8


def test_one_job_per_binding_file():
    """module.c and the former py_plugin.c are split by job; no binding file grows past ~1100 lines."""
    names = set(os.listdir(SRC))
    assert {"module.c", "errors.c", "convert.c", "sink.c", "plugin_fields.c", "plugin_adapter.c", "plugin_types.c",
            "plugin_registry.c"} <= names and "py_plugin.c" not in names
    for fn in names:
        with open(os.path.join(SRC, fn)) as f:
            assert sum(1 for _ in f) < 1150, fn
