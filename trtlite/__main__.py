"""python -m trtlite: without arguments, versions, CPU features and kernels (trtlite/_info.py); with arguments,
the trtlite-exec command line (trtlite/exec.py)."""
import sys

if len(sys.argv) == 1:
    from ._info import report
    report()
    sys.exit(0)

from .exec import main  # noqa: E402

sys.exit(main())
