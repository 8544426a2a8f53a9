"""Every diagnostic the resolver can emit, each triggered by a spec text (lark's
``match_examples`` idea: a table of known-bad inputs that doubles as documentation).

Each row names the problem, the spec text, the error kind, the line and column reported
and the exact message. :func:`test_every_message_template_is_in_the_table` reads the
message templates out of the resolver's source, so a new diagnostic without a row here
fails the suite.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agentguard.errors import SpecError, SpecSemanticError, SpecSyntaxError
from agentguard.language import load_spec, parse_formula, parse_spec
from agentguard.language import syntax as S
from agentguard.language.formulas import FormulaPass
from agentguard.language.scope import Env, Scope, Skip
from agentguard.language.vocabulary import Names

LANGUAGE = Path(__file__).resolve().parents[2] / "agentguard" / "language"
SEMANTIC = SpecSemanticError
SYNTAX = SpecSyntaxError

TABLE: list[tuple[str, str, type[SpecError], int, int, str]] = [
    (
        "import_nul",
        'import "\\u0000"',
        SEMANTIC,
        1,
        1,
        "cannot import '\\x00': embedded null byte",
    ),
    (
        "long_number",
        "constraint c := a(k = " + "9" * 5000 + ")",
        SYNTAX,
        1,
        23,
        "invalid number literal '9999999999999999999999999999999999999...': "
        "Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits",
    ),
    (
        "unknown_tool",
        "tool a()\nconstraint c := G b",
        SEMANTIC,
        2,
        19,
        "unknown tool 'b' (this spec declares: a)",
    ),
    (
        "macro_twice",
        "def m := a\ndef m := b\nconstraint c := m",
        SEMANTIC,
        2,
        1,
        "macro 'm' is defined twice",
    ),
    (
        "macro_shadows",
        "def Called := a\nconstraint c := a",
        SEMANTIC,
        1,
        1,
        "macro 'Called' shadows a built-in trace predicate",
    ),
    (
        "macro_repeats_param",
        "def m(x, x) := x\nconstraint c := m(a, b)",
        SEMANTIC,
        1,
        1,
        "macro 'm' repeats a parameter name",
    ),
    (
        "macro_arity",
        "def m(x) := x\nconstraint c := m(a, b)",
        SEMANTIC,
        2,
        17,
        "macro 'm' takes 1 argument(s), got 2",
    ),
    (
        "macro_recursive",
        "def m := m\nconstraint c := m",
        SEMANTIC,
        1,
        10,
        "macro 'm' expands recursively",
    ),
    (
        "macro_too_deep",
        "".join(f"def m{i} := m{i + 1}\n" for i in range(70)) + "def m70 := a\nconstraint c := m0",
        SEMANTIC,
        64,
        12,
        "macro 'm64' nests more than 64 macro uses deep "
        "(agentguard.language.macros.MAX_MACRO_DEPTH)",
    ),
    (
        "macro_over_budget",
        "def a(x) := x & x\n"
        + "".join(f"def {b}(x) := {a}({a}(x))\n" for a, b in zip("abcde", "bcdef", strict=True))
        + "constraint c := G f(t)",
        SEMANTIC,
        7,
        19,
        "macro 'f' expands to more than 100,000 syntax nodes (the budget of a spec's macro "
        "expansions, agentguard.language.macros.MAX_EXPANSION): a macro that uses another "
        "twice doubles its size at each level",
    ),
    (
        "macro_arg_not_formula",
        'def m(x) := x\nconstraint c := m("s")',
        SEMANTIC,
        2,
        19,
        "macro argument is not a formula here",
    ),
    (
        "not_a_value",
        "predicate p(x)\nconstraint c := p(a & b)",
        SEMANTIC,
        2,
        19,
        "binary is not a value",
    ),
    (
        "invalid_regex",
        "constraint c := G !read(path ~ /[a-/)",
        SEMANTIC,
        1,
        32,
        "invalid regular expression /[a-/: missing ]: [a-",
    ),
    (
        "unbound_hint",
        "constraint c := G x = 1",
        SEMANTIC,
        1,
        19,
        "unbound variable 'x' (quote it for a string: \"x\")",
    ),
    ("unbound_path", "constraint c := G x.k = 1", SEMANTIC, 1, 19, "unbound variable 'x.k'"),
    (
        "ref_not_domain",
        "constraint c := forall x in foo: a",
        SEMANTIC,
        1,
        29,
        "'foo' is not a domain (expected e.g. args(tool.key) or results(tool))",
    ),
    (
        "unknown_extractor",
        "constraint c := forall x in foo(t.k): a",
        SEMANTIC,
        1,
        29,
        "unknown domain extractor 'foo' (built in: args, results, tools; declare others with `extractor NAME` and register them)",
    ),
    (
        "extractor_const",
        "constraint c := forall x in args(t.k, [metrics.m]): a",
        SEMANTIC,
        1,
        39,
        "extractor arguments after the first must be constants",
    ),
    (
        "not_a_domain",
        'constraint c := forall x in "s": a',
        SEMANTIC,
        1,
        29,
        "a string is not a domain",
    ),
    (
        "bound_undefined",
        "constraint c := X[<=2] a",
        SEMANTIC,
        1,
        17,
        "X[<=k] is not defined; bounds apply to F, G, O, H",
    ),
    (
        "value_not_formula",
        "constraint c := a.b",
        SEMANTIC,
        1,
        17,
        "a.b is a value, not a formula (compare it: `... = v` or test how the call ended: `.ok`, `.error`)",
    ),
    (
        "value_not_formula_deep",
        "constraint c := a.b.c",
        SEMANTIC,
        1,
        17,
        "a.b.c is a value, not a formula (compare it: `... = v`)",
    ),
    (
        "var_as_formula",
        "constraint c := forall x in [1]: x",
        SEMANTIC,
        1,
        34,
        "variable 'x' is used as a formula",
    ),
    (
        "needs_arguments",
        "constraint c := Called",
        SEMANTIC,
        1,
        17,
        "'Called' needs arguments: Called(...)",
    ),
    (
        "unknown_outcome",
        "constraint c := a(k = 1).bad",
        SEMANTIC,
        1,
        17,
        "unknown call outcome `.bad` (an atom ends in `.ok` or `.error`)",
    ),
    (
        "outcome_on_non_atom",
        "constraint c := Called(a).ok",
        SEMANTIC,
        1,
        17,
        "`.ok` applies to a tool atom such as `lookup.ok`",
    ),
    (
        "outcome_both",
        "def m := a.ok\nconstraint c := m.error",
        SEMANTIC,
        2,
        17,
        "an atom cannot test both `.ok` and `.error`",
    ),
    (
        "predicate_arity",
        "predicate p(x)\nconstraint c := p(1, 2)",
        SEMANTIC,
        2,
        17,
        "predicate 'p' takes 1 argument(s), got 2",
    ),
    (
        "extractor_as_formula",
        "constraint c := args(t.k)",
        SEMANTIC,
        1,
        17,
        "'args' is a domain extractor, not a formula (use `x in args(...)`)",
    ),
    (
        "tool_args_tests",
        "tool t()\nconstraint c := t(1)",
        SEMANTIC,
        2,
        19,
        "arguments of tool atom 't' must be tests such as `key = value`",
    ),
    (
        "invalid_constant_pattern",
        'tool run(cmd: str)\nconstraint c := G !run(cmd ~ "(")',
        SEMANTIC,
        2,
        30,
        "invalid regular expression '(': missing ): (",
    ),
    (
        "unknown_macro_or_predicate",
        "constraint c := foo(1)",
        SEMANTIC,
        1,
        17,  # at the unknown name, not its argument
        "unknown macro or predicate 'foo': define it (`def foo(...) := ...`), declare a registered predicate (`predicate foo(...)`), or, for a tool, write tests such as `key = value`",
    ),
    (
        "test_head",
        "constraint c := a(1 = 1)",
        SEMANTIC,
        1,
        19,
        "a test must start with an argument name or `result`",
    ),
    (
        "trace_pred_arity",
        "constraint c := Called(a, b)",
        SEMANTIC,
        1,
        17,
        "Called takes 1 argument(s), got 2",
    ),
    (
        "tool_list",
        "constraint c := InOrder(a)",
        SEMANTIC,
        1,
        25,
        "InOrder expects a list of tools like [a, b]",
    ),
    (
        "integer",
        'constraint c := CalledN(a, "x", >=)',
        SEMANTIC,
        1,
        28,
        "CalledN expects an integer here",
    ),
    (
        "non_negative",
        "constraint c := CalledN(a, -1, >=)",
        SEMANTIC,
        1,
        28,
        "CalledN expects a non-negative integer here",
    ),
    (
        "comparison_op",
        'constraint c := CalledN(a, 1, "~")',
        SEMANTIC,
        1,
        31,
        "CalledN expects one of = >= <= > < here",
    ),
    (
        "arg_map",
        "constraint c := CalledWith(a, 1)",
        SEMANTIC,
        1,
        31,
        "CalledWith expects an argument map like {key: value}",
    ),
    (
        "context_predicate",
        "constraint c := Predicate(nope)",
        SEMANTIC,
        1,
        27,
        "Predicate(nope): no such registered predicate (register it with agentguard.register_context_predicate or declare it)",
    ),
    ("tool_name", "constraint c := Called(1)", SEMANTIC, 1, 24, "Called expects a tool name here"),
    (
        "tool_dialogue",
        "tool user_message()\nconstraint c := user_message",
        SEMANTIC,
        1,
        1,
        "'user_message' is a dialogue event, not a tool: it cannot be declared",
    ),
    (
        "tool_twice",
        "tool a()\ntool a()\nconstraint c := a",
        SEMANTIC,
        2,
        1,
        "tool 'a' is declared twice",
    ),
    (
        "param_repeat",
        "tool t(a: str, a: int)\nconstraint c := t",
        SEMANTIC,
        1,
        16,
        "tool 't' repeats parameter 'a'",
    ),
    (
        "param_type",
        "tool t(a: foo)\nconstraint c := t",
        SEMANTIC,
        1,
        11,
        "unknown parameter type 'foo' (use one of: any, array, bool, boolean, dict, float, int, integer, list, number, object, str, string)",
    ),
    (
        "param_from",
        "tool t(a: str from [1, 2])\nconstraint c := t",
        SEMANTIC,
        1,
        15,
        "`from` needs a domain such as results(tool)",
    ),
    (
        "param_bound",
        "tool t(a: int = [1])\nconstraint c := t",
        SEMANTIC,
        1,
        15,
        "a parameter bound must be a constant",
    ),
    (
        "clause_twice",
        "constraint c layer a layer b := a",
        SEMANTIC,
        1,
        22,
        "constraint 'c': `layer` is given twice",
    ),
    (
        "weight",
        "constraint c weight 0 := a",
        SEMANTIC,
        1,
        14,
        "constraint 'c': weight must be a finite number > 0, got 0",
    ),
    (
        "constraint_twice",
        "constraint c := a\nconstraint c := b",
        SEMANTIC,
        2,
        1,
        "constraint 'c' is defined twice",
    ),
    (
        "severity_unknown",
        "constraint c severity LOUD := a",
        SEMANTIC,
        1,
        14,
        "constraint 'c': unknown severity 'LOUD' (HARD_STOP, SOFT_BLOCK(n), BLOCK_AND_WARN, TOLERATE, ASK)",
    ),
    (
        "severity_count",
        "constraint c severity HARD_STOP(2) := a",
        SEMANTIC,
        1,
        14,
        "constraint 'c': only SOFT_BLOCK takes a count",
    ),
    (
        "soft_block_count",
        "constraint c severity SOFT_BLOCK(0) := a",
        SEMANTIC,
        1,
        14,
        "constraint 'c': SOFT_BLOCK count must be a positive integer",
    ),
    (
        "bad_string",
        "constraint c := a(k = '\\x')",
        SYNTAX,
        1,
        23,
        "invalid string literal \"'\\\\x'\": (unicode error) 'unicodeescape' codec can't decode bytes in position 0-1: truncated \\xXX escape",
    ),
    (
        "from_result",
        "constraint c := G !b(result from user)",
        SEMANTIC,
        1,
        22,
        "a `from` test reads an argument of the call (its result is not known before it "
        "runs); test results with results(...) sources instead",
    ),
    (
        "not_a_source",
        "constraint c := G !b(y from foo)",
        SEMANTIC,
        1,
        29,
        "a name is not a source (expected user, trusted, untrusted, results(tool...), "
        "args(tool.path), a list, or a union of them with |)",
    ),
    (
        "source_two_patterns",
        "constraint c := G !b(y from results(a, b))",
        SEMANTIC,
        1,
        29,
        "results(...) takes one pattern such as results(tool.path)",
    ),
    (
        "source_not_pattern",
        'constraint c := G !b(y from results("a"))',
        SEMANTIC,
        1,
        37,
        "results(...) takes a tool pattern such as results(tool.path)",
    ),
    (
        "source_macro_pattern",
        "def m := a & b\nconstraint c := G !b(y from results(m))",
        SEMANTIC,
        2,
        37,
        "'m' is not a tool pattern here",
    ),
    (
        "args_without_path",
        "constraint c := G !b(y from args(a))",
        SEMANTIC,
        1,
        29,
        "args(...) names an argument: args(tool.key) or args(tool(tests).key)",
    ),
    (
        "variable_in_source",
        "constraint c := forall v: G !b(y from [v])",
        SEMANTIC,
        1,
        40,
        "quantified variable 'v' inside a source: a source is a fixed set of places "
        "(test the variable beside it instead)",
    ),
    (
        "from_outside_call",
        "constraint c := G (y from user)",
        SEMANTIC,
        1,
        20,
        "a `from` test reads a call's argument: write it inside the call's parentheses, "
        "e.g. send_money(recipient from trusted)",
    ),
    (
        "trust_clash",
        "tool a()\ntrusted a.x\nuntrusted a.x",
        SEMANTIC,
        3,
        11,
        "'a.x' is declared both trusted and untrusted",
    ),
    (
        "bad_result_format",
        "tool a() returns xml",
        SEMANTIC,
        1,
        18,
        "unknown result format 'xml' (use one of: yaml, json)",
    ),
]


def _first_problem(text: str, kind: type[SpecError]) -> tuple[int, int, str]:
    with pytest.raises(kind) as info:
        parse_spec(text)
    err = info.value
    if isinstance(err, SpecSemanticError):
        loc = err.problems[0].location
        assert loc is not None
        return loc.line, loc.column, err.problems[0].message
    assert isinstance(err, SpecSyntaxError)
    return err.location.line, err.location.column, err.message


@pytest.mark.parametrize(
    ("text", "kind", "line", "column", "message"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_diagnostic(text: str, kind: type[SpecError], line: int, column: int, message: str) -> None:
    """The spec text raises the given kind, at line:column, with exactly this message."""
    assert _first_problem(text, kind) == (line, column, message)


def _write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


IMPORT_CASES: list[tuple[str, dict[str, str | bytes], str]] = [
    (
        "cyclic",
        {"a.ltl": 'import "b.ltl"\n', "b.ltl": 'import "a.ltl"\n'},
        "cyclic import: a.ltl -> b.ltl -> a.ltl",
    ),
    (
        "missing",
        {"a.ltl": 'import "gone.ltl"\n'},
        "cannot import 'gone.ltl': cannot read spec (No such file or directory)",
    ),
    (
        "not_utf8",
        {"a.ltl": 'import "b.ltl"\n', "b.ltl": b"constraint c := \xff\n"},
        "cannot import 'b.ltl': cannot decode spec as UTF-8 (byte 16: invalid start byte)",
    ),
    (
        "syntax",
        {"a.ltl": 'import "b.ltl"\n', "b.ltl": "constraint := a\n"},
        "in imported file: unexpected ':='",
    ),
]


@pytest.mark.parametrize(
    ("files", "message"), [c[1:] for c in IMPORT_CASES], ids=[c[0] for c in IMPORT_CASES]
)
def test_import_diagnostic(tmp_path: Path, files: dict[str, str | bytes], message: str) -> None:
    """A broken import is a located problem naming the imported file."""
    for name, text in files.items():
        _write(tmp_path / name, text)
    with pytest.raises(SpecSemanticError) as info:
        load_spec(tmp_path / "a.ltl")
    problem = info.value.problems[0]
    assert problem.message == message
    assert problem.location is not None
    where = (problem.location.line, problem.location.column)
    assert where == (1, 1) or (message.startswith("in imported file") and where == (1, 12))


def test_import_outside_the_spec_folder(tmp_path: Path) -> None:
    """An import reaching out of the spec's folder tree is a located problem naming the root."""
    (tmp_path / "inner").mkdir()
    _write(tmp_path / "outside.ltl", "constraint o := a\n")
    spec = _write(tmp_path / "inner" / "a.ltl", 'import "../outside.ltl"\n')
    with pytest.raises(SpecSemanticError) as info:
        load_spec(spec)
    problem = info.value.problems[0]
    assert problem.message == OUTSIDE_MESSAGE.format(root=tmp_path.resolve() / "inner")
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == (1, 1)


OUTSIDE_MESSAGE = (
    "cannot import '../outside.ltl': outside the spec's folder {root} (imports stay in its "
    "tree, symlinks resolved; allow more with allow_imports_from)"
)


def test_nesting_too_deep() -> None:
    """A formula nested past what the interpreter can walk is a located problem."""
    with pytest.raises(SpecSemanticError) as info:
        parse_formula(" & ".join(f"a{i}" for i in range(20000)))
    problem = info.value.problems[0]
    assert problem.message == (
        "formula nested too deeply to process; split it into several constraints or macros"
    )
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == (1, 1)


def test_value_node_in_formula_position() -> None:
    """The grammar never puts a bare value where a formula goes; the pass still says so."""
    scope = Scope(Names())
    with pytest.raises(Skip):
        FormulaPass(scope).formula(S.String("s", None), Env())
    assert [p.message for p in scope.problems] == ["a string is not a formula"]


def _templates() -> list[str]:
    """Every message the resolver's passes can record, as a regex (placeholders: ``.+``)."""
    out: list[str] = []
    for path in sorted(LANGUAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if callee not in ("problem", "Problem") and not (
                callee == "SpecSyntaxError" and path.name == "transformer.py"
            ):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Name) and arg.id == "message":
                continue  # Scope.problem forwarding its argument
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append(re.escape(arg.value))
            elif isinstance(arg, ast.JoinedStr):
                out.append(
                    "".join(
                        re.escape(str(v.value)) if isinstance(v, ast.Constant) else ".+"
                        for v in arg.values
                    )
                )
            else:  # pragma: no cover - a message built elsewhere escapes this audit
                raise AssertionError(f"{path.name}:{node.lineno}: message is not a literal")
    return out


def test_every_message_template_is_in_the_table() -> None:
    """Each message template of the resolver is produced by at least one case above."""
    produced = [row[5] for row in TABLE] + [c[2] for c in IMPORT_CASES]
    produced += [
        "formula nested too deeply to process; split it into several constraints or macros",
        "a string is not a formula",
        OUTSIDE_MESSAGE.format(root="/r"),
    ]
    templates = _templates()
    assert len(templates) == 67
    missing = [t for t in templates if not any(re.fullmatch(t, m) for m in produced)]
    assert not missing, missing
