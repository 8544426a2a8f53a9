"""`agentguard mcp-proxy` argument handling (the serving itself: tests/integrations)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from agentguard.cli.main import EXIT_USAGE, main
from agentguard.cli.mcp_proxy import _split

SPEC = Path(__file__).parents[1] / "integrations" / "mcp_servers" / "shop.ltl"


def test_a_missing_server_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Without `-- COMMAND` the proxy says how to call it and exits 2."""
    assert main(["mcp-proxy", str(SPEC)]) == EXIT_USAGE
    assert "agentguard mcp-proxy SPEC -- COMMAND" in capsys.readouterr().err


def test_a_bad_spec_is_reported_before_any_server_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec that does not parse names its file and line; exit 2."""
    bad = tmp_path / "bad.ltl"
    bad.write_text("constraint c := G(\n")
    assert main(["mcp-proxy", str(bad), "--", sys.executable, "-c", "pass"]) == EXIT_USAGE
    assert f"{bad}:" in capsys.readouterr().err


def test_a_server_that_cannot_start_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command that does not exist fails clearly, options after SPEC included."""
    code = main(
        [
            "mcp-proxy",
            str(SPEC),
            "--report",
            str(tmp_path / "r.jsonl"),
            "--",
            str(tmp_path / "no-such-server"),
        ]
    )
    assert code == EXIT_USAGE
    assert "cannot start the MCP server" in capsys.readouterr().err


def test_without_the_mcp_extra_the_proxy_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the SDK missing, mcp-proxy says `pip install 'agentguard[mcp]'` and exits 2."""
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.delitem(sys.modules, "agentguard.integrations.mcp", raising=False)
    assert main(["mcp-proxy", str(SPEC), "--", sys.executable, "-c", "pass"]) == EXIT_USAGE
    assert "pip install 'agentguard[mcp]'" in capsys.readouterr().err


def test_a_server_that_exits_at_startup_is_one_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A server process that starts and exits at once (anyio wraps the gateway's error
    in an exception group) gets the same one-line message and exit 2."""
    code = main(["mcp-proxy", str(SPEC), "--", sys.executable, "-c", "import sys; sys.exit(1)"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert "cannot start the MCP server" in err
    assert "Traceback" not in err and "ExceptionGroup" not in err


@pytest.mark.parametrize(
    ("after_spec", "command", "log"),
    [
        (["--log", "F", "--", "node", "s.js"], ["node", "s.js"], "F"),
        (["--log", "F", "node", "s.js", "--log", "x"], ["node", "s.js", "--log", "x"], "F"),
        (["--log=F", "-v", "node"], ["node"], "F"),
        (["--", "node", "--log", "x"], ["node", "--log", "x"], None),
        (["node", "s.js"], ["node", "s.js"], None),
    ],
)
def test_the_forms_clients_produce_are_read(
    after_spec: list[str], command: list[str], log: str | None
) -> None:
    """With or without the `--` (the MCP Inspector drops the first one), the proxy's
    options are read up to the server's program; what follows it is the server's own."""
    args = argparse.Namespace(server=after_spec)
    assert _split(args) == command
    assert str(getattr(args, "log", None) or "") == (log or "")


def test_a_command_and_a_url_together_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """The server is a command or a URL, not both."""
    assert main(["mcp-proxy", str(SPEC), "--url", "http://127.0.0.1:1/mcp", "--", "node"]) == 2
    assert "not both" in capsys.readouterr().err
