"""Exporting the firewall's spans from a CLI process through OpenTelemetry's standard
environment variables, as any OpenTelemetry-instrumented program does.

``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``, ``none``; several comma-separated) or an
OTLP endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)
turns export on; ``OTEL_SDK_DISABLED=true`` turns it off. The OTLP exporter reads the
rest itself (endpoint, headers, timeout); ``OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL`` picks
``http/protobuf`` (the default) or ``grpc``. The resource takes ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES``, the service name defaulting to the command's. Console spans
go to stderr: stdout may be an MCP channel. Needs the ``otel`` extra.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from agentguard.errors import MissingExtraError


def exporters_wanted(environ: Mapping[str, str]) -> list[str]:
    """The span exporters the environment asks for (none: no export)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "").split(",")]
    names = [n for n in names if n]
    if "none" in names:
        return []
    if names:
        return names
    endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    return ["otlp"] if endpoint else []


def tracer_provider(environ: Mapping[str, str], service: str) -> Any | None:
    """A tracer provider exporting as the environment says, or None when it asks for
    nothing. Shut it down at exit (that flushes the spans still batched)."""
    wanted = exporters_wanted(environ)
    if not wanted:
        return None
    try:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SimpleSpanProcessor,
        )
    except ImportError as exc:
        raise MissingExtraError("otel", "opentelemetry-sdk") from exc
    defaults = {} if environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service}
    provider = TracerProvider(resource=Resource.create(defaults))
    for name in wanted:
        if name == "otlp":
            provider.add_span_processor(BatchSpanProcessor(_otlp(environ)))
        elif name == "console":
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
        else:
            raise ValueError(
                f"OTEL_TRACES_EXPORTER: unknown exporter {name!r} (otlp, console, none)"
            )
    return provider


def _otlp(environ: Mapping[str, str]) -> Any:
    protocol = (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter as GrpcExporter,
            )

            return GrpcExporter()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    except ImportError as exc:
        package = "opentelemetry-exporter-otlp-proto-" + ("grpc" if protocol == "grpc" else "http")
        raise MissingExtraError("otel", package) from exc


__all__ = ["exporters_wanted", "tracer_provider"]
