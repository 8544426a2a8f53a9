"""Parsing and resolving AgentLTL: the sketch's examples, errors with locations."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard import SpecSemanticError, SpecSyntaxError, load_spec, parse_formula, parse_spec
from agentguard.language import ast as A
from agentguard.semantics.registry import Registry
from agentguard.severity import Severity, SeverityKind

SKETCH = """
spec refund_policy

tool lookup_order(order_id: str)
tool verify_identity(customer_id: str)
tool issue_refund(order_id: str from results(lookup_order), amount: number >= 0)
    requires O verify_identity          # precondition, past-time formula

def precedence(a, b) := !b W a          # user macro

constraint identity_first
    layer L3  weight 4  severity SOFT_BLOCK(3)
    message "Verify the customer's identity before issuing a refund."
  := G(issue_refund -> O verify_identity)

constraint refund_only_known_orders  weight 3  severity HARD_STOP
  := forall o: G(issue_refund(order_id = o) -> O lookup_order(order_id = o))

constraint cap  severity BLOCK_AND_WARN := G !issue_refund(amount > 500)
constraint one_refund  severity HARD_STOP := CalledN(issue_refund, 1, <=)
constraint look_first  weight 2 := Before(lookup_order, final_answer)
constraint budget  severity HARD_STOP := metrics.num_tool_calls <= 40
constraint ordered := precedence(lookup_order, issue_refund)
"""


class TestSketch:
    def test_sketch_spec_parses_with_every_clause(self) -> None:
        """The design sketch's refund spec parses; clauses land on the constraints."""
        spec = parse_spec(SKETCH)
        assert spec.name == "refund_policy"
        first = spec.constraint("identity_first")
        assert (first.layer, first.weight, first.severity) == (
            "L3",
            4.0,
            Severity(SeverityKind.SOFT_BLOCK, 3),
        )
        assert first.message.startswith("Verify")
        assert spec.constraint("cap").severity.kind is SeverityKind.BLOCK_AND_WARN
        assert spec.constraint("budget").formula == A.Compare(
            A.MetricRef(("num_tool_calls",)), "<=", A.Literal(40)
        )

    def test_tool_declarations_keep_types_sources_and_requires(self) -> None:
        """Tool declarations keep typed params, `from` sources, bounds and `requires`."""
        spec = parse_spec(SKETCH)
        refund = spec.tool("issue_refund")
        assert refund is not None
        order_id, amount = refund.params
        assert order_id.source == A.Domain("results", "lookup_order")
        assert amount.type == "number" and amount.bound == (">=", 0)
        assert refund.requires == A.Once(A.Event("verify_identity"))

    def test_macro_expands_with_arguments(self) -> None:
        """A `def` macro is expanded with its arguments substituted."""
        spec = parse_spec(SKETCH)
        expected = A.WeakUntil(A.Not(A.Event("issue_refund")), A.Event("lookup_order"))
        assert spec.constraint("ordered").formula == expected

    @pytest.mark.parametrize(
        "text",
        [
            'read_file(path = "src/api.py")',
            "read_file(path ~ /\\.env$/)",
            "issue_refund(amount > 500)",
            "tool_b(i = 8, result = 11)",
            "tool_a_list(result.numbers contains 8)",
            "any(path ~ /secrets/)",
            "a & b | c -> d <-> e",
            "not a and b or c implies d iff e",
            "X a & N a & F a & G a & (a U b) & (a W b) & (a R b)",
            "Y a & Z a & O a & H a & (a S b)",
            "F[<=3] a & G[<=2] b & O[<=1] c & H[<=4] d",
            "forall x in args(tool_b.i): CalledWith(tool_c, {x: x})",
            "exists f in results(list_directory.files): read_file(path = f)",
            "AllBefore([t1, t2], g) & InstanceBefore(a, 0, b, 1) & InOrder([a, b, c])",
            "WithinSteps(a, b, 3) & CalledWithResult(t, 11, {i: 8}) & BranchCalled(p, m)",
            "`web-search`(q = 'x')",
        ],
    )
    def test_sketch_atoms_and_operators_parse(self, text: str) -> None:
        """Every atom and operator spelling of the sketch parses."""
        parse_formula(text)

    def test_precedence_ladder(self) -> None:
        """Binary temporal operators bind tighter than &, which binds tighter than |, then ->."""
        f = parse_formula("a & b U c | d -> e")
        assert isinstance(f, A.Implies)
        assert isinstance(f.left, A.Or)
        assert isinstance(f.left.left, A.And)
        assert isinstance(f.left.left.right, A.Until)

    def test_quantifier_body_extends_right(self) -> None:
        """A quantifier's body extends as far right as possible."""
        f = parse_formula("a & forall x: b(k = x) | c")
        assert isinstance(f, A.And) and isinstance(f.right, A.Quantified)
        assert isinstance(f.right.body, A.Or)

    def test_inner_binding_shadows_outer(self) -> None:
        """`forall x: ... forall x: ...` — the inner x is the inner binding (A.3.1)."""
        f = parse_formula("forall x: a(k = x) & (forall x: b(k = x))")
        assert isinstance(f, A.Quantified) and isinstance(f.body, A.And)


class TestErrors:
    def test_syntax_error_names_file_line_column_with_caret(self) -> None:
        """A syntax error names the source, line and column and draws a caret."""
        with pytest.raises(SpecSyntaxError) as info:
            parse_spec("constraint a := G(b ->\nconstraint c := d", source="x.ltl")
        err = info.value
        assert (err.source, err.line) == ("x.ltl", 2)
        assert "^" in str(err) and "x.ltl:2:" in str(err)

    def test_bad_character_is_a_syntax_error_not_a_lark_traceback(self) -> None:
        """An unexpected character raises SpecSyntaxError (a ValueError), never a lark error."""
        with pytest.raises(SpecSyntaxError) as info:
            parse_formula("G a & $")
        assert isinstance(info.value, ValueError)
        assert info.value.column == 7

    def test_semantic_errors_are_collected_together(self) -> None:
        """Every semantic problem is reported at once, each with a location."""
        text = """
tool a(x: int)
constraint c1 weight 0 := G(a -> O b)
constraint c1 := a
constraint c3 severity LOUD := unknown_pred(1, 2)
constraint c4 := Before(a)
constraint c5 := forall x: a(x = y)
constraint c6 severity HARD_STOP(2) := a
constraint c7 layer L3 layer L4 := a
"""
        with pytest.raises(SpecSemanticError) as info:
            parse_spec(text, source="s.ltl")
        messages = [str(p) for p in info.value.problems]
        joined = "\n".join(messages)
        assert "weight must be a finite number > 0, got 0" in joined
        assert "unknown tool 'b'" in joined
        assert "defined twice" in joined
        assert "unknown severity 'LOUD'" in joined
        assert "Before takes 2 argument(s), got 1" in joined
        assert "unbound variable 'y'" in joined
        assert "only SOFT_BLOCK takes a count" in joined
        assert "`layer` is given twice" in joined
        assert all(m.startswith("s.ltl:") for m in messages)

    def test_unknown_macro_arity_and_recursion(self) -> None:
        """Unknown macros, wrong macro arity and recursive macros are semantic errors."""
        with pytest.raises(SpecSemanticError, match="unknown macro or predicate 'prec'"):
            parse_spec("constraint c := prec(a, b)")
        with pytest.raises(SpecSemanticError, match="takes 2 argument"):
            parse_spec("def p(a, b) := a U b\nconstraint c := p(x)")
        with pytest.raises(SpecSemanticError, match="recursively"):
            parse_spec("def p(a) := p(a)\nconstraint c := p(x)")

    def test_predicate_must_be_declared_or_registered(self) -> None:
        """A lowercase call with value arguments needs a predicate declaration or registration."""
        with pytest.raises(SpecSemanticError, match="unknown macro or predicate 'is_even'"):
            parse_spec("constraint c := forall x in args(t.i): is_even(x)")
        reg = Registry()
        reg.register_predicate("is_even", lambda v: v % 2 == 0, arity=1)
        spec = parse_spec("constraint c := forall x in args(t.i): is_even(x)", registry=reg)
        assert isinstance(spec.constraints[0].formula, A.Quantified)
        with pytest.raises(SpecSemanticError, match="takes 1 argument"):
            parse_spec("constraint c := forall x in args(t.i): is_even(x, x)", registry=reg)


class TestImports:
    def test_import_inlines_other_files(self, tmp_path: Path) -> None:
        """`import` brings in another file's tools, macros and constraints."""
        (tmp_path / "common.ltl").write_text(
            "def prec(a, b) := !b W a\nconstraint base := F done\n"
        )
        main = tmp_path / "main.ltl"
        main.write_text('import "common.ltl"\nconstraint ordered := prec(a, b)\n')
        spec = load_spec(main)
        assert [c.name for c in spec.constraints] == ["base", "ordered"]

    def test_cyclic_import_is_reported(self, tmp_path: Path) -> None:
        """A cycle of imports is a semantic error naming the chain."""
        (tmp_path / "a.ltl").write_text('import "b.ltl"\nconstraint ca := x\n')
        (tmp_path / "b.ltl").write_text('import "a.ltl"\nconstraint cb := y\n')
        with pytest.raises(SpecSemanticError, match=r"cyclic import: a\.ltl -> b\.ltl -> a\.ltl"):
            load_spec(tmp_path / "a.ltl")

    def test_missing_import_is_reported_with_location(self, tmp_path: Path) -> None:
        """An import that cannot be read is a located semantic error."""
        main = tmp_path / "m.ltl"
        main.write_text('\nimport "nope.ltl"\n')
        with pytest.raises(SpecSemanticError) as info:
            load_spec(main)
        assert info.value.problems[0].location is not None
        assert info.value.problems[0].location.line == 2


class TestDeepFormulas:
    def test_generated_deny_list_of_two_thousand_tools(self) -> None:
        """A G !(t0 | ... | t1999) deny-list parses, prints and evaluates (no RecursionError)."""
        from agentguard import Trace, format_formula, holds

        deny = " | ".join(f"t{i}" for i in range(2000))
        f = parse_formula(f"G !({deny})")
        assert parse_formula(format_formula(f)) == f
        assert holds(f, Trace.of("x", "y")) is True
        assert holds(f, Trace.of("x", "t1999")) is False

    def test_absurdly_deep_nesting_is_a_located_error(self) -> None:
        """Past what the machine can walk, the error names the formula, not Python internals."""
        with pytest.raises(SpecSemanticError, match="nested too deeply"):
            parse_formula(" & ".join(f"a{i}" for i in range(20000)))

    def test_invalid_regex_is_a_spec_error_with_location(self) -> None:
        """An invalid regular expression is reported at parse time with its location."""
        with pytest.raises(SpecSemanticError, match=r"1:32: invalid regular expression /\[a-/"):
            parse_spec("constraint a := G !read(path ~ /[a-/)")

    def test_non_utf8_and_bom_files(self, tmp_path: Path) -> None:
        """A file that is not UTF-8 is a SpecImportError; a byte-order mark is fine."""
        from agentguard import SpecImportError

        bad = tmp_path / "bad.ltl"
        bad.write_bytes(b"constraint a := G !x\n\xff\n")
        with pytest.raises(SpecImportError, match="cannot decode"):
            load_spec(bad)
        bom = tmp_path / "bom.ltl"
        bom.write_bytes(b"\xef\xbb\xbfconstraint a := G !x\n")
        assert load_spec(bom).constraints[0].name == "a"


def test_unescaped_slash_in_regex_gets_a_hint() -> None:
    """A '/' that ends a regex early is reported with the escaping hint."""
    with pytest.raises(SpecSyntaxError, match=r"is written '\\/'"):
        parse_formula("G !read(path ~ /a/b/)")
    assert parse_formula(r"G !read(path ~ /a\/b/)") is not None
