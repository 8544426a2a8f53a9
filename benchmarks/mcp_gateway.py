"""The MCP gateway's cost, measured side by side in one run: per-call latency (p50, p90),
the time to answer ``initialize`` (process start included) and the time until a first
``tools/list`` is answered too (the first request the proxy must be loaded for: it
relays the handshake before, see integrations/_mcp_early.py), directly and through
``agentguard mcp-proxy`` (stdio both ways), with the official SDK client. The starts
alternate direct and proxied, so a busy machine slows both alike.

Servers: the tests' shop server (Python, ``lookup_order``), ``mcp-server-time`` from PyPI
(``convert_time``) and, when Node and the npm package are there,
``@modelcontextprotocol/server-everything`` (``echo``).

    python benchmarks/mcp_gateway.py [--calls 300] [--starts 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integrations.mcp_servers.harness import SHOP  # noqa: E402
from tests.integrations.mcp_servers.npm import npm_server  # noqa: E402

SPEC = "spec bench\nconstraint no_wipe\n    severity HARD_STOP\n  := G !wipe_database\n"


async def _latencies(
    command: Sequence[str], tool: str, args: dict[str, Any], n: int
) -> list[float]:
    params = StdioServerParameters(command=command[0], args=list(command[1:]))
    with open("/dev/null", "w") as quiet:
        async with stdio_client(params, quiet) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            for _ in range(20):  # warm up
                await s.call_tool(tool, args)
            out = []
            for _ in range(n):
                begin = time.perf_counter()
                await s.call_tool(tool, args)
                out.append(time.perf_counter() - begin)
            return out


async def _initialize(command: Sequence[str]) -> tuple[float, float]:
    """Seconds to the answer of ``initialize``, and of a first ``tools/list``."""
    params = StdioServerParameters(command=command[0], args=list(command[1:]))
    with open("/dev/null", "w") as quiet:
        begin = time.perf_counter()
        async with stdio_client(params, quiet) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            initialized = time.perf_counter() - begin
            await s.list_tools()
            return initialized, time.perf_counter() - begin


def _proxied(spec: Path, server: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "agentguard", "mcp-proxy", str(spec), "--", *server]


def _quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q * 100) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--starts", type=int, default=10)
    opts = parser.parse_args()
    servers: list[tuple[str, list[str], str, dict[str, Any]]] = [
        ("shop (Python)", list(SHOP), "lookup_order", {"order_id": "A1"}),
    ]
    try:  # a real server from PyPI (the dev extra installs it)
        import mcp_server_time  # noqa: F401

        converted = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        server_time = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
        servers.append(("mcp-server-time (PyPI)", server_time, "convert_time", converted))
    except ImportError as exc:
        print(f"mcp-server-time left out: {exc}")
    try:
        servers.append(
            (
                "server-everything (Node)",
                npm_server("mcp-server-everything"),
                "echo",
                {"message": "hi"},
            )
        )
    except (RuntimeError, OSError) as exc:
        print(f"server-everything left out: {exc}")
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "bench.ltl"
        spec.write_text(SPEC)
        print(f"{'server':<26} {'':>8} {'p50 ms':>8} {'p90 ms':>8} {'init s':>8} {'list s':>8}")
        ratios, listed = [], []
        for name, server, tool, args in servers:
            commands = {"direct": server, "proxy": _proxied(spec, server)}
            calls = {
                how: anyio.run(_latencies, c, tool, args, opts.calls) for how, c in commands.items()
            }
            starts: dict[str, list[tuple[float, float]]] = {how: [] for how in commands}
            for _ in range(opts.starts):  # alternated: both see the machine as it is then
                for how, command in commands.items():
                    starts[how].append(anyio.run(_initialize, command))
            rows = {}
            for how in commands:
                p50, p90 = statistics.median(calls[how]), _quantile(calls[how], 0.9)
                init = statistics.median(s[0] for s in starts[how])
                rows[how] = (p50, init, statistics.median(s[1] for s in starts[how]))
                print(
                    f"{name:<26} {how:>8} {p50 * 1e3:8.2f} {p90 * 1e3:8.2f} {init:8.3f} "
                    f"{rows[how][2]:8.3f}"
                )
            (d50, dinit, dlist), (p50, pinit, plist) = rows["direct"], rows["proxy"]
            ratios.append(f"{name}: {pinit / dinit:.2f}x")
            listed.append(f"{name}: {plist / dlist:.2f}x")
            print(
                f"{name:<26} {'overhead':>8} {(p50 - d50) * 1e3:+8.2f} ms/call p50 "
                f"({p50 / d50:.2f}x), initialize {pinit / dinit:.2f}x, "
                f"first tools/list {plist / dlist:.2f}x"
            )
        print("initialize, proxy / direct:", ", ".join(ratios))
        print("first tools/list answered, proxy / direct:", ", ".join(listed))


if __name__ == "__main__":
    main()
