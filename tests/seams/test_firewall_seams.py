"""Seams of the bare Firewall: the execution protocol, the log, redaction, predicates,
decoding and BLOCK_AND_WARN (issue 9)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentguard.enforcement.decision import Action
from agentguard.enforcement.firewall import Firewall, FirewallProtocolError
from agentguard.language import parse_spec
from agentguard.scoring.verify import verify_trace
from agentguard.semantics.registry import Registry
from agentguard.trace.loaders import load_traces

REFUND = """
spec refunds
constraint verified := G(issue_refund -> O verify_identity(result.ok = true))
"""


def fw(text: str = REFUND, **kw: Any) -> Firewall:
    return Firewall(parse_spec(text), **{"keep_trace": True, **kw})


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class TestProtocol:
    def test_every_proposal_gets_a_unique_call_id_and_keeps_the_framework_id(self) -> None:
        """call_id is unique per proposal; tool_call_id is the framework's, as given."""
        f = fw()
        ds = f.propose_batch([("a", {}, "X"), ("b", {}, "Y")])
        d = f.propose("a", {}, tool_call_id="X")
        assert len({x.call_id for x in [*ds, d]}) == 3
        assert [x.tool_call_id for x in [*ds, d]] == ["X", "Y", "X"]

    def test_a_tool_call_id_repeated_in_a_batch_is_refused(self) -> None:
        """Frameworks key a turn's calls by id: the second use is refused before anything runs."""
        first, second = fw().propose_batch([("a", {}, "X"), ("b", {}, "X")])
        assert first.executes and second.action is Action.BLOCK
        assert "tool-call id" in second.message

    def test_a_withdrawn_call_never_enters_the_trace_and_is_logged(self, tmp_path: Path) -> None:
        """withdraw: the call leaves the in-flight set, the trace, and the log says why."""
        log = tmp_path / "log.jsonl"
        f = fw(log_path=log)
        d = f.propose("verify_identity", {})
        f.withdraw(d, "arguments rejected")
        assert f.trace.names == () and f.in_flight == ()
        assert f.propose("issue_refund", {}).action is Action.BLOCK
        f.finish()
        withdrawn = [e for e in events(log) if e["event"] == "agentguard.withdrawn"]
        assert [(e["call_id"], e["message"]) for e in withdrawn] == [
            (d.call_id, "arguments rejected")
        ]
        loaded = load_traces(log)[0].trace
        assert loaded is not None and loaded.names == ()

    def test_an_errored_call_is_kept_with_its_error(self) -> None:
        """complete(error=...): the call is in the trace, error set, its text the result."""
        f = fw()
        d = f.start(f.propose("verify_identity", {}))
        f.complete(d, error=RuntimeError("down"))
        (call,) = f.trace
        assert call.error and call.result == "Error: RuntimeError: down"
        assert f.propose("issue_refund", {}).action is Action.BLOCK

    def test_start_waits_for_the_call_its_approval_relied_on(self) -> None:
        """A refund approved after an in-flight verify starts only once verify completed."""
        f = fw()
        verify, refund = f.propose_batch([("verify_identity", {}), ("issue_refund", {})])
        assert verify.executes and refund.executes
        f.start(verify)
        order: list[str] = []

        def run_refund() -> None:
            order.append(f.start(refund).action.value)

        worker = threading.Thread(target=run_refund)
        worker.start()
        time.sleep(0.1)
        order.append("verify done")
        f.complete(verify, {"ok": True})
        worker.join(5)
        assert order == ["verify done", "allow"]

    def test_start_refuses_when_the_relied_on_call_failed(self) -> None:
        """The verify returned not-ok: the refund is re-checked at its start and refused."""
        f = fw()
        verify, refund = f.propose_batch([("verify_identity", {}), ("issue_refund", {})])
        f.complete(f.start(verify), {"ok": False})
        started = f.start(refund)
        assert started.action is Action.BLOCK and started.call_id == refund.call_id
        assert f.in_flight == () and f.trace.names == ("verify_identity",)

    def test_start_refuses_when_the_relied_on_call_was_withdrawn(self) -> None:
        """The verify never ran: the refund is refused at its start."""
        f = fw()
        verify, refund = f.propose_batch([("verify_identity", {}), ("issue_refund", {})])
        f.withdraw(verify, "rejected")
        assert f.start(refund).action is Action.BLOCK

    def test_independent_calls_start_at_once(self) -> None:
        """A call that relies on nothing in flight does not wait (timeout 0 would refuse)."""
        f = fw()
        a, b = f.propose_batch([("lookup", {"k": 1}), ("lookup", {"k": 2})])
        f.start(a)
        assert f.start(b, timeout=0) is b

    def test_start_times_out_and_judges_on_what_ran(self) -> None:
        """A relied-on call that never finishes: after the timeout the call is re-checked."""
        f = fw()
        verify, refund = f.propose_batch([("verify_identity", {}), ("issue_refund", {})])
        f.start(verify)
        began = time.monotonic()
        assert f.start(refund, timeout=0.2).action is Action.BLOCK
        assert time.monotonic() - began < 2

    def test_protocol_misuse_is_an_error(self) -> None:
        """Completing twice, or completing a refused call, raises FirewallProtocolError."""
        f = fw("spec s\nconstraint c := G !rm")
        d = f.propose("ls", {})
        f.complete(d, "ok")
        with pytest.raises(FirewallProtocolError):
            f.complete(d, "ok")
        with pytest.raises(FirewallProtocolError):
            f.start(f.propose("rm", {}))

    def test_record_is_matched_by_call_id(self) -> None:
        """record(..., call_id=) completes that very decision, not the first identical one."""
        f = fw()
        first, second = f.propose_batch([("lookup", {}), ("lookup", {})])
        f.record("lookup", {}, "r2", call_id=second.call_id)
        assert f.in_flight == (first,)


class TestDecisionLog:
    def test_checking_the_log_reproduces_the_online_report(self, tmp_path: Path) -> None:
        """The log carries results: verify_trace of the loaded log equals the online report."""
        log = tmp_path / "log.jsonl"
        f = fw(log_path=log)
        f.record("verify_identity", {}, '{"ok": false}')
        assert f.propose("issue_refund", {}).action is Action.BLOCK
        f.record("verify_identity", {}, {"ok": True})
        f.record("issue_refund", {}, "done")
        report = f.finish()
        loaded = load_traces(log)[0].trace
        assert loaded is not None
        offline = verify_trace(loaded, f.spec)
        assert offline.to_dict() == report.compliance.to_dict()
        assert [c.result for c in loaded] == [{"ok": False}, {"ok": True}, "done"]

    def test_a_redacted_log_says_which_constraints_it_cannot_judge(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Under redaction results are digests; `agentguard check` names the blind constraints."""
        from agentguard.cli.main import main

        log = tmp_path / "log.jsonl"
        spec = tmp_path / "s.ltl"
        spec.write_text(REFUND + "constraint only_refunds := G !delete\n")
        f = Firewall(spec, log_path=log, redact=lambda tool, args: {}, keep_trace=True)
        f.record("verify_identity", {"ssn": "123-45-6789"}, {"ok": True})
        f.finish()
        assert "123-45-6789" not in log.read_text()
        assert "result_sha256" in log.read_text()
        main(["check", str(spec), str(log)])
        err = capsys.readouterr().err
        assert "cannot be judged" in err and "verified" in err and "only_refunds" not in err


class TestRedaction:
    def test_every_field_that_can_carry_an_argument_is_scrubbed(self, tmp_path: Path) -> None:
        """message, violations[].detail, hints and errors never show a redacted value."""
        secret = "4111-1111-1111-1111"
        text = """
spec pay
tool pay(card: str, amount: number <= 10)
constraint no_big severity BLOCK_AND_WARN := G !pay(amount > 5)
"""
        log = tmp_path / "log.jsonl"
        f = fw(text, log_path=log, redact=lambda tool, args: {"card": "****"})
        big = f.propose("pay", {"card": secret, "amount": 98765.25})
        assert "98765.25" in big.violations[0].detail  # the model sees its own call
        f.propose("pay", {"card": 31337, "amount": 1})  # wrong type: the detail quotes it
        f.finish()
        written = log.read_text()
        assert secret not in written and "98765.25" not in written and "31337" not in written
        assert "[redacted]" in written


class TestRequiresPredicates:
    TEXT = """
spec s
predicate allowed(x)
tool pay(who: str) requires allowed("vip")
"""

    @pytest.mark.parametrize(
        ("policy", "action"), [("fail_closed", Action.BLOCK), ("fail_open", Action.ALLOW)]
    )
    def test_a_raising_requires_predicate_follows_the_policy(
        self, policy: str, action: Action
    ) -> None:
        """A requires predicate that raises blocks (fail-closed) or allows (fail-open)."""
        reg = Registry()

        def allowed(x: object) -> bool:
            raise ValueError("backend down")

        reg.register_predicate("allowed", allowed)
        f = Firewall(
            parse_spec(self.TEXT), registry=reg, on_predicate_error=policy, keep_trace=True
        )
        assert f.propose("pay", {"who": "a"}).action is action

    def test_a_predicate_of_a_custom_registry_is_found(self) -> None:
        """requires uses the firewall's registry, not only the default one."""
        yes, no = Registry(), Registry()
        yes.register_predicate("allowed", lambda x: x == "vip")
        no.register_predicate("allowed", lambda x: x == "nobody")
        allowed = Firewall(parse_spec(self.TEXT), registry=yes, keep_trace=True).propose(
            "pay", {"who": "a"}
        )
        refused = Firewall(parse_spec(self.TEXT), registry=no, keep_trace=True).propose(
            "pay", {"who": "a"}
        )
        assert allowed.action is Action.ALLOW
        assert refused.action is Action.BLOCK
        assert refused.violations[0].constraint == "tool:pay:requires"


class TestDecoding:
    def test_json_text_results_are_decoded_by_record(self) -> None:
        """record with JSON text: result tests see the decoded object, as the loaders do."""
        text = """
spec s
constraint looked := G(refund -> O lookup(result.status = "ok"))
constraint departed severity HARD_STOP := G !lookup(result.status = "departed")
"""
        f = fw(text)
        f.record("lookup", {}, '{"status": "ok"}')
        assert f.propose("refund", {}).action is Action.ALLOW
        g = fw(text)
        late = g.record("lookup", {}, '{"status": "departed"}')
        assert [v.constraint for v in late] == ["departed"] and g.stopped


class TestBlockAndWarn:
    TEXT = "spec s\nconstraint no_rm severity BLOCK_AND_WARN := G !rm"

    def test_a_sibling_in_the_same_batch_is_not_an_override(self) -> None:
        """[rm, rm] in one turn: both blocked; the model has not seen the warning yet."""
        ds = fw(self.TEXT).propose_batch([("rm", {}), ("rm", {})])
        assert [d.action for d in ds] == [Action.BLOCK, Action.BLOCK]

    def test_the_identical_call_in_the_next_generation_overrides(self) -> None:
        """rm blocked in one turn, repeated in the next: override."""
        f = fw(self.TEXT)
        assert f.propose_batch([("rm", {}), ("ls", {})])[0].action is Action.BLOCK
        assert f.propose_batch([("rm", {})])[0].action is Action.OVERRIDE

    def test_each_later_violation_is_warned_again(self) -> None:
        """rm rm ls rm: the override covers one call; the last rm is warned again."""
        f = fw(self.TEXT)
        actions = []
        for name in ("rm", "rm", "ls", "rm"):
            d = f.propose(name, {})
            actions.append(d.action)
            if d.executes:
                f.record(name, {}, "ok")
        assert actions == [Action.BLOCK, Action.OVERRIDE, Action.ALLOW, Action.BLOCK]

    def test_a_tolerated_violation_is_reported_each_time(self) -> None:
        """TOLERATE: every later violating call carries the violation again."""
        f = fw("spec s\nconstraint no_rm severity TOLERATE := G !rm")
        for _ in range(3):
            d = f.propose("rm", {})
            assert d.executes and [v.constraint for v in d.violations] == ["no_rm"]
            f.record("rm", {}, "ok")


def test_a_predicate_error_logged_under_fail_open_is_scrubbed(tmp_path: Path) -> None:
    """The predicate_error event's message never shows a redacted argument value."""
    reg = Registry()

    def flagged(x: object) -> bool:
        raise ValueError(f"cannot check {x}")

    reg.register_predicate("flagged", flagged)
    text = "spec s\npredicate flagged(x)\nconstraint c := forall x in args(pay.card): flagged(x)"
    log = tmp_path / "log.jsonl"
    f = Firewall(
        parse_spec(text),
        registry=reg,
        on_predicate_error="fail_open",
        log_path=log,
        redact=lambda tool, args: {},
        keep_trace=True,
    )
    assert f.propose("pay", {"card": "4111-2222"}).executes
    f.finish()
    written = log.read_text()
    assert "agentguard.predicate_error" in written and "4111-2222" not in written
