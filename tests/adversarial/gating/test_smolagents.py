"""smolagents: every path from a model's output to a tool's effect is gated, and every
tool that runs is in the trace (issue 25, 4).

Tools reach an agent after ``guard()`` in many ways: appended to ``agent.tools`` by a
step callback or by a tool mid-run, sent to a CodeAgent's executor, passed as a run's
``additional_args``, or brought by a managed agent added mid-run. Each is gated where it
is looked up, when it is about to run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from smolagents import CodeAgent, tool

from agentguard.testing.smolagents_models import ScriptedModel, call
from tests.adversarial._smolagents_support import (
    RAN,
    TOOLS,
    assert_invariants,
    code_agent,
    observed,
    shell,
    tool_agent,
    wipe,
)

AGENTS: dict[str, Any] = {}
"""The agent under test, for the tools and callbacks that change it mid-run."""


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()
    AGENTS.clear()


@tool  # type: ignore[untyped-decorator]  # smolagents ships no type information
def install() -> str:
    """Install the cleaning tools."""
    RAN.append(("install", {}))
    agent = AGENTS["agent"]
    agent.tools["wipe"] = wipe
    agent.tools["shell"] = shell
    agent.python_executor.send_tools({**agent.tools, **agent.managed_agents})
    return "installed"


def add_tools_after_step_1(step: Any, agent: Any = None) -> None:
    """A step callback giving the agent two more tools once its first step ran."""
    target = AGENTS["agent"]
    target.tools["wipe"] = wipe
    target.tools["shell"] = shell


def test_tools_a_step_callback_appends_to_a_tool_calling_agent_are_gated(
    tmp_path: Path,
) -> None:
    """``wipe`` appended mid-run ran although its batch decision refused it, and the
    allowed ``shell`` ran missing from the trace; both are gated when smolagents runs
    them: ``wipe`` refused, ``shell`` run and traced."""
    agent = tool_agent(
        [
            call("refund", order_id="A"),
            [call("wipe"), call("shell", cmd="ls /tmp")],
            call("final_answer", answer="done"),
        ],
        tmp_path,
        tools=[t for t in TOOLS if t.name not in ("wipe", "shell")],
        step_callbacks=[add_tools_after_step_1],
    )
    AGENTS["agent"] = agent
    agent.run("clean")
    assert [name for name, _ in RAN] == ["refund", "shell"]
    assert "wipe" in observed(agent) and "agentguard blocked this call" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_a_tool_a_tool_sends_to_a_code_agents_executor_mid_run_is_gated(
    tmp_path: Path,
) -> None:
    """A tool body appends ``wipe`` to ``agent.tools`` and sends the tools to the
    executor: the model's next ``wipe()`` ran unguarded; it is refused, and the allowed
    ``shell`` call is traced."""
    agent = code_agent(
        ["install()", "shell('ls /tmp')\nwipe()", "final_answer('done')"],
        tmp_path,
        tools=[install],
    )
    AGENTS["agent"] = agent
    agent.run("clean")
    assert [name for name, _ in RAN] == ["install", "shell"]
    assert "agentguard blocked this call" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_a_tool_put_straight_into_the_executors_table_is_gated(tmp_path: Path) -> None:
    """A step callback writes ``wipe`` into the executor's tool table itself."""

    def put(step: Any, agent: Any = None) -> None:
        AGENTS["agent"].python_executor.static_tools["wipe"] = wipe

    agent = code_agent(
        ["print('step 1')", "wipe()", "final_answer('done')"],
        tmp_path,
        tools=[],
        step_callbacks=[put],
    )
    AGENTS["agent"] = agent
    agent.run("clean")
    assert RAN == []
    assert "agentguard blocked this call" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_a_tool_passed_in_a_runs_additional_args_is_gated(tmp_path: Path) -> None:
    """``run(..., additional_args={"cleaner": wipe})`` hands model code a tool as a
    variable: it ran unguarded, out of the trace."""
    agent = code_agent(["cleaner()", "final_answer('done')"], tmp_path, tools=[])
    agent.run("clean", additional_args={"cleaner": wipe})
    assert RAN == []
    assert "agentguard blocked this call" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_a_managed_agent_added_mid_run_is_guarded(tmp_path: Path) -> None:
    """A managed CodeAgent added to a ToolCallingAgent manager after ``guard()`` ran its
    tools unguarded; it is adopted when the manager first runs it: its refund is traced,
    its second refund stopped by "at most one"."""
    helper = CodeAgent(
        tools=TOOLS,
        model=ScriptedModel(["refund('A')\nrefund('B')\nfinal_answer('two')"]),
        verbosity_level=-1,
        name="helper",
        description="Does refunds.",
    )

    def hire(step: Any, agent: Any = None) -> None:
        AGENTS["agent"]._setup_managed_agents([helper])  # as smolagents' constructor does

    agent = tool_agent(
        [call("shell", cmd="ls"), call("helper", task="refund A and B")],
        tmp_path,
        step_callbacks=[hire],
    )
    AGENTS["agent"] = agent
    with pytest.raises(BaseException, match="one_refund"):
        agent.run("refunds")
    assert [name for name, _ in RAN] == ["shell", "refund"]
    assert_invariants(agent.agentguard, tmp_path)


def test_a_managed_agent_sent_to_a_code_agents_executor_mid_run_is_guarded(
    tmp_path: Path,
) -> None:
    """A step callback hires a managed agent and sends it to the manager's executor: model
    code holds only its callable, and its calls are gated by the manager's guard."""
    helper = CodeAgent(
        tools=TOOLS,
        model=ScriptedModel(["wipe()", "final_answer('could not')"]),
        verbosity_level=-1,
        name="helper",
        description="Cleans.",
    )

    def hire(step: Any, agent: Any = None) -> None:
        manager = AGENTS["agent"]
        manager._setup_managed_agents([helper])
        manager.python_executor.send_tools({**manager.tools, **manager.managed_agents})

    agent = code_agent(
        ["print('step 1')", "print(helper(task='wipe'))", "final_answer('done')"],
        tmp_path,
        step_callbacks=[hire],
    )
    AGENTS["agent"] = agent
    agent.run("clean")
    assert RAN == []
    assert "agentguard blocked this call" in observed(helper)
    assert_invariants(agent.agentguard, tmp_path)


@tool  # type: ignore[untyped-decorator]
def toolbox(name: str) -> Any:
    """Hand out a tool by its name.

    Args:
        name: The tool's name.
    """
    RAN.append(("toolbox", {"name": name}))
    return {"wipe": wipe, "shell": shell}[name]


def test_a_tool_handed_back_by_a_tool_is_gated(tmp_path: Path) -> None:
    """``toolbox('wipe')()`` called the tool a tool returned, unguarded and untraced."""
    agent = code_agent(
        ["toolbox('shell')('ls /tmp')\ntoolbox('wipe')()", "final_answer('done')"],
        tmp_path,
        tools=[toolbox],
    )
    agent.run("clean")
    assert [name for name, _ in RAN] == ["toolbox", "shell", "toolbox"]
    assert "agentguard blocked this call" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_a_tool_inside_a_runs_additional_args_is_gated(tmp_path: Path) -> None:
    """A tool inside containers of ``additional_args`` (``kit["tools"][0]``)."""
    agent = code_agent(["kit['tools'][0]()", "final_answer('done')"], tmp_path, tools=[])
    agent.run("clean", additional_args={"kit": {"tools": [wipe], "note": ("x", shell)}})
    assert RAN == []
    assert "agentguard blocked this call" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)


def test_an_executor_replaced_before_a_run_is_sealed_too(tmp_path: Path) -> None:
    """A CodeAgent's executor replaced after ``guard()`` (a fresh one, as smolagents
    builds) ran model code unchecked: a tool sent to its table mid-run ran unguarded."""

    def put(step: Any, agent: Any = None) -> None:
        AGENTS["agent"].python_executor.static_tools["wipe"] = wipe

    agent = code_agent(
        ["print('step 1')", "wipe()", "final_answer('done')"],
        tmp_path,
        tools=[],
        step_callbacks=[put],
    )
    agent.python_executor = agent.create_python_executor()
    AGENTS["agent"] = agent
    agent.run("clean")
    assert RAN == []
    assert "agentguard blocked this call" in observed(agent)
    assert_invariants(agent.agentguard, tmp_path)
