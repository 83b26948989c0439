"""The command line the document generators share (tools/gen_api_doc.py, gen_plugin_doc.py, gen_onnx_ops_doc.py):
write the document, or with --check exit 1 when the file on disk is not what the generator would write."""
import argparse
import os
import sys
from typing import Callable


def main(doc: str, render: Callable[[], str], description: str, regenerate: str = "make docs") -> int:
    """Writes render()'s text to `doc`, or checks it (--check); returns the exit status."""
    ap = argparse.ArgumentParser(description=description.strip().splitlines()[0])
    name = os.path.relpath(doc, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {name} is not current")
    args = ap.parse_args()
    text = render()
    if args.check:
        try:
            with open(doc) as f:
                current = f.read()
        except OSError:
            current = ""
        if current != text:
            print(f"{name} is stale: run `{regenerate}`", file=sys.stderr)
            return 1
        return 0
    with open(doc, "w") as f:
        f.write(text)
    print("wrote", doc)
    return 0
