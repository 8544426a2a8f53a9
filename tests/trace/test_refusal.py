"""The refusal marker (agentguard/trace/refusal.py): every refusal an adapter sends starts
with it, and only text whose first line is a marker line is a refusal."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentguard.enforcement.decision import Action, Decision, Violation
from agentguard.enforcement.messages import compose
from agentguard.guard import blocked_text
from agentguard.severity import Severity
from agentguard.trace.refusal import (
    BLOCKED_HEAD,
    REFUSAL_HEADS,
    STOPPED_HEAD,
    is_refusal,
    refusal_text,
)

TEXT = st.text(st.characters(codec="utf-8"), max_size=40)


@given(TEXT, st.booleans())
def test_refusal_text_is_a_refusal_and_marks_once(reason: str, stopped: bool) -> None:
    """The marker line comes first, once: marking a refusal again changes nothing."""
    text = refusal_text(reason, stopped=stopped)
    assert is_refusal(text)
    assert refusal_text(text, stopped=not stopped) == text
    if not is_refusal(reason):
        assert text.split("\n")[0] == (STOPPED_HEAD if stopped else BLOCKED_HEAD)


@given(TEXT, st.sampled_from(sorted(REFUSAL_HEADS)), TEXT)
def test_the_marker_after_the_first_line_is_no_refusal(before: str, head: str, after: str) -> None:
    """Output that mentions the marker further down (a quoted log) is not a refusal; nor
    is a first line that merely starts like the marker."""
    text = f"x{before.replace(chr(10), ' ')}\n{head}\n{after}"
    assert not is_refusal(text)
    assert not is_refusal(f"{head} and more\n{after}")
    assert not is_refusal(f" {head}")
    assert not is_refusal(None) and not is_refusal({"text": head})


@given(st.sampled_from([Action.BLOCK, Action.STOP]), TEXT, st.sampled_from(["refund", "wipe"]))
def test_every_refusal_the_adapters_send_is_marked(action: Action, message: str, tool: str) -> None:
    """blocked_text (what every adapter sends for a call that did not run) starts with the
    marker of its action, whatever the decision's message is."""
    text = blocked_text(Decision(action, tool, {}, message=message))
    assert is_refusal(text)
    assert text.split("\n")[0] == (STOPPED_HEAD if action is Action.STOP else BLOCKED_HEAD)


def test_the_firewalls_own_refusal_messages_are_marked() -> None:
    """compose (BLOCK, STOP, an escalation, a BLOCK_AND_WARN) and the firewall's other
    refusal messages (withdrawn, stopped, a repeated tool-call id) come out marked."""
    v = Violation("c", Severity.parse("BLOCK_AND_WARN"), None, 1.0, "no", "why", "")
    messages = [
        compose(Action.BLOCK, [v], []),
        compose(Action.STOP, [v], ["p"], escalated=True),
        "agentguard did not run this call: a call of the same turn stopped the run (x).",
        "The run was already stopped by agentguard.",
        "The run was stopped by agentguard before this call started.",
        "agentguard refused this call: its tool-call id 'a' is used by another call.",
        "",
    ]
    for message in messages:
        for action in (Action.BLOCK, Action.STOP):
            assert is_refusal(blocked_text(Decision(action, "t", {}, message=message)))
    assert compose(Action.BLOCK, [v], []).startswith(BLOCKED_HEAD + "\n")
    assert compose(Action.STOP, [v], []).startswith(STOPPED_HEAD + "\n")
