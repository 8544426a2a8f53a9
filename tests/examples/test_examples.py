"""Every script in examples/ runs offline and shows a block, a correction and the log."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))
# scripts with their own tests below (they show one part each, not block-then-correct)
PART_SCRIPTS = (
    "audit_log.py",
    "benchmark_files.py",
    "human_approval.py",
    "otel_spans.py",
    "policy_diff.py",
    "policy_tests.py",
    "shadow_mode.py",
    "train_grpo.py",  # tests/examples/test_train_grpo_example.py
    "what_may_run.py",
)
FIREWALL_SCRIPTS = [s for s in SCRIPTS if s not in PART_SCRIPTS]


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name[:-3]}", EXAMPLES / name)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Run = Callable[[str], "pytest.CaptureResult[str]"]
"""Runs an example by file name and returns what it printed."""


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Run:
    """Run an example's ``main(tmp_path)``, assert it returns 0, and give what it printed."""

    def run_example(name: str) -> pytest.CaptureResult[str]:
        assert load(name).main(tmp_path) == 0
        return capsys.readouterr()

    return run_example


def test_the_examples_exist() -> None:
    """smolagents (both agent types), LangChain create_agent (one run, and many
    conversations), LangGraph ToolNode, the MCP gateway and an OpenAI Agents SDK handoff."""
    assert SCRIPTS == [
        "audit_log.py",
        "benchmark_files.py",
        "human_approval.py",
        "langchain_create_agent.py",
        "langchain_threads.py",
        "langgraph_tool_node.py",
        "mcp_gateway.py",
        "openai_agents_handoff.py",
        "otel_spans.py",
        "policy_diff.py",
        "policy_tests.py",
        "shadow_mode.py",
        "smolagents_code_agent.py",
        "smolagents_tool_calling.py",
        "train_grpo.py",
        "what_may_run.py",
    ]


@pytest.mark.parametrize("name", FIREWALL_SCRIPTS)
def test_example_blocks_then_corrects_and_reads_its_log(
    name: str, run: Run, tmp_path: Path
) -> None:
    """main() returns 0; the output shows a refusal, the allowed refund and the log records."""
    out = run(name).out
    assert "block" in out.lower()
    assert "compliance: 1.0" in out
    assert "read with json" in out
    log = tmp_path / "decisions.jsonl"
    assert log.exists()
    assert log.read_text(encoding="utf-8").strip()


def test_code_agent_example_refunds_once(run: Run) -> None:
    """The blocked line of the model's code never ran: exactly one refund was issued."""
    out = run("smolagents_code_agent.py").out
    assert "refunds actually issued: ['A1042']" in out
    assert "executed: verify_identity -> issue_refund -> final_answer" in out


def test_threads_example_keeps_one_trace_per_conversation(run: Run) -> None:
    """Turn 2 and a second worker continue C-77's trace; C-78's refund is blocked."""
    out = run("langchain_threads.py").out
    assert "C-77 executed: verify_identity -> final_answer -> issue_refund -> final_answer" in out
    assert "C-78 decisions this turn: [('block', 'issue_refund')" in out
    assert "second worker, C-77 executed: verify_identity ->" in out


def test_shadow_mode_example_runs_the_refund_and_reports_it(run: Run) -> None:
    """The unverified refund runs; the report and the log say enforce would have blocked it."""
    out = run("shadow_mode.py").out
    assert "executed: issue_refund -> final_answer" in out
    assert "would block: issue_refund({'order_id': 'A1042', 'amount': 129.9})" in out
    assert "'action': 'block', 'tool': 'issue_refund', 'shadow': True" in out


def test_what_may_run_example_offers_the_refund_only_once_allowed(run: Run) -> None:
    """The note lists the refund as refused; it is offered from the second turn; nothing
    is refused."""
    out = run("what_may_run.py").out
    assert "- Refused now: issue_refund (identity_first)." in out
    assert "turn 1: offered verify_identity\n" in out
    assert "turn 2: offered verify_identity, issue_refund" in out
    assert "refused calls: 0" in out
    assert "issue_refund: free, doomed: refund_after_sign_off would still need 1" in out
    assert "- Allowed, but no compliant run would follow: issue_refund (" in out


def test_audit_log_example_verifies_then_catches_the_edit(run: Run) -> None:
    """The keyed log verifies as written (through its anchored heads); its late refusal
    cut verifies by the chain alone but not through the heads; hiding the block fails at
    line 1."""
    captured = run("audit_log.py")
    assert "intact: 7 lines, 1 run(s), chain and HMACs, through 7 anchored head(s)" in (
        captured.out
    )
    assert "exit 0 then 1" in captured.out
    assert "decisions.jsonl:6: run" in captured.err
    assert "lines at its end were removed" in captured.err
    assert "decisions.jsonl:1: HMAC does not match" in captured.err


def test_otel_example_nests_decision_spans_in_the_app_span(run: Run) -> None:
    """Four decision spans, each inside its call's execute_tool span, inside the
    application's handle_ticket span."""
    out = run("otel_spans.py").out
    assert (
        "under execute_tool issue_refund < handle_ticket: block issue_refund ['identity_first']"
        in out
    )
    assert out.count("span agentguard.decision under execute_tool ") == 4
    assert out.count(" < handle_ticket: ") == 4


def test_policy_tests_example_passes_then_shows_a_diff(run: Run) -> None:
    """The shipped refund cases pass; the wrong expectation prints expected/got lines."""
    out = run("policy_tests.py").out
    assert "8 passed, 0 failed" in out
    assert '+ got:      {"action": "stop"}' in out


def test_human_approval_example_approves_then_denies(run: Run) -> None:
    """The small refund needs nobody; 900 is approved by alice, 2000 denied with the reason."""
    out = run("human_approval.py").out
    assert out.count("approver asked") == 2
    assert "refund 900: allow_override Approved by alice" in out
    assert "refund 2000: block Denied by alice" in out and "needs a manager" in out


def test_policy_diff_example_lists_the_changed_call(run: Run) -> None:
    """The recorded email now stops the run; the score drops; diff exits 1."""
    out = run("policy_diff.py").out
    assert "send_email: allow [] -> stop ['no_emails']" in out
    assert "1 of 1 run(s) change" in out


def test_benchmark_files_example_scores_bfcl_and_tau2(run: Run) -> None:
    """BFCL result files and a tau2 results file are scored as written; the faults are found."""
    pytest.importorskip("bfcl_eval")
    pytest.importorskip("tau2")
    out = run("benchmark_files.py").out
    assert "multi_turn_base_0: T=10 FED=11 None ok=True" in out
    assert "multi_turn_base_1: T=6 FED=1 state-consistency ok=False" in out
    assert "task 0 trial 1: T=5 FED=2 state-consistency ok=True" in out
    assert "retail_simulations.json:2 task 0 trial 1:" in out


def test_example_runs_as_a_script() -> None:
    """`python examples/smolagents_tool_calling.py` works from a shell."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "smolagents_tool_calling.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "answer: Refunded 129.90 EUR." in done.stdout


def test_overhead_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/overhead.py runs both frameworks and prints JSON (no timing asserted)."""
    import json

    path = EXAMPLES.parent / "benchmarks" / "overhead.py"
    spec = importlib.util.spec_from_file_location("overhead_benchmark", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = ["--steps", "2", "--repeat", "1", "--model-latency-ms", "1", "--json"]
    assert module.main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    frameworks = ["smolagents", "langchain"]
    assert [r["framework"] for r in result["headline_no_model_delay"]] == frameworks
    assert [r["framework"] for r in result["with_model_delay"]["runs"]] == frameworks
    for row in result["headline_no_model_delay"]:
        assert row["wall"]["firewall_us_per_step"] > 0
        assert row["cpu"]["guarded_us_per_step"] > 0
        # only LangChain charges for the hooks the guard plugs into
        hooks = "framework_hooks_us_per_step" in row["wall"]
        assert hooks is (row["framework"] == "langchain")


def test_online_length_benchmark_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/online_length.py measures each length and kind, each against the
    first length (short runs here; no timing asserted)."""
    import json

    module = _benchmark("online_length", monkeypatch)
    argv = ["--lengths", "300,600", "--window", "50", "--repeat", "1", "--json"]
    assert module.main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["rows"]) == {"check_300", "check_600", "step_300", "step_600"}
    assert all(row["p50_us"] > 0 for row in result["rows"].values())
    assert result["rows"]["check_300"]["p50_over_first"] == 1.0
    assert isinstance(result["check_p50_le_10us_at_longest"], bool)


def _benchmark(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/NAME.py as a module (its folder on sys.path: it imports its siblings)."""
    benchmarks = EXAMPLES.parent / "benchmarks"
    monkeypatch.syspath_prepend(str(benchmarks))
    spec = importlib.util.spec_from_file_location(name, benchmarks / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_langchain_hooks_benchmark_configurations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every configuration benchmarks/langchain_hooks.py measures builds an agent that runs
    its scripted steps to the answer, and the untraced ones leave create_agent as it was."""
    import warnings

    import langchain.agents.factory as factory

    from agentguard.errors import ToolMismatchWarning

    module = _benchmark("langchain_hooks", monkeypatch)
    traceable = factory.traceable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ToolMismatchWarning)  # the demo spec names more tools
        for config in module.CONFIGURATIONS:
            result = module._prepare(config, 2)()
            tool_replies = [m for m in result["messages"] if m.type == "tool"]
            assert len(tool_replies) == 2, config
            assert result["messages"][-1].content == "done", config
            assert factory.traceable is traceable, config


def test_smolagents_steps_benchmark_configurations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every configuration benchmarks/smolagents_steps.py measures builds an agent that
    runs its scripted steps to the answer."""
    import warnings

    from agentguard.errors import ToolMismatchWarning

    module = _benchmark("smolagents_steps", monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ToolMismatchWarning)  # the demo spec names more tools
        for config in module.CONFIGURATIONS:
            assert module._prepare(config, 2)() == "done", config
