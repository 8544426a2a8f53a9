"""The LangChain middleware and the LangGraph ToolNode guard, on real graphs."""

from __future__ import annotations

import asyncio
import functools
import inspect
import types
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from agentguard.enforcement.decision import RunStopped
from agentguard.testing.langchain_models import ScriptedChatModel, call, if_observed
from tests.integrations._adapter_specs import rules
from tests.integrations.adapters import AgentGuardMiddleware, guard_tool_node

RAN: list[str] = []


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order."""
    RAN.append(f"lookup:{order_id}")
    return f'{{"order_id": "{order_id}", "amount": 40}}'


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund."""
    RAN.append(f"refund:{order_id}")
    return "refunded"


@tool
def delete_account() -> str:
    """Delete the account."""
    RAN.append("delete")
    return "deleted"


TOOLS = [lookup_order, issue_refund, delete_account]


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def run_agent(script: list[Any], *, use_async: bool = False, **rule: Any) -> tuple[Any, Any, Any]:
    model = ScriptedChatModel(script)
    middleware = AgentGuardMiddleware(rules(**rule))
    agent = create_agent(model, TOOLS, middleware=[middleware])
    task: InputAgentState = {"messages": [HumanMessage("refund order A1")]}
    out = asyncio.run(agent.ainvoke(task)) if use_async else agent.invoke(task)
    return out, middleware.agentguard, model


def actions(session: Any) -> list[tuple[str, str]]:
    return [(d.action.value, d.tool) for d in session.attempts]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_blocked_call_becomes_an_error_tool_message(use_async: bool) -> None:
    """A blocked call never runs; the model gets ToolMessage(status="error") and corrects."""
    out, session, _ = run_agent(
        [
            call("issue_refund", order_id="A1", amount=5),
            if_observed("BLOCKED", call("lookup_order", order_id="A1"), "give up"),
            "done",
        ],
        use_async=use_async,
        block={"issue_refund"},
    )
    refusal = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert refusal.status == "error"
    assert "blocked" in str(refusal.content).lower()
    assert RAN == ["lookup:A1"]
    assert out["messages"][-1].content == "done"
    assert session.trace.names == ("lookup_order", "final_answer")
    assert session.report is not None


def test_tool_result_json_is_decoded_for_the_trace() -> None:
    """A tool's JSON text result is recorded as data."""
    _, session, _ = run_agent([call("lookup_order", order_id="A1"), "ok"])
    assert session.trace[0].result == {"order_id": "A1", "amount": 40}


def test_refused_final_answer_is_sent_back_to_the_model() -> None:
    """An answer without tool calls is proposed as final_answer; a refusal loops to the model."""
    out, session, model = run_agent(
        ["too early", call("lookup_order", order_id="A1"), "after lookup"],
        answer_after={"lookup_order"},
    )
    assert out["messages"][-1].content == "after lookup"
    assert "look it up first" in model.observations[1]
    assert actions(session)[0] == ("block", "final_answer")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_stop_in_a_batch_ends_the_run_before_anything_runs(use_async: bool) -> None:
    """The model turn's check sees the whole batch; a STOP jumps to the end, no tool run."""
    out, session, model = run_agent(
        [[call("lookup_order", order_id="A1"), call("delete_account")], "never reached"],
        use_async=use_async,
        stop={"delete_account"},
    )
    assert RAN == []
    assert model.position == 1
    assert isinstance(out["messages"][-1], AIMessage)
    assert "stopped" in str(out["messages"][-1].content).lower()
    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(replies) == 2
    assert all(m.status == "error" for m in replies)
    assert session.stopped
    assert session.report is not None


def test_parallel_batch_decisions_are_reused_by_the_tool_wrapper() -> None:
    """Each call of a batch is decided once (at the model turn), not again when it runs."""
    _, session, _ = run_agent(
        [
            [call("lookup_order", order_id="A1"), call("issue_refund", order_id="A1", amount=5)],
            "done",
        ],
        block={"issue_refund"},
    )
    assert actions(session) == [
        ("allow", "lookup_order"),
        ("block", "issue_refund"),
        ("allow", "final_answer"),
    ]
    assert RAN == ["lookup:A1"]


def test_block_and_warn_identical_retry_is_executed() -> None:
    """The identical retry of a BLOCK_AND_WARN call runs."""
    refund = call("issue_refund", order_id="A1", amount=5)
    _, session, _ = run_agent([refund, refund, "ok"], warn={"issue_refund"})
    assert actions(session)[:2] == [("block", "issue_refund"), ("allow_override", "issue_refund")]
    assert RAN == ["refund:A1"]


def _graph(guard: Any, script: list[Any]) -> Any:
    model = ScriptedChatModel(script)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(TOOLS, **guard.tool_node_kwargs()))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile()


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_tool_node_guard_blocks_in_a_hand_built_graph(use_async: bool) -> None:
    """ToolNode(wrap_tool_call=guard) refuses a blocked call and records allowed ones."""
    guard = guard_tool_node(rules(block={"issue_refund"}))
    app = _graph(
        guard,
        [
            call("issue_refund", order_id="A1", amount=5),
            if_observed("BLOCKED", call("lookup_order", order_id="A1"), "no"),
            "done",
        ],
    )
    task = {"messages": [HumanMessage("go")]}
    out = asyncio.run(app.ainvoke(task)) if use_async else app.invoke(task)
    assert out["messages"][-1].content == "done"
    assert guard.propose_answer("done").executes
    report = guard.finish()
    assert report.trace.names == ("lookup_order", "final_answer")
    assert RAN == ["lookup:A1"]


def test_tool_node_guard_stop_raises_out_of_invoke() -> None:
    """In a hand-built graph a STOP raises RunStopped out of graph.invoke."""
    guard = guard_tool_node(rules(stop={"delete_account"}))
    app = _graph(guard, [call("delete_account"), "never"])
    with pytest.raises(RunStopped):
        app.invoke({"messages": [HumanMessage("go")]})
    assert RAN == []
    assert guard.agentguard.report is not None
    assert guard.agentguard.report.stopped


def test_a_stop_found_in_a_result_ends_the_run_with_a_report() -> None:
    """A HARD_STOP on a result raises RunStopped out of invoke; the report is finished."""
    middleware = AgentGuardMiddleware(rules(stop_on_result={"lookup_order"}))

    @tool("lookup_order")
    def suspicious(order_id: str) -> str:
        """Look up an order."""
        return "fraud suspected"

    agent = create_agent(
        ScriptedChatModel([call("lookup_order", order_id="A1"), "never"]),
        [suspicious],
        middleware=[middleware],
    )
    with pytest.raises(RunStopped):
        agent.invoke({"messages": [HumanMessage("go")]})
    report = middleware.agentguard.report
    assert report is not None
    assert report.stopped
    assert report.trace.names == ("lookup_order",)


@pytest.mark.parametrize("approver", [None, lambda request: True])
def test_hooks_carry_the_signature_inspect_would_compute(approver: Any) -> None:
    """Each wrap_* hook's precomputed ``__signature__`` (read by LangSmith's traceable at
    every call), on the class's function and on the hook an instance hands out, is the
    signature inspect finds in the function itself (without ``self`` once bound)."""
    middleware = AgentGuardMiddleware(rules(), approver=approver)
    for name in ("wrap_model_call", "awrap_model_call", "wrap_tool_call", "awrap_tool_call"):
        hook = getattr(type(middleware), name)
        assert "__signature__" in vars(hook), name
        bare = types.FunctionType(hook.__code__, hook.__globals__, hook.__name__)
        bare.__annotations__ = hook.__annotations__
        bare.__defaults__, bare.__kwdefaults__ = hook.__defaults__, hook.__kwdefaults__
        assert inspect.signature(hook) == inspect.signature(bare), name
        bound = getattr(middleware, name)
        assert "__signature__" in vars(bound), name
        assert list(inspect.signature(bound).parameters) == ["request", "handler"], name
        assert inspect.signature(bound) == inspect.signature(types.MethodType(bare, middleware))
        assert inspect.iscoroutinefunction(bound) == inspect.iscoroutinefunction(hook), name


@pytest.mark.parametrize("approver", [None, lambda request: True])
def test_an_instance_hook_is_the_class_function_bound_to_that_instance(approver: Any) -> None:
    """The hook an instance hands out (what create_agent wraps) is the class's own function
    with that instance first; the class attribute stays the plain function (create_agent
    compares it with AgentMiddleware's to know which hooks are overridden)."""
    middleware = AgentGuardMiddleware(rules(), approver=approver)
    for name in ("wrap_model_call", "awrap_model_call", "wrap_tool_call", "awrap_tool_call"):
        hook = getattr(middleware, name)
        assert isinstance(hook, functools.partial), name
        assert hook.func is getattr(type(middleware), name), name
        assert hook.args == (middleware,), name
        assert not hook.keywords, name
        assert inspect.isfunction(getattr(type(middleware), name)), name


def test_the_remembered_validator_follows_a_reassigned_schema() -> None:
    """A tool's argument validator is remembered, and dropped when the tool's args_schema
    is reassigned (as LangChain drops its memoized tool_call_schema)."""
    from pydantic import BaseModel

    from integrations._langchain_arguments import Rejected, tool_arguments

    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return order_id

    class NumberedOrder(BaseModel):
        order_id: int

    assert tool_arguments(lookup, {"order_id": "A1"}) == {"order_id": "A1"}
    assert tool_arguments(lookup, {"order_id": "A1"}) == {"order_id": "A1"}  # remembered
    lookup.args_schema = NumberedOrder
    problem = tool_arguments(lookup, {"order_id": "A1"})
    assert isinstance(problem, Rejected)
    assert problem.problem.startswith("order_id:")
    assert tool_arguments(lookup, {"order_id": "7"}) == {"order_id": 7}


def test_the_validator_is_the_schemas_core_validator() -> None:
    """A pydantic v2 tool schema is checked by its core validator, which rejects exactly
    what model_validate rejects, with the same errors."""
    from pydantic import BaseModel, ValidationError
    from pydantic_core import SchemaValidator

    from integrations._langchain_schemas import _Reader

    @tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        return order_id

    validate = _Reader(refund).call
    assert validate is not None
    assert isinstance(getattr(validate, "__self__", None), SchemaValidator)
    schema = refund.tool_call_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    good = {"order_id": "A1", "amount": "5"}
    assert validate(good) == schema.model_validate(good)
    for bad in ({"order_id": "A1"}, {"order_id": 1, "amount": "five"}):
        with pytest.raises(ValidationError) as fast:
            validate(bad)
        with pytest.raises(ValidationError) as slow:
            schema.model_validate(bad)
        assert fast.value.errors() == slow.value.errors()
