"""python -m trtlite: the trtlite-exec command line (see trtlite/exec.py)."""
import sys

from .exec import main

sys.exit(main())
