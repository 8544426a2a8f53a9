"""OpenTelemetry decision spans, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from smolagents import ToolCallingAgent, tool

from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.otel import ATTRIBUTES, SPAN_NAME, TOOL_SPAN, VIOLATION_EVENT
from agentguard.guard import guard
from agentguard.language import parse_spec
from agentguard.testing.smolagents_models import ScriptedModel, call, if_observed

SPEC = parse_spec(
    "spec traced\n"
    "constraint identity_first severity SOFT_BLOCK\n"
    '    message "Verify first."\n'
    "  := G(issue_refund -> O verify_identity)\n"
)


@pytest.fixture
def exporter() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def test_every_decision_is_a_span_with_stable_attributes(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """A block and an allow: two spans, the attributes named in ATTRIBUTES, one event."""
    provider, memory = exporter
    fw = Firewall(SPEC, tracer_provider=provider, run_id="r1", keep_trace=True)
    fw.propose("issue_refund", {"order_id": "A1"}, tool_call_id="c1")
    fw.complete(fw.propose("verify_identity", {"customer_id": "C"}), "ok")
    spans = [s for s in memory.get_finished_spans() if s.name == SPAN_NAME]
    assert len(spans) == 2
    blocked, allowed = (dict(s.attributes or {}) for s in spans)
    assert set(ATTRIBUTES) <= set(blocked) and set(ATTRIBUTES) <= set(allowed)
    assert blocked["agentguard.action"] == "block"
    assert blocked["agentguard.tool"] == "issue_refund"
    assert blocked["agentguard.constraints"] == ("identity_first",)
    assert blocked["agentguard.severity"] == "SOFT_BLOCK"
    assert blocked["agentguard.run_id"] == "r1"
    assert blocked["agentguard.tool_call_id"] == "c1"
    assert allowed["agentguard.action"] == "allow"
    assert allowed["agentguard.constraints"] == ()
    (event,) = spans[0].events
    assert event.name == VIOLATION_EVENT
    assert dict(event.attributes or {})["agentguard.constraint"] == "identity_first"
    assert "verify_identity" in str(dict(event.attributes or {})["agentguard.hint"])
    assert spans[1].events == ()
    start, end = spans[0].start_time, spans[0].end_time
    assert start is not None and end is not None and start <= end


def test_shadow_spans_carry_the_enforced_action(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """In shadow mode the span says what enforce would do, and shadow = true."""
    provider, memory = exporter
    fw = Firewall(SPEC, tracer_provider=provider, mode="shadow", keep_trace=True)
    fw.propose("issue_refund", {})
    attrs = dict(memory.get_finished_spans()[0].attributes or {})
    assert attrs["agentguard.action"] == "block"
    assert attrs["agentguard.shadow"] is True
    assert attrs["agentguard.mode"] == "shadow"


def test_redacted_values_stay_out_of_span_events(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """A value the redactor hides does not appear in a violation event."""
    provider, memory = exporter
    spec = parse_spec('spec r\nconstraint no_secret := G !pay(card = "4111")')
    fw = Firewall(
        spec, tracer_provider=provider, redact=lambda t, a: dict.fromkeys(a, "*"), keep_trace=True
    )
    fw.propose("pay", {"card": "4111"})
    (event,) = memory.get_finished_spans()[0].events
    assert "4111" not in " ".join(str(v) for v in dict(event.attributes or {}).values())


RAN: list[str] = []


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def verify_identity(customer_id: str) -> str:
    """Verify the customer.

    Args:
        customer_id: The customer.
    """
    RAN.append("verify")
    return "verified"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order.
    """
    RAN.append("refund")
    return "refunded"


def test_decision_spans_nest_under_the_frameworks_span(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """A guarded smolagents run inside the application's span: every decision is its child."""
    provider, memory = exporter
    refund = call("issue_refund", order_id="A1")
    script: list[Any] = [
        refund,
        if_observed("BLOCKED", call("verify_identity", customer_id="C"), refund),
        refund,
        call("final_answer", answer="done"),
    ]
    agent = guard(
        ToolCallingAgent(
            tools=[verify_identity, issue_refund], model=ScriptedModel(script), verbosity_level=-1
        ),
        SPEC,
        tracer_provider=provider,
    )
    tracer = provider.get_tracer("the.framework")
    with tracer.start_as_current_span("agent.run") as outer:
        agent.run("refund A1")
    spans = memory.get_finished_spans()
    decisions = [s for s in spans if s.name == SPAN_NAME]
    actions = [dict(s.attributes or {})["agentguard.action"] for s in decisions]
    assert actions == ["block", "allow", "allow", "allow"]
    run_span = outer.get_span_context()
    tools = {s.context.span_id: s for s in spans if s.name.startswith(TOOL_SPAN)}
    for span in decisions:  # inside its call's tool span, inside the framework's span
        assert span.parent is not None
        tool = tools[span.parent.span_id]
        assert tool.parent is not None
        assert tool.parent.span_id == run_span.span_id
        assert span.context is not None and span.context.trace_id == run_span.trace_id


def test_without_opentelemetry_nothing_is_imported() -> None:
    """Importing agentguard and running a Firewall imports no opentelemetry module."""
    code = textwrap.dedent(
        """
        import sys
        import agentguard
        from agentguard.enforcement.firewall import Firewall
        fw = Firewall(agentguard.parse_spec("spec s\\nconstraint c := G !x"))
        fw.complete(fw.propose("y", {}), "ok")
        fw.propose("x", {})
        fw.finish()
        loaded = [m for m in sys.modules if m.startswith("opentelemetry")]
        assert loaded == [], loaded
        print("clean")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "clean"


def test_global_provider_is_used_when_asked() -> None:
    """otel=True without a provider uses the global tracer provider."""
    code = textwrap.dedent(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import agentguard
        from agentguard.enforcement.firewall import Firewall
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        trace.set_tracer_provider(provider)
        fw = Firewall(agentguard.parse_spec("spec s\\nconstraint c := G !x"), otel=True)
        fw.propose("x", {})
        print([s.attributes["agentguard.action"] for s in memory.get_finished_spans()
               if s.name == "agentguard.decision"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['block']"


def test_otel_false_emits_nothing(exporter: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    """otel=False turns spans off even with a provider."""
    provider, memory = exporter
    Firewall(SPEC, tracer_provider=provider, otel=False, keep_trace=True).propose(
        "issue_refund", {}
    )
    assert memory.get_finished_spans() == ()


def test_no_span_is_built_until_the_application_sets_a_provider() -> None:
    """A framework's import of opentelemetry builds no spans; a provider set later gets them."""
    code = textwrap.dedent(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import agentguard
        from agentguard.enforcement.firewall import Firewall
        fw = Firewall(agentguard.parse_spec("spec s\\nconstraint c := G !x"))
        built = []
        tracer = fw._spans._tracer
        original = tracer.start_span
        tracer.start_span = lambda *a, **k: built.append(a[0]) or original(*a, **k)
        fw.propose("x", {})  # the default proxy provider: no span
        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        trace.set_tracer_provider(provider)
        fw.propose("x", {})  # the application's provider now: one span, exported
        decisions = [s for s in memory.get_finished_spans() if s.name == "agentguard.decision"]
        print(len(built), [s.attributes["agentguard.step"] for s in decisions])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2 [1]"  # the call's tool span and its decision span


def test_tool_calls_follow_the_genai_semantic_conventions(
    exporter: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """Each proposed call is an `execute_tool {name}` span carrying the GenAI semantic
    conventions' attributes (their names from opentelemetry-semantic-conventions): OK
    when it ran, an error with error.type when it was refused or failed."""
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
    from opentelemetry.semconv.attributes.error_attributes import ERROR_TYPE
    from opentelemetry.trace import StatusCode

    provider, memory = exporter
    fw = Firewall(SPEC, tracer_provider=provider, run_id="r1", keep_trace=True)
    fw.propose("issue_refund", {"order_id": "A1"}, tool_call_id="c1")
    fw.complete(fw.propose("verify_identity", {"customer_id": "C"}, tool_call_id="c2"), "ok")
    failed = fw.propose("verify_identity", {"customer_id": "D"}, tool_call_id="c3")
    fw.complete(failed, None, error="no such customer")
    fw.finish()
    tools = [s for s in memory.get_finished_spans() if s.name.startswith(TOOL_SPAN)]
    assert [s.name for s in tools] == [
        "execute_tool issue_refund",
        "execute_tool verify_identity",
        "execute_tool verify_identity",
    ]
    refused, ran, broke = (dict(s.attributes or {}) for s in tools)
    for attributes, call_id in zip((refused, ran, broke), ("c1", "c2", "c3"), strict=True):
        assert attributes[gen_ai.GEN_AI_OPERATION_NAME] == (
            gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value
        )
        assert attributes[gen_ai.GEN_AI_TOOL_CALL_ID] == call_id
        assert attributes[gen_ai.GEN_AI_TOOL_TYPE] == "function"
        assert attributes["openinference.span.kind"] == "TOOL"
    assert refused[gen_ai.GEN_AI_TOOL_NAME] == "issue_refund"
    assert refused[ERROR_TYPE] == "agentguard.blocked"
    assert tools[0].status.status_code is StatusCode.ERROR
    assert ERROR_TYPE not in ran and tools[1].status.status_code is StatusCode.UNSET
    assert broke[ERROR_TYPE] == "tool_error"
