"""Simplified-mode instances, augmentation and the balanced training set (Appendix D.3).

``generate_simplified(template, seed, variant=..., augmentation=..., vocab=...)`` builds
one instance. Augmentation prepends (``prefix``) and/or appends (``suffix``) one
independent ``tool_a`` call whose result is an addend of the final answer; traces
with 7 or more core calls only take ``none`` or ``prefix`` (8-call hard cap).
Difficulty is derived post hoc from the call count (C.5).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

from agentguard.bench.errors import BadParameterError, InstanceTooLongError, UnknownTemplateError
from agentguard.bench.instance import Instance
from agentguard.bench.simplified.templates import SIMPLIFIED_TEMPLATES, TRAINING_TEMPLATES
from agentguard.bench.simplified.vocab import IDENTITY, Vocab
from agentguard.bench.simplified.writing import ANSWER_FORMAT, Say, VocabRecorder, params_for
from agentguard.bench.synthesis import render_spec, synthesize
from agentguard.bench.tools import Toolbox

Augmentation = Literal["none", "prefix", "suffix", "both"]
AUGMENTATIONS: tuple[Augmentation, ...] = ("none", "prefix", "suffix", "both")
HARD_CAP = 8


def difficulty_from_calls(calls: int) -> int:
    """C.5: <= 5 -> D1, <= 15 -> D2, <= 30 -> D3, <= 60 -> D4, else D5."""
    for d, limit in ((1, 5), (2, 15), (3, 30), (4, 60)):
        if calls <= limit:
            return d
    return 5


def _extra_seeds(seed: int) -> tuple[int, int]:
    rng = random.Random(f"augment/{seed}")
    return rng.randint(1000, 9999), rng.randint(10000, 19999)


def generate_simplified(
    template: str,
    seed: int,
    *,
    variant: str = "a",
    augmentation: Augmentation = "none",
    vocab: Vocab = IDENTITY,
) -> Instance:
    """One simplified-mode instance; raises on an augmentation past the 8-call cap."""
    if template not in SIMPLIFIED_TEMPLATES:
        raise UnknownTemplateError(
            f"unknown simplified template {template!r}; choose from "
            f"{', '.join(SIMPLIFIED_TEMPLATES)}"
        )
    tpl = SIMPLIFIED_TEMPLATES[template]
    if variant not in (("a", "c") if tpl.transform else ("a",)):
        raise BadParameterError(f"{template} has no transform variant {variant!r}")
    if augmentation not in AUGMENTATIONS:
        raise BadParameterError(f"unknown augmentation {augmentation!r}")
    params = params_for(seed, variant)
    say = Say(vocab)
    pre, suf = _extra_seeds(seed)
    rec = VocabRecorder(Toolbox(seed, 1), vocab)
    extra = 0
    if augmentation in ("prefix", "both"):
        extra += rec.value("tool_a", ("i",), i=pre)
    core_start = len(rec.calls)
    answer = tpl.simulate(rec, params)
    core_calls = len(rec.calls) - core_start
    if augmentation in ("suffix", "both"):
        if core_calls >= 7:
            raise BadParameterError(
                f"{template} has {core_calls} core calls: only 'none' or 'prefix' fit the cap"
            )
        extra += rec.value("tool_a", ("i",), i=suf)
    if len(rec.calls) > HARD_CAP:
        raise InstanceTooLongError(template, 1, seed, len(rec.calls), HARD_CAP)
    prompt = tpl.prompt(say, params)
    if augmentation in ("prefix", "both"):
        prompt = (
            f"{say.call('tool_a', i=pre).capitalize()} first — its result is an addend "
            "you will include in your final answer. " + prompt
        )
    if augmentation in ("suffix", "both"):
        prompt += (
            f" After that, {say.call('tool_a', i=suf)} — its result is an addend you "
            "will include in your final answer."
        )
    if augmentation != "none":
        prompt += " The final answer is the sum of that result and the addends."
    prompt += ANSWER_FORMAT
    gold = tuple(rec.calls)
    tools = tuple(vocab.t(t) for t in tpl.tools)
    alternatives = tuple((vocab.t(a), vocab.t(b)) for a, b in tpl.alternatives)
    renamed = vocab != IDENTITY
    tag = f"{variant}-{augmentation}" + ("-alias" if renamed else "")
    aliases = vocab.to_aliases()
    constraints = synthesize(gold, tools=tools, alternatives=alternatives)
    difficulty = difficulty_from_calls(len(gold))
    name = f"{template}_d{difficulty}_s{seed}_{tag.replace('-', '_')}"
    return Instance(
        template=template,
        difficulty=difficulty,
        seed=seed,
        prompt=prompt,
        gold_trace=gold,
        expected_answer=answer + extra,
        tools=tools,
        params={
            **params,
            "augmentation": augmentation,
            "tag": tag,
            "alternatives": [list(p) for p in alternatives],
        },
        stats={"core_calls": core_calls},
        spec_text=render_spec(name, constraints, tools, aliases=aliases),
        aliases=aliases,
        mode="simplified",
    )


def training_pool(cores_per_slot: int = 30, *, first_seed: int = 0) -> Iterator[Instance]:
    """D.3's pool: every (template, transform variant) slot x ``cores_per_slot`` cores,
    each tagged with an augmentation in round-robin order (none/prefix only at >= 7 calls)."""
    for name in TRAINING_TEMPLATES:
        tpl = SIMPLIFIED_TEMPLATES[name]
        for variant in ("a", "c") if tpl.transform else ("a",):
            for k in range(cores_per_slot):
                seed = first_seed + k
                core = generate_simplified(name, seed, variant=variant)
                cycle: Sequence[Augmentation] = (
                    AUGMENTATIONS if core.num_tool_calls_expected < 7 else ("none", "prefix")
                )
                yield generate_simplified(
                    name, seed, variant=variant, augmentation=cycle[k % len(cycle)]
                )


def training_set(
    size: int = 300,
    *,
    min_per_pattern: int = 8,
    max_per_pattern: int = 24,
    cores_per_slot: int = 30,
) -> list[Instance]:
    """Balanced subsample: equal quotas per template within [min, max] (largest remainder),
    and within a template round-robin over its (variant, augmentation) buckets."""
    buckets: dict[str, dict[str, list[Instance]]] = defaultdict(lambda: defaultdict(list))
    for inst in training_pool(cores_per_slot):
        buckets[inst.template][str(inst.params["tag"])].append(inst)
    names = list(buckets)
    base, rest = divmod(size, len(names))
    quotas = {n: base + (1 if k < rest else 0) for k, n in enumerate(names)}
    quotas = {n: max(min_per_pattern, min(max_per_pattern, q)) for n, q in quotas.items()}
    out: list[Instance] = []
    for name in names:
        queues = [list(v) for _, v in sorted(buckets[name].items())]
        taken = 0
        while taken < quotas[name] and any(queues):
            for q in queues:
                if q and taken < quotas[name]:
                    out.append(q.pop(0))
                    taken += 1
    return out


def round_robin(instances: Iterable[Instance]) -> list[Instance]:
    """E.3's round-robin-no-repeat order: one instance of each template in turn.

    The paper trains with dataset shuffling disabled and "without repeating the same
    pattern consecutively"; :func:`training_set` groups its examples by template, so a
    trainer fed it unshuffled would see twenty of one pattern in a row. Within a template
    the given order is kept; once only one template has instances left, they follow one
    another (no order can avoid it).
    """
    queues: dict[str, list[Instance]] = defaultdict(list)
    for inst in instances:
        queues[inst.template].append(inst)
    out: list[Instance] = []
    while any(queues.values()):
        for queue in queues.values():
            if queue:
                out.append(queue.pop(0))
    return out
