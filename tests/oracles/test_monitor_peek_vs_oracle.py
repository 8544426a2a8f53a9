"""What the firewall asks before a call runs (``peek``) and after a restart (``save``/``restore``)
agrees with the DFA oracle.

``peek(call, ending=True)`` must give the verdict the prefix would have with the call
appended, and the truth value if the run ended right after it, without committing
anything; a monitor restored from its saved JSON document must go on exactly like the
original.
"""

from __future__ import annotations

import json
import random

import pytest

from agentguard import parse_formula
from agentguard.monitor import FormulaMonitor, Monitor
from agentguard.trace.model import Call

from .formulas import FUTURE, LETTERS, MIXED, Formula, Fragment, sample_cases, to_agentguard
from .ltlf_oracle import Engine, dfa
from .marks import needs

DEPTH = 4
MAX_LEN = 10

CASES = [
    pytest.param(FUTURE, "spot", 401, marks=needs("spot"), id="future"),
    pytest.param(MIXED, "mona", 402, marks=needs("mona"), id="mixed"),
]


def verdict_after(formula: Formula, engine: Engine, word: tuple[str, ...]) -> str:
    return dfa(formula, engine).verdicts(word)[-1]


def accepted(formula: Formula, engine: Engine, word: tuple[str, ...]) -> bool:
    return dfa(formula, engine).accepts(word)


def mismatch(
    monitor: Monitor,
    proposed: Call | list[Call],
    formula: Formula,
    engine: Engine,
    extended: tuple[str, ...],
) -> list[str]:
    """``peek(proposed, ending=True)`` against the oracle on the ``extended`` prefix: its
    (verdict, truth value if the run ended there), as a one-line difference when they differ."""
    peek = monitor.peek(proposed, ending=True)
    got = (peek.verdicts[monitor.NAME].name, peek.final[monitor.NAME])
    want = (verdict_after(formula, engine, extended), accepted(formula, engine, extended))
    return [] if got == want else [f"{to_agentguard(formula)} | {list(extended)} | {got} {want}"]


@pytest.mark.parametrize(("fragment", "engine", "seed"), CASES)
def test_peek_gives_the_oracle_verdict_of_every_proposed_call(
    fragment: Fragment, engine: Engine, seed: int
) -> None:
    """For every prefix, every next call and a random batch of two, peek = the oracle, and
    nothing commits."""
    rng = random.Random(seed)
    wrong: list[str] = []
    checked = 0
    for formula, words in sample_cases(seed, 200, fragment, DEPTH, 3, MAX_LEN):
        for word in words:
            monitor = Monitor.for_formula(parse_formula(to_agentguard(formula)))
            for m, name in enumerate(word):
                prefix = word[:m]
                for letter in LETTERS:
                    checked += 1
                    wrong += mismatch(monitor, Call(letter), formula, engine, (*prefix, letter))
                pair = (rng.choice(LETTERS), rng.choice(LETTERS))  # a parallel batch of two
                checked += 1
                batch = [Call(x) for x in pair]
                wrong += mismatch(monitor, batch, formula, engine, (*prefix, *pair))
                step = monitor.step(Call(name)).name  # the peeks above must not have moved it
                if step != verdict_after(formula, engine, word[: m + 1]):
                    wrong.append(f"{to_agentguard(formula)} | {list(word[: m + 1])} | after peek")
    print(f"peek vs {engine} ({fragment.name}): {checked} proposed calls")
    assert not wrong, f"{len(wrong)} wrong, e.g.:\n" + "\n".join(sorted(wrong, key=len)[:10])


@pytest.mark.parametrize(("fragment", "engine", "seed"), CASES)
def test_a_restored_monitor_goes_on_like_the_original(
    fragment: Fragment, engine: Engine, seed: int
) -> None:
    """Saved to JSON after a random cut and loaded into a fresh monitor, verdicts stay exact."""
    rng = random.Random(seed)
    for formula, words in sample_cases(seed + 10, 200, fragment, DEPTH, 3, MAX_LEN):
        parsed = parse_formula(to_agentguard(formula))
        for word in words:
            cut = rng.randint(0, len(word))
            first = Monitor.for_formula(parsed)
            for name in word[:cut]:
                first.step(Call(name))
            second = FormulaMonitor.restore(parsed, json.loads(json.dumps(first.save())))
            got = [second.step(Call(name)).name for name in word[cut:]]
            want = dfa(formula, engine).verdicts(word)[cut:]
            assert got == want, (to_agentguard(formula), word, cut)
