"""Instance generation (AgentLTL Appendix C.4): (template, difficulty, seed) -> Instance."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from agentguard.bench.errors import BadParameterError, InstanceTooLongError
from agentguard.bench.instance import Instance
from agentguard.bench.synthesis import LayeredConstraint, render_spec, synthesize
from agentguard.bench.templates import TEMPLATE_NAMES, Recorder, get_template, render_prompt
from agentguard.bench.tools import Toolbox

MAX_CALLS = 50
"""Appendix C.3: instances whose gold trace exceeds 50 calls are filtered out."""

PAPER_SEEDS: tuple[int, ...] = (42, 123)
"""The seeds of the paper's benchmark runs (Section 4.2)."""

DIFFICULTIES: tuple[int, ...] = (1, 2, 3, 4, 5)


def spec_name(template: str, difficulty: int, seed: int) -> str:
    return f"{template.replace('+', '_plus_')}_d{difficulty}_s{seed}"


def generate_instance(
    template: str, difficulty: int, seed: int, *, max_calls: int = MAX_CALLS
) -> Instance:
    """The instance for one triplet; raises InstanceTooLongError past ``max_calls``."""
    if isinstance(difficulty, bool) or difficulty not in DIFFICULTIES:
        raise BadParameterError(f"difficulty must be one of 1..5, got {difficulty!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BadParameterError(f"seed must be a non-negative integer, got {seed!r}")
    tpl = get_template(template)
    params = tpl.params(difficulty, seed)
    recorder = Recorder(Toolbox(seed, difficulty, tpl.tools))
    answer = tpl.simulate(recorder, params)
    gold = tuple(recorder.calls)
    if len(gold) > max_calls:
        raise InstanceTooLongError(tpl.name, difficulty, seed, len(gold), max_calls)
    constraints = synthesize(gold, tools=tpl.tools, alternatives=tpl.alternatives)
    counts = Counter(c.name for c in gold)
    return Instance(
        template=tpl.name,
        difficulty=difficulty,
        seed=seed,
        prompt=render_prompt(tpl, params),
        gold_trace=gold,
        expected_answer=answer,
        tools=tpl.tools,
        params=params,
        stats={"calls_per_tool": dict(counts), "num_branch_alternatives": len(tpl.alternatives)},
        spec_text=render_spec(spec_name(tpl.name, difficulty, seed), constraints, tpl.tools),
    )


def instance_constraints(instance: Instance) -> list[LayeredConstraint]:
    """The layered constraints of an instance (recomputed from its gold trace)."""
    if instance.mode == "production":
        alternatives = get_template(instance.template).alternatives
    else:
        alternatives = tuple((a, b) for a, b in instance.params.get("alternatives", ()))
    return synthesize(instance.gold_trace, tools=instance.tools, alternatives=alternatives)


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    """An instance as a record: Table 10's fields plus provenance.

        ``constraints`` is the layered spec as ``.ltl`` text; ``constraint_list`` is the
        same set as records (name, layer, weight, formula). It lives here, not on
    :class:`Instance`, because the constraints are recomputed by the generator.
    """
    return {
        "id": instance.id,
        "template": instance.template,
        "difficulty": instance.difficulty,
        "seed": instance.seed,
        "prompt": instance.prompt,
        "gold_trace": instance.gold_records(),
        "gold_prompt_keys": [list(c.prompt_keys) for c in instance.gold_trace],
        "gold_structure": [
            {
                "after": None if c.after is None else list(c.after),
                "block": None if c.block is None else list(c.block),
            }
            for c in instance.gold_trace
        ],
        "expected_answer": instance.expected_answer,
        "num_tool_calls_expected": instance.num_tool_calls_expected,
        "tools": list(instance.tools),
        "params": dict(instance.params),
        "stats": dict(instance.stats),
        "constraints": instance.spec_text,
        "constraint_list": [
            {"name": c.name, "layer": c.layer, "weight": c.weight, "formula": c.formula}
            for c in instance_constraints(instance)
        ],
        "aliases": {k: dict(v) for k, v in instance.aliases.items()},
        "mode": instance.mode,
    }


def instance_to_json(instance: Instance) -> str:
    """The instance file's text (:meth:`Instance.load` reads it back)."""
    return json.dumps(instance_to_dict(instance), indent=2, sort_keys=False)


def instance_spec_text(instance: Instance, *, severity: str | None = None) -> str:
    """The instance's `.ltl` spec, optionally with one severity on every constraint."""
    return render_spec(
        instance.id.replace("-", "_"),
        instance_constraints(instance),
        instance.tools,
        severity=severity,
        aliases=instance.aliases,
    )


def generate_suite(
    templates: Iterable[str] = TEMPLATE_NAMES,
    difficulties: Iterable[int] = DIFFICULTIES,
    seeds: Sequence[int] = PAPER_SEEDS,
    *,
    max_calls: int = MAX_CALLS,
) -> Iterator[Instance]:
    """Every retained instance of the grid, skipping those the 50-call filter drops."""
    diffs = tuple(difficulties)
    for template in templates:
        for difficulty in diffs:
            for seed in seeds:
                try:
                    yield generate_instance(template, difficulty, seed, max_calls=max_calls)
                except InstanceTooLongError:
                    continue
