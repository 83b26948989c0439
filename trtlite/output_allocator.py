"""TensorRT 10's ``trt.IOutputAllocator``: memory for outputs whose size is known only after execution.

Subclass it and pass an instance to ``context.set_output_allocator(name, allocator)``.  After the steps
have run, trtlite calls ``reallocate_output_async`` (whose default calls ``reallocate_output``) with the
bytes the output needs, copies the output there, then calls ``notify_shape`` with its shape.  Host memory
stands in for device memory: return an int address (trusted for ``size`` bytes) or a writable numpy
array (any object with the buffer protocol) of at least ``size`` bytes; None fails the execution.
"""
from __future__ import annotations

from typing import Any


class IOutputAllocator:
    """Application-implemented allocator of output memory (trt.IOutputAllocator).

    ``reallocate_output`` must be overridden; the default ``reallocate_output_async`` calls it and the
    default ``notify_shape`` does nothing.  Calls come from the thread running ``execute*``, once per
    execution, with ``size`` at least 1 (also for an empty output).
    """

    def __init__(self) -> None:
        """Creates the allocator (subclasses call ``trt.IOutputAllocator.__init__(self)``, as in TensorRT)."""

    def reallocate_output(self, tensor_name: str, memory: int, size: int, alignment: int) -> Any:
        """Memory of at least ``size`` bytes for output ``tensor_name``: an int address or a writable buffer;
        ``memory`` is the address this allocator gave last time (0 the first time)."""
        raise NotImplementedError(f"{type(self).__name__}.reallocate_output is not implemented")

    def reallocate_output_async(self, tensor_name: str, memory: int, size: int, alignment: int,
                                stream: int = 0) -> Any:
        """TensorRT 10's form of ``reallocate_output`` (``stream`` is 0 on the CPU); calls it by default."""
        return self.reallocate_output(tensor_name, memory, size, alignment)

    def notify_shape(self, tensor_name: str, shape: Any) -> None:
        """Called with the output's shape (a ``trt.Dims``) after its values were written."""
