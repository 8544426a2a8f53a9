"""What docs/language.md decides where it was silent (issue 27), pinned offline and
online: each decision as the evaluator and the monitor (or the firewall) both apply it."""

from __future__ import annotations

import pytest

from agentguard import Firewall, parse_spec, verify_trace
from agentguard.errors import SpecSemanticError
from agentguard.monitor import Monitor, Verdict
from agentguard.trace.model import Call, Trace

S, V = Verdict.SATISFIED, Verdict.VIOLATED


def both(text: str, calls: list[Call]) -> tuple[bool, str | None]:
    """verify_trace's (passed, error), checked equal to the monitor's final verdict."""
    spec = parse_spec(f"constraint c := {text}", source="spec.ltl")
    result = verify_trace(Trace(tuple(calls)), spec).constraints[0]
    m = Monitor(spec)
    for i, call in enumerate(calls):
        m.step(call.at(i))
    assert (m.finish()["c"] is S) == result.passed, text
    return result.passed, result.error


class TestTestsRunOnEveryCallTheyApplyTo:
    """An atom's tests run on every call of its tool, needed by the formula there or not."""

    def test_an_invalid_pattern_errs_though_the_antecedent_never_holds(self) -> None:
        """`forall x in ["("]: (b -> a(k ~ x))` on a call of `a`: violated, with the error."""
        passed, error = both('forall x in ["("]: (b -> a(k ~ x))', [Call("a", {"k": "z"})])
        assert not passed and error is not None and "invalid regular expression" in error

    def test_no_call_of_the_tool_no_error(self) -> None:
        """The test never meets a call of `c`: nothing to report, the constraint holds."""
        assert both('forall x in ["("]: (b -> c(k ~ x))', [Call("a", {"k": "z"})]) == (True, None)

    def test_the_evaluation_order_does_not_matter(self) -> None:
        """`a(k ~ x) | true` and `true | a(k ~ x)`: the same verdict and error."""
        calls = [Call("a", {"k": "z"})]
        left = both('forall x in ["("]: (a(k ~ x) | true)', calls)
        right = both('forall x in ["("]: (true | a(k ~ x))', calls)
        assert not left[0] and not right[0]
        assert left[1] is not None and right[1] is not None  # (each located at its atom)
        assert left[1].split(": ", 1)[1] == right[1].split(": ", 1)[1]


class TestWithinStepsOfOneTool:
    """`WithinSteps(t, t, k)`: first_after is the first position *at or after* first(t)."""

    @pytest.mark.parametrize("names", [["a"], ["a", "b", "b", "b", "a"], ["b", "a"]])
    def test_holds_once_the_tool_occurs(self, names: list[str]) -> None:
        """Distance 0 from itself: the same as `Called(a)`, online and offline."""
        calls = [Call(n) for n in names]
        assert both("WithinSteps(a, a, 0)", calls) == both("Called(a)", calls)
        assert both("WithinSteps(a, a, 0)", calls)[0]

    def test_a_second_call_within_k_is_written_with_next(self) -> None:
        """The documented spelling of "a again within 2 steps" tells the two apart."""
        text = "!a U (a & X F[<=1] a)"
        assert both(text, [Call("a"), Call("b"), Call("a")]) == (True, None)
        assert both(text, [Call("a"), Call("b"), Call("b"), Call("a")])[0] is False


class TestParametricDomainOfLists:
    """`forall x:` takes a list field whole at `=` / `~` sites, its items at `contains`."""

    CALLS = (Call("a", {"k": [1, 2]}), Call("b", {"k": [1, 2]}))

    def test_equality_binds_the_whole_list(self) -> None:
        """`a(k = x) -> O b(k = x)` is about the list [1, 2] (it holds: b had it)."""
        assert both("forall x: G(b(k = x) -> O a(k = x))", list(self.CALLS))[0]
        passed, _ = both("forall x: G(b(k = x) -> x = [1, 2])", list(self.CALLS))
        assert passed

    def test_contains_binds_the_items(self) -> None:
        """`b(k contains x)` ranges over 1 and 2, never the list itself."""
        assert both("forall x: G(b(k contains x) -> x != [1, 2])", list(self.CALLS))[0]
        assert not both("forall x: G(b(k contains x) -> x = 1)", list(self.CALLS))[0]


class TestJsonTextResults:
    """A result recorded as the JSON text "1", "true" or "null" is that JSON value."""

    @pytest.mark.parametrize(
        ("text", "literal", "other"),
        [("1", "1", '"1"'), ("true", "true", '"true"'), ("null", "null", '"null"')],
    )
    def test_decoded_as_json(self, text: str, literal: str, other: str) -> None:
        """`result = 1` holds on "1"; `result = "1"` does not (offline and online)."""
        calls = [Call("a", {}, text)]
        assert both(f"F a(result = {literal})", calls)[0]
        assert not both(f"F a(result = {other})", calls)[0]

    def test_text_that_is_not_json_stays_text(self) -> None:
        """ "yes" is text; " 1 " with spaces is read as the number too."""
        assert both('F a(result = "yes")', [Call("a", {}, "yes")])[0]
        assert both("F a(result = 1)", [Call("a", {}, " 1 ")])[0]


class TestNotEqualAcrossTypes:
    """`!=` is the negation of `=` on two present values, whatever their types; a missing
    field or an unknown result makes it false, as `=`."""

    @pytest.mark.parametrize(
        ("test", "value", "passed"),
        [
            ("k != 1", "x", True),
            ("k != true", 1, True),
            ('k != "1"', 1, True),
            ("k != 1", 1.0, False),
            ("j != 1", 1, False),  # no field j: the bottom rule
        ],
    )
    def test_as_documented(self, test: str, value: object, passed: bool) -> None:
        """Online and offline agree on each."""
        assert both(f"F a({test})", [Call("a", {"k": value})])[0] is passed

    def test_ordering_across_types_is_false_both_ways(self) -> None:
        """`<` and `>=` between a number and text: both false (a type mismatch)."""
        calls = [Call("a", {"k": "5"})]
        assert not both("F a(k < 9)", calls)[0]
        assert not both("F a(k >= 9)", calls)[0]


class TestBoundedPastOnTheEmptyTrace:
    """`O[<=k]` is false and `H[<=k]` true on the empty trace, as `O` and `H`."""

    @pytest.mark.parametrize(
        ("text", "passed"),
        [("O[<=2] a", False), ("H[<=2] a", True), ("!O[<=0] a", True), ("!H[<=5] a", False)],
    )
    def test_offline_online_and_firewall(self, text: str, passed: bool) -> None:
        """verify_trace, the monitor and a firewall finishing at once all agree."""
        assert both(text, []) == (passed, None)
        fw = Firewall(parse_spec(f"constraint c := {text}"))
        assert (fw.finish().compliance.compliance_score == 1.0) is passed


class TestToolsDomainAndDialogue:
    """`tools` holds the names of the positions the spec judges: tool calls, and the
    dialogue events only in a spec that names one (as `any`)."""

    def trace(self) -> Trace:
        return Trace((Call.message("user", "hi"), Call("a", {}, 1)))

    def test_a_spec_naming_no_dialogue_event_sees_tool_names_only(self) -> None:
        """`exists x in tools: x = "user_message"` is false, offline and in a firewall."""
        spec = parse_spec('constraint c := exists x in tools: x = "user_message"')
        assert verify_trace(self.trace(), spec).compliance_score == 0.0
        fw = Firewall(spec)
        fw.observe("user", "hi")
        fw.complete(fw.propose("a", {}), 1)
        assert fw.finish().compliance.compliance_score == 0.0

    def test_a_spec_naming_one_sees_the_messages_too(self) -> None:
        """With `O user_message` in the spec, `user_message` is in `tools`."""
        text = 'constraint c := O user_message & exists x in tools: x = "user_message"'
        spec = parse_spec(text)
        assert verify_trace(self.trace(), spec).compliance_score == 1.0
        fw = Firewall(spec)
        fw.observe("user", "hi")
        fw.complete(fw.propose("a", {}), 1)
        assert fw.finish().compliance.compliance_score == 1.0


class TestPatternsCompiledWhen:
    """Item 7: a string operand is checked when the spec is read; a pattern from the trace
    when the test runs (docs/language.md's examples, both ways)."""

    def test_a_string_operand_is_a_spec_error(self) -> None:
        """`a(k ~ "(")` is refused at read time, at its line and column."""
        with pytest.raises(SpecSemanticError, match=r"spec\.ltl:1:23: invalid regular"):
            parse_spec('constraint c := a(k ~ "(")', source="spec.ltl")

    def test_a_variable_bound_to_trace_data_errs_when_run(self) -> None:
        """`a(k ~ x)` with x = "(": an EvaluationError naming the atom and its place."""
        text = "forall x: G(b(k = x) -> !a(j ~ x))"
        passed, error = both(text, [Call("b", {"k": "("}), Call("a", {"j": "z"})])
        assert not passed and error is not None
        assert error.startswith("in `a(j ~ x)` at spec.ltl:1:44: ")  # as docs/language.md shows
        assert "invalid regular expression '('" in error
