"""Firewall decisions as OpenTelemetry spans inside the application's own span.

Uses the OpenTelemetry SDK's in-memory exporter (no collector needed); swap in an OTLP
exporter to send them to your observability stack.

    pip install 'agentguard[otel,smolagents]'
    python examples/otel_spans.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from smolagents import ToolCallingAgent, tool

import agentguard
from agentguard.guard import guard
from agentguard.testing.smolagents_models import ScriptedModel, call, if_observed

SPEC = """
spec refunds
constraint identity_first severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity)
"""


@tool
def verify_identity(customer_id: str) -> str:
    """Check the customer's identity.

    Args:
        customer_id: The customer's id.
    """
    return json.dumps({"customer_id": customer_id, "verified": True})


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order.

    Args:
        order_id: The order number.
        amount: The amount in EUR.
    """
    return json.dumps({"order_id": order_id, "refunded": amount})


def main(out_dir: Path | None = None) -> int:  # noqa: ARG001 - the examples share one signature
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    refund = call("issue_refund", order_id="A1042", amount=129.9)
    model = ScriptedModel(
        [
            refund,
            if_observed("BLOCKED", call("verify_identity", customer_id="C-77"), refund),
            refund,
            call("final_answer", answer="Refunded 129.90 EUR."),
        ]
    )
    agent = ToolCallingAgent(tools=[verify_identity, issue_refund], model=model, verbosity_level=0)
    agent = guard(agent, agentguard.parse_spec(SPEC), tracer_provider=provider)
    with provider.get_tracer("my.app").start_as_current_span("handle_ticket"):
        agent.run("Refund order A1042 for customer C-77.")

    spans = memory.get_finished_spans()
    names = {s.context.span_id: s.name for s in spans if s.context is not None}
    for span in spans:
        if span.name != "agentguard.decision":
            continue
        attrs = dict(span.attributes or {})
        parent = names.get(span.parent.span_id) if span.parent is not None else None
        print(
            f"span {span.name} under {parent}: {attrs['agentguard.action']} "
            f"{attrs['agentguard.tool']} {list(attrs['agentguard.constraints'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
