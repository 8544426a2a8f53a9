"""smolagents memory: ``agent.memory.get_full_steps()`` / ``get_succinct_steps()`` (or
``[step.dict() for step in agent.memory.steps]``), optionally under ``{"steps": ...}``.

Per ``ActionStep``: each entry of ``tool_calls`` (``{id, type, function: {name,
arguments}}``) is a call; ``observations`` is its result. smolagents joins the outputs
of parallel calls with newlines (in ``tool_calls`` order): when the text has exactly one
line per call each gets its line, otherwise each gets the whole text. Results are
``str(output)``, so Python reprs (``{'a': 1}``) are decoded back to values.

A step whose tool raised keeps ``tool_calls`` empty and an ``error``; the call is
recovered from ``model_output_message.tool_calls`` with the error as its result (worded
``Error: <type>: <message>``, as the guard records it, when smolagents' wording matches the
call), marked as a tool error. A call smolagents rejected before running it (arguments
that fail its check, an unknown tool) never ran and is left out (:func:`_never_ran`,
docs/traces.md "Calls smolagents rejected"); in a parallel step only what the error names
can be told (docs/traces.md, "What cannot be recovered"). Parsing/generation errors (no
call made) add nothing.

Calls agentguard refused never ran and are left out (:mod:`agentguard.trace.refusal`): the
guarded ToolCallingAgent gets the refusal text as the call's observation, its marker line
first. In a parallel step, the observation is the calls' outputs joined in ``tool_calls``
order; each marker line starts a refusal, and the other outputs are read one line each, when
that splits the text in exactly one way (else every call is kept, with the whole text). A
step whose ``final_answer`` agentguard refused (the error smolagents records when a final
answer check fails, ``Check agentguard_final_answer failed with error: `` and the refusal)
leaves that final answer out.

ToolCallingAgent: the final answer is already a ``final_answer`` tool call. CodeAgent:
every step is one ``python_interpreter(code=...)`` call whose result is the execution
log; the tools called *inside* the code are not recoverable from memory (run it under
the firewall integration to get per-tool traces); a final step (``is_final_answer``)
adds ``final_answer(answer=action_output)``. A ``FinalAnswerStep`` (``{"output": ...}``,
seen when streaming) adds the final answer too. A ``TaskStep`` (``{"task": ...}``) is
the user's message: a ``user_message`` dialogue event, as the firewall integration
observes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentguard.trace.final_tool import FINAL_TOOL
from agentguard.trace.formats._base import CallLog, arguments_of, decode_repr, list_at, mappings
from agentguard.trace.model import Trace
from agentguard.trace.refusal import REFUSAL_HEADS, is_refusal

CODE_TOOL = "python_interpreter"

REFUSED_ANSWER = "Check agentguard_final_answer failed with error: "
"""How smolagents records a final answer agentguard's check refused: ``AgentError(f"Check
{check.__name__} failed with error: {e}")`` (``MultiStepAgent._validate_final_answer``),
the check being the adapter's ``agentguard_final_answer`` and ``e`` the refusal."""

_STEP_KEYS = frozenset(
    {
        "step_number",
        "tool_calls",
        "observations",
        "code_action",
        "model_output",
        "is_final_answer",
        "action_output",
        "error",
    }
)
_OTHER_STEPS = ({"task"}, {"plan"}, {"output"}, {"system_prompt"})


def detect(value: Any) -> bool:
    """Step dicts: some carry ``step_number`` plus action-step keys, the rest are task,
    planning, system-prompt or final-answer steps."""
    if not mappings(value) or not value:
        return False
    actions = [s for s in value if "step_number" in s and _STEP_KEYS & (set(s) - {"step_number"})]
    return bool(actions) and all(s in actions or _other(s) for s in value)


def _other(step: Mapping[str, Any]) -> bool:
    return any(keys <= set(step) for keys in _OTHER_STEPS)


def load(value: Any, source: str, final_answer: bool) -> Trace:
    log = CallLog(source)
    for index, step in enumerate(value):
        if "step_number" in step:
            _action_step(log, step, index, final_answer)
        elif "task" in step and isinstance(step["task"], str):  # a TaskStep: the user's turn
            log.turn("user", step["task"])
        elif final_answer and set(step) == {"output"}:
            log.final_answer(step["output"])
    return log.trace()


def _action_step(log: CallLog, step: Mapping[str, Any], index: int, final_answer: bool) -> None:
    where = f"step {step.get('step_number', index)}"
    calls = [c for c in list_at(step, "tool_calls", where, log.source) if isinstance(c, Mapping)]
    error = step.get("error")
    failed = isinstance(error, Mapping) and error.get("type") in (
        "AgentToolExecutionError",
        "AgentToolCallError",
        "AgentExecutionError",
    )
    if not calls and failed:
        calls = _requested_calls(step)
    slots = [_add(log, c, where) for c in calls]
    if failed and slots and isinstance(error, Mapping):
        _failed(log, slots, calls, error)
    elif slots and step.get("observations") is not None:
        for slot, part in zip(slots, _outputs(str(step["observations"]), len(slots)), strict=True):
            if part is None:
                log.refused(slot)
            else:
                log.set_result(slot, decode_repr(part))
    if _answer_refused(error):
        for slot, call in zip(slots, calls, strict=True):
            if _function(call).get("name") == FINAL_TOOL:
                log.refused(slot)
    if final_answer and step.get("is_final_answer") is True:
        log.final_answer(step.get("action_output"))


def _failed(
    log: CallLog, slots: list[int], calls: list[Mapping[str, Any]], error: Mapping[str, Any]
) -> None:
    """The calls of a step smolagents raised for: those it rejected before running them
    are left out, the others get the error."""
    message = error.get("message")
    text = message if isinstance(message, str) else str(error)
    unrun = _never_ran(error, [_function(c).get("name") for c in calls])
    one_tool_error = len(calls) == 1 and error.get("type") == "AgentToolExecutionError"
    raised = _raised(text, calls[0]) if one_tool_error else None
    for slot, call in zip(slots, calls, strict=True):
        if _function(call).get("name") in unrun or raised == "":
            log.refused(slot)  # smolagents rejected it before running it
        else:
            log.set_result(slot, raised or text, error=True)


def _outputs(text: str, n: int) -> list[str | None]:
    """The output of each of a step's ``n`` calls in its observation text, None for a call
    agentguard refused (see the module docstring)."""
    if n == 1:
        return [None] if is_refusal(text) else [text]
    lines: list[str | None] = list(text.split("\n"))
    heads = [i for i, line in enumerate(lines) if line in REFUSAL_HEADS]
    if not heads:
        return lines if len(lines) == n else [text] * n
    split = _split(lines, heads, n)
    return split if split is not None else [text] * n


def _split(lines: list[str | None], heads: list[int], n: int) -> list[str | None] | None:
    """``n`` outputs from ``lines``: a refusal from each line in ``heads`` on (its head
    and the lines after it), every other output one line; None unless exactly one split
    fits. Between two heads (and after the last) the lines are the refusal's tail, then
    one-line outputs; how many outputs fall in each gap is the only freedom."""
    ends = [*heads[1:], len(lines)]
    gaps = [end - head - 1 for head, end in zip(heads, ends, strict=True)]
    spare = n - len(heads) - heads[0]  # one-line outputs after the first refusal
    if spare < 0 or spare > sum(gaps):
        return None
    if spare == sum(gaps):
        singles = gaps
    elif spare == 0:
        singles = [0] * len(gaps)
    elif sum(1 for g in gaps if g) == 1:
        singles = [spare if g else 0 for g in gaps]
    else:
        return None  # two gaps could share the outputs: which calls ran is not known
    out = lines[: heads[0]]
    for end, single in zip(ends, singles, strict=True):
        out.append(None)
        out.extend(lines[end - single : end])
    return out


UNKNOWN_TOOL = "Unknown tool {name}, should be one of: "
"""How smolagents words a call to a tool the agent lacks (smolagents 1.26, agents.py
1465-1467, ``execute_tool_call``): ``AgentToolExecutionError(f"Unknown tool {tool_name},
should be one of: {', '.join(available_tools)}.")``, raised before anything runs."""


def _never_ran(error: Mapping[str, Any], names: list[Any]) -> set[Any]:
    """The names of the step's calls that smolagents rejected before running them, as far
    as the record tells it exactly; empty when none or when it cannot be told which.

    The record (smolagents 1.26): ``AgentError.dict()`` is ``{"type":
    type(self).__name__, "message": str(self.message)}`` (utils.py 100-101), which
    ``ActionStep.dict()`` stores as the step's ``error`` (memory.py 77), set when the step
    raised (agents.py 597-599); the step's ``tool_calls`` stay empty, since
    ``process_tool_calls`` sets them only after every call returned (agents.py 1436). In
    ``execute_tool_call`` (agents.py 1453-1502): an unknown tool raises
    ``AgentToolExecutionError`` with :data:`UNKNOWN_TOOL`'s wording (1466); arguments that
    fail ``validate_tool_arguments`` raise ``AgentToolCallError(str(e))`` (1478), whose
    message (``Argument order_id is required``) names no tool; only then does the tool
    run, and a tool that raised gives ``AgentToolExecutionError("Error executing tool
    '<name>' with arguments ...\nPlease try again or use another tool")`` (1491-1502).

    So ``AgentToolCallError`` in a one-call step is that call's; in a parallel step it
    could be any call's (docs/traces.md, "What cannot be recovered"). An unknown-tool
    error names the tool, and every call of the step with that name was unknown alike;
    if two of the step's names fit the wording, which one is not known."""
    kind, message = error.get("type"), error.get("message")
    if kind == "AgentToolCallError":
        return set(names) if len(names) == 1 else set()
    if kind == "AgentToolExecutionError" and isinstance(message, str):
        unknown = {
            n
            for n in names
            if isinstance(n, str) and message.startswith(UNKNOWN_TOOL.format(name=n))
        }
        return unknown if len(unknown) == 1 else set()
    return set()


RAISED_HEAD = "Error executing tool '{name}' with arguments {arguments}: "
RAISED_TAIL = "\nPlease try again or use another tool"
"""How smolagents words a tool that raised ``e`` (agents.py 1497-1502): ``RAISED_HEAD``,
``f"{type(e).__name__}: {e}"``, ``RAISED_TAIL``; an exception other than ``ValueError``
or ``TypeError`` out of ``validate_tool_arguments``, before the tool ran, is worded the
same without the tail (1479-1481)."""


def _raised(message: str, call: Mapping[str, Any]) -> str | None:
    """The error of a one-call step as the firewall records a tool's exception
    (``Error: <type>: <message>``, :mod:`agentguard.enforcement.flight`), so the reader's
    trace equals the guard's; ``""`` when the wording says the argument check failed and
    the tool never ran; None when the message is not this call's tool error (kept as it
    is). The head is matched exactly, with the arguments as the record holds them (JSON
    values print as smolagents printed them; a value smolagents took from ``agent.state``
    does not, and its message is kept whole)."""
    fn = _function(call)
    head = RAISED_HEAD.format(name=fn.get("name"), arguments=str(fn.get("arguments")))
    if not message.startswith(head):
        return None
    rest = message[len(head) :]
    if not rest.endswith(RAISED_TAIL):
        return ""
    return "Error: " + rest[: -len(RAISED_TAIL)]


def _answer_refused(error: Any) -> bool:
    """The step's error is agentguard's refusal of its final answer."""
    if not isinstance(error, Mapping) or error.get("type") != "AgentError":
        return False
    message = error.get("message")
    return (
        isinstance(message, str)
        and message.startswith(REFUSED_ANSWER)
        and is_refusal(message[len(REFUSED_ANSWER) :])
    )


def _requested_calls(step: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The calls the model asked for, from its output message (kept when the tool failed)."""
    message = step.get("model_output_message")
    raw = message.get("tool_calls") if isinstance(message, Mapping) else None
    return [c for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []


def _function(call: Mapping[str, Any]) -> Mapping[str, Any]:
    fn = call.get("function", call)
    return fn if isinstance(fn, Mapping) else {}


CALL_KEYS: Final = frozenset({"id", "type", "function"})
FUNCTION_KEYS: Final = frozenset({"name", "arguments", "description"})
"""The keys of a ``ChatMessageToolCall`` and of its ``function``."""


def _add(log: CallLog, call: Mapping[str, Any], where: str) -> int:
    fn = _function(call)
    name, raw = fn.get("name"), fn.get("arguments")
    if isinstance(raw, str) and not raw.strip().startswith("{"):
        args = {"code" if name == CODE_TOOL else "input": raw}
    else:
        read = FUNCTION_KEYS if fn is not call else FUNCTION_KEYS | CALL_KEYS
        args = arguments_of(
            fn, "arguments", read, where, log.source, outer=call, outer_read=CALL_KEYS
        )
    return log.add(name, args, ref=call.get("id"), where=where)
