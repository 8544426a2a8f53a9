"""The byte templates of the per-call log lines render what the dict path renders."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.enforcement import log as log_module
from agentguard.enforcement import log_lines
from agentguard.enforcement.audit import verify_lines
from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.log import DecisionLog
from agentguard.trace.model import Call

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=4), inner, max_size=3),
        st.dictionaries(st.integers(0, 3), inner, max_size=2),  # non-string keys
        st.builds(set, st.lists(st.integers(0, 3), max_size=2)),
    ),
    max_leaves=6,
)
_args = st.dictionaries(st.text(max_size=5), _values, max_size=3)
_ids = st.one_of(st.none(), st.text(max_size=6), st.integers(-5, 5))


def _twin_logs(tmp: Path, fast: bool) -> DecisionLog:
    log = DecisionLog(run_id="run-é", spec_name="spec", spec_hash="h" * 64, path=tmp)
    if not fast:
        log._lines = None  # the dict path only
    return log


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.text(min_size=1, max_size=8),
            _args,
            st.sampled_from(list(Action)),
            st.text(max_size=8),
            st.lists(st.text(max_size=4), max_size=2),
            st.booleans(),
            _ids,
            _values,
            st.booleans(),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_template_lines_equal_the_dict_path_byte_for_byte(
    steps: list[tuple[Any, ...]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Decision and result lines are the same bytes (and chain) with or without templates."""
    folder = tmp_path_factory.mktemp("lines")
    original = log_module.timestamp
    log_module.timestamp = lambda: "2026-12-01T00:00:00.000001+00:00"  # one clock for both logs
    try:
        files = []
        for fast in (True, False):
            path = folder / f"{fast}.jsonl"
            log = _twin_logs(path, fast)
            for position, (
                step,
                tool,
                args,
                action,
                message,
                pending,
                esc,
                tcid,
                result,
                err,
            ) in enumerate(steps):
                d = Decision(
                    action, tool, args, step, (), message, tuple(pending), esc, f"r:{step}", tcid
                )
                log.decision(d)
                log.result(Call(tool, args, result, position, err), d)
                log.result(Call(tool, args, result, position, err), None)
            log.close()
            files.append(path.read_bytes())
    finally:
        log_module.timestamp = original
    assert files[0] == files[1]
    assert verify_lines(files[0].decode().split("\n")[:-1]).ok  # not splitlines: \x85 is text


def test_non_plain_values_take_the_dict_path(tmp_path: Path) -> None:
    """NaN, a set or an object in the arguments is rendered as JSON data (json_value): NaN
    as json writes it, a set as a list, an object as its text."""
    log = _twin_logs(tmp_path / "log.jsonl", True)
    d = Decision(Action.ALLOW, "t", {"x": math.nan, "s": {1}}, 0, (), "", (), False, "r:0")
    log.decision(d)
    log.result(Call("t", {"x": 1}, object(), 0), d)
    log.close()
    lines = (tmp_path / "log.jsonl").read_text().splitlines()
    assert '"x": NaN' in lines[0] and '"s": [1]' in lines[0]
    assert '"result":"<object object at' in lines[1]  # the call holds it as text already
    assert verify_lines(lines).ok


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.integers(min_value=0, max_value=4_102_444_800 * 10**9)  # to the year 2100
        | st.integers(min_value=0, max_value=10**6).map(
            lambda us: 1_764_547_200 * 10**9 + us * 1000
        ),
        min_size=1,
        max_size=6,
    )
)
def test_timestamps_are_isoformat(clock: list[int]) -> None:
    """Every line's timestamp is what datetime's isoformat says of the same instant (whole
    seconds without a fraction), however the clock moves between lines."""
    real_time = log_lines.time
    try:
        for ns in clock:
            log_lines.time = SimpleNamespace(time_ns=lambda ns=ns: ns)  # type: ignore[assignment]
            micros = ns // 1000 % 1_000_000
            when = dt.datetime.fromtimestamp(ns // 10**9, dt.timezone.utc)
            assert log_lines.timestamp() == when.replace(microsecond=micros).isoformat()
    finally:
        log_lines.time = real_time
