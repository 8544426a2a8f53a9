"""Each constraint kind the miner proposes beyond names and schemas: found on runs that
show it, holding on those runs, and violated by the one-step mistake it exists for."""

from __future__ import annotations

from typing import Any

import pytest

from agentguard.analysis import lint_spec
from agentguard.bench.generate import generate_instance
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.mining import mine
from agentguard.mining.model import MinedSpec
from agentguard.scoring import verify_trace, verify_traces
from agentguard.trace.model import Call, Trace


def _trace(*calls: Call) -> Trace:
    return Trace(tuple(c.at(i) for i, c in enumerate(calls)))


def _failed(mined: MinedSpec, trace: Trace) -> list[str]:
    return [c.name for c in verify_trace(trace, mined.spec).constraints if not c.passed]


def _holds_on_its_runs(mined: MinedSpec, runs: list[Trace]) -> None:
    assert mined.unconfirmed == ()
    assert all(r.score == 1.0 for r in verify_traces(runs, mined.spec))
    assert lint_spec(mined.spec) == ()


def _pages(n: int, account: str) -> Trace:
    """A paging loop: fetch page 1, 2, ... n of one account, then a summary of them."""
    calls = [
        Call("fetch", {"page": p, "account": account}, {"rows": p * 10}) for p in range(1, n + 1)
    ]
    return _trace(*calls, Call("summarize", {"counts": [p * 10 for p in range(1, n + 1)]}, 1))


PAGES = [_pages(n, a) for n, a in [(2, "A-1"), (3, "B-2"), (4, "C-3"), (3, "D-4"), (2, "E-5")]]


def _kinds(mined: MinedSpec) -> set[str]:
    return {c.template for c in mined.constraints}


def test_value_steps_are_ordered() -> None:
    """`fetch(page = 2)` only right after `fetch(page = 1)`: a skipped or swapped page
    breaks it, though every call is a fetch."""
    mined = mine(PAGES)
    _holds_on_its_runs(mined, PAGES)
    assert "G(fetch(page = 2) -> Y fetch(page = 1))" in mined.text
    skipped = _trace(*[c for c in PAGES[1] if c.args.get("page") != 2])
    assert any(n.startswith("chainprecedence_fetch_page") for n in _failed(mined, skipped))
    calls = list(PAGES[0])
    swapped = _trace(calls[1], calls[0], calls[2])
    assert _failed(mined, swapped)


def test_an_argument_fixed_for_the_run_is_same() -> None:
    """Every fetch of a run passes the same account: one call with another is caught."""
    mined = mine(PAGES)
    assert "forall v: G(fetch(account = v) -> N G !fetch(account != v))" in mined.text
    calls = list(PAGES[1])
    calls[1] = Call("fetch", {"page": 2, "account": "Z-9"}, {"rows": 20})
    assert "same_fetch_account" in _failed(mined, _trace(*calls))


def test_list_items_are_traced_to_the_results_they_came_from() -> None:
    """Each item of `summarize.counts` is a row count some fetch returned, and every
    count returned is summarized: a made-up item and a dropped one are both caught."""
    mined = mine(PAGES)
    assert _kinds(mined) >= {"consumed"}
    text = mined.text
    assert "summarize(counts contains v) -> O fetch(result.rows = v)" in text
    assert "fetch(result.rows = v) -> F summarize(counts contains v)" in text
    calls = list(PAGES[0])
    calls[-1] = Call("summarize", {"counts": [10, 99]}, 1)
    assert any(n.startswith("dataflow_summarize_counts") for n in _failed(mined, _trace(*calls)))
    calls[-1] = Call("summarize", {"counts": [10]}, 1)
    assert any(n.startswith("consumed_fetch") for n in _failed(mined, _trace(*calls)))


def _tuple_run(k: int) -> Trace:
    """A tuple argument: `pair = [r, k]`, from the latest `score` and its own argument."""
    calls: list[Call] = []
    for i in range(1, k + 1):
        calls.append(Call("score", {"i": i}, {"result": 7 * i + k}))
        calls.append(Call("record", {"pair": [7 * i + k, i]}, {"ok": True}))
    return _trace(*calls)


def test_a_tuple_is_traced_index_by_index_to_the_latest_call() -> None:
    """`record.pair[0]` is the result of the latest `score`: a stale one breaks it."""
    runs = [_tuple_run(k) for k in (2, 3, 4)]
    mined = mine(runs)
    _holds_on_its_runs(mined, runs)
    assert "forall v: G(record(pair[0] = v) -> (!score S score(result = v)))" in mined.text
    calls = list(runs[1])
    calls[3] = Call("record", {"pair": [calls[0].result["result"], 2]}, {"ok": True})
    assert any(n.startswith("latest_record_pair") for n in _failed(mined, _trace(*calls)))


def _told(n: int) -> Trace:
    args: dict[str, Any] = {"count": n}
    return _trace(
        Call.message("user", f"Book {n} seats, please."), Call("book", args, {"ok": True})
    )


def test_a_number_the_user_wrote_is_from_user() -> None:
    """With dialogue recorded, a number passed as the user wrote it must come from the
    user's messages: another number is refused."""
    runs = [_told(n) for n in (2, 4, 7)]
    mined = mine(runs)
    _holds_on_its_runs(mined, runs)
    assert "G !book(count not from user)" in mined.text
    wrong = _trace(Call.message("user", "Book 2 seats, please."), Call("book", {"count": 3}, {}))
    assert "from_user_book_count" in _failed(mined, wrong)


def test_a_bound_one_run_reached_is_not_proposed() -> None:
    """at_most needs its bound reached by a tenth of the runs calling the tool."""
    runs = [_trace(*[Call("poll", {}, None)] * 2) for _ in range(19)]
    runs.append(_trace(*[Call("poll", {}, None)] * 9))
    assert not any(c.template == "at_most" for c in mine(runs).constraints)
    assert any(c.key == ("poll", "2") for c in mine(runs[:-1]).constraints)


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_a_spec_mined_from_benchmark_runs_lints_clean_and_holds(template: str) -> None:
    """Every template's gold runs (the prompt as a user message, as benchmarks/mining.py
    mines them): value steps, same-value, from-user and latest constraints included, the
    proposed spec lints clean and holds on every run it was mined from."""
    runs = []
    for difficulty in (1, 2, 3):
        for seed in range(4):
            try:
                inst = generate_instance(template, difficulty, seed)
            except Exception:  # noqa: BLE001 - an instance over the call budget is skipped
                continue
            calls = [Call.message("user", inst.prompt)]
            calls += [
                Call(r["tool_name"], dict(r["arguments"]), r.get("tool_result"))
                for r in inst.gold_records()
            ]
            runs.append(Trace(tuple(c.at(i) for i, c in enumerate(calls))))
    assert len(runs) >= 4
    mined = mine(runs)
    _holds_on_its_runs(mined, runs)
