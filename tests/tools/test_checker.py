"""The facts a JSON Schema adds to a tool declaration: list item types, enums, extra arguments."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.language import ast as A
from agentguard.semantics.values import values_equal
from agentguard.tools.arguments import signature
from agentguard.tools.checker import ToolChecker

SEARCH = A.ToolDecl(
    "search",
    (
        A.Param("tags", "list", optional=True, items="str"),
        A.Param("mode", "str", optional=True, enum=("fast", "deep")),
        A.Param("level", "any", optional=True, enum=(1, 2)),
    ),
)


def details(decl: A.ToolDecl, args: dict[str, Any]) -> list[str]:
    return [p.detail for p in ToolChecker((decl,)).check(decl.name, args, ())]


def test_list_items_must_have_the_item_type() -> None:
    """A list argument whose element breaks the declared item type is a schema problem."""
    assert details(SEARCH, {"tags": ["a", "b"]}) == []
    assert details(SEARCH, {"tags": []}) == []
    (detail,) = details(SEARCH, {"tags": ["a", 3]})
    assert "'tags'" in detail and "int 3" in detail and "a str" in detail


def test_enum_rejects_other_values() -> None:
    """A value outside the enum is a schema problem naming the allowed values."""
    assert details(SEARCH, {"mode": "deep"}) == []
    (detail,) = details(SEARCH, {"mode": "slow"})
    assert "'slow' is not one of ['fast', 'deep']" in detail


@pytest.mark.parametrize(("value", "fits"), [(1, True), (2.0, True), (True, False), ("1", False)])
def test_enum_uses_agentltl_equality(value: Any, fits: bool) -> None:
    """An enum of numbers takes 1 and 2.0 but not True (a bool is not a number)."""
    assert (details(SEARCH, {"level": value}) == []) is fits


def test_a_bool_never_meets_a_numeric_bound() -> None:
    """A bound ``= 1`` rejects True: bounds compare by AgentLTL equality, not Python's."""
    decl = A.ToolDecl("flag", (A.Param("level", "any", bound=("=", 1)),))
    assert details(decl, {"level": 1}) == []
    assert details(decl, {"level": True})


def test_allow_extra_accepts_undeclared_arguments() -> None:
    """A declaration that allows extra arguments checks only the declared ones."""
    open_decl = A.ToolDecl("log", (A.Param("msg", "str"),), allow_extra=True)
    assert details(open_decl, {"msg": "hi", "level": 3}) == []
    assert details(open_decl, {"msg": 3, "level": 3})
    closed = A.ToolDecl("log", (A.Param("msg", "str"),))
    assert details(closed, {"msg": "hi", "level": 3}) == ["unexpected argument 'level'"]


def test_signature_shows_items_enum_and_extra() -> None:
    """The hint's signature names item types, enums and accepted extra arguments."""
    decl = A.ToolDecl("log", (A.Param("tags", "list", items="str"),), allow_extra=True)
    assert signature(decl) == "log(tags: list[str], ...)"
    assert "mode?: str in ['fast', 'deep']" in signature(SEARCH)


def test_enum_compares_by_identity_not_python_equality() -> None:
    """Two parameters whose enums differ only by True vs 1 are different parameters."""
    assert A.Param("x", enum=(True,)) != A.Param("x", enum=(1,))
    assert A.Param("x", enum=(1,)) == A.Param("x", enum=(1,))


SCALARS = st.one_of(
    st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False), st.sampled_from("ab")
)


@given(value=SCALARS, choices=st.lists(SCALARS, min_size=1, max_size=4))
def test_enum_membership_is_agentltl_equality(value: Any, choices: list[Any]) -> None:
    """A value fits an enum exactly when it equals one of its values by AgentLTL equality."""
    decl = A.ToolDecl("t", (A.Param("v", "any", enum=tuple(choices)),))
    expected = any(values_equal(value, c) for c in choices)
    assert (details(decl, {"v": value}) == []) is expected


JSON_VALUES = st.recursive(
    SCALARS | st.none(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abk"), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(value=SCALARS, data=JSON_VALUES, as_text=st.booleans())
def test_occurs_in_agrees_with_the_index_of_leaves(value: Any, data: Any, as_text: bool) -> None:
    """A value occurs in data exactly when its key is among the keys of the data's leaves."""
    import json

    from agentguard.tools.values import leaves, occurs_in, value_key

    doc = {"body": json.dumps(data)} if as_text else data
    keys = {value_key(leaf) for leaf in leaves(doc)}
    assert occurs_in(value, doc) is (value_key(value) in keys)


def test_occurs_in_decodes_json_text_inside_a_result() -> None:
    """A value inside JSON text nested in a result occurs in it (the checker's index agrees)."""
    from agentguard.tools.values import occurs_in

    assert occurs_in("A1", {"body": '{"id": "A1"}'})
    assert not occurs_in("A2", {"body": '{"id": "A1"}'})
