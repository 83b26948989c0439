#!/usr/bin/env python3
"""Checks that csrc/'s `#include "..."` lines follow the layers of docs/ARCHITECTURE.md ("Layers").

Every file under csrc/ belongs to the layer named by its first folder (csrc/include/ is the public
API).  A layer may include only itself and the layers listed for it in ALLOWED; anything else is an
upward or sideways arrow.  Include cycles are errors too, between files and between layers.

    tools/check_layers.py [--root DIR] [--skip RULE]...

Rules (each violation names its rule, so one can be skipped while it is being worked on):
  layers     a file includes a layer its own layer may not include
  bindings   csrc/python/ includes anything but the public headers and python/ itself
  cycles     an include cycle between files, or between layers
  unknown    a file in a folder that is no layer, or an include that resolves to no file

Exit status: 0 when no (unskipped) rule is violated, 1 otherwise; the offending edges are printed.
"""
import argparse
import os
import re
import sys

PUBLIC = "public"
# Who may include whom.  Bottom to top: the public headers; core; network, kernels and plugins
# (siblings: none includes another); engine; builder and serialize (they make engines); bindings.
ALLOWED = {
    PUBLIC: {PUBLIC},
    "core": {PUBLIC, "core"},
    "network": {PUBLIC, "core", "network"},
    "kernels": {PUBLIC, "core", "kernels"},
    "plugins": {PUBLIC, "core", "plugins"},
    "engine": {PUBLIC, "core", "network", "kernels", "plugins", "engine"},
    "builder": {PUBLIC, "core", "network", "kernels", "plugins", "engine", "builder"},
    "serialize": {PUBLIC, "core", "network", "kernels", "plugins", "engine", "serialize"},
    # The bindings sit on top ("layers" lets them include anything below); the "bindings" rule
    # narrows them to the public C API.
    "python": {PUBLIC, "core", "network", "kernels", "plugins", "engine", "builder", "serialize", "python"},
}
BINDINGS_ALLOWED = {PUBLIC, "python"}
RULES = ("layers", "bindings", "cycles", "unknown")
SOURCE_EXT = (".c", ".h", ".def")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(rel):
    """Layer of a path relative to csrc/ ('include/trtlite/x.h' -> 'public'), or None."""
    top = rel.split("/", 1)[0]
    if top == "include":
        return PUBLIC
    return top if top in ALLOWED else None


def scan(csrc):
    """{file: [included file or unresolved name, ...]} for every source file under csrc/ (paths
    relative to csrc/), and the set of includes that resolved to nothing as (file, name)."""
    files = []
    for dirpath, dirnames, filenames in os.walk(csrc):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(SOURCE_EXT):
                files.append(os.path.relpath(os.path.join(dirpath, f), csrc).replace(os.sep, "/"))
    known = set(files)
    edges, unresolved = {}, []
    for f in files:
        with open(os.path.join(csrc, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)  # a commented-out include is no include
        out = []
        for name in INCLUDE_RE.findall(text):
            # the compiler's search order for "...": the including file's folder, then -Icsrc and
            # -Icsrc/include (the Makefile's INC)
            here = os.path.normpath(os.path.join(os.path.dirname(f), name)).replace(os.sep, "/")
            for cand in (here, os.path.normpath(name).replace(os.sep, "/"), "include/" + name):
                if cand in known:
                    out.append(cand)
                    break
            else:
                unresolved.append((f, name))
        edges[f] = out
    return edges, unresolved


def cycles(graph):
    """Strongly connected components with more than one node, or a node with an edge to itself
    (Tarjan, iterative), each as a sorted list."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    v = stack.pop()
                    on_stack.discard(v)
                    comp.append(v)
                    if v == node:
                        break
                if len(comp) > 1 or node in graph.get(node, ()):
                    result.append(sorted(comp))
    return result


def check(root, skip=()):
    """List of (rule, message) for the tree at root (which holds csrc/)."""
    csrc = os.path.join(root, "csrc")
    edges, unresolved = scan(csrc)
    problems = []
    for f, name in unresolved:
        problems.append(("unknown", 'csrc/%s: #include "%s" resolves to no file under csrc/' % (f, name)))
    layer_edges = {}
    for f, targets in sorted(edges.items()):
        src = layer_of(f)
        if src is None:
            problems.append(("unknown", "csrc/%s: folder %r is no layer (known: %s)"
                             % (f, f.split("/", 1)[0], ", ".join(sorted(ALLOWED)))))
            continue
        for t in targets:
            dst = layer_of(t)
            if dst is None:
                continue  # reported as the target's own "unknown" problem
            if dst != src:
                layer_edges.setdefault(src, set()).add(dst)
            if dst not in ALLOWED[src]:
                problems.append(("layers", "csrc/%s -> csrc/%s: %s may not include %s (allowed: %s)"
                                 % (f, t, src, dst, ", ".join(sorted(ALLOWED[src])))))
            if src == "python" and dst not in BINDINGS_ALLOWED:
                problems.append(("bindings", "csrc/%s -> csrc/%s: the bindings use only the public C API "
                                 "(csrc/include/) and their own python/ headers" % (f, t)))
    for comp in cycles(edges):
        problems.append(("cycles", "include cycle between files: %s" % " -> ".join("csrc/" + c for c in comp)))
    for comp in cycles(layer_edges):
        arrows = sorted("%s -> %s" % (a, b) for a in comp for b in layer_edges.get(a, ()) if b in comp)
        problems.append(("cycles", "include cycle between layers %s (%s)" % (", ".join(comp), "; ".join(arrows))))
    return [p for p in problems if p[0] not in skip]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the tree holding csrc/ (default: this repository)")
    ap.add_argument("--skip", action="append", default=[], choices=RULES, help="a rule not to enforce")
    args = ap.parse_args(argv)
    if not os.path.isdir(os.path.join(args.root, "csrc")):
        print("check_layers: no csrc/ under %s" % args.root, file=sys.stderr)
        return 2
    problems = check(args.root, set(args.skip))
    for rule, msg in problems:
        print("[%s] %s" % (rule, msg))
    if problems:
        print("check_layers: %d violation(s)" % len(problems))
        return 1
    print("check_layers: ok%s" % (" (skipped: %s)" % ", ".join(args.skip) if args.skip else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
