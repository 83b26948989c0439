"""onnx's shape inference run in a forked child process.

`onnx.shape_inference.infer_shapes` is C++ that trusts the model: on malformed models found by fuzzing it has
crashed the process (a segmentation fault) and run for minutes without returning.  trtlite's parser only uses it
to name dynamic dims, so it runs where neither can hurt: in a child forked from this process (it shares the
model in memory and needs no re-import), which sends the inferred model back through a pipe.  A child that
crashes, fails or outlives `timeout` seconds (then killed) gives None, and the parser matches dims by position,
as it does when shape inference fails.  Where fork is not available, shape inference runs in-process."""
from __future__ import annotations

import os
import select
import signal
import time
from typing import Any, Optional

TIMEOUT_S = 10.0


def _child(model: Any, data_prop: bool, w: int) -> None:
    """In the forked child: default handlers for the fatal signals (a fuzzer's or faulthandler's must not report
    the child's crash as the parent's), infer, write the result, and leave without running any exit handler."""
    code = 1
    try:
        import faulthandler
        faulthandler.disable()
        for s in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT):
            signal.signal(s, signal.SIG_DFL)
        from onnx import shape_inference
        data = shape_inference.infer_shapes(model, strict_mode=False, data_prop=data_prop).SerializeToString()
        view = memoryview(data)
        while view:
            n = os.write(w, view)
            view = view[n:]
        code = 0
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def infer_shapes(model: Any, data_prop: bool, timeout: float = TIMEOUT_S) -> Optional[Any]:
    """The model with onnx's inferred value_info, or None when inference crashed, failed or timed out."""
    import onnx
    if not hasattr(os, "fork"):
        from onnx import shape_inference
        try:
            return shape_inference.infer_shapes(model, strict_mode=False, data_prop=data_prop)
        except Exception:
            return None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover  (the child)
        os.close(r)
        _child(model, data_prop, w)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            b = os.read(r, 1 << 20)
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(r)
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(pid, 0)
    if timed_out or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    out = onnx.ModelProto()
    try:
        out.ParseFromString(b"".join(chunks))
    except Exception:
        return None
    return out
