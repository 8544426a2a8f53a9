"""Fan-out templates: fan_out_fan_in, forall_processing, exists_selection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentguard.bench.templates._base import Params, Recorder, Template, derived_j, schedule

_ITEMS = (3, 4, 5, 6, 7)


def _list_params(difficulty: int, seed: int) -> Params:
    return {"num_items": schedule(_ITEMS, difficulty), "seed": seed, "j": derived_j(seed)}


def _numbers(rec: Recorder, p: Mapping[str, Any]) -> list[int]:
    out: list[int] = rec.call("tool_a_list", ("seed",), seed=p["seed"])["numbers"]
    return out


def qualifier_modulus(seed: int) -> int:
    """exists_selection / forall_exists_combined qualify a result ``w`` when ``w mod m = 0``.

    The paper leaves ``m`` open. ``w = (n·j + 11) mod 100`` with C.4's ``j = seed mod 10
    + 1``: then ``m = 2`` and ``m = 4`` never qualify anything (for even seeds every n
    is even, for odd seeds j is even, so w is always odd), and ``m = 3`` never qualifies
    when 3 divides j. So ``m = 3``, or 5 when 3 divides j (j is then 3, 6 or 9); most
    instances get both qualifying and non-qualifying items (tested).
    """
    return 5 if derived_j(seed) % 3 == 0 else 3


_ANY_ORDER = "the numbers may be processed in any order"
_KEPT_IN_LIST_ORDER = "the kept results, placed in the order of their numbers in the list"
_GET_LIST = "Call tool_a_list with seed = {seed}. It returns a list of numbers ({num_items} items)."

# -- fan_out_fan_in: per item branch on parity, aggregate with tool_d ------------------


def _fan_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    results = []
    numbers = _numbers(rec, p)
    with rec.fan_out() as item:
        for n in numbers:
            with item():
                if n % 2 == 0:
                    results.append(rec.value("tool_b", (), i=n, j=0))
                else:
                    results.append(rec.value("tool_c", (), x=n))
    return rec.value("tool_d", (), numbers=results)


def _fan_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        _GET_LIST.format(**p),
        f"For each number n of the list ({_ANY_ORDER}): if n is even, call tool_b with "
        "i = n and j = 0; if n is odd, call tool_c with x = n. Keep each result.",
        f"Call tool_d with numbers = {_KEPT_IN_LIST_ORDER}. The answer is its result.",
    ]


FAN_OUT_FAN_IN = Template(
    name="fan_out_fan_in",
    kind="Fan-out",
    description="Get list via tool_a_list; per item branch on parity; aggregate with tool_d.",
    tools=("tool_a_list", "tool_b", "tool_c", "tool_d"),
    scaling="num_items",
    params=_list_params,
    simulate=_fan_sim,
    procedure=_fan_steps,
    rules=("Process every number exactly once; do not add the numbers yourself.",),
    alternatives=(("tool_b", "tool_c"),),
)

# -- forall_processing: tool_b(n, j) for every item, aggregate with tool_d -----------------


def _forall_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    results = []
    numbers = _numbers(rec, p)
    with rec.fan_out() as item:
        for n in numbers:
            with item():
                results.append(rec.value("tool_b", ("j",), i=n, j=p["j"]))
    return rec.value("tool_d", (), numbers=results)


def _forall_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        _GET_LIST.format(**p),
        f"For each number n of the list ({_ANY_ORDER}), call tool_b with i = n and "
        f"j = {p['j']}. Keep each result.",
        f"Call tool_d with numbers = {_KEPT_IN_LIST_ORDER}. The answer is its result.",
    ]


FORALL_PROCESSING = Template(
    name="forall_processing",
    kind="Fan-out",
    description="Uniform map: apply tool_b(n, j) to every list element; aggregate with tool_d.",
    tools=("tool_a_list", "tool_b", "tool_d"),
    scaling="num_items",
    params=_list_params,
    simulate=_forall_sim,
    procedure=_forall_steps,
    rules=("Every number gets exactly one tool_b call: skip none, repeat none.",),
)

# -- exists_selection: tool_b per item; qualifiers (result mod m = 0) go through tool_c -


def _exists_params(difficulty: int, seed: int) -> Params:
    return {**_list_params(difficulty, seed), "modulus": qualifier_modulus(seed)}


def _exists_sim(rec: Recorder, p: Mapping[str, Any]) -> int:
    total = 0
    numbers = _numbers(rec, p)
    with rec.fan_out() as item:
        for n in numbers:
            with item():
                w = rec.value("tool_b", ("j",), i=n, j=p["j"])
                total += rec.value("tool_c", (), x=w) if w % p["modulus"] == 0 else w
    return total


def _exists_steps(p: Mapping[str, Any]) -> list[str]:
    return [
        "Set total = 0. " + _GET_LIST.format(**p),
        f"For each number n of the list ({_ANY_ORDER}; finish one number before the "
        f"next): call tool_b with i = n and j = {p['j']}; call its result w.",
        f"If w mod {p['modulus']} = 0, call tool_c with x = w right away and add its result "
        "to total. Otherwise add w to total directly, without calling tool_c.",
        "The answer is total.",
    ]


EXISTS_SELECTION = Template(
    name="exists_selection",
    kind="Fan-out",
    description="For each n call tool_b; if result mod modulus = 0, then tool_c and add, "
    "else add w directly.",
    tools=("tool_a_list", "tool_b", "tool_c"),
    scaling="num_items",
    params=_exists_params,
    simulate=_exists_sim,
    procedure=_exists_steps,
    rules=("Call tool_c only for qualifying results.",),
    alternatives=(("tool_b", "tool_c"),),
)
