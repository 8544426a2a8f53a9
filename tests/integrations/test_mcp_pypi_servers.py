"""The MCP gateway in front of real servers from PyPI that nobody here wrote
(``mcp-server-time``, ``mcp-server-git``), driven by the SDK's own client directly and
through ``agentguard mcp-proxy`` over stdio: ``initialize`` and every allowed answer are
the same JSON; a refused call never reaches the server (its effect is missing from the
world: a refused ``git_commit`` leaves the repository's history as it was) and the run's
trace is what ran."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_time")
pytest.importorskip("mcp_server_git")

from mcp import ClientSession

from tests.integrations.mcp_servers.harness import Run, Wire
from tests.integrations.test_mcp_transparency import answers, proxied, session

Scenario = Callable[[ClientSession], Awaitable[Any]]


def _both(
    tmp_path: Path, spec_text: str, server: Sequence[str], scenario: Scenario
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Run]:
    """The client's answers directly and through the proxy, and the proxy's run."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    spec = tmp_path / "s.ltl"
    spec.write_text(spec_text)

    async def drive(command: Sequence[str], run: Run) -> Wire:
        wire = Wire()
        async with session(command, run, wire) as client:
            await scenario(client)
        return wire

    runs = {name: Run(tmp_path / name, spec) for name in ("direct", "proxy")}
    for run in runs.values():
        run.root.mkdir()
    direct = anyio.run(drive, server, runs["direct"])
    through = anyio.run(drive, proxied(runs["proxy"], server), runs["proxy"])
    return answers(direct), answers(through), runs["proxy"]


def test_mcp_server_time_through_the_proxy(tmp_path: Path) -> None:
    """initialize, tools/list and an allowed conversion answer as directly; the refused
    one is answered with agentguard's refusal and is not in the run's trace."""
    spec = (
        "constraint no_moscow severity SOFT_BLOCK\n"
        '  := G !convert_time(target_timezone = "Europe/Moscow")\n'
    )
    args = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}

    async def scenario(client: ClientSession) -> None:
        await client.list_tools()
        await client.call_tool("convert_time", args)
        await client.call_tool("convert_time", {**args, "target_timezone": "Europe/Moscow"})

    server = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
    direct, through, run = _both(tmp_path, spec, server, scenario)
    assert through[:3] == direct[:3]  # initialize, tools/list, the allowed conversion
    assert direct[3]["result"].get("isError") is not True
    assert through[3]["result"]["isError"] is True
    assert "agentguard blocked this call" in through[3]["result"]["content"][0]["text"]
    (report,) = run.reports()
    calls = [c for c in report["trace"] if c["tool_name"] == "convert_time"]
    assert [c["arguments"]["target_timezone"] for c in calls] == ["Asia/Tokyo"]


def _repo(path: Path) -> Path:
    path.mkdir()
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    (path / "a.txt").write_text("two\n")
    return path


def _commits(path: Path) -> int:
    out = subprocess.run(
        ["git", "-C", str(path), "rev-list", "--count", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


def test_mcp_server_git_through_the_proxy(tmp_path: Path) -> None:
    """git_status answers as directly; git_commit, refused by the spec, never reaches the
    server: the repository keeps its one commit."""
    repo = _repo(tmp_path / "repo")
    spec = "constraint read_only severity SOFT_BLOCK := G !git_commit & G !git_add\n"

    async def scenario(client: ClientSession) -> None:
        await client.call_tool("git_status", {"repo_path": str(repo)})
        await client.call_tool("git_log", {"repo_path": str(repo), "max_count": 5})

    server = [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)]
    direct, through, _ = _both(tmp_path / "read", spec, server, scenario)
    assert through == direct  # initialize and both answers, as JSON, exactly

    async def write(client: ClientSession) -> None:
        added = await client.call_tool("git_add", {"repo_path": str(repo), "files": ["a.txt"]})
        committed = await client.call_tool(
            "git_commit", {"repo_path": str(repo), "message": "sneaky"}
        )
        assert added.is_error and committed.is_error

    run = Run(tmp_path / "write", tmp_path / "read" / "s.ltl")
    run.root.mkdir()

    async def through_only() -> None:
        async with session(proxied(run, server), run, Wire()) as client:
            await write(client)

    anyio.run(through_only)
    assert _commits(repo) == 1
    (report,) = run.reports()
    assert not any(c["tool_name"] in ("git_add", "git_commit") for c in report["trace"])
