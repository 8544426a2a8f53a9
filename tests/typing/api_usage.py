"""Never run: exercises the public API for the type checker (`mypy tests/typing`).

If a public signature changes in a way users would feel, this file stops type-checking.
"""

from __future__ import annotations

import agentguard as ag


def scoring() -> float:
    spec: ag.Spec = ag.parse_spec("constraint c := Called(a)", source="inline.ltl")
    spec2: ag.Spec = ag.load_spec("specs/refund.ltl")
    formula: ag.Formula = ag.parse_formula("G(a -> O b)")
    trace = ag.Trace.from_records([{"tool_name": "a", "arguments": {}, "tool_result": 1}])
    trace2 = ag.Trace.from_metrics({"tool_calls": []})
    trace3 = ag.Trace.of("a", ag.Call("b", {"x": 1}))
    ok: bool = ag.holds(formula, trace)
    report: ag.ComplianceReport = ag.verify_trace(trace, spec)
    many: list[ag.ComplianceReport] = ag.verify_traces([trace, trace3], spec)
    as_dict: dict[str, object] = report.to_dict()
    results: tuple[ag.ConstraintResult, ...] = report.constraints
    text: str = ag.format_spec(spec2) + ag.format_formula(formula)
    del trace2, trace3, ok, as_dict, results, text, many
    return report.score


def extension_points() -> None:
    registry = ag.Registry()
    registry.register_predicate("is_even", lambda x: x % 2 == 0, arity=1)
    ag.register_extractor("evens", lambda trace, tool, path: [0, 2])
    ag.register_context_predicate("late", lambda trace, i, metrics: i > 3)

    @ag.predicate("is_odd", arity=1)
    def is_odd(x: int) -> bool:
        return x % 2 == 1

    del is_odd


def errors() -> None:
    try:
        ag.parse_spec("constraint := ")
    except ag.SpecSyntaxError as exc:
        line: int = exc.line
        column: int = exc.column
        del line, column
    except ag.SpecSemanticError as exc:
        for problem in exc.problems:
            print(problem.message, problem.location)
    except ag.AgentGuardError:
        pass


def mining() -> str:
    trace = ag.Trace.of(ag.Call("lookup", {"id": "A1"}), ag.Call("refund", {"id": "A1"}))
    mined: ag.MinedSpec = ag.mine([trace, "runs.jsonl"], min_support=0.9, negative=[trace])
    spec: ag.Spec = mined.spec
    rejected: int | None = mined.separating
    del spec, rejected
    return mined.text
