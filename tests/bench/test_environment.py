"""The GRPO environment: the instance's tools executed and recorded, and what the reward reads."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.bench.environment import (
    BenchEnvironment,
    environment_class,
    environment_name,
    gold_messages,
    grpo_environments,
    grpo_rows,
)
from agentguard.bench.errors import BenchError
from agentguard.bench.generate import generate_instance
from agentguard.bench.instance import Instance
from agentguard.bench.reward import compliance_reward, make_grpo_reward
from agentguard.bench.simplified import SIMPLIFIED_TEMPLATES, generate_simplified, random_vocab
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.trace.model import Trace


def _replay_gold(instance: Instance) -> BenchEnvironment:
    """Call the instance's environment exactly as the gold run does."""
    (factory,) = grpo_environments([instance]).values()
    env = factory()
    (row,) = grpo_rows([instance])
    env.reset(**{k: v for k, v in row.items() if k != "environment"})
    for call in instance.gold_trace:
        reply = getattr(env, call.name)(**dict(call.args))
        assert json.loads(reply) == dict(call.result)
    return env


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(TEMPLATE_NAMES), st.integers(1, 3), st.integers(0, 10_000))
def test_gold_run_executes_to_the_gold_records(template: str, difficulty: int, seed: int) -> None:
    """Replaying the gold calls on the environment records the gold trace, results included."""
    instance = generate_instance(template, difficulty, seed)
    assert _replay_gold(instance).records == instance.gold_records()


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(list(SIMPLIFIED_TEMPLATES)), st.integers(0, 5_000), st.integers(0, 5_000))
def test_aliased_tools_run_under_their_shown_names(name: str, seed: int, alias_seed: int) -> None:
    """Under D.4 aliases the methods carry the shown names and the gold run still matches."""
    vocab = random_vocab(alias_seed, SIMPLIFIED_TEMPLATES[name].tools)
    instance = generate_simplified(name, seed, vocab=vocab)
    env = _replay_gold(instance)
    assert env.records == instance.gold_records()
    assert set(env.tool_names) == set(instance.tools)
    assert not any(n.startswith("tool_") for n in env.tool_names)


def test_methods_describe_the_shown_tool() -> None:
    """Each method has the tool's name, typed signature and an Args docstring (TRL's schema)."""
    env = environment_class(("tool_b", "tool_d"))()
    sig = inspect.signature(env.tool_b)
    assert list(sig.parameters) == ["i", "j"]
    assert sig.parameters["i"].annotation is int
    assert inspect.signature(env.tool_d).parameters["numbers"].annotation == list[int]
    assert env.tool_b.__name__ == "tool_b"
    assert "Args:\n    i: first input integer i" in (env.tool_b.__doc__ or "")
    public = [n for n, _ in inspect.getmembers(type(env), inspect.isfunction) if n[0] != "_"]
    assert sorted(public) == ["reset", "tool_b", "tool_d"]


def test_a_refused_call_is_recorded_and_reported() -> None:
    """Wrong argument names reach the model as an error and stay in the executed trace."""
    env = environment_class(("tool_b",))()
    env.reset(seed=1, difficulty=1)
    reply = json.loads(env.tool_b(i=3))
    assert "error" in reply and "tool_b takes arguments ['i', 'j']" in reply["error"]
    assert env.records == [{"tool_name": "tool_b", "arguments": {"i": 3}, "tool_result": reply}]


def test_reset_starts_a_fresh_trace_with_the_rows_tools() -> None:
    """reset() clears the records and builds the stateful tools from the row's seed."""
    env = environment_class(("tool_a_list",))()
    env.reset(seed=5, difficulty=1, prompt="ignored", spec="ignored")
    first = json.loads(env.tool_a_list(seed=5))
    env.reset(seed=5, difficulty=2)
    assert env.records == []
    assert len(json.loads(env.tool_a_list(seed=5))["numbers"]) == len(first["numbers"]) + 1


def test_calls_before_reset_are_refused() -> None:
    """A tool called before reset() names the problem instead of failing obscurely."""
    env = environment_class(("tool_a",))()
    with pytest.raises(BenchError, match=r"tool_a called before reset\(\)"):
        env.tool_a(i=1)


def test_bad_tool_sets_are_refused() -> None:
    """Unknown tools and names that would shadow the environment's own attributes are errors."""
    with pytest.raises(BenchError, match="unknown tool 'fetch'"):
        environment_class(("fetch",))
    with pytest.raises(BenchError, match="clashes"):
        environment_class(("reset",), {"reset": {"tool": "tool_a", "args": {"i": "i"}}})


def test_one_environment_per_shown_tool_set() -> None:
    """Instances with the same shown tools share a factory; rows name theirs."""
    insts = [generate_instance("loop_termination", 1, s) for s in (1, 2)]
    insts.append(generate_instance("fan_out_fan_in", 1, 2))
    envs = grpo_environments(insts)
    names = list(envs)
    assert names == ["tool_a", "tool_a_list+tool_b+tool_c+tool_d"]
    rows = grpo_rows(insts, system="Be brief.")
    assert [r["environment"] for r in rows] == [names[0], names[0], names[1]]
    assert rows[0]["prompt"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": insts[0].prompt},
    ]
    assert json.loads(rows[2]["gold_trace"]) == insts[2].gold_records()
    aliases = {"ping": {"tool": "tool_a", "args": {"n": "i"}}}
    assert environment_name(["ping"], aliases) != environment_name(["ping"])


def test_gold_messages_replay_the_gold_run() -> None:
    """The warm-start conversation is one tool call and its real reply per gold call, then the answer."""
    instance = generate_instance("fan_out_fan_in", 1, 2)
    messages = gold_messages(instance)
    calls = [m["tool_calls"][0]["function"] for m in messages if m.get("tool_calls")]
    replies = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    assert [(c["name"], c["arguments"]) for c in calls] == [
        (c.name, dict(c.args)) for c in instance.gold_trace
    ]
    assert replies == [dict(c.result) for c in instance.gold_trace]
    assert messages[-1] == {"role": "assistant", "content": "ANSWER: 33"}


def _invented_completion(instance: Instance) -> list[dict[str, Any]]:
    """A chat completion whose tool messages hold results the tools never returned."""
    messages = gold_messages(instance)[1:]
    for m in messages:
        if m["role"] == "tool":
            m["content"] = json.dumps({"result": 999})
    return messages


def test_reward_scores_the_executed_trace_not_the_completions_claims() -> None:
    """With environments, the reward reads each one's records, whatever the completion says."""
    instance = generate_instance("loop_termination", 1, 3)
    gold_env = _replay_gold(instance)
    half_env = environment_class(instance.tools)()
    half_env.reset(seed=instance.seed, difficulty=instance.difficulty)
    first = instance.gold_trace[0]
    half_env.tool_a(**dict(first.args))
    completion = _invented_completion(instance)
    row = grpo_rows([instance])[0]
    columns = {k: [row[k]] * 2 for k in ("spec", "gold_trace", "expected_answer")}
    metrics: list[tuple[str, float]] = []
    got = make_grpo_reward()(
        completions=[completion, completion],
        environments=[gold_env, half_env],
        log_metric=lambda name, value: metrics.append((name, value)),
        **columns,
    )
    answer = f"ANSWER: {instance.expected_answer}"
    want = [
        compliance_reward(
            Trace.from_records(env.records),
            answer,
            spec=instance.spec_text,
            gold_trace=instance.gold_records(),
            expected_answer=instance.expected_answer,
        )
        for env in (gold_env, half_env)
    ]
    assert got == [w.reward for w in want]
    assert got[0] == 1.0 and got[1] < 1.0
    assert dict(metrics) == pytest.approx(
        {
            "agentltl_reward/compliance": (want[0].compliance + want[1].compliance) / 2,
            "agentltl_reward/accuracy": 1.0,
            "agentltl_reward/distance": (want[0].distance + want[1].distance) / 2,
        }
    )


def test_a_malformed_call_in_the_completion_does_not_stop_scoring() -> None:
    """A tool call the model wrote unreadably never ran: the executed trace is still scored."""
    instance = generate_instance("loop_termination", 1, 3)
    env = _replay_gold(instance)
    completion = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"type": "function", "function": {"name": "tool_a", "argumentsresult": {}}}
            ],
        },
        {"role": "assistant", "content": f"ANSWER: {instance.expected_answer}"},
    ]
    row = grpo_rows([instance])[0]
    got = make_grpo_reward()(
        completions=[completion],
        environments=[env],
        **{k: [row[k]] for k in ("spec", "gold_trace", "expected_answer")},
    )
    assert got == [1.0]
