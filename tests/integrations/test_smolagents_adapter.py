"""The smolagents adapter on real ToolCallingAgent / CodeAgent runs with scripted models."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from smolagents import CodeAgent, ToolCallingAgent, tool

import agentguard.guard
from agentguard import parse_spec
from agentguard.enforcement.decision import Action, RunStopped
from agentguard.guard import AlreadyGuardedError, UnsupportedAgentError, guard
from agentguard.testing.smolagents_models import ScriptedModel, call, if_observed
from tests.integrations._adapter_specs import TOOLS as SPEC_TOOLS
from tests.integrations._adapter_specs import rules, stopped_at
from tests.integrations.adapters import ToolArgumentsError, bind_arguments

RAN: list[str] = []


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def lookup_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    RAN.append(f"lookup:{order_id}")
    return f"order {order_id}: 40 EUR"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def issue_refund(order_id: str, amount: float) -> str:
    """Issue a refund.

    Args:
        order_id: The order id.
        amount: How much to refund.
    """
    RAN.append(f"refund:{order_id}")
    return f"refunded {amount} on {order_id}"


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def delete_account() -> str:
    """Delete the customer's account."""
    RAN.append("delete")
    return "deleted"


TOOLS = [lookup_order, issue_refund, delete_account]


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def tool_agent(script: list[Any], **rule: Any) -> ToolCallingAgent:
    agent = ToolCallingAgent(tools=TOOLS, model=ScriptedModel(script), verbosity_level=-1)
    return guard(agent, rules(**rule))


def code_agent(script: list[Any], imports: tuple[str, ...] = (), **rule: Any) -> CodeAgent:
    agent = CodeAgent(
        tools=TOOLS,
        model=ScriptedModel(script),
        verbosity_level=-1,
        additional_authorized_imports=list(imports),
    )
    return guard(agent, rules(**rule))


def actions(agent: Any) -> list[tuple[str, str]]:
    return [(d.action.value, d.tool) for d in agent.agentguard.attempts]


class TestToolCallingAgent:
    def test_guard_returns_the_same_agent_with_guarded_copies(self) -> None:
        """guard() returns the agent itself; every tool but final_answer is replaced."""
        agent = ToolCallingAgent(tools=TOOLS, model=ScriptedModel([]), verbosity_level=-1)
        final = agent.tools["final_answer"]
        assert guard(agent, rules()) is agent
        assert agent.tools["final_answer"] is final
        assert agent.tools["lookup_order"] is not lookup_order
        assert agent.tools["lookup_order"].inputs == lookup_order.inputs

    def test_blocked_call_never_runs_and_the_model_reads_why(self) -> None:
        """A blocked call does not run; its observation tells the model it was blocked."""
        agent = tool_agent(
            [
                call("issue_refund", order_id="A1", amount=5),
                if_observed("BLOCKED", call("lookup_order", order_id="A1"), "give up"),
                call("final_answer", answer="looked up instead"),
            ],
            block={"issue_refund"},
        )
        assert agent.run("refund A1") == "looked up instead"
        assert RAN == ["lookup:A1"]
        assert "blocked" in agent.model.observations[1].lower()
        assert actions(agent)[:2] == [("block", "issue_refund"), ("allow", "lookup_order")]
        assert agent.agentguard.trace.names == ("lookup_order", "final_answer")

    def test_refused_final_answer_is_sent_back_and_the_run_continues(self) -> None:
        """A final answer the firewall refuses becomes an error; the model answers again later."""
        agent = tool_agent(
            [
                call("final_answer", answer="too early"),
                call("lookup_order", order_id="A1"),
                call("final_answer", answer="now"),
            ],
            answer_after={"lookup_order"},
        )
        assert agent.run("task") == "now"
        assert "look it up first" in agent.model.observations[1]
        assert actions(agent)[0] == ("block", "final_answer")
        assert agent.agentguard.trace.names[-1] == "final_answer"
        assert agent.agentguard.trace[-1].args == {"answer": "now"}

    def test_hard_stop_raises_run_stopped_out_of_run(self) -> None:
        """A STOP raises RunStopped from agent.run, and the report is still finished."""
        agent = tool_agent(
            [call("delete_account"), call("final_answer", answer="x")], stop={"delete_account"}
        )
        with pytest.raises(RunStopped) as caught:
            agent.run("task")
        assert stopped_at(caught.value) == "delete_account"
        assert RAN == []
        assert agent.agentguard.report is not None
        assert agent.agentguard.stopped

    def test_parallel_batch_is_checked_before_any_call_runs(self) -> None:
        """Two calls in one turn are proposed as one batch; a blocked one still gets its reply."""
        agent = tool_agent(
            [
                [
                    call("lookup_order", order_id="A1"),
                    call("issue_refund", order_id="A1", amount=5),
                ],
                call("final_answer", answer="done"),
            ],
            block={"issue_refund"},
        )
        assert agent.run("task") == "done"
        assert RAN == ["lookup:A1"]
        seen = agent.model.observations[1]
        assert "order A1: 40 EUR" in seen
        assert "blocked" in seen.lower()
        assert actions(agent)[:2] == [("allow", "lookup_order"), ("block", "issue_refund")]

    def test_a_state_variable_is_checked_as_the_value_the_tool_gets(self) -> None:
        """An argument naming a key of agent.state is checked, run and traced as its value."""
        spec = parse_spec(
            f"spec no_a1\n{SPEC_TOOLS}\n"
            "constraint not_a1 severity SOFT_BLOCK(9) := G !lookup_order(order_id ~ /A1/)"
        )
        script = [call("lookup_order", order_id="saved"), call("final_answer", answer="done")]
        agent = ToolCallingAgent(tools=TOOLS, model=ScriptedModel(script), verbosity_level=-1)
        guard(agent, spec).state["saved"] = "A1"
        agent.run("task")
        assert RAN == []  # blocked: the substituted value is what was decided on
        assert actions(agent)[0] == ("block", "lookup_order")
        assert agent.agentguard.attempts[0].args == {"order_id": "A1"}
        agent = tool_agent(
            [call("lookup_order", order_id="saved"), call("final_answer", answer="done")]
        )
        agent.state["saved"] = "A1"
        agent.run("task")
        assert RAN == ["lookup:A1"]
        assert agent.agentguard.trace[0].args == {"order_id": "A1"}
        assert actions(agent) == [("allow", "lookup_order"), ("allow", "final_answer")]

    def test_without_state_the_decision_keeps_its_own_copy_of_the_arguments(self) -> None:
        """With no agent.state the model's arguments are checked as they are, into a copy
        the model's message does not share: changing that message later changes no record."""
        agent = tool_agent(
            [call("lookup_order", order_id="A1"), call("final_answer", answer="done")]
        )
        agent.run("task")
        step = agent.memory.steps[1]
        proposed = step.model_output_message.tool_calls[0].function.arguments
        proposed["order_id"] = "changed"
        assert agent.agentguard.attempts[0].args == {"order_id": "A1"}
        assert agent.agentguard.trace[0].args == {"order_id": "A1"}
        assert actions(agent) == [("allow", "lookup_order"), ("allow", "final_answer")]

    def test_stop_in_a_parallel_batch_runs_none_of_it(self) -> None:
        """A STOP anywhere in a batch stops the run before its siblings execute."""
        agent = tool_agent(
            [[call("lookup_order", order_id="A1"), call("delete_account")]], stop={"delete_account"}
        )
        with pytest.raises(RunStopped):
            agent.run("task")
        assert RAN == []

    def test_block_and_warn_identical_retry_runs(self) -> None:
        """An identical retry after a BLOCK_AND_WARN is an override and executes."""
        refund = call("issue_refund", order_id="A1", amount=5)
        agent = tool_agent(
            [refund, refund, call("final_answer", answer="ok")], warn={"issue_refund"}
        )
        agent.run("task")
        assert actions(agent)[:2] == [("block", "issue_refund"), ("allow_override", "issue_refund")]
        assert RAN == ["refund:A1"]

    def test_each_run_gets_a_fresh_firewall(self) -> None:
        """Two runs produce two reports; the second run's attempts do not include the first's."""
        agent = tool_agent(
            [
                call("lookup_order", order_id="A1"),
                call("final_answer", answer="one"),
                call("final_answer", answer="two"),
            ]
        )
        agent.run("first")
        first = agent.agentguard.report
        agent.run("second")
        assert agent.agentguard.report is not first
        assert actions(agent) == [("allow", "final_answer")]

    def test_stream_run_finishes_the_report_when_exhausted(self) -> None:
        """run(stream=True) yields the steps and finishes the report at the end."""
        agent = tool_agent([call("final_answer", answer="x")])
        steps = list(agent.run("task", stream=True))
        assert steps
        assert agent.agentguard.report is not None
        assert not agent.agentguard.active

    def test_managed_agent_calls_belong_to_the_managers_run(self) -> None:
        """A managed agent's tool calls go through the manager's guard and trace; the
        managed agent does not carry the manager's session (model code can reach it)."""
        helper = ToolCallingAgent(
            tools=[lookup_order, issue_refund],
            model=ScriptedModel(
                [
                    call("issue_refund", order_id="B2", amount=1),
                    call("lookup_order", order_id="B2"),
                    call("final_answer", answer="B2 is 40 EUR"),
                ]
            ),
            name="clerk",
            description="Looks orders up.",
            verbosity_level=-1,
        )
        boss = ToolCallingAgent(
            tools=[],
            managed_agents=[helper],
            model=ScriptedModel(
                [call("clerk", task="look up B2"), call("final_answer", answer="done")]
            ),
            verbosity_level=-1,
        )
        guard(boss, rules(block={"issue_refund"}))
        assert boss.run("task") == "done"
        assert not hasattr(helper, "agentguard")
        assert RAN == ["lookup:B2"]
        assert boss.agentguard.trace.names == ("lookup_order", "final_answer")


class TestCodeAgent:
    def test_blocked_call_raises_at_that_line_and_the_model_sees_it(self) -> None:
        """In code, a blocked call raises; the lines after it do not run."""
        agent = code_agent(
            [
                'issue_refund("A1", 5)\nlookup_order("never")',
                if_observed("ToolCallBlocked", 'print(lookup_order("A1"))', "final_answer('no')"),
                'final_answer("done")',
            ],
            block={"issue_refund"},
        )
        assert agent.run("task") == "done"
        assert RAN == ["lookup:A1"]
        assert "blocked" in agent.model.observations[1].lower()

    def test_positional_arguments_are_named_after_tool_inputs(self) -> None:
        """issue_refund("A1", 5) is proposed as {order_id: "A1", amount: 5}."""
        agent = code_agent(['issue_refund("A1", 5)\nfinal_answer("ok")'])
        agent.run("task")
        assert agent.agentguard.attempts[0].args == {"order_id": "A1", "amount": 5}

    def test_model_code_cannot_swallow_a_hard_stop(self) -> None:
        """`except Exception` and `except BaseException` in model code do not catch RunStopped."""
        agent = code_agent(
            [
                "try:\n    delete_account()\nexcept Exception:\n    print('caught')\n"
                "try:\n    delete_account()\nexcept BaseException:\n    print('caught')\n"
                "final_answer('x')"
            ],
            stop={"delete_account"},
        )
        with pytest.raises(RunStopped):
            agent.run("task")
        assert RAN == []

    def test_final_answer_in_code_is_gated(self) -> None:
        """final_answer() inside code goes through final_answer_checks."""
        agent = code_agent(
            ['final_answer("early")', 'lookup_order("A1")', 'final_answer("late")'],
            answer_after={"lookup_order"},
        )
        assert agent.run("task") == "late"
        assert actions(agent)[0] == ("block", "final_answer")


BYPASSES = {
    "alias": "f = issue_refund\nf('A1', 5)",
    "alias_in_dict": "d = {'x': issue_refund}\nd['x'](order_id='A1', amount=5)",
    "forward": "issue_refund.forward('A1', 5)",
    "getattr": "getattr(issue_refund, 'forward')('A1', 5)",
    "map": "list(map(issue_refund, ['A1'], [5]))",
    "lambda": "(lambda g: g('A1', 5))(issue_refund)",
    "swallow": "try:\n    issue_refund('A1', 5)\nexcept Exception:\n    pass",
    "dict_arg": "issue_refund({'order_id': 'A1', 'amount': 5})",
    "thread": (
        "import threading\nout = []\ndef work():\n    try:\n        issue_refund('A1', 5)\n"
        "    except Exception as e:\n        out.append(str(e))\n"
        "t = threading.Thread(target=work)\nt.start()\nt.join()\nprint(out)"
    ),
    "pool": (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "with ThreadPoolExecutor(2) as ex:\n    list(ex.map(issue_refund, ['A1', 'A2'], [5, 6]))"
    ),
    "new_instance": "type(issue_refund)()('A1', 5)",
    "class_forward": "type(issue_refund).forward(issue_refund, 'A1', 5)",
    "bad_arguments_then_retry": (
        "try:\n    issue_refund('A1', 5, 6)\nexcept Exception:\n    pass\nissue_refund('A1', 5)"
    ),
    "after_a_raising_tool": (
        "try:\n    lookup_order(None)\nexcept Exception:\n    pass\nissue_refund('A1', 5)"
    ),
}


@pytest.mark.parametrize("code", BYPASSES.values(), ids=list(BYPASSES))
def test_codeagent_bypass_attempts_never_reach_the_tool(code: str) -> None:
    """No way of calling a guarded tool from model code runs the original unchecked."""
    agent = code_agent(
        [code, 'final_answer("done")'],
        imports=("threading", "concurrent.futures"),
        block={"issue_refund"},
    )
    agent.run("task")
    assert not any(r.startswith("refund") for r in RAN)


class TestBindArguments:
    def test_positional_then_keyword(self) -> None:
        """Positional arguments take input names in declaration order."""
        assert bind_arguments("t", ["a", "b"], ("x",), {"b": 2}) == {
            "a": "x",
            "b": 2,
        }

    def test_too_many_positional_arguments(self) -> None:
        """More positional arguments than inputs is a clear error."""
        with pytest.raises(ToolArgumentsError):
            bind_arguments("t", ["a"], (1, 2), {})

    def test_argument_given_twice(self) -> None:
        """The same input by position and by keyword is an error."""
        with pytest.raises(ToolArgumentsError):
            bind_arguments("t", ["a"], (1,), {"a": 2})


class TestDispatch:
    def test_unknown_agent_type_lists_what_is_supported(self) -> None:
        """guard() on an unsupported object names the supported frameworks."""
        with pytest.raises(UnsupportedAgentError, match="ToolCallingAgent"):
            guard(object(), "x.ltl")

    def test_langchain_objects_point_to_the_middleware(self) -> None:
        """guard() on a LangChain object explains the middleware route."""
        from langchain_core.tools import tool as lc_tool

        @lc_tool
        def noop() -> str:
            """Nothing."""
            return ""

        with pytest.raises(UnsupportedAgentError, match="AgentGuardMiddleware"):
            guard(noop, "x.ltl")

    def test_guarding_twice_is_refused(self) -> None:
        """A second guard() on the same agent raises instead of checking each call twice."""
        agent = tool_agent([])
        with pytest.raises(AlreadyGuardedError):
            guard(agent, "x.ltl")

    def test_guard_is_exported_at_the_top_level(self) -> None:
        """The dispatcher is agentguard.guard, the same function as in its module."""
        assert agentguard.guard is guard
        assert Action.ALLOW.executes


def test_tools_added_after_guard_are_guarded_at_the_next_run() -> None:
    """A tool put into agent.tools after guard() is wrapped when run() starts."""
    agent = ToolCallingAgent(tools=[lookup_order], model=ScriptedModel([]), verbosity_level=-1)
    guard(agent, rules(block={"issue_refund"}))
    agent.tools["issue_refund"] = issue_refund
    agent.model.script = [
        call("issue_refund", order_id="A1", amount=5),
        call("final_answer", answer="ok"),
    ]
    agent.run("task")
    assert RAN == []
    assert actions(agent)[0] == ("block", "issue_refund")


def test_answer_forced_at_max_steps_is_checked_too() -> None:
    """At max steps smolagents skips final_answer_checks; the guard checks that answer."""
    from smolagents.models import ChatMessage, MessageRole

    class Forced(ScriptedModel):
        def generate(
            self,
            messages: list[Any],
            stop_sequences: list[str] | None = None,
            response_format: dict[str, str] | None = None,
            tools_to_call_from: list[Any] | None = None,
            **kwargs: Any,
        ) -> ChatMessage:
            if self.position >= len(self.script):  # the max-steps summary call
                return ChatMessage(role=MessageRole.ASSISTANT, content="made up")
            return super().generate(
                messages, stop_sequences, response_format, tools_to_call_from, **kwargs
            )

    agent = ToolCallingAgent(
        tools=TOOLS,
        model=Forced([call("issue_refund", order_id="A", amount=1)]),
        verbosity_level=-1,
        max_steps=1,
    )
    guard(agent, rules(answer_after={"lookup_order"}))
    with pytest.raises(RunStopped) as caught:
        agent.run("task")
    assert stopped_at(caught.value) == "final_answer"
    assert actions(agent)[-1] == ("block", "final_answer")


def test_answer_at_max_steps_is_recorded_when_allowed() -> None:
    """An allowed max-steps answer is returned and ends the trace."""
    from smolagents.models import ChatMessage, MessageRole

    class Forced(ScriptedModel):
        def generate(
            self,
            messages: list[Any],
            stop_sequences: list[str] | None = None,
            response_format: dict[str, str] | None = None,
            tools_to_call_from: list[Any] | None = None,
            **kwargs: Any,
        ) -> ChatMessage:
            if self.position >= len(self.script):
                return ChatMessage(role=MessageRole.ASSISTANT, content="summary")
            return super().generate(
                messages, stop_sequences, response_format, tools_to_call_from, **kwargs
            )

    agent = ToolCallingAgent(
        tools=TOOLS,
        model=Forced([call("lookup_order", order_id="A")]),
        verbosity_level=-1,
        max_steps=1,
    )
    guard(agent, rules())
    assert agent.run("task") == "summary"
    assert agent.agentguard.trace.names == ("lookup_order", "final_answer")


@pytest.mark.parametrize("kind", ["tool_calling", "code"])
def test_a_stop_found_in_a_result_raises_run_stopped(kind: str) -> None:
    """A HARD_STOP that only the result reveals stops the run after that call."""

    @tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
    def lookup_order(order_id: str) -> str:
        """Look up an order.

        Args:
            order_id: The order id.
        """
        RAN.append("lookup")
        return "fraud suspected"

    spec = rules(stop_on_result={"lookup_order"})
    if kind == "code":
        script: list[Any] = ['lookup_order("A1")\nissue_refund("A1", 5)']
        agent: Any = CodeAgent(tools=[lookup_order, issue_refund], model=ScriptedModel(script))
    else:
        script = [call("lookup_order", order_id="A1"), call("final_answer", answer="x")]
        agent = ToolCallingAgent(tools=[lookup_order, issue_refund], model=ScriptedModel(script))
    agent.logger.level = -1
    guard(agent, spec)
    with pytest.raises(RunStopped):
        agent.run("task")
    assert RAN == ["lookup"]
    assert agent.agentguard.report.stopped


def test_a_tool_is_set_up_on_first_use_and_its_own_call_kept() -> None:
    """The guarded copy runs a tool as smolagents would: a Tool subclass not yet set up
    gets setup() once before its first call, and a class with its own __call__ keeps it."""
    from smolagents import Tool

    class Lazy(Tool):
        name = "lookup_order"
        description = "Look an order up, loading the index first."
        inputs: ClassVar[dict[str, Any]] = {
            "order_id": {"type": "string", "description": "The order number."}
        }
        output_type = "string"

        def __init__(self) -> None:
            super().__init__()
            self.setups = 0

        def setup(self) -> None:
            self.setups += 1
            self.is_initialized = True

        def forward(self, order_id: str) -> str:
            return f"found {order_id}"

    class Counted(Tool):
        name = "verify_identity"
        description = "Verify a customer, counting the calls."
        inputs: ClassVar[dict[str, Any]] = {
            "customer_id": {"type": "string", "description": "The customer."}
        }
        output_type = "string"
        skip_forward_signature_validation = True

        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return super().__call__(*args, **kwargs)

        def forward(self, customer_id: str) -> str:
            return f"verified {customer_id}"

    lazy, counted = Lazy(), Counted()
    agent = ToolCallingAgent(
        tools=[lazy, counted],
        model=ScriptedModel(
            [
                call("lookup_order", order_id="A1"),
                call("lookup_order", order_id="A2"),
                call("verify_identity", customer_id="C3"),
                call("final_answer", answer="ok"),
            ]
        ),
        verbosity_level=-1,
    )
    guard(agent, rules())
    agent.run("task")
    assert lazy.setups == 1
    assert counted.calls == 1
    trace = agent.agentguard.trace
    assert trace.names == ("lookup_order", "lookup_order", "verify_identity", "final_answer")
    assert [c.result for c in trace][:3] == ["found A1", "found A2", "verified C3"]
