"""Random runs for the miner's laws: a few tools, arguments drawn from small pools so
that values recur (and flow from results to later arguments), optional arguments, list
results, errors, and user messages quoting some of the values."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agentguard.trace.model import Call, Trace

TOOLS = ("lookup", "verify", "refund", "final_answer")
IDS = ("A-100", "B-200", "C-300")
_scalars = st.one_of(st.sampled_from(IDS), st.integers(0, 4), st.sampled_from([1.5, True]))
_results = st.one_of(
    st.none(),
    st.integers(0, 4),
    st.fixed_dictionaries({"id": st.sampled_from(IDS), "n": st.integers(0, 4)}),
    st.fixed_dictionaries({"items": st.lists(st.sampled_from(IDS), max_size=2)}),
    st.builds(lambda v: {"result": v}, st.integers(0, 4)),
)


@st.composite
def calls(draw: st.DrawFn) -> Call:
    if draw(st.integers(0, 6)) == 0:
        return Call.message("user", f"please handle {draw(st.sampled_from(IDS))} now")
    name = draw(st.sampled_from(TOOLS))
    if name == "final_answer":
        return Call(name, {"answer": "done"})
    args: dict[str, Any] = {"id": draw(_scalars)}
    if draw(st.booleans()):
        args["n"] = draw(st.one_of(st.integers(0, 4), st.sampled_from(["x", "y"])))
    if draw(st.integers(0, 5)) == 0:
        args["result"] = draw(st.integers(0, 2))  # an argument named like the result
    result = draw(_results)
    return Call(name, args, result, error=draw(st.integers(0, 8)) == 0)


@st.composite
def traces(draw: st.DrawFn, max_size: int = 7) -> Trace:
    cs = draw(st.lists(calls(), max_size=max_size))
    return Trace(tuple(c.at(i) for i, c in enumerate(cs)))


def logs(min_size: int = 1, max_size: int = 6) -> st.SearchStrategy[list[Trace]]:
    return st.lists(traces(), min_size=min_size, max_size=max_size)
