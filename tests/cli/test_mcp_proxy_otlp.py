"""`agentguard mcp-proxy` exports its spans through OpenTelemetry's standard variables:
a real OTLP/HTTP receiver (built on opentelemetry-proto) gets the tool spans, named and
attributed as the GenAI semantic conventions say."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from agentguard.cli.otlp import exporters_wanted
from tests.integrations.mcp_servers.harness import Run, through_proxy


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP (protobuf) trace receiver: each exported span, with its resource."""

    spans: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    attributes = {a.key: _value(a.value) for a in span.attributes}
                    self.spans.append(
                        {"name": span.name, "attributes": attributes, "resource": resource}
                    )
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        del format, args


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind in ("string_value", "bool_value", "int_value") else None


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    spans: list[dict[str, Any]] = []
    handler = type("Receiver", (_Receiver,), {"spans": spans})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", spans
    finally:
        server.shutdown()
        server.server_close()


def test_the_proxy_exports_genai_tool_spans_over_otlp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: tuple[str, list[dict[str, Any]]]
) -> None:
    """With OTEL_TRACES_EXPORTER=otlp and an endpoint, the receiver gets one
    `execute_tool` span per call (the refused one with error.type), under the service
    name the environment gives."""
    endpoint, spans = receiver
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "shop-gateway")
    run = Run(tmp_path)

    async def scenario() -> None:
        async with through_proxy(run) as client:
            await client.call_tool("issue_refund", {"order_id": "A1", "amount": 5})
            await client.call_tool("lookup_order", {"order_id": "A1"})

    anyio.run(scenario)
    tools = [s for s in spans if s["name"].startswith("execute_tool ")]
    assert [s["name"] for s in tools] == ["execute_tool issue_refund", "execute_tool lookup_order"]
    refused, ran = (s["attributes"] for s in tools)
    assert refused["gen_ai.operation.name"] == "execute_tool"
    assert (
        refused["gen_ai.tool.name"] == "issue_refund"
        and refused["error.type"] == "agentguard.blocked"
    )
    assert ran["gen_ai.tool.name"] == "lookup_order" and "error.type" not in ran
    assert ran["gen_ai.tool.call.id"]
    assert all(s["resource"]["service.name"] == "shop-gateway" for s in spans)
    assert any(s["name"] == "agentguard.decision" for s in spans)


@pytest.mark.parametrize(
    ("environ", "wanted"),
    [
        ({}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, ["otlp"]),
        ({"OTEL_TRACES_EXPORTER": "console,otlp"}, ["console", "otlp"]),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, []),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, []),
    ],
)
def test_the_environment_decides_the_exporters(environ: dict[str, str], wanted: list[str]) -> None:
    """The standard variables: an exporter list, an endpoint alone, none, disabled."""
    assert exporters_wanted(environ) == wanted
