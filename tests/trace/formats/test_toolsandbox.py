"""ToolSandbox execution contexts, as ToolSandbox writes them (fixtures made by ToolSandbox
itself with scripted roles: tests/trace/fixtures/toolsandbox/generate.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentguard.cli.main import main
from agentguard.errors import TraceRecordError
from agentguard.trace import detect_format, load_traces, trace_from_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "toolsandbox"
RUN = FIXTURES / "run" / "trajectories"
SEND = RUN / "send_message_with_contact_content_cellular_off" / "execution_context.json"
REPAIR = RUN / "remove_contact_by_phone" / "execution_context.json"

SPEC = """\
spec cellular_first
tool search_contacts(name?: str, phone_number?: str, person_id?: str, relationship?: str, is_self?: bool)
tool send_message_with_phone_number(phone_number: str, content: str)
tool set_cellular_service_status(on: bool)
tool get_cellular_service_status()
tool end_conversation()
constraint cellular_before_sending
    layer L3  weight 1  severity BLOCK_AND_WARN
    message "Turn cellular service on before sending."
  := G(send_message_with_phone_number -> O set_cellular_service_status(on = true))
"""


def _context(path: Path) -> dict[str, object]:
    value: dict[str, object] = json.loads(path.read_text())
    return value


def test_detected_and_read_as_written() -> None:
    """Calls in order with results from their tool traces; the raised call is a tool error."""
    value = _context(SEND)
    assert detect_format(value) == "toolsandbox"
    (loaded,) = load_traces(SEND)
    trace = loaded.trace
    assert trace is not None
    assert trace.names == (
        "search_contacts",
        "send_message_with_phone_number",
        "set_cellular_service_status",
        "send_message_with_phone_number",
        "end_conversation",
        "final_answer",
    )
    assert trace[0].args == {"name": "Fredrik Thordendal"}
    assert trace[0].result[0]["phone_number"] == "+12453344098"
    assert trace.tool_errors == {1}
    assert trace[1].result == "ConnectionError: Cellular service is not enabled"
    assert trace.metrics["task_id"] == SEND.parent.name
    assert trace.metrics["user_tool_calls"] == [4]
    assert trace.metrics["num_tool_calls"] == 4


def test_dialogue_events_user_system_and_agent() -> None:
    """With messages kept: the system's and the user's messages to the agent, the agent's reply."""
    (loaded,) = load_traces(REPAIR, messages=True)
    trace = loaded.trace
    assert trace is not None
    events = [(c.name, c.args.get("sender")) for c in trace.calls if not c.is_tool]
    assert events == [
        ("user_message", "system"),
        ("user_message", None),
        ("assistant_message", None),
    ]
    assert trace.calls[1].args["text"] == "Remove phone number +12453344098 from my contact"


def test_scrambled_names_stay_as_the_agent_called_them() -> None:
    """A run with scrambled tool names records the agent-facing name (`setting_4`)."""
    path = RUN / "get_wifi_3_distraction_tools_tool_name_scrambled" / "execution_context.json"
    (loaded,) = load_traces(path)
    assert loaded.trace is not None and loaded.trace.names[0] == "setting_4"


def test_check_reads_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`agentguard check` on execution_context.json: the send before cellular is on violates."""
    spec = tmp_path / "cellular.ltl"
    spec.write_text(SPEC)
    assert main(["check", "--json", str(spec), str(SEND)]) == 1
    out = capsys.readouterr().out
    assert "cellular_before_sending" in out


def test_bad_agent_code_names_the_message() -> None:
    """An agent row that is not ToolSandbox's generated code: an error naming the message."""
    value = _context(REPAIR)
    rows = value["_dbs"]["SANDBOX"]  # type: ignore[index]
    row = next(
        r for r in rows if r["sender"] == "AGENT" and r["recipient"] == "EXECUTION_ENVIRONMENT"
    )
    row["content"] = "remove_contact('x')"
    with pytest.raises(TraceRecordError, match=r"SANDBOX message 16: an agent call must be"):
        trace_from_json(value, source="ctx.json")


def test_arguments_that_are_not_an_object_are_refused() -> None:
    """Generated code whose parameters are no dict literal: an error, never ``{}``."""
    value = _context(REPAIR)
    rows = value["_dbs"]["SANDBOX"]  # type: ignore[index]
    row = next(
        r for r in rows if r["sender"] == "AGENT" and r["recipient"] == "EXECUTION_ENVIRONMENT"
    )
    row["content"] = row["content"].replace("{'person_id': '+12453344098'}", "['+12453344098']")
    with pytest.raises(TraceRecordError, match=r"SANDBOX message 16: the call's arguments are not"):
        trace_from_json(value, source="ctx.json")


def test_toolsandbox_regenerates_the_fixtures(tmp_path: Path, toolsandbox_python: str) -> None:
    """ToolSandbox itself, with the scripted roles, writes runs this format reads the same way."""
    out = tmp_path / "run"
    done = subprocess.run(
        [toolsandbox_python, "-I", str(FIXTURES / "generate.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    made = sorted(p.parent.name for p in (out / "trajectories").glob("*/execution_context.json"))
    kept = sorted(p.parent.name for p in RUN.glob("*/execution_context.json"))
    assert made == kept
    for name in made:
        (new,) = load_traces(out / "trajectories" / name / "execution_context.json")
        (old,) = load_traces(RUN / name / "execution_context.json")
        assert new.trace is not None and old.trace is not None
        assert [(c.name, c.args, c.error) for c in new.trace.calls] == [
            (c.name, c.args, c.error) for c in old.trace.calls
        ]
    summary = json.loads((out / "result_summary.json").read_text())["per_scenario_results"]
    kept_summary = json.loads((FIXTURES / "run" / "result_summary.json").read_text())
    assert [r["similarity"] for r in summary] == [
        r["similarity"] for r in kept_summary["per_scenario_results"]
    ]
