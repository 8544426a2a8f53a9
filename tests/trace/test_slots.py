"""Frozen slotted classes built through their slots equal those their constructors build,
and a class the builder cannot build faithfully is refused when the builder is made."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentguard.trace._slots import slot_builder
from agentguard.trace.call_records import read_call_records
from agentguard.trace.model import Trace


@dataclass(frozen=True, slots=True)
class _Point:
    x: int
    y: int = 0


@dataclass(frozen=True, slots=True)
class _Checked:
    x: int

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError("negative")


class _Plain:
    __slots__ = ("a", "b")


def test_a_built_dataclass_equals_the_constructed_one() -> None:
    """Every field, positionally, gives the object ``__init__`` gives."""
    assert slot_builder(_Point)(1, 2) == _Point(1, 2)


def test_classes_the_builder_cannot_build_are_refused() -> None:
    """A validating dataclass, a class without slots, a plain slotted class whose slots are
    not all named once: refused when the builder is made."""
    with pytest.raises(TypeError, match="__post_init__"):
        slot_builder(_Checked)
    with pytest.raises(TypeError, match="not a slotted class"):
        slot_builder(dict)
    with pytest.raises(TypeError, match="name its slots"):
        slot_builder(_Plain)
    with pytest.raises(TypeError, match="each of its slots once"):
        slot_builder(_Plain, ("a", "a"))
    built = slot_builder(_Plain, ("b", "a"))(2, 1)
    assert (built.a, built.b) == (1, 2)


def test_a_trace_built_through_its_slots_equals_one_built_by_its_constructor() -> None:
    """``Trace.from_columns`` through the slots gives what the slot-by-slot path gives."""
    columns = read_call_records([{"tool_name": "a", "arguments": {"x": 1}}], "<t>")

    class _Sub(Trace):
        __slots__ = ()

    fast, slow = Trace.from_columns(columns, {"k": 1}), _Sub.from_columns(columns, {"k": 1})
    assert type(fast) is Trace and type(slow) is _Sub
    assert (fast.names, fast.metrics, fast.has_messages) == (
        slow.names,
        slow.metrics,
        slow.has_messages,
    )
    assert fast.tool_codes is slow.tool_codes is columns.tools
    assert fast.calls == slow.calls
