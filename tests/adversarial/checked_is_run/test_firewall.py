"""The firewall checks one frozen snapshot of the arguments: what the trace records and
what the tool is handed (``Decision.arguments()``), whatever the caller's objects do after."""

from __future__ import annotations

import sys

import pytest

import agentguard as ag
from agentguard.enforcement.decision import Action
from agentguard.trace.arguments import MAX_ARGUMENT_DEPTH

SPEC = """
constraint no_prod severity HARD_STOP := G !run_shell(cmd ~ /prod/)
constraint cap severity HARD_STOP := G !send(amount > 500)
"""


class Shifty:
    """An object that tells the check one thing and the tool another."""

    def __init__(self) -> None:
        self.calls = 0

    def __str__(self) -> str:
        self.calls += 1
        return "ls /tmp" if self.calls == 1 else "rm -rf /prod"

    __repr__ = __str__


class ShiftyText(str):
    """A str whose own methods lie about its text."""

    def __str__(self) -> str:
        return "rm -rf /prod"

    def lower(self) -> str:  # type: ignore[override]
        return "rm -rf /prod"


def _firewall() -> ag.Firewall:
    return ag.Firewall(ag.parse_spec(SPEC), keep_trace=True)


def test_a_custom_object_is_refused_not_summarised() -> None:
    """An object is refused with a message naming the argument, and never runs."""
    fw = _firewall()
    decision = fw.propose("run_shell", {"cmd": Shifty()})
    assert decision.action is Action.BLOCK
    assert "argument 'cmd'" in decision.message and "Shifty" in decision.message
    assert not fw.in_flight


def test_a_str_subclass_is_checked_and_run_as_its_own_text() -> None:
    """A str subclass is judged on its stored text, and the tool gets that plain text."""
    fw = _firewall()
    decision = fw.propose("run_shell", {"cmd": ShiftyText("ls /prod/db")})
    assert decision.action is Action.STOP  # its text says /prod, whatever __str__ says
    fw2 = _firewall()
    ok = fw2.propose("run_shell", {"cmd": ShiftyText("ls /tmp")})
    assert ok.executes
    handed = ok.arguments()["cmd"]
    assert type(handed) is str and handed == "ls /tmp"


def test_mutating_the_arguments_after_the_check_changes_nothing() -> None:
    """A list the caller changes after the proposal changes neither the trace nor the
    arguments the tool receives."""
    fw = _firewall()
    paths = ["/tmp/a"]
    args = {"cmd": "cat", "paths": paths}
    decision = fw.propose("run_shell", args)
    paths.append("/prod/db")
    args["cmd"] = "rm -rf /prod"
    handed = decision.arguments()
    assert handed == {"cmd": "cat", "paths": ["/tmp/a"]}
    fw.complete(fw.start(decision), "done")
    assert fw.trace.calls[0].args == {"cmd": "cat", "paths": ["/tmp/a"]}


def test_the_tool_changing_its_arguments_cannot_rewrite_the_trace() -> None:
    """The copy the tool gets is its own: changing it in place leaves the record alone."""
    fw = _firewall()
    decision = fw.propose("run_shell", {"cmd": "cat", "paths": ["/tmp/a"]})
    handed = decision.arguments()
    handed["paths"].append("/prod/db")
    handed["cmd"] = "rm"
    fw.complete(fw.start(decision), "done")
    assert fw.trace.calls[0].args == {"cmd": "cat", "paths": ["/tmp/a"]}
    assert decision.arguments() == {"cmd": "cat", "paths": ["/tmp/a"]}


def test_deep_nesting_is_refused_not_seen_as_too_deep_text() -> None:
    """An argument nested past the limit (or past Python's recursion limit) is refused:
    it used to be judged as the text '[too deep]' and allowed under a HARD_STOP."""
    fw = _firewall()
    deep: object = "x"
    for _ in range(12_000):
        deep = [deep]
    decision = fw.propose("send", {"amount": 9000, "to": deep})
    assert decision.action is Action.BLOCK
    assert "deeper" in decision.message
    just_inside: object = 1
    for _ in range(MAX_ARGUMENT_DEPTH - 2):
        just_inside = [just_inside]
    assert fw.propose("send", {"amount": 1, "to": just_inside}).executes
    assert sys.getrecursionlimit() > 0


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (b"rm -rf /prod", "bytes"),
        ({"/prod"}, "set"),
        ({1: "x"}, "key that is not text"),
    ],
)
def test_values_json_cannot_hold_are_refused(value: object, why: str) -> None:
    """bytes, sets and non-text keys are refused by name."""
    decision = _firewall().propose("run_shell", {"cmd": value})
    assert decision.action is Action.BLOCK and why in decision.message


def test_a_cycle_is_refused() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    decision = _firewall().propose("run_shell", {"cmd": cyclic})
    assert decision.action is Action.BLOCK and "contains itself" in decision.message


def test_a_refused_uncheckable_call_is_logged_without_calling_its_methods(tmp_path) -> None:
    """The log shows what could be copied, and marks the rest by type only."""
    log = tmp_path / "d.jsonl"
    shifty = Shifty()
    fw = ag.Firewall(ag.parse_spec(SPEC), log_path=log)
    fw.propose("run_shell", {"cmd": shifty, "cwd": "/tmp"})
    fw.finish()
    text = log.read_text()
    assert "[uncheckable:" in text and '"cwd":"/tmp"' in text
    assert shifty.calls == 0


def test_batches_freeze_each_call() -> None:
    """propose_batch snapshots every call of the turn."""
    fw = _firewall()
    first = ["a"]
    decisions = fw.propose_batch(
        [("run_shell", {"cmd": "x", "p": first}), ("send", {"x": Shifty()})]
    )
    first.append("/prod")
    assert decisions[0].arguments() == {"cmd": "x", "p": ["a"]}
    assert decisions[1].action is Action.BLOCK


class Disguised:
    """An object whose ``__class__`` claims it is text (isinstance believes it)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


def test_an_object_disguised_as_text_is_refused_and_logged(tmp_path) -> None:
    """isinstance is fooled by a __class__ property; the snapshot reads the real type, so
    the call is refused with a decision (logged), not an exception out of propose."""
    log = tmp_path / "d.jsonl"
    fw = ag.Firewall(ag.parse_spec(SPEC), log_path=log)
    disguised = Disguised()
    assert isinstance(disguised, str)
    decision = fw.propose("run_shell", {"cmd": disguised})
    assert decision.action is Action.BLOCK and "Disguised" in decision.message
    fw.finish()
    assert "[uncheckable:" in log.read_text()
