"""Executed rollouts for GRPO: the instance's tools as a TRL environment.

TRL's ``GRPOTrainer(environment_factory=...)`` runs multi-turn tool calling itself: it
renders each prompt with the environment's public methods as tools, parses the model's
tool calls, calls the methods and feeds their results back for the next turn. The paper's
agent calls the instance's tools and sees their real results, so the environment here is
the instance's :class:`~agentguard.bench.tools.Toolbox` (its seed, difficulty and, in
simplified mode, its aliases) with every call recorded as an Appendix A.1.2 record. The
reward then scores that executed trace (:func:`~agentguard.bench.reward.make_grpo_reward`
reads ``environments``), never a trace the model wrote down itself.

TRL exposes one method per tool and renders the prompt's tool schema from the method's
name, signature and ``Args:`` docstring, so an environment class holds exactly the tools
an instance shows (``Instance.tools``, or the alias names). Instances with the same shown
tools share a class; :func:`grpo_environments` builds one factory per distinct tool set
and :func:`grpo_rows` tags each row with its ``environment``. This module needs no
machine-learning package: TRL only calls ``reset``, the tool methods and reads
``records``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agentguard.bench.errors import BenchError
from agentguard.bench.instance import Instance
from agentguard.bench.tools import TOOL_INFOS, Aliases, Toolbox


class BenchEnvironment:
    """One rollout's tools: reset per row, every executed call kept in ``records``.

    Subclasses made by :func:`environment_class` add one method per shown tool. A call
    that the tools refuse (unknown argument names, a non-integer) is recorded too, with
    ``{"error": ...}`` as its result, and the model sees the error: the agent made that
    call, so the compliance score must see it. So is a call whose result TRL then drops
    from the conversation because it would overflow ``max_completion_length``: it ran.
    """

    tool_names: tuple[str, ...] = ()
    aliases: Mapping[str, Mapping[str, Any]] = {}

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._box: Toolbox | None = None

    def reset(self, *, seed: int, difficulty: int, **row: Any) -> None:
        """Fresh tools for the row's instance (TRL passes every dataset column)."""
        del row  # the prompt, spec, gold trace and answer are the reward's business
        self.records = []
        self._box = Toolbox(int(seed), int(difficulty), self.tool_names, aliases=self.aliases)

    def _call(self, name: str, args: Mapping[str, Any]) -> str:
        if self._box is None:
            raise BenchError(f"{type(self).__name__}.{name} called before reset()")
        try:
            result: dict[str, Any] = self._box.call(name, args)
        except BenchError as exc:
            result = {"error": str(exc)}
        self.records.append({"tool_name": name, "arguments": dict(args), "tool_result": result})
        return json.dumps(result)


def _tool_method(shown: str, base: str, renames: Mapping[str, str]) -> Callable[..., str]:
    """A method named ``shown`` whose signature and docstring describe the shown arguments."""
    info = TOOL_INFOS[base]
    shown_arg = {v: k for k, v in renames.items()}
    params = [(shown_arg.get(p.name, p.name), p) for p in info.params]

    def method(self: BenchEnvironment, **kwargs: Any) -> str:
        return self._call(shown, kwargs)

    hints: dict[str, Any] = {n: (int if p.type == "integer" else list[int]) for n, p in params}
    method.__name__ = method.__qualname__ = shown
    method.__doc__ = (
        f"{info.description}\n\nArgs:\n"
        + "".join(f"    {n}: {p.description}\n" for n, p in params)
        + f"\nReturns:\n    A JSON object {info.output}.\n"
    )
    method.__annotations__ = {**hints, "return": str}
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hints[n])
            for n, _ in params
        ],
        return_annotation=str,
    )
    return method


def environment_name(tools: Sequence[str], aliases: Aliases | None = None) -> str:
    """The key of a tool set: its shown names plus a digest of the alias mapping, if any."""
    name = "+".join(sorted(tools))
    if aliases:
        digest = hashlib.sha256(json.dumps(aliases, sort_keys=True).encode()).hexdigest()
        name += f"@{digest[:12]}"
    return name


def environment_class(
    tools: Sequence[str], aliases: Aliases | None = None
) -> type[BenchEnvironment]:
    """A :class:`BenchEnvironment` subclass with one method per shown tool name."""
    aliases = dict(aliases or {})
    methods: dict[str, Any] = {}
    for shown in tools:
        alias = aliases.get(shown)
        base = str(alias["tool"]) if alias else shown
        if base not in TOOL_INFOS:
            raise BenchError(f"unknown tool {shown!r}: no alias maps it to one of Table 6's tools")
        if shown in ("reset", "records", "get_reward") or shown.startswith("_"):
            raise BenchError(f"tool name {shown!r} clashes with the environment's own attributes")
        methods[shown] = _tool_method(shown, base, dict(alias["args"]) if alias else {})
    methods["tool_names"] = tuple(tools)
    methods["aliases"] = aliases
    methods["__doc__"] = f"The tools {', '.join(tools)} of one benchmark instance."
    return type("BenchEnvironment_" + str(len(tools)), (BenchEnvironment,), methods)


def grpo_environments(
    instances: Iterable[Instance],
) -> dict[str, Callable[[], BenchEnvironment]]:
    """``environment_factory`` for ``GRPOTrainer``: one class per distinct shown tool set."""
    out: dict[str, Callable[[], BenchEnvironment]] = {}
    for instance in instances:
        name = environment_name(instance.tools, instance.aliases)
        if name not in out:
            out[name] = environment_class(instance.tools, instance.aliases)
    return out


def grpo_row(instance: Instance, *, system: str | None = None) -> dict[str, Any]:
    """One dataset row: a conversational prompt and what the environment and reward read.

    ``gold_trace`` and ``aliases`` are JSON text so that every row has the same Arrow
    type whatever its tools; the reward and the environment decode them.
    """
    prompt = [{"role": "user", "content": instance.prompt}]
    if system is not None:
        prompt.insert(0, {"role": "system", "content": system})
    return {
        "prompt": prompt,
        "environment": environment_name(instance.tools, instance.aliases),
        "seed": instance.seed,
        "difficulty": instance.difficulty,
        "spec": instance.spec_text,
        "gold_trace": json.dumps(instance.gold_records()),
        "expected_answer": instance.expected_answer,
    }


def grpo_rows(instances: Iterable[Instance], *, system: str | None = None) -> list[dict[str, Any]]:
    """Rows for ``datasets.Dataset.from_list``, one per instance."""
    return [grpo_row(i, system=system) for i in instances]


def gold_messages(instance: Instance) -> list[dict[str, Any]]:
    """The gold run as chat messages: one assistant tool call per gold call, its tool reply
    (exactly what the environment returns), then ``ANSWER: n``.

    This is what a model trained to follow the procedure would say; a supervised warm start
    (``benchmarks/train_tiny.py``) trains on it, rendered by the tokenizer's chat template.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": instance.prompt}]
    for call in instance.gold_trace:
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": call.name, "arguments": dict(call.args)},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "name": call.name, "content": json.dumps(dict(call.result))}
        )
    messages.append({"role": "assistant", "content": f"ANSWER: {instance.expected_answer}"})
    return messages
