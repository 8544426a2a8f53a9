"""Firewall decisions as OpenTelemetry spans inside the application's own span: each
proposed call is an ``execute_tool {tool}`` span (OpenTelemetry's GenAI semantic
conventions), the decision a span inside it.

Uses the OpenTelemetry SDK's in-memory exporter (no collector needed); swap in an OTLP
exporter to send them to your observability stack.

    pip install 'agentguard[otel,smolagents]'
    python examples/otel_spans.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from smolagents import ToolCallingAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.refund_desk import RefundDesk, refund_before_verifying
from agentguard.testing.smolagents_models import ScriptedModel, call

SPEC = Path(__file__).with_name("refunds.ltl")


def main(out_dir: Path | None = None) -> int:  # noqa: ARG001 - the examples share one signature
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tools = [tool(f) for f in RefundDesk().tools()]
    model = ScriptedModel(
        refund_before_verifying(call("final_answer", answer="Refunded 129.90 EUR."))
    )
    agent = ToolCallingAgent(tools=tools, model=model, verbosity_level=0)
    agent = guard(agent, agentguard.load_spec(SPEC), tracer_provider=provider)
    with provider.get_tracer("my.app").start_as_current_span("handle_ticket"):
        agent.run("Refund order A1042 for customer C-77.")

    spans = memory.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    for span in spans:
        if span.name != "agentguard.decision":
            continue
        attrs = dict(span.attributes or {})
        chain, up = [], span.parent
        while up is not None and up.span_id in by_id:  # the spans it is inside, inmost first
            chain.append(by_id[up.span_id].name)
            up = by_id[up.span_id].parent
        print(
            f"span {span.name} under {' < '.join(chain)}: {attrs['agentguard.action']} "
            f"{attrs['agentguard.tool']} {list(attrs['agentguard.constraints'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
