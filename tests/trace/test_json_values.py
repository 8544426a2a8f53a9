"""Values JSON has no word for enter a trace as the JSON data the log writes of them."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import Firewall, load_traces, parse_spec, verify_trace
from agentguard.trace.json_values import CIRCULAR, TOO_DEEP, exact_number, json_value, plain
from agentguard.trace.model import Call


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class Order:
    status: str
    total: Decimal


class Refund(pydantic.BaseModel):
    order: str
    when: dt.date


exotic = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False, places=2),
    st.dates(),
    st.datetimes(),
    st.binary(max_size=8),
    st.sampled_from([b"2024", b'{"status": "shipped"}', b"[1, 2]", b" true"]),  # JSON text
    st.fractions(max_denominator=100),
    st.sampled_from([Color.RED, Level.HIGH, uuid.UUID(int=7), Path("a/b")]),
    st.builds(Order, st.text(max_size=5), st.decimals(allow_nan=False, places=1)),
    st.builds(Refund, order=st.text(max_size=5), when=st.dates()),
    st.integers(-5, 5).map(np.int64),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text())
values = st.recursive(
    scalars | exotic,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.frozensets(st.integers() | st.text(max_size=3), max_size=3),
        st.dictionaries(st.text(max_size=3) | st.integers() | st.booleans(), inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_json_data_of_a_value_is_json_data_and_its_own(value: Any) -> None:
    """Whatever the value, json_value gives what json writes and reads back unchanged, and
    json_value of that is itself."""
    data = json_value(value)
    assert json.loads(json.dumps(data)) == _lists(data)
    assert json_value(data) == data


def _lists(data: Any) -> Any:
    """``data`` with its tuples as lists (json reads an array back as a list)."""
    if isinstance(data, dict):
        return {k: _lists(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_lists(v) for v in data]
    return data


def test_plain_json_data_is_returned_itself() -> None:
    """The common case costs one walk and no copy."""
    value = {"a": [1, 2.5, "x", None, True], "b": {"c": []}}
    assert plain(value)
    assert json_value(value) is value


def test_each_kind_becomes_what_a_spec_can_test() -> None:
    """Numbers stay numbers, text stays text, collections stay collections."""
    assert json_value(Decimal("150.00")) == 150.0
    assert json_value(Fraction(1, 4)) == 0.25
    assert json_value(Level.HIGH) == 3 and type(json_value(Level.HIGH)) is int
    assert json_value(Color.RED) == "red"
    assert json_value(dt.date(2024, 5, 1)) == "2024-05-01"
    assert json_value(dt.datetime(2024, 5, 1, 12, 30)) == "2024-05-01T12:30:00"
    assert json_value(dt.timedelta(minutes=5)) == 300.0
    assert json_value(b"abc\xff") == "abc\\xff"
    assert json_value({3, 1, 2}) == [1, 2, 3]
    assert json_value({True: 1, None: 2, 1.5: 3, (1, 2): 4}) == {
        "true": 1,
        "null": 2,
        "1.5": 3,
        "(1, 2)": 4,
    }
    assert json_value(Order("shipped", Decimal("9.5"))) == {"status": "shipped", "total": 9.5}
    assert json_value(Refund(order="A1", when=dt.date(2024, 1, 2))) == {
        "order": "A1",
        "when": "2024-01-02",
    }
    assert json_value(np.arange(3)) == [0, 1, 2]
    assert json_value(uuid.UUID(int=1)) == "00000000-0000-0000-0000-000000000001"


def test_a_container_that_holds_itself_is_cut_where_it_recurs() -> None:
    """A cycle becomes a marker, not a RecursionError in the firewall's record."""
    loop: list[Any] = [1]
    loop.append(loop)
    assert json_value(loop) == [1, CIRCULAR]
    shared = [1]
    assert json_value({"a": shared, "b": shared, "s": {2}}) == {"a": [1], "b": [1], "s": [2]}


def test_a_call_holds_the_json_data_of_its_values() -> None:
    """Call, Call.ran and Call.proposed make results and arguments JSON data."""
    call = Call("t", {"when": dt.date(2024, 1, 1)}, Decimal("2.50"))
    assert call.args == {"when": "2024-01-01"} and call.result == 2.5
    assert Call.proposed("t", {"s": {1}}).args == {"s": [1]}
    assert Call("t").ran({"k": {2, 1}}, 0).result == {"k": [1, 2]}
    assert not Call("t").has_result


SPEC = parse_spec(
    "constraint big := G(lookup -> lookup(result > 100))\n"
    "constraint year := F lookup(result ~ /2024/)\n"
    "constraint has_two := F lookup(result contains 2)\n"
    'constraint shipped := F lookup(result.status = "shipped")\n'
    "constraint keyed := F lookup(result.true = 1)"
)


@settings(max_examples=60, deadline=None)
@given(st.lists(values, min_size=1, max_size=4))
def test_a_run_with_any_results_scores_online_as_its_log_scores(
    tmp_path_factory: Any, results: list[Any]
) -> None:
    """Online = offline for results JSON has no word for: the firewall's report equals
    verify_trace of the run's log read back from disk."""
    log = tmp_path_factory.mktemp("run") / "log.jsonl"
    fw = Firewall(SPEC, log_path=log, keep_trace=True)
    for result in results:
        assert fw.propose("lookup", {}).executes
        fw.record("lookup", {}, result)
    report = fw.finish()
    (back,) = load_traces(log)
    assert back.trace is not None
    assert verify_trace(back.trace, SPEC) == report.compliance
    json.dumps(report.to_dict())


def test_the_reviewers_results_score_alike_online_and_offline(tmp_path: Path) -> None:
    """Decimal, date, set, bytes, a bool key, a dataclass: online = offline, report exports."""
    for result in (
        Decimal("150.00"),
        dt.date(2024, 5, 1),
        {1, 2},
        b"2024",
        {True: 1},
        Order("shipped", Decimal(1)),
    ):
        log = tmp_path / f"{type(result).__name__}.jsonl"
        fw = Firewall(SPEC, log_path=log, keep_trace=True)
        assert fw.propose("lookup", {"at": dt.date(2024, 1, 1)}).executes
        fw.record("lookup", {"at": dt.date(2024, 1, 1)}, result)
        report = fw.finish()
        (back,) = load_traces(log)
        assert back.trace is not None
        assert back.trace.calls[0].args == {"at": "2024-01-01"}
        assert verify_trace(back.trace, SPEC) == report.compliance
        assert json.loads(json.dumps(report.to_dict()))["decisions"][0]["args"] == {
            "at": "2024-01-01"
        }


def test_a_value_nested_too_deep_to_walk_is_marked_not_raised() -> None:
    """Nesting past the recursion limit gives a marker (a record never raises RecursionError)."""
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert not plain(deep)
    assert json_value(deep) == TOO_DEEP
    assert Call("t").ran(deep, 0).result == TOO_DEEP


NUMBERS = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.fractions(),
    st.integers(-(10**60), 10**60).map(Decimal),
    st.integers(-(10**60), 10**60).map(Fraction),
    st.floats(allow_nan=False).map(Decimal),
)


@settings(max_examples=500)
@given(NUMBERS)
def test_an_exact_number_is_the_value_itself(value: Decimal | Fraction) -> None:
    """What a check judges a decimal or fraction as (and the trace records) equals it,
    or there is none and the argument is refused (a float rounding 17+ digits is not it)."""
    number = exact_number(value)
    if number is None:
        return
    if number != number:  # NaN: the value's own NaN
        assert isinstance(value, Decimal) and value.is_nan()
    else:
        assert type(value)(number) == value or type(value)(repr(number)) == value
    assert json_value(value) == number or number != number


def test_digits_a_float_drops_leave_no_exact_number() -> None:
    assert exact_number(Decimal("500.00000000000000001")) is None
    assert exact_number(Fraction(1, 3)) is None
    assert exact_number(Decimal("sNaN")) is None
    assert exact_number(Decimal("19.99")) == 19.99
    assert exact_number(Decimal("9007199254740993")) == 9007199254740993
    assert exact_number(Decimal("1e400")) == 10**400
    assert exact_number(Decimal("1e5000")) is None  # no JSON text holds it as an integer
