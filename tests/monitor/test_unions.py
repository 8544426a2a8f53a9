"""A constraint checked at the end that reads the trace only through unions over calls
(``entities``, ``outputs``) forgets the calls that add nothing to them: its memory stops
growing when a run repeats itself, and its verdict is the evaluator's on the whole run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.language import parse_spec
from agentguard.monitor import Monitor
from agentguard.monitor.fallback import FallbackNode
from agentguard.monitor.unions import union_keys
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.evaluator import Evaluator
from agentguard.semantics.registry import Registry
from agentguard.trace.model import Call, Trace

GROUNDED = "forall e in entities(final_answer.answer): e in outputs"
SPEC = parse_spec(f"constraint grounded := {GROUNDED}")

POOL = (
    Call("read_file", {"path": "a.py"}, "def foo(x):\n    return x\n"),
    Call("read_file", {"path": "b.py"}, "class Bar:\n    def baz(self):\n        pass\n"),
    Call("read_file", {"path": "notes/c.txt"}, "qux() lives here"),
    Call("read_file", {"path": "a.py"}, {"path": "d.py", "content": "def quux(): ..."}),
    Call("search", {"query": "foo"}, ["a.py"]),
    Call("final_answer", {"answer": "foo() is in a.py"}, "ok"),
    Call("final_answer", {"answer": "Bar.baz in b.py, and quux()"}, "ok"),
    Call("final_answer", {"answer": "see notes/c.txt"}, "ok"),
    Call("final_answer", {"answer": "no idea"}, "ok"),
)
RUNS = st.lists(st.sampled_from(POOL), max_size=14)


def _truth(calls: list[Call], formula_text: str = GROUNDED) -> bool:
    """The offline evaluator's verdict on the whole run (nothing forgotten)."""
    formula = parse_spec(f"constraint c := {formula_text}").constraints[0].formula
    trace = Trace(tuple(c.at(i) for i, c in enumerate(calls)))
    return Evaluator(trace, registry=Registry()).holds(formula)


def _ends(m: Monitor) -> bool:
    return m.finish()["grounded"] is Verdict.SATISFIED


def _run(calls: list[Call], spec: object = SPEC) -> Monitor:
    m = Monitor(spec)  # type: ignore[arg-type]
    for c in calls:
        m.step(c)
    return m


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_a_forgetting_monitor_ends_as_the_evaluator_on_the_whole_run(calls: list[Call]) -> None:
    m = _run(calls)
    assert isinstance(m.node("grounded"), FallbackNode)
    assert _ends(m) is _truth(calls)


@settings(max_examples=200, deadline=None)
@given(RUNS, st.sampled_from(POOL))
def test_a_peek_at_the_end_is_the_evaluator_on_the_run_and_the_call(
    calls: list[Call], last: Call
) -> None:
    """(Every call of the pool has its result: without one the answer waits for it.)"""
    m = _run(calls)
    assert m.peek(last, ending=True).final["grounded"] is _truth([*calls, last])


@settings(max_examples=200, deadline=None)
@given(RUNS, RUNS, RUNS)
def test_a_fork_and_its_origin_forget_independently(
    before: list[Call], origin_after: list[Call], fork_after: list[Call]
) -> None:
    """The kept calls and the keys they added are shared with a snapshot: whichever steps
    past the shared prefix first, each side ends as the evaluator on its own run."""
    m = _run(before)
    fork = m.fork(m.snapshot("grounded"))
    half = len(fork_after) // 2
    for c in fork_after[:half]:
        fork.step(c)
    for c in origin_after:
        m.step(c)
    for c in fork_after[half:]:
        fork.step(c)
    assert _ends(m) is _truth(before + origin_after)
    assert _ends(fork) is _truth(before + fork_after)


@settings(max_examples=150, deadline=None)
@given(RUNS, RUNS)
def test_a_saved_state_goes_on_as_the_run_would(before: list[Call], after: list[Call]) -> None:
    saved = _run(before).save()
    restored = Monitor.restore(SPEC, saved)
    for c in after:
        restored.step(c)
    assert _ends(restored) is _truth(before + after)


def test_a_looping_run_keeps_only_what_adds_something() -> None:
    """The passing loop of specs/code_qa.ltl grew by 89 MB over 300k calls: every call was
    kept. Now only the calls that added an entity or an output are."""
    m = _run(list(POOL) * 500)
    node = m.node("grounded")
    assert isinstance(node, FallbackNode)
    assert len(node.calls) <= len(POOL)
    assert len(m.save()["constraints"]["grounded"]["calls"]) == len(node.calls)
    assert _ends(m) is _truth(list(POOL))


def test_the_first_call_is_kept_even_when_it_adds_nothing() -> None:
    """An empty trace has its own semantics: a run of calls that add nothing still keeps one."""
    m = _run([Call("search", {"query": "x"}, [])] * 5)
    node = m.node("grounded")
    assert isinstance(node, FallbackNode)
    assert [c.name for c in node.calls] == ["search"]


def _keys(text: str, registry: Registry | None = None) -> object:
    formula = parse_spec(f"constraint c := {text}").constraints[0].formula
    return union_keys(formula, registry or Registry())


def test_only_formulas_that_read_unions_forget() -> None:
    assert _keys(GROUNDED) is not None
    assert _keys("exists e in entities(final_answer.answer): e = 'x' | !(e in outputs)")
    # an event, a temporal operator or a trace predicate reads positions
    assert _keys(f"{GROUNDED} & F read_file") is None
    assert _keys(f"{GROUNDED} & Called(search)") is None
    # ``ungrounded`` subtracts what was read: adding a read can change it
    assert _keys("forall e in ungrounded(final_answer.answer): e = 'x'") is None


def test_a_replaced_or_user_extractor_keeps_every_call() -> None:
    """A user's extractor may read anything: nothing is forgotten for it."""
    mine = Registry()
    mine.register_extractor("outputs", lambda trace, *rest: ["foo"])
    assert _keys(GROUNDED, mine) is None
    spec = parse_spec(f"extractor mine\nconstraint c := {GROUNDED} & forall x in mine(): x = 1")
    formula = spec.constraints[0].formula
    assert union_keys(formula, Registry()) is None
