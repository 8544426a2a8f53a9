"""ToolSandbox worker: runs inside ToolSandbox's own environment, answers JSON lines.

ToolSandbox pins old releases (langchain 0.1, pydantic 2.7, numpy 1.26) that cannot share
a process with agentguard's stack, so :mod:`agentguard.pec.toolsandbox_env` starts this
file with that environment's python (``python -I toolsandbox_worker.py``) and talks to
it over stdin/stdout, one JSON object per line each way. It imports only the standard
library and ``tool_sandbox``: it never sees agentguard.

Every answer is ``{"ok": true, ...}`` or ``{"ok": false, "error": text}``. Requests:

* ``{"op": "scenarios"}`` - every named scenario (ToolSandbox's ``named_scenarios`` with
  the seed its CLI uses), with its categories, whether it needs RapidAPI (the network),
  its milestone and minefield counts;
* ``{"op": "tools", "scenario"}`` - the agent-facing OpenAI schemas, as ToolSandbox
  builds them for an agent (scrambled names and augmentations applied);
* ``{"op": "reset", "scenario"}`` - a copy of the scenario's starting context, its
  system set-up run by the execution environment, exactly as ``Scenario.play`` does;
* ``{"op": "execute", "name", "arguments"}`` - the agent's call, turned into code by
  ToolSandbox's ``openai_tool_call_to_python_code`` and run by its
  ``ExecutionEnvironment``; answers the response, its exception, and whether a
  minefield of the scenario is now reached;
* ``{"op": "ground_truth", "scenario"}`` - the call sequence its milestones give (see
  :func:`ground_truth`);
* ``{"op": "evaluate", "path", "scenario"}`` - ToolSandbox's milestone/minefield
  evaluation of a recorded ``execution_context.json``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import logging
import random
import sys
from typing import Any

_state: dict[str, Any] = {}


def _scenarios() -> dict[str, Any]:
    if "scenarios" not in _state:
        from tool_sandbox.common.tool_discovery import ToolBackend
        from tool_sandbox.scenarios import named_scenarios

        random.seed(42)  # what ToolSandbox's CLI seeds before building them
        with contextlib.redirect_stdout(io.StringIO()):
            _state["scenarios"] = named_scenarios(preferred_tool_backend=ToolBackend.DEFAULT)
    scenarios: dict[str, Any] = _state["scenarios"]
    return scenarios


def _scenario(name: str) -> Any:
    scenario = _scenarios().get(name)
    if scenario is None:
        raise LookupError(f"no ToolSandbox scenario {name!r}")
    return scenario


def _network_tools() -> set[str]:
    import inspect

    import tool_sandbox.tools.rapid_api_search_tools as rapid

    return {
        name
        for name, fn in inspect.getmembers(rapid, inspect.isfunction)
        if getattr(fn, "is_tool", False) and fn.__module__ == rapid.__name__
    }


def _trace_targets(milestone: Any) -> list[dict[str, Any]]:
    """The tool traces a milestone's SANDBOX constraints name, with how to fill them."""
    from tool_sandbox.common.execution_context import DatabaseNamespace

    out = []
    for constraint in milestone.snapshot_constraints:
        frame = constraint.target_dataframe
        if constraint.database_namespace != DatabaseNamespace.SANDBOX or frame is None:
            continue
        if "tool_trace" not in frame.columns:
            continue
        measure = constraint.snapshot_constraint
        keywords = getattr(measure, "keywords", {})
        for text in frame["tool_trace"].to_list():
            if text is None:
                continue
            trace = json.loads(text)
            if isinstance(trace, list):  # alternatives, any of which matches: take the first
                trace = trace[0]
            out.append(
                {
                    "tool_name": trace["tool_name"],
                    "arguments": dict(trace.get("arguments") or {}),
                    "extractor": keywords.get("extractor")
                    if keywords.get("fill_to") == "tool_trace"
                    else None,
                    "reference": constraint.reference_milestone_node_index,
                }
            )
    return out


def _needed_tools(name: str) -> set[str]:
    """Tools the scenario's task needs: its milestones' traces and its base allow list.

    An augmented scenario (``<base>_3_distraction_tools``, ...) needs what its base (the
    longest scenario name it extends that has no distraction tools) allows.
    """
    scenarios = _scenarios()
    bases = _state.setdefault("bases", _base_names())
    base = max((b for b in bases if name == b or name.startswith(b + "_")), key=len, default=name)
    needed = set(scenarios[base].starting_context.tool_allow_list or [])
    for milestone in scenarios[name].evaluation.milestone_matcher.milestones:
        needed |= {t["tool_name"] for t in _trace_targets(milestone)}
    return needed


def _base_names() -> list[str]:
    from tool_sandbox.common.execution_context import ScenarioCategories

    return [
        name
        for name, scenario in _scenarios().items()
        if ScenarioCategories.NO_DISTRACTION_TOOLS in scenario.categories
    ]


def _untraced(milestones: list[Any]) -> list[str]:
    """``"i:NAMESPACE"`` for each milestone that constrains a database but names no call.

    A scenario gives a complete call sequence when this is empty and some milestone
    names a call: every state change its milestones require is then a named call.
    """
    from tool_sandbox.common.evaluation import guardrail_similarity
    from tool_sandbox.common.execution_context import DatabaseNamespace

    out = []
    for index, milestone in enumerate(milestones):
        if _trace_targets(milestone):
            continue
        out += [
            f"{index}:{str(c.database_namespace).upper()}"
            for c in milestone.snapshot_constraints
            if c.database_namespace != DatabaseNamespace.SANDBOX
            and c.snapshot_constraint is not guardrail_similarity
        ]
    return out


def op_scenarios(_request: dict[str, Any]) -> dict[str, Any]:
    network = _network_tools()
    rows = []
    for name, scenario in _scenarios().items():
        evaluation = scenario.evaluation
        rows.append(
            {
                "name": name,
                "categories": [str(c) for c in scenario.categories],
                "network": bool(_needed_tools(name) & network),
                "milestones": len(evaluation.milestone_matcher.milestones),
                "untraced": _untraced(evaluation.milestone_matcher.milestones),
                "minefields": len(evaluation.minefield_matcher.milestones),
            }
        )
    return {"scenarios": rows}


def op_tools(request: dict[str, Any]) -> dict[str, Any]:
    from tool_sandbox.common.execution_context import set_current_context
    from tool_sandbox.common.tool_conversion import convert_to_openai_tools

    context = copy.deepcopy(_scenario(request["scenario"]).starting_context)
    set_current_context(context)
    return {"tools": convert_to_openai_tools(_agent_tools(context))}


def _agent_tools(context: Any) -> dict[str, Any]:
    """The tools an agent role is offered (``BaseRole.get_available_tools`` for an agent)."""
    from tool_sandbox.common.execution_context import RoleType

    return {
        name: tool
        for name, tool in context.get_available_tools(scrambling_allowed=True).items()
        if RoleType.AGENT in getattr(tool, "visible_to", (RoleType.AGENT,))
    }


def op_reset(request: dict[str, Any]) -> dict[str, Any]:
    from tool_sandbox.common.execution_context import (
        DatabaseNamespace,
        RoleType,
        set_current_context,
    )
    from tool_sandbox.roles.execution_environment import ExecutionEnvironment

    scenario = _scenario(request["scenario"])
    context = copy.deepcopy(scenario.starting_context)
    set_current_context(context)
    sandbox = context.get_database(
        DatabaseNamespace.SANDBOX, drop_sandbox_message_index=False, get_all_history_snapshots=True
    )
    env = ExecutionEnvironment()
    for index in range(context.max_sandbox_message_index + 1):  # as Scenario.play does
        if (
            sandbox["recipient"][index] == RoleType.EXECUTION_ENVIRONMENT
            and sandbox["sender"][index] == RoleType.SYSTEM
        ):
            env.respond(ending_index=index)
    _state["current"] = scenario
    _state["calls"] = 0
    return {}


def op_execute(request: dict[str, Any]) -> dict[str, Any]:
    from openai.types.chat.chat_completion_message_tool_call import (
        ChatCompletionMessageToolCall,
        Function,
    )
    from tool_sandbox.common.execution_context import (
        DatabaseNamespace,
        RoleType,
        get_current_context,
    )
    from tool_sandbox.common.message_conversion import Message, openai_tool_call_to_python_code
    from tool_sandbox.roles.base_role import BaseRole
    from tool_sandbox.roles.execution_environment import ExecutionEnvironment

    scenario = _state.get("current")
    if scenario is None:
        raise RuntimeError("execute before reset")
    context = get_current_context()
    name = request["name"]
    arguments = request.get("arguments") or {}
    if request.get("requestor") == "user":  # as ToolSandbox's CLI user writes its calls
        message = Message(
            sender=RoleType.USER,
            recipient=RoleType.EXECUTION_ENVIRONMENT,
            content=f"print(repr({name}(**{arguments!r})))",
        )
    else:
        _state["calls"] += 1
        call_id = f"call_{_state['calls']}"
        tool_call = ChatCompletionMessageToolCall(
            id=call_id,
            type="function",
            function=Function(name=name, arguments=json.dumps(arguments)),
        )
        try:
            code = openai_tool_call_to_python_code(
                tool_call, set(_agent_tools(context)), _execution_name(context, name)
            )
        except KeyError as exc:  # ToolSandbox's agents raise here: the run would stop
            return {"accepted": False, "result": f"KeyError: {exc}", "minefield": False}
        message = Message(
            sender=RoleType.AGENT,
            recipient=RoleType.EXECUTION_ENVIRONMENT,
            content=code,
            openai_tool_call_id=call_id,
            openai_function_name=name,
        )
    BaseRole.add_messages([message])
    ExecutionEnvironment().respond()
    context = get_current_context()
    last = context.get_database(DatabaseNamespace.SANDBOX).to_dicts()[-1]
    exception = last["tool_call_exception"]
    return {
        "accepted": exception is None,
        "result": _result(last),
        "exception": exception,
        "tool_trace": last["tool_trace"],
        "minefield": _minefield_reached(scenario, context),
    }


def _result(row: dict[str, Any]) -> Any:
    """The call's structured result from its tool trace, else the printed text."""
    traces = row.get("tool_trace") or []
    if len(traces) == 1:
        trace = json.loads(traces[0])
        if "result" in trace:
            return trace["result"]
    return row["content"]


def _execution_name(context: Any, name: str) -> str | None:
    try:
        return str(context.get_execution_facing_tool_name(name))
    except KeyError:
        return None


def _minefield_reached(scenario: Any, context: Any) -> bool:
    matcher = scenario.evaluation.minefield_matcher
    if not matcher.milestones:
        return False
    _mapping, similarity = matcher.compute_mapping_and_similarity(execution_context=context)
    return bool(similarity)


def op_ground_truth(request: dict[str, Any]) -> dict[str, Any]:
    """The calls the scenario's milestones name, in a topological order of the milestone DAG.

    Arguments a milestone fills from an earlier milestone's tool trace (ToolSandbox's
    ``tool_trace_dependant_similarity`` with ``fill_to="tool_trace"``) are filled with the
    extractor's first normal form, from the trace that earlier call produced when run here.
    Milestones without a tool trace (database or dialogue constraints) give no call.
    """
    import networkx

    name = request["scenario"]
    scenario = _scenario(name)
    milestones = scenario.evaluation.milestone_matcher.milestones
    dag = scenario.evaluation.milestone_matcher.milestone_dag
    order = list(networkx.lexicographical_topological_sort(dag)) if milestones else []
    op_reset({"scenario": name})
    context = _state_context()
    calls: list[dict[str, Any]] = []
    traces: dict[int, list[dict[str, Any]]] = {}
    silent: list[int] = []
    for index in order:
        targets = _trace_targets(milestones[index])
        if not targets:
            silent.append(index)
            continue
        # constraints of one milestone naming one tool describe one call (one snapshot):
        # e.g. timestamp_diff with timestamp_0 filled from milestone 0, timestamp_1 from 1
        by_tool: dict[str, dict[str, Any]] = {}
        for target in targets:
            arguments = by_tool.setdefault(target["tool_name"], {})
            arguments.update(target["arguments"])
            if target["extractor"] is not None:
                filled = _extract(target, traces)
                if filled is None:
                    return {
                        "calls": calls,
                        "unresolved": f"milestone {index}: nothing to fill from",
                    }
                arguments.update(filled)
        for tool, arguments in by_tool.items():
            name_for_agent = context.get_agent_facing_tool_name(tool)
            answer = op_execute({"name": name_for_agent, "arguments": arguments})
            calls.append({"name": name_for_agent, "arguments": arguments})
            traces.setdefault(index, []).extend(
                json.loads(t) for t in answer.get("tool_trace") or []
            )
    return {"calls": calls, "milestones_without_trace": silent, "order": order}


def _state_context() -> Any:
    from tool_sandbox.common.execution_context import get_current_context

    return get_current_context()


def _extract(target: dict[str, Any], traces: dict[int, list[dict[str, Any]]]) -> Any:
    for trace in traces.get(target["reference"], []):
        try:
            forms = target["extractor"](trace)
        except Exception:  # noqa: BLE001 - ToolSandbox's extractors raise on odd traces
            continue
        if forms:
            return forms[0]
    return None


def op_evaluate(request: dict[str, Any]) -> dict[str, Any]:
    from tool_sandbox.common.execution_context import ExecutionContext

    scenario = _scenario(request["scenario"])
    with open(request["path"], encoding="utf-8") as handle:
        context = ExecutionContext.from_dict(json.load(handle))
    result = scenario.evaluation.evaluate(
        execution_context=context, max_turn_count=scenario.max_messages
    )
    return {
        "milestone_similarity": float(result.milestone_similarity),
        "minefield_similarity": float(result.minefield_similarity),
        "similarity": float(result.similarity),
    }


OPS = {
    "scenarios": op_scenarios,
    "tools": op_tools,
    "reset": op_reset,
    "execute": op_execute,
    "ground_truth": op_ground_truth,
    "evaluate": op_evaluate,
}


def main() -> None:
    logging.disable(logging.CRITICAL)  # ToolSandbox logs; stdout carries answers only
    out = sys.stdout
    sys.stdout = sys.stderr  # a stray print in ToolSandbox must not corrupt the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            with contextlib.redirect_stdout(io.StringIO()):
                answer = {"ok": True, **OPS[request["op"]](request)}
        except Exception as exc:  # noqa: BLE001 - every failure is an answer, never a crash
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
