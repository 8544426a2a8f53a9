"""A spec parsed again (an equal spec, a new object) reuses its firewall prototype by
content, and decides, logs and reports exactly as a cold build of it would."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard import load_traces
from agentguard.enforcement import prototype as proto_module
from agentguard.enforcement.firewall import Firewall
from agentguard.enforcement.prototype import CACHE_SIZE, firewall_prototype
from agentguard.language import ast as A
from agentguard.language import load_spec, parse_spec
from agentguard.monitor import compiled
from agentguard.scoring.verify import verify_trace
from agentguard.trace.final_tool import FINAL_TOOLS

TEXT = """
spec shared
tool open(id: int)
tool use(id: int from results(open.id))
tool close(id?: int)
    requires O open
constraint each severity SOFT_BLOCK(1) := forall o: G(use(id = o) -> O open(id = o))
constraint opens severity TOLERATE := CalledN(open, 3, <=)
constraint budget severity SOFT_BLOCK(2) := metrics.num_tool_calls <= 6
constraint closes := F close
constraint no_reopen severity BLOCK_AND_WARN
  := forall o: G(close(id = o) -> G !open(id = o))
"""
OTHER = """
constraint first weight 2 := G(use -> O open)
constraint never_close severity HARD_STOP := G !close
"""
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
Step = tuple[str, int]
steps = st.lists(
    st.tuples(st.sampled_from(["open", "use", "close", "final_answer"]), st.integers(0, 3)),
    max_size=9,
)


def run(text: str, proposals: list[Step], log: Path) -> tuple[list[dict[str, Any]], Firewall]:
    """A firewall of ``text`` parsed anew: every decision (as a dict) of ``proposals``,
    the allowed ones run; then finished."""
    fw = Firewall(parse_spec(text), keep_trace=True, run_id="r", log_path=log)
    out = []
    for name, i in proposals:
        d = fw.propose(name, {"id": i})
        if d.executes:
            fw.record(name, {"id": i}, {"id": i})
        out.append(d.to_dict())
    fw.finish()
    return out, fw


def log_lines(log: Path) -> list[dict[str, Any]]:
    """The log's records without what differs between any two runs (time, hash chain)."""
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [{k: v for k, v in e.items() if k not in ("timestamp", "prev")} for e in lines]


@SETTINGS
@given(steps)
def test_a_content_hit_decides_logs_and_reports_as_a_cold_build(proposals: list[Step]) -> None:
    """With every cache cleared, then with the prototype found by content: the same
    decisions, log lines and report, and each report is verify_trace of its log."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cold_log, warm_log = Path(tmp) / "cold.jsonl", Path(tmp) / "warm.jsonl"
        proto_module.clear_cache()
        compiled.clear_cache()
        cold, cold_fw = run(TEXT, proposals, cold_log)
        warm, warm_fw = run(TEXT, proposals, warm_log)
        assert warm_fw.spec is not cold_fw.spec
        assert warm == cold
        assert log_lines(warm_log) == log_lines(cold_log)
        for fw, log in ((cold_fw, cold_log), (warm_fw, warm_log)):
            loaded = load_traces(log)[0].trace
            assert loaded is not None
            assert fw.finish().compliance == verify_trace(loaded, fw.spec)
        assert warm_fw.finish().compliance == cold_fw.finish().compliance
        assert warm_fw.finish().verdicts == cold_fw.finish().verdicts


def test_an_equal_spec_shares_what_its_content_determines_and_keeps_its_constraints() -> None:
    """The second parse gets the first's tool plan and monitor prototype, but its own
    spec and constraint objects."""
    first, second = parse_spec(TEXT), parse_spec(TEXT)
    p1 = firewall_prototype(first, None, FINAL_TOOLS, True)
    p2 = firewall_prototype(second, None, FINAL_TOOLS, True)
    assert p2 is not p1 and p2 is firewall_prototype(second, None, FINAL_TOOLS, True)
    assert p2.monitor is p1.monitor and p2.tools is p1.tools and p2.content is p1.content
    assert p2.spec is second
    assert all(p2.constraints[c.name] is c for c in second.constraints)
    assert Firewall(second).spec is second


@SETTINGS
@given(st.lists(steps, min_size=2, max_size=4), st.lists(st.integers(0, 3), max_size=30))
def test_interleaved_firewalls_of_two_specs_parsed_per_run_each_decide_as_alone(
    runs: list[list[Step]], schedule: list[int]
) -> None:
    """Firewalls of two different specs, each parsed anew per firewall (content hits of
    either), driven in any interleaving: each decides as a firewall of its spec alone."""
    texts = [(TEXT, OTHER)[k % 2] for k in range(len(runs))]

    def decisions(fw: Firewall, proposals: list[Step]) -> Any:
        for name, i in proposals:
            d = fw.propose(name, {"id": i})
            if d.executes:
                fw.record(name, {"id": i}, {"id": i})
            yield d.action, tuple(v.constraint for v in d.violations)

    alone = [list(decisions(Firewall(parse_spec(t)), r)) for t, r in zip(texts, runs, strict=True)]
    firewalls = [Firewall(parse_spec(t), keep_trace=True) for t in texts]
    drivers = [decisions(fw, r) for fw, r in zip(firewalls, runs, strict=True)]
    got: list[list[Any]] = [[] for _ in runs]
    for k in [k % len(runs) for k in schedule] + [k for k, r in enumerate(runs) for _ in r]:
        step = next(drivers[k], None)
        if step is not None:
            got[k].append(step)
    assert got == alone
    for fw in firewalls:
        assert fw.finish().compliance == verify_trace(fw.trace, fw.spec)


def test_an_imported_file_that_changed_is_a_new_prototype(tmp_path: Path) -> None:
    """Same main file text and name, but the imported constraint changed (a constant's
    type, a weight): the reloaded spec is not equal, so it is built anew and decides by
    its own content."""
    main, lib = tmp_path / "main.ltl", tmp_path / "lib.ltl"
    main.write_text('import "lib.ltl"\nconstraint c := G(use -> O open)\n')
    lib.write_text("constraint k weight 1 := G !pay(ok = true)\n")
    before = load_spec(main)
    lib.write_text("constraint k weight 2 := G !pay(ok = 1)\n")
    after = load_spec(main)
    assert before.text == after.text and before.source == after.source
    p1 = firewall_prototype(before, None, FINAL_TOOLS, True)
    p2 = firewall_prototype(after, None, FINAL_TOOLS, True)
    assert p2.content is not p1.content and p2.monitor is not p1.monitor
    assert firewall_prototype(load_spec(main), None, FINAL_TOOLS, True).content is p2.content
    assert not Firewall(before).propose("pay", {"ok": True}).executes
    assert Firewall(after).propose("pay", {"ok": True}).executes
    assert not Firewall(after).propose("pay", {"ok": 1}).executes
    assert Firewall(after).finish().compliance.constraints[0].weight == 2


def test_the_same_text_from_another_source_is_its_own_prototype(tmp_path: Path) -> None:
    """Two files of the same text: their spans name different files, so no sharing."""
    a, b = tmp_path / "a.ltl", tmp_path / "b.ltl"
    a.write_text(OTHER)
    b.write_text(OTHER)
    pa = firewall_prototype(load_spec(a), None, FINAL_TOOLS, True)
    assert firewall_prototype(load_spec(b), None, FINAL_TOOLS, True).content is not pa.content
    assert firewall_prototype(load_spec(a), None, FINAL_TOOLS, True).content is pa.content


def test_a_spec_built_in_python_is_found_by_identity_only() -> None:
    """No text: two equal Spec objects get their own prototypes (as before)."""

    def make() -> A.Spec:
        return A.Spec("s", (A.Constraint("c", A.Always(A.Event("x"), None)),))

    one, two = make(), make()
    assert one == two
    p1 = firewall_prototype(one, None, FINAL_TOOLS, True)
    assert firewall_prototype(two, None, FINAL_TOOLS, True).content is not p1.content


def test_a_cleared_compile_cache_compiles_a_new_spec_anew() -> None:
    """After monitor.compiled.clear_cache, an equal spec parsed again is compiled again."""
    p1 = firewall_prototype(parse_spec(OTHER), None, FINAL_TOOLS, True)
    compiled.clear_cache()
    p2 = firewall_prototype(parse_spec(OTHER), None, FINAL_TOOLS, True)
    assert p2.content is not p1.content
    assert p2.monitor.compiled is not p1.monitor.compiled


def test_the_content_cache_is_bounded() -> None:
    """Firewalls of many spec texts keep at most CACHE_SIZE prototypes by content."""
    for i in range(CACHE_SIZE + 10):
        Firewall(parse_spec(f"constraint c := G !tool{i}"))
    assert len(proto_module._by_content_cache) <= CACHE_SIZE


def test_threads_parsing_one_text_at_once_share_one_content_entry() -> None:
    """Six threads each parse the same text and build a firewall at once: one content
    entry ends up shared, and every firewall refuses what the spec forbids."""
    text = "constraint fresh_threads := forall o: G(use(id = o) -> O open(id = o))"
    built: list[Firewall] = []
    gate = threading.Barrier(6)

    def build() -> None:
        spec = parse_spec(text)
        gate.wait()
        built.append(Firewall(spec))

    threads = [threading.Thread(target=build) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    later = firewall_prototype(parse_spec(text), None, FINAL_TOOLS, True)
    assert {id(fw._content) for fw in built} == {id(later.content)}
    for fw in built:
        assert not fw.propose("use", {"id": 1}).executes
