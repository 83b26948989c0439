"""Build progress: a ready IProgressMonitor that draws a progress bar.

``trt.ProgressBar`` is a ``trt.IProgressMonitor`` (TensorRT 10's interface)::

    config.progress_monitor = trt.ProgressBar()
    plan = builder.build_serialized_network(network, config)

It shows the innermost active phase (``Building engine > Kernel selection  12/40``) with its share
done and the elapsed time: as a tqdm bar when tqdm is installed (``tqdm.auto``, so notebooks get a
widget), otherwise as one line redrawn in place on `stream` (stderr by default).

The phases a build reports, in order (each with its number of steps):

* ``Calibration`` (INT8 builds with a calibrator that runs batches; one step per batch, 0 steps
  announced as the count is not known in advance),
* ``Building engine`` (4 steps: network analysis, passes, kernel choice and weight packing, engine
  emission), containing ``Optimization passes`` (one step per builder pass),
  ``Kernel selection`` (one step per engine step: candidate kernels timed) and ``Weight packing``
  (one step per engine step),
* ``Serializing engine`` (1 step; build_serialized_network only).

``trtlite-exec`` adds ``Parsing ONNX model`` and ``Loading engine`` with :meth:`ProgressBar.phase`.
Returning False from ``step_complete`` (``bar.cancel = True`` does) cancels the build with
``trt.StateError``; a KeyboardInterrupt raised in a monitor propagates out of the build.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import types
from typing import Any, Callable, Dict, Iterator, List, Optional

from ._types import IProgressMonitor

__all__ = ["ProgressBar", "monitor_call"]


def monitor_call(monitor: Any, method: str, *args: Any) -> Any:
    """Call a progress monitor from Python code as the C build does: an Exception is reported
    (sys.unraisablehook) and ignored (step_complete then counts as True), anything else
    (KeyboardInterrupt) propagates.  No monitor: True."""
    if monitor is None:
        return True
    try:
        return getattr(monitor, method)(*args)
    except Exception as e:
        sys.unraisablehook(types.SimpleNamespace(exc_type=type(e), exc_value=e, exc_traceback=e.__traceback__,
                                                 err_msg=f"Exception ignored in progress monitor {method}",
                                                 object=monitor))
        return True


def _load_tqdm() -> Any:
    try:
        from tqdm.auto import tqdm
        return tqdm
    except Exception:
        return None


class ProgressBar(IProgressMonitor):
    """A progress monitor that draws a bar (tqdm if installed, else one line updated in place).

    `stream`: where to draw (default sys.stderr).  `use_tqdm`: True/False to force, None to use tqdm
    when importable.  `only_tty`: draw nothing unless `stream` is a terminal (trtlite-exec sets it,
    so redirected output stays clean).  `delay`: seconds after the first phase before anything is
    drawn (short builds stay silent).  `interval`: least seconds between redraws.  Set ``cancel``
    to True (e.g. from a signal handler) to cancel the build at its next step.
    """

    def __init__(self, stream: Any = None, use_tqdm: Optional[bool] = None, only_tty: bool = False,
                 delay: float = 0.0, interval: float = 0.1, clock: Callable[[], float] = time.perf_counter) -> None:
        super().__init__()
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.tty = bool(self.stream.isatty())
        except Exception:
            self.tty = False
        self.enabled = self.tty or not only_tty
        self._tqdm_cls = _load_tqdm() if use_tqdm in (None, True) else None
        if use_tqdm and self._tqdm_cls is None:
            raise ImportError("ProgressBar(use_tqdm=True) needs tqdm (pip install tqdm)")
        self.delay, self.interval, self.clock = delay, interval, clock
        self.phases: Dict[str, List[Any]] = {}  # name -> [parent, num_steps, steps_done]
        self.order: List[str] = []  # active phases, outermost first
        self.cancel = False
        self.t0: Optional[float] = None
        self.last_draw = -1e9
        self.width = 0
        self._bar: Any = None
        self._bar_phase: Optional[str] = None
        self.lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: Optional[threading.Thread] = None

    @property
    def uses_tqdm(self) -> bool:
        """Whether the bar is drawn by tqdm."""
        return self._tqdm_cls is not None

    # -- IProgressMonitor --
    def phase_start(self, phase_name: str, parent_phase: Optional[str], num_steps: int) -> None:
        """A phase begins: it becomes the bar's phase until a nested one starts or it finishes."""
        try:
            with self.lock:
                if self.t0 is None:
                    self.t0 = self.clock()
                self.phases[phase_name] = [parent_phase, max(int(num_steps), 0), 0]
                if phase_name in self.order:
                    self.order.remove(phase_name)
                self.order.append(phase_name)
            self._draw(force=True)
        except Exception:  # a progress bar must never break the build
            pass

    def step_complete(self, phase_name: str, step: int) -> bool:
        """Step `step` of `phase_name` is done; returns False (cancel) once ``cancel`` is set."""
        try:
            with self.lock:
                ph = self.phases.get(phase_name)
                if ph is not None:
                    ph[2] = max(ph[2], int(step) + 1)
            self._draw()
        except Exception:
            pass
        return not self.cancel

    def phase_finish(self, phase_name: str) -> None:
        """A phase ended: the bar returns to its parent, or is cleared after the last phase."""
        try:
            with self.lock:
                self.phases.pop(phase_name, None)
                if phase_name in self.order:
                    self.order.remove(phase_name)
                idle = not self.order
            if idle:
                self.clear()
            else:
                self._draw(force=True)
        except Exception:
            pass

    @contextlib.contextmanager
    def phase(self, name: str, num_steps: int = 1, parent: Optional[str] = None) -> Iterator["ProgressBar"]:
        """Report a phase of your own around a block (its steps with :meth:`step_complete`); the block
        counts as its last step when it ends normally."""
        self.phase_start(name, parent, num_steps)
        ok = False
        try:
            yield self
            ok = True
        finally:
            if ok and num_steps > 0:
                self.step_complete(name, num_steps - 1)
            self.phase_finish(name)

    # -- ticking while a long step runs (the build releases the GIL) --
    def start(self) -> None:
        """Redraw every `interval` seconds from a thread (so elapsed time moves during long steps)."""
        if not self.enabled or self._ticker is not None:
            return
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="trtlite-progress", daemon=True)
        self._ticker.start()

    def stop(self) -> None:
        """Stop the redraw thread and clear the bar."""
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None
        self.clear()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._draw()
            except Exception:
                pass

    # -- drawing --
    def current(self) -> Optional[str]:
        """The innermost active phase (None between phases)."""
        with self.lock:
            return self.order[-1] if self.order else None

    def fraction(self) -> float:
        """Share done of the innermost active phase (0 when its step count is unknown)."""
        with self.lock:
            name = self.current()
            if name is None:
                return 0.0
            _, steps, done = self.phases[name]
            return min(1.0, done / steps) if steps > 0 else 0.0

    def label(self) -> str:
        """'Outer > Inner' names of the active phases."""
        with self.lock:
            return " > ".join(self.order)

    def line(self, cols: int = 80) -> str:
        """The plain one-line rendering: bar, percent, phases, steps, elapsed seconds."""
        with self.lock:
            name = self.current()
            if name is None:
                return ""
            _, steps, done = self.phases[name]
            f = self.fraction()
            count = f"{min(done, steps)}/{steps}" if steps > 0 else f"{done}"
            elapsed = (self.clock() - self.t0) if self.t0 is not None else 0.0
            bar_w = 20
            fill = int(round(f * bar_w))
            pct = f"{f * 100:3.0f}%" if steps > 0 else "   ?"
            text = f"[{'#' * fill}{'.' * (bar_w - fill)}] {pct}  {self.label()}  {count}  {elapsed:.1f} s"
            return text[:max(cols - 1, 10)]

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        with self.lock:
            if self.t0 is None or not self.order:
                return
            now = self.clock()
            if now - self.t0 < self.delay:
                return
            if not force and now - self.last_draw < self.interval * 0.5:
                return
            self.last_draw = now
            if self._tqdm_cls is not None:
                self._draw_tqdm()
                return
            try:
                cols = os.get_terminal_size(self.stream.fileno()).columns
            except Exception:
                cols = 0
            text = self.line(cols if cols >= 20 else 100)
            pad = max(self.width - len(text), 0)
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
            self.width = len(text)

    def _draw_tqdm(self) -> None:
        name = self.order[-1]
        _, steps, done = self.phases[name]
        if self._bar is None:
            self._bar = self._tqdm_cls(total=steps or None, desc=self.label(), file=self.stream, leave=False,
                                       dynamic_ncols=True)
            self._bar_phase = name
        self._bar.set_description_str(self.label(), refresh=False)
        if self._bar_phase != name:
            self._bar.reset(total=steps or None)
            self._bar_phase = name
        self._bar.n = min(done, steps) if steps else done
        self._bar.refresh()

    def clear(self) -> None:
        """Erase the bar (the line, or close the tqdm bar)."""
        with self.lock:
            if self._bar is not None:
                try:
                    self._bar.close()
                finally:
                    self._bar = None
                    self._bar_phase = None
            if self.width:
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
                self.width = 0


def serialize_with_progress(engine: Any, monitor: Any) -> Any:
    """engine.serialize() as the "Serializing engine" phase (1 step) of `monitor`; step_complete
    returning False cancels with trt.StateError, as in the build (build_serialized_network uses it
    when a monitor is set)."""
    from ._C import StateError
    phase = "Serializing engine"
    monitor_call(monitor, "phase_start", phase, None, 1)
    try:
        plan = engine.serialize()
        if monitor_call(monitor, "step_complete", phase, 0) is False:
            raise StateError("build cancelled by the progress monitor")
    finally:
        monitor_call(monitor, "phase_finish", phase)
    return plan
