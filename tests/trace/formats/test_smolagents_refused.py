"""A guarded smolagents ToolCallingAgent's own memory (``agent.memory.get_full_steps()``)
scored offline equals the guard's report: a call agentguard refused gets the refusal as
its observation and never ran, so it is not read back as a call."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentguard as ag
from agentguard.enforcement.decision import RunStopped
from agentguard.trace import trace_from_json
from agentguard.trace.formats._base import decode_repr
from agentguard.trace.refusal import BLOCKED_HEAD, REFUSAL_HEADS
from tests.trace.formats.refused_runs import assert_offline_equals_online

pytest.importorskip("smolagents")
import contextlib

from smolagents import ToolCallingAgent, tool

from agentguard.testing.smolagents_models import ScriptedModel, call, call_with_id
from tests.trace.formats.smolagents_tools import lookup, refund


@tool
def wipe() -> str:
    """Wipe the database."""
    return "wiped"


def run(spec: str, script: list[Any]) -> tuple[list[Any], Any]:
    """The memory steps (as JSON, the way they are saved) and the report of one run."""
    agent = ToolCallingAgent(
        tools=[lookup, refund, wipe], model=ScriptedModel(script), verbosity_level=0
    )
    agent = ag.guard(agent, ag.parse_spec(spec))
    with contextlib.suppress(RunStopped):
        agent.run("refund A")
    steps = json.loads(json.dumps(agent.memory.get_full_steps(), default=str))
    return steps, agent.agentguard.report


SPEC = """
constraint verified severity SOFT_BLOCK(5) := G(refund -> O lookup)
constraint once := CalledN(refund, 1, <=)
"""


def test_a_refused_call_is_left_out() -> None:
    """Refund (refused), lookup, refund, answer: offline lookup, refund, final_answer."""
    script = [call("refund", order_id="A"), call("lookup", order_id="A")]
    steps, report = run(SPEC, [*script, script[0], call("final_answer", answer="ok")])
    assert steps[1]["observations"].startswith(BLOCKED_HEAD)
    offline = assert_offline_equals_online(steps, SPEC, report)
    assert offline.names == ("lookup", "refund", "final_answer")
    assert report.compliance.score == 1.0


def test_a_parallel_step_with_a_refusal_splits_around_it() -> None:
    """refund (refused) beside two lookups in one turn: the observation joins the three
    outputs; the refusal is left out and each lookup gets its own line."""
    turn = [
        call_with_id("c1", "lookup", order_id="A"),
        call_with_id("c2", "refund", order_id="A"),
        call_with_id("c3", "lookup", order_id="B"),
    ]
    spec = 'constraint verified severity SOFT_BLOCK(5) := G(refund -> O lookup(order_id = "B"))\n'
    steps, report = run(spec, [turn, call("final_answer", answer="ok")])
    assert len(steps[1]["observations"].split("\n")) > 3  # the refusal spans lines
    offline = assert_offline_equals_online(steps, spec, report)
    assert [(c.name, c.result) for c in offline] == [
        ("lookup", "order A verified"),
        ("lookup", "order B verified"),
        ("final_answer", "ok"),
    ]


def test_a_refused_final_answer_is_left_out() -> None:
    """The first answer is refused (no lookup yet; smolagents records the failed check
    as the step's error); the answer after the lookup is the run's one final answer."""
    spec = "constraint looked severity SOFT_BLOCK(5) := G(final_answer -> O lookup)\n"
    answer = call("final_answer", answer="ok")
    steps, report = run(spec, [answer, call("lookup", order_id="A"), answer])
    assert steps[1]["error"]["message"].startswith("Check agentguard_final_answer failed")
    offline = assert_offline_equals_online(steps, spec, report)
    assert offline.names == ("lookup", "final_answer")


def test_a_hard_stop_leaves_nothing_of_its_step() -> None:
    """lookup, then wipe (HARD_STOP, the run raises): offline the lookup alone."""
    spec = "constraint no_wipe severity HARD_STOP := G !wipe\n"
    steps, report = run(spec, [call("lookup", order_id="A"), call("wipe"), "never"])
    assert report.stopped
    assert assert_offline_equals_online(steps, spec, report).names == ("lookup",)


def _step(n: int, calls: list[tuple[str, str]], observations: str) -> dict[str, Any]:
    """An ActionStep as ``ActionStep.dict()`` writes it (smolagents/memory.py)."""
    return {
        "step_number": n,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": name, "arguments": {}}}
            for i, name in calls
        ],
        "error": None,
        "observations": observations,
        "is_final_answer": False,
    }


def test_an_ambiguous_parallel_split_keeps_every_call() -> None:
    """Two refusals and one one-line output that could follow either: which call ran is
    not known, so every call is kept with the whole text (docs/traces.md)."""
    text = "\n".join([BLOCKED_HEAD, "x", "y", BLOCKED_HEAD, "z"])
    t = trace_from_json([_step(1, [("a", "f"), ("b", "g"), ("c", "h")], text)])
    assert [(c.name, c.result) for c in t] == [("f", text), ("g", text), ("h", text)]


LINE = st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=8)


@given(
    st.lists(
        st.one_of(
            st.builds(lambda s: ("out", s), LINE.filter(lambda s: s not in REFUSAL_HEADS)),
            st.builds(
                lambda tail: ("refused", "\n".join([BLOCKED_HEAD, *tail])),
                st.lists(LINE.filter(lambda s: s not in REFUSAL_HEADS), max_size=3),
            ),
        ),
        min_size=2,
        max_size=6,
    )
)
def test_a_parallel_split_is_the_true_one_or_keeps_every_call(
    outputs: list[tuple[str, str]],
) -> None:
    """One-line outputs and refusals joined as smolagents joins them: the reader finds
    exactly the calls that ran with their outputs, or (split ambiguous) keeps them all
    with the whole text; with at most one refusal it always finds them."""
    text = "\n".join(o for _, o in outputs)
    names = [f"t{i}" for i in range(len(outputs))]
    t = trace_from_json([_step(1, [(f"c{i}", n) for i, n in enumerate(names)], text)])
    truth = [(n, o) for n, (kind, o) in zip(names, outputs, strict=True) if kind == "out"]
    got = [(c.name, c.result) for c in t]
    decoded = [(n, _alone(n, o)) for n, o in truth]
    whole = [(n, decode_repr(text)) for n in names]
    assert got in (decoded, whole)
    if sum(kind == "refused" for kind, _ in outputs) <= 1:
        assert got == decoded


def _alone(name: str, output: str) -> Any:
    """The result the reader gives ``output`` as a step's only call."""
    return trace_from_json([_step(1, [("c", name)], output)])[0].result


def test_output_that_quotes_the_marker_later_is_kept() -> None:
    """An observation mentioning the marker after its first line is the tool's output."""
    quoted = f"log:\n{BLOCKED_HEAD}\ndone"
    t = trace_from_json([_step(1, [("a", "fetch")], quoted)])
    assert [(c.name, c.result) for c in t] == [("fetch", quoted)]
