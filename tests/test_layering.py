"""The C core's include lines follow the layers of docs/ARCHITECTURE.md ("Layers"), checked by tools/check_layers.py,
and the checker itself catches upward includes, sideways includes between siblings and include cycles on fake trees."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "check_layers.py")


def _check(*args, root=None):
    cmd = [sys.executable, TOOL] + list(args) + (["--root", str(root)] if root else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def _tree(tmp_path, files):
    """A fake repository: {path under csrc/: [included names]}."""
    for path, includes in files.items():
        p = tmp_path / "csrc" / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join('#include "%s"\n' % name for name in includes) + "int x;\n")
    return tmp_path


def test_tree_follows_the_layers():
    r = _check("--skip", "bindings")
    assert r.returncode == 0, r.stdout + r.stderr


def test_bindings_use_only_the_public_api():
    r = _check()
    assert r.returncode == 0, r.stdout + r.stderr


GOOD = {
    "include/trtlite/types.h": [],
    "include/trtlite/trtlite.h": ["trtlite/types.h"],
    "core/status.h": ["trtlite/types.h"],
    "core/status.c": ["core/status.h"],
    "network/op_table.h": ["core/status.h"],
    "kernels/kernel.h": ["core/status.h"],
    "engine/engine.h": ["kernels/kernel.h", "network/op_table.h"],
    "builder/build.c": ["engine/engine.h"],
    "python/module.c": ["trtlite/trtlite.h", "python/pytrtl.h"],
    "python/pytrtl.h": ["trtlite/trtlite.h"],
}


def test_a_layered_fake_tree_passes(tmp_path):
    r = _check(root=_tree(tmp_path, GOOD))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok" in r.stdout


@pytest.mark.parametrize("src,dst", [
    ("core/status.h", "network/op_table.h"),   # upward
    ("kernels/kernel.h", "network/op_table.h"),  # sideways between siblings
    ("network/op_table.h", "kernels/kernel.h"),
    ("plugins/registry.c", "engine/engine.h"),
    ("engine/engine.h", "builder/graph.h"),
    ("builder/build.c", "serialize/plan.h"),
    ("include/trtlite/trtlite.h", "core/status.h"),  # the public headers include only themselves
])
def test_a_forbidden_include_fails_naming_the_edge(tmp_path, src, dst):
    files = dict(GOOD)
    files.setdefault(dst, [])
    files[src] = files.get(src, []) + [dst]
    r = _check(root=_tree(tmp_path, files))
    assert r.returncode == 1, r.stdout
    assert "[layers] csrc/%s -> csrc/%s" % (src, dst) in r.stdout, r.stdout


def test_a_file_include_cycle_fails(tmp_path):
    files = dict(GOOD)
    files["core/a.h"] = ["core/b.h"]
    files["core/b.h"] = ["core/a.h"]
    r = _check(root=_tree(tmp_path, files))
    assert r.returncode == 1
    assert "[cycles] include cycle between files: csrc/core/a.h -> csrc/core/b.h" in r.stdout, r.stdout


def test_a_layer_cycle_is_reported_as_a_cycle(tmp_path):
    files = dict(GOOD)
    files["core/status.c"] = ["core/status.h", "network/op_table.h"]  # network -> core and core -> network
    r = _check("--skip", "layers", root=_tree(tmp_path, files))
    assert r.returncode == 1
    assert "[cycles] include cycle between layers core, network" in r.stdout, r.stdout


def test_bindings_rule_and_its_skip(tmp_path):
    files = dict(GOOD)
    files["python/module.c"] = ["trtlite/trtlite.h", "core/status.h"]
    root = _tree(tmp_path, files)
    r = _check(root=root)
    assert r.returncode == 1
    assert "[bindings] csrc/python/module.c -> csrc/core/status.h" in r.stdout, r.stdout
    assert _check("--skip", "bindings", root=root).returncode == 0


def test_unknown_folders_and_unresolved_includes_fail(tmp_path):
    files = dict(GOOD)
    files["misc/helper.c"] = []
    files["core/status.c"] = ["core/status.h", "core/missing.h"]
    r = _check(root=_tree(tmp_path, files))
    assert r.returncode == 1
    assert "csrc/misc/helper.c: folder 'misc' is no layer" in r.stdout, r.stdout
    assert 'csrc/core/status.c: #include "core/missing.h" resolves to no file' in r.stdout, r.stdout


def test_commented_out_includes_are_ignored(tmp_path):
    root = _tree(tmp_path, GOOD)
    (root / "csrc" / "core" / "status.c").write_text('/* #include "builder/graph.h" */\n#include "core/status.h"\n')
    assert _check(root=root).returncode == 0
