"""Seams of the smolagents adapter: the trace is exactly what ran (issue 9)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from smolagents import CodeAgent, ToolCallingAgent, tool

from agentguard.guard import guard
from agentguard.language import parse_spec
from agentguard.testing.smolagents_models import ScriptedModel, call, call_with_id
from agentguard.trace.loaders import load_traces
from tests.integrations.adapters import ExposedToolsError

RAN: list[str] = []
TIMES: dict[str, tuple[float, float]] = {}
SLOW = threading.Event()


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def verify_identity(customer_id: str) -> str:
    """Verify a customer.

    Args:
        customer_id: The customer.
    """
    began = time.monotonic()
    if SLOW.is_set():
        time.sleep(0.3)
    if customer_id == "bad":
        RAN.append("verify_identity!")
        raise RuntimeError(f"identity service rejected {customer_id}")
    RAN.append("verify_identity")
    TIMES["verify_identity"] = (began, time.monotonic())
    return json.dumps({"ok": True})


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order.
    """
    began = time.monotonic()
    RAN.append("issue_refund")
    TIMES["issue_refund"] = (began, time.monotonic())
    return json.dumps({"status": "ok"})


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def lookup_order(order_id: str) -> str:
    """Look an order up.

    Args:
        order_id: The order.
    """
    began = time.monotonic()
    if SLOW.is_set():
        time.sleep(0.2)
    RAN.append(f"lookup_order:{order_id}")
    TIMES[f"lookup_order:{order_id}"] = (began, time.monotonic())
    status = "departed" if order_id == "gone" else "ok"
    return json.dumps({"status": status, "order_id": order_id})


TOOLS = [verify_identity, issue_refund, lookup_order]

SPEC = """
spec seams
constraint verified_first severity SOFT_BLOCK(5)
  := G(issue_refund -> O verify_identity(result.ok = true))
"""


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()
    TIMES.clear()
    SLOW.clear()


def tool_agent(script: list[Any], spec: str = SPEC, **kw: Any) -> ToolCallingAgent:
    agent = ToolCallingAgent(
        tools=TOOLS, model=ScriptedModel(script), verbosity_level=-1, max_steps=6
    )
    return guard(agent, parse_spec(spec), **kw)


def test_duplicate_tool_call_ids_in_one_turn_all_run_and_none_lingers() -> None:
    """Two calls sharing one id: both run (ids made unique), nothing stays in flight."""
    agent = tool_agent(
        [
            [
                call_with_id("X", "verify_identity", customer_id="c"),
                call_with_id("X", "issue_refund", order_id="A"),
            ],
            call("final_answer", answer="done"),
        ]
    )
    agent.run("refund")
    session = agent.agentguard
    assert sorted(RAN) == ["issue_refund", "verify_identity"]
    assert sorted(session.report.trace.names) == ["final_answer", "issue_refund", "verify_identity"]
    assert session.report.compliance.score == 1.0


def test_a_batched_call_smolagents_rejects_is_withdrawn() -> None:
    """A call whose arguments fail smolagents' validation never ran: withdrawn, not verified."""
    agent = tool_agent(
        [
            [call("verify_identity", customer=1), call("lookup_order", order_id="A")],
            call("issue_refund", order_id="A"),
            call("final_answer", answer="done"),
        ],
        log_path=None,
    )
    agent.run("refund")
    report = agent.agentguard.report
    assert "verify_identity" not in report.trace.names
    assert "issue_refund" not in RAN  # the refund is refused: nothing verified it
    refund = [d for d in report.decisions if d.tool == "issue_refund"]
    assert refund and not refund[0].executes


def test_a_batch_call_waits_for_the_call_its_approval_relied_on() -> None:
    """[slow verify, refund]: the refund body starts only after verify finished."""
    SLOW.set()
    agent = tool_agent(
        [
            [call("verify_identity", customer_id="c"), call("issue_refund", order_id="A")],
            call("final_answer", answer="done"),
        ]
    )
    agent.run("refund")
    assert TIMES["issue_refund"][0] >= TIMES["verify_identity"][1]
    assert agent.agentguard.report.compliance.score == 1.0


def test_a_batch_call_is_refused_when_the_call_it_relied_on_raised() -> None:
    """[verify that raises, refund]: the refund is re-checked at its start and refused."""
    agent = tool_agent(
        [
            [call("verify_identity", customer_id="bad"), call("issue_refund", order_id="A")],
            call("final_answer", answer="done"),
        ]
    )
    agent.run("refund")
    assert "issue_refund" not in RAN
    report = agent.agentguard.report
    verify = next(c for c in report.trace if c.name == "verify_identity")
    assert verify.error and "rejected bad" in str(verify.result)
    assert "issue_refund" not in report.trace.names


def test_independent_calls_of_a_batch_still_run_in_parallel() -> None:
    """Two lookups of one batch overlap in time: the protocol does not serialize them."""
    SLOW.set()
    agent = tool_agent(
        [
            [call("lookup_order", order_id="A"), call("lookup_order", order_id="B")],
            call("final_answer", answer="done"),
        ]
    )
    agent.run("look")
    a, b = TIMES["lookup_order:A"], TIMES["lookup_order:B"]
    assert a[0] < b[1] and b[0] < a[1]


def test_a_raising_tool_is_in_the_trace_with_its_error() -> None:
    """A tool that raised ran: its call is in the trace with error set, and nothing lingers."""
    agent = tool_agent(
        [call("verify_identity", customer_id="bad"), call("final_answer", answer="done")]
    )
    agent.run("verify")
    report = agent.agentguard.report
    assert [c.error for c in report.trace] == [True, False]
    assert report.trace.metrics["tool_errors"] == [0]


def test_json_text_results_are_decoded_online() -> None:
    """A tool returning JSON text: result tests see the decoded value, online as offline."""
    spec = """
spec s
constraint looked_up := G(issue_refund -> O lookup_order(result.status = "ok"))
constraint departed severity HARD_STOP := G !lookup_order(result.status = "departed")
"""
    agent = tool_agent(
        [
            call("lookup_order", order_id="A"),
            call("issue_refund", order_id="A"),
            call("final_answer", answer="done"),
        ],
        spec=spec,
    )
    agent.run("refund")
    assert "issue_refund" in RAN
    stopped = tool_agent([call("lookup_order", order_id="gone"), "unused"], spec=spec)
    from agentguard.enforcement.decision import RunStopped

    with pytest.raises(RunStopped):
        stopped.run("look")


def test_a_stop_in_a_batch_logs_its_siblings_as_withdrawn(tmp_path: Path) -> None:
    """A HARD_STOP in a batch: the allowed siblings are logged withdrawn, not phantom calls."""
    spec = "spec s\nconstraint never severity HARD_STOP := G !issue_refund"
    log = tmp_path / "log.jsonl"
    agent = tool_agent(
        [[call("lookup_order", order_id="A"), call("issue_refund", order_id="A")]],
        spec=spec,
        log_path=log,
    )
    from agentguard.enforcement.decision import RunStopped

    with pytest.raises(RunStopped):
        agent.run("refund")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["tool"] for e in events if e["event"] == "agentguard.withdrawn"] == ["lookup_order"]
    assert RAN == []
    assert load_traces(log)[0].trace.names == ()


class TestCodeAgentImports:
    @pytest.mark.parametrize("imports", [["*"], ["sys"], [__name__], ["tests.seams"], ["gc"]])
    def test_imports_exposing_the_original_tools_are_refused(self, imports: list[str]) -> None:
        """Authorised imports reaching the unguarded tools are refused, naming them."""
        agent = CodeAgent(
            tools=TOOLS,
            model=ScriptedModel(["final_answer('x')"]),
            verbosity_level=-1,
            additional_authorized_imports=imports,
        )
        with pytest.raises(ExposedToolsError, match="additional_authorized_imports") as info:
            guard(agent, parse_spec(SPEC))
        assert repr(imports[0]) in str(info.value) or "'sys'" in str(info.value)

    def test_harmless_imports_are_accepted(self) -> None:
        """Authorising modules that cannot reach the tools is fine."""
        agent = CodeAgent(
            tools=TOOLS,
            model=ScriptedModel(["final_answer('x')"]),
            verbosity_level=-1,
            additional_authorized_imports=["json", "math"],
        )
        guard(agent, parse_spec(SPEC))


TOOL_CALLING_BYPASSES: dict[str, list[Any]] = {
    "batch_refund_first": [
        [call("issue_refund", order_id="A"), call("verify_identity", customer_id="c")]
    ],
    "duplicate_ids": [
        [
            call_with_id("X", "verify_identity", customer_id="bad"),
            call_with_id("X", "issue_refund", order_id="A"),
        ]
    ],
    "invalid_arguments": [
        [call("verify_identity", customer=1), call("issue_refund", order_id="A")]
    ],
    "raising_verify_in_a_batch": [
        [call("verify_identity", customer_id="bad"), call("issue_refund", order_id="A")]
    ],
    "raising_verify_then_refund": [
        call("verify_identity", customer_id="bad"),
        call("issue_refund", order_id="A"),
    ],
    "bad_arguments_then_refund": [
        call("verify_identity", customer_id=1, extra=2),
        call("issue_refund", order_id="A"),
    ],
}


@pytest.mark.parametrize("turns", TOOL_CALLING_BYPASSES.values(), ids=list(TOOL_CALLING_BYPASSES))
def test_tool_calling_bypass_attempts_never_refund_unverified(turns: list[Any]) -> None:
    """No batch, id trick, rejected argument or raising tool lets an unverified refund run."""
    agent = tool_agent([*turns, call("final_answer", answer="done")])
    agent.run("refund")
    assert "issue_refund" not in RAN
    report = agent.agentguard.report
    assert report is not None and "issue_refund" not in report.trace.names
    assert agent.agentguard.trace.names == report.trace.names  # nothing left in flight


def test_a_codeagent_tool_that_raises_is_in_the_trace_with_its_error() -> None:
    """CodeAgent: a raising tool's call is recorded with its error; the model sees the error."""
    agent = CodeAgent(
        tools=TOOLS,
        model=ScriptedModel(["verify_identity('bad')", "final_answer('done')"]),
        verbosity_level=-1,
    )
    guard(agent, parse_spec(SPEC))
    agent.run("verify")
    report = agent.agentguard.report
    assert report is not None
    assert [(c.name, c.error) for c in report.trace] == [
        ("verify_identity", True),
        ("final_answer", False),
    ]
