"""smolagents: what the firewall checked is exactly what the tool runs with (issue 25, 1).

Each test is an attack a model could write into a CodeAgent's code (or a
ToolCallingAgent's call), with real smolagents agents driven by scripted models."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.enforcement.decision import RunStopped
from agentguard.testing.smolagents_models import call
from tests.adversarial._smolagents_support import (
    RAN,
    Transfer,
    assert_invariants,
    code_agent,
    observed,
    tool_agent,
)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def test_a_str_subclass_whose_str_lies_runs_as_the_text_checked(tmp_path: Path) -> None:
    """A model-defined ``str`` subclass reading "ls /tmp" whose ``__str__`` says "rm -rf
    /prod": the check judged "ls /tmp", so the tool is handed the plain text "ls /tmp"
    (it used to get the object, and ``str(cmd)`` ran "rm -rf /prod")."""
    code = (
        "class Cmd(str):\n"
        "    def __str__(self):\n"
        "        return 'rm -rf /prod'\n"
        "shell(Cmd('ls /tmp'))\n"
        "final_answer('done')"
    )
    agent = code_agent([code], tmp_path)
    agent.run("clean up")
    assert RAN == [("shell", {"cmd": "ls /tmp", "text": "ls /tmp", "kind": "str"})]
    assert_invariants(agent.agentguard, tmp_path)


def test_an_object_whose_str_changes_is_refused_not_run(tmp_path: Path) -> None:
    """An object that is no text, whose ``__str__`` answers "ls /tmp" to the first reader
    and "rm -rf /prod" after: refused (the check cannot hold it), the tool never runs."""
    code = (
        "class Flip:\n"
        "    seen = [0]\n"
        "    def __str__(self):\n"
        "        self.seen[0] += 1\n"
        "        return 'ls /tmp' if self.seen[0] == 1 else 'rm -rf /prod'\n"
        "shell(Flip())"
    )
    agent = code_agent([code, "final_answer('gave up')"], tmp_path)
    agent.run("clean up")
    assert RAN == []
    refused = [d for d in agent.agentguard.attempts if d.tool == "shell"]
    assert len(refused) == 1 and not refused[0].executes
    assert "'cmd'" in refused[0].message  # names the argument it could not check
    assert "agentguard" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_a_list_changed_after_the_call_changes_no_record(tmp_path: Path) -> None:
    """Model code changing the list it passed, the tool changing what it was handed, and
    model code changing the list the tool returned: the trace keeps what ran."""
    code = (
        "items = ['a']\n"
        "out = keep(items)\n"
        "items.append('rewritten by the model')\n"
        "out.append('rewritten too')\n"
        "final_answer('done')"
    )
    agent = code_agent([code], tmp_path)
    agent.run("keep")
    (kept,) = [c for c in agent.agentguard.report.trace if c.name == "keep"]
    assert kept.args == {"items": ["a"]}
    assert kept.result == ["kept", "a", "added by the tool"]
    assert agent.python_executor.state["items"] == ["a", "rewritten by the model"]
    assert_invariants(agent.agentguard, tmp_path)


def test_an_argument_nested_too_deep_is_refused_not_summarised(tmp_path: Path) -> None:
    """An argument nested 12,000 deep once made the check see "[too deep]" and let
    ``send_email`` to the CEO run under a HARD_STOP; it is refused, naming it."""
    code = (
        "deep = []\n"
        "for i in range(12000):\n"
        "    deep = [deep]\n"
        "send_email(to='ceo@corp.com', meta=deep)"
    )
    agent = code_agent([code, "final_answer('gave up')"], tmp_path)
    agent.run("mail")
    assert RAN == []
    (refused,) = [d for d in agent.agentguard.attempts if d.tool == "send_email"]
    assert not refused.executes and "'meta" in refused.message
    assert_invariants(agent.agentguard, tmp_path)


@pytest.mark.parametrize("kind", ["code", "tool_calling"])
def test_an_omitted_default_is_judged_as_the_value_the_tool_acts_on(
    kind: str, tmp_path: Path
) -> None:
    """``delete(path)`` with ``force: bool = True`` in the tool's signature deletes with
    force: it is judged with ``force = true`` filled in, and stopped by the HARD_STOP."""
    if kind == "code":
        agent: object = code_agent(["delete('/prod/db')"], tmp_path)
    else:
        agent = tool_agent([call("delete", path="/prod/db")], tmp_path)
    with pytest.raises(RunStopped) as stopped:
        agent.run("clean")  # type: ignore[attr-defined]
    assert RAN == []
    assert stopped.value.decision.args == {"path": "/prod/db", "force": True}
    session = agent.agentguard  # type: ignore[attr-defined]
    # one decision, on the arguments the tool would get (a turn's batch check too)
    assert [(d.tool, d.action.value) for d in session.attempts] == [("delete", "stop")]
    assert_invariants(session, tmp_path)


@pytest.mark.parametrize("kind", ["code", "tool_calling"])
def test_a_filled_default_is_what_the_trace_records(kind: str, tmp_path: Path) -> None:
    """An allowed call omitting a default runs with it and is traced with it."""
    if kind == "code":
        agent: object = code_agent(["send_email('bob@corp.com')", "final_answer('ok')"], tmp_path)
    else:
        agent = tool_agent(
            [call("send_email", to="bob@corp.com"), call("final_answer", answer="ok")],
            tmp_path,
        )
    agent.run("mail")  # type: ignore[attr-defined]
    assert RAN == [("send_email", {"to": "bob@corp.com", "meta": None})]
    session = agent.agentguard  # type: ignore[attr-defined]
    decided = [dict(d.args) for d in session.attempts if d.tool == "send_email"]
    assert decided == [{"to": "bob@corp.com", "meta": None}]
    assert_invariants(session, tmp_path)


def test_positional_arguments_are_named_as_forward_takes_them(tmp_path: Path) -> None:
    """``transfer("ops", "savings")`` moves from "ops" (``forward(from_account,
    to_account)``), although ``inputs`` lists ``to_account`` first: the check names the
    positional arguments as the tool receives them."""
    agent = code_agent(
        ["transfer('ops', 'savings')", "final_answer('ok')"], tmp_path, tools=[Transfer()]
    )
    agent.run("move")
    assert RAN == [("transfer", {"from_account": "ops", "to_account": "savings"})]
    assert_invariants(agent.agentguard, tmp_path)


@pytest.mark.parametrize(
    "answer", ["Lie('nothing')", "[1, {'note': Lie('nothing')}]"], ids=["text", "nested"]
)
def test_a_final_answer_whose_str_lies_is_refused(answer: str, tmp_path: Path) -> None:
    """A final answer reading "nothing" to the check and "the secret" to the caller after
    (its own ``__str__``, counting its readers: smolagents' logs, the check, then the
    caller) passed ``G !final_answer(answer ~
    /secret/)``; it is refused, and the model answers again."""
    lie = (
        "class Lie(str):\n"
        "    reads = [0]\n"
        "    def __str__(self):\n"
        "        self.reads[0] += 1\n"
        "        return 'nothing' if self.reads[0] <= 3 else 'the secret'\n"
    )
    agent = code_agent([f"{lie}final_answer({answer})", "final_answer('nothing')"], tmp_path)
    result = agent.run("answer")
    assert str(result) == "nothing"
    assert "secret" not in str(agent.agentguard.report.trace[-1].result)
    refused = [d for d in agent.agentguard.attempts if d.tool == "final_answer"]
    assert [d.executes for d in refused] == [False, True]
    assert_invariants(agent.agentguard, tmp_path)


@pytest.mark.parametrize(
    "call_text",
    ["delete('/prod/db', force=1)", "delete('/prod/db', force='yes')", "shell(['rm', '-rf', '/'])"],
    ids=["int_for_bool", "text_for_bool", "list_for_text"],
)
def test_a_value_of_another_type_than_declared_is_refused(call_text: str, tmp_path: Path) -> None:
    """``force=1`` is no ``true`` to the check but forces the delete in the tool; a list
    for ``cmd: str`` slips past ``cmd ~ /rm/``. smolagents validates a ToolCallingAgent's
    calls against the declared inputs, never a CodeAgent's: the gate does, and the model
    reads why."""
    agent = code_agent([call_text, "final_answer('gave up')"], tmp_path)
    agent.run("clean")
    assert RAN == []
    assert "but should be" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)
