"""slot_builder: frozen slotted classes built through their slots (or their twin class)
equal those their constructors build, of their class and frozen; a class the builder
cannot build faithfully is refused when the builder is made."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action, Decision
from agentguard.trace._slots import _twin, slot_builder
from agentguard.trace.call_records import read_call_records
from agentguard.trace.model import Call, Trace


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


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Pair:
    x: int
    y: Any


@dataclasses.dataclass(frozen=True, slots=True)
class _Base:
    a: int


@dataclasses.dataclass(frozen=True, slots=True)
class _Derived(_Base):
    b: int


def _same_fields(a: Any, b: Any) -> bool:
    return type(a) is type(b) and all(
        getattr(a, f.name) == getattr(b, f.name) for f in dataclasses.fields(a)
    )


@settings(max_examples=200, deadline=None)
@given(
    st.text(min_size=1, max_size=8).filter(lambda n: not n.endswith("_message")),
    st.dictionaries(st.text(max_size=4), _JSONISH, max_size=3),
    _JSONISH,
    st.integers(min_value=0, max_value=10**6),
    st.booleans(),
)
def test_a_call_built_through_the_twin_is_the_constructed_one(
    name: str, args: dict[str, Any], result: Any, position: int, error: bool
) -> None:
    """Call.proposed, Call.ran and the twin builder make the call the constructor makes (equal, hashed
    alike, of type Call, frozen, pickled and copied alike)."""
    made = Call(name, args, result, position, error)
    built = slot_builder(Call)(name, args, made.result, position, error, "tool")
    ran = Call.proposed(name, args).ran(result, position, error)
    assert _same_fields(Call.proposed(name, args), Call(name, args))
    for other in (built, ran):
        assert _same_fields(other, made) and other == made and type(other) is Call
        assert pickle.loads(pickle.dumps(other)) == made and copy.copy(other) == made
        with pytest.raises(dataclasses.FrozenInstanceError):
            other.position = 1  # type: ignore[misc]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(list(Action)), st.integers(0, 99), st.text(max_size=6), st.booleans())
def test_a_decision_built_through_the_twin_is_the_constructed_one(
    action: Action, step: int, message: str, escalated: bool
) -> None:
    """A decision from the builder equals the constructor's, field for field."""
    made = Decision(action, "t", {"a": 1}, step, (), message, ("p",), escalated, "r:1", "c1")
    built = slot_builder(Decision)(
        action, "t", {"a": 1}, step, (), message, ("p",), escalated, "r:1", "c1", None, None
    )
    assert _same_fields(built, made) and built == made
    assert dataclasses.replace(built, step=step + 1).step == step + 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.step = 0  # type: ignore[misc]


def test_a_class_with_a_slotted_base_keeps_the_descriptors() -> None:
    """Where the layouts differ (slots in a base), no twin is made, and the builder still
    makes the constructor's object."""
    assert _twin(_Derived) is None
    assert _twin(_Pair) is not None
    built = slot_builder(_Derived)(1, 2)
    assert built == _Derived(1, 2) and type(built) is _Derived
    assert slot_builder(_Pair)(3, [4]) == _Pair(3, [4])
