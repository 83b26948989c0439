"""TensorRT's control-flow API: ILoop and IIfConditional (INetworkDefinition.add_loop / add_if_conditional).

As in TensorRT, a loop or conditional is a set of boundary layers; the layers between them belong to it by data
flow (a loop's body: everything computed from its recurrences and iterators up to its loop outputs and trip
limits; a conditional's branches: everything computed from its inputs up to its outputs).  Layers that depend on
none of those (constants, loop-invariant values) stay outside and are computed once.  The builder turns each
structure into one step running nested engines (docs/ARCHITECTURE.md, "Control flow")::

    loop = network.add_loop()
    loop.add_trip_limit(count, trt.TripLimit.COUNT)          # 0-d INT32
    acc = loop.add_recurrence(zeros)                          # carried value, initial `zeros`
    row = loop.add_iterator(x, axis=0)                        # x[i] in iteration i
    nxt = network.add_elementwise(acc.get_output(0), row.get_output(0), trt.ElementWiseOperation.SUM)
    acc.set_input(1, nxt.get_output(0))                       # next iteration's value
    total = loop.add_loop_output(acc.get_output(0), trt.LoopOutput.LAST_VALUE)
    sums = loop.add_loop_output(nxt.get_output(0), trt.LoopOutput.CONCATENATE, 0)
"""
from __future__ import annotations

from typing import Any

from ._enums import LoopOutput, TripLimit

__all__ = ["ILoop", "IIfConditional"]


class ILoop:
    """A loop of a network (trt.ILoop), made by ``network.add_loop()``."""

    def __init__(self, network: Any, owner: int) -> None:
        """Wraps loop id `owner` of `network` (use ``network.add_loop()``)."""
        self._network = network
        self._owner = owner
        self.name = f"Loop {owner}"

    def add_recurrence(self, initial_value: Any) -> Any:
        """A value carried from one iteration to the next, starting as `initial_value`; give the next
        iteration's value with ``layer.set_input(1, tensor)`` (same shape and type)."""
        return self._network._add_recurrence(initial_value, self._owner)

    def add_trip_limit(self, tensor: Any, kind: TripLimit) -> Any:
        """Ends the loop: TripLimit.COUNT after `tensor` (0-d INT32, computed outside the loop) iterations,
        TripLimit.WHILE once `tensor` (0-d BOOL, computed in the body) is false at the start of an iteration."""
        return self._network._add_trip_limit(tensor, self._owner, int(kind))

    def add_iterator(self, tensor: Any, axis: int = 0, reverse: bool = False) -> Any:
        """Slice i of `tensor` along `axis` in iteration i (from the end when `reverse`); the loop runs at most
        as many iterations as the axis is long."""
        return self._network._add_iterator(tensor, self._owner, int(axis), bool(reverse))

    def add_loop_output(self, tensor: Any, kind: LoopOutput, axis: int = 0) -> Any:
        """The loop's result from body tensor `tensor`: LoopOutput.LAST_VALUE (of a recurrence: its final value),
        or CONCATENATE / REVERSE of every iteration's value along a new dim at `axis`, as long as the trip count
        (known before the loop runs: a constant COUNT limit or the iterators) or ``set_input(1, length)`` with a
        0-d INT32 constant."""
        return self._network._add_loop_output(tensor, self._owner, int(kind), int(axis))

    def __repr__(self) -> str:
        """``<ILoop 'name'>``."""
        return f"<ILoop {self.name!r}>"


class IIfConditional:
    """A conditional of a network (trt.IIfConditional), made by ``network.add_if_conditional()``."""

    def __init__(self, network: Any, owner: int) -> None:
        """Wraps conditional id `owner` of `network` (use ``network.add_if_conditional()``)."""
        self._network = network
        self._owner = owner
        self.name = f"Conditional {owner}"

    def set_condition(self, condition: Any) -> Any:
        """The 0-d BOOL tensor choosing the branch (computed outside the conditional)."""
        return self._network._add_condition(condition, self._owner)

    def add_input(self, input: Any) -> Any:  # noqa: A002  (TensorRT's keyword)
        """An outer tensor as the branches see it; layers computed from the layer's output belong to the
        branches."""
        return self._network._add_conditional_input(input, self._owner)

    def add_output(self, true_subgraph_output: Any, false_subgraph_output: Any) -> Any:
        """The conditional's output: `true_subgraph_output` when the condition holds, else
        `false_subgraph_output` (same shape and type); only the chosen branch runs."""
        return self._network._add_conditional_output(true_subgraph_output, false_subgraph_output, self._owner)

    def __repr__(self) -> str:
        """``<IIfConditional 'name'>``."""
        return f"<IIfConditional {self.name!r}>"
