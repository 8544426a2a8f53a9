"""One rule turns a value into a spec for every entry (agentguard/scoring/inputs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard import Firewall, verify_trace
from agentguard.errors import SpecImportError, SpecSyntaxError
from agentguard.language import ast, parse_spec
from agentguard.scoring.inputs import SpecInputError, coerce_spec, coerce_trace
from agentguard.trace.model import Trace

TEXT = "constraint c := G !rm\n"


def test_spec_is_used_as_is() -> None:
    """A Spec passes through unchanged."""
    spec = parse_spec(TEXT)
    assert coerce_spec(spec) is spec


def test_path_is_always_a_file(tmp_path: Path) -> None:
    """A pathlib.Path is loaded as a file, whatever its suffix."""
    path = tmp_path / "rules.txt"
    path.write_text(TEXT, encoding="utf-8")
    assert [c.name for c in coerce_spec(path).constraints] == ["c"]


def test_ltl_string_is_a_file_and_a_missing_one_is_named(tmp_path: Path) -> None:
    """A one-line str ending in .ltl is loaded; a missing one is an error naming it."""
    path = tmp_path / "rules.ltl"
    path.write_text(TEXT, encoding="utf-8")
    assert coerce_spec(str(path)).source == str(path)
    with pytest.raises(SpecImportError, match=r"gone\.ltl"):
        coerce_spec(str(tmp_path / "gone.ltl"))


def test_other_strings_are_spec_text() -> None:
    """Any other str is spec text."""
    assert [c.name for c in coerce_spec(TEXT).constraints] == ["c"]
    with pytest.raises(SpecSyntaxError):
        coerce_spec("not a spec")


def test_string_naming_a_non_ltl_file_is_a_clear_error(tmp_path: Path) -> None:
    """A one-line str naming an existing non-.ltl file asks for Path(...), never parses it."""
    path = tmp_path / "rules.txt"
    path.write_text(TEXT, encoding="utf-8")
    with pytest.raises(SpecInputError, match=r"pass pathlib\.Path"):
        coerce_spec(str(path))


def test_other_types_are_a_type_error() -> None:
    """bytes, numbers and the like are a SpecInputError, which is a TypeError."""
    with pytest.raises(TypeError, match="got bytes"):
        coerce_spec(TEXT.encode())  # type: ignore[arg-type]


def test_verify_trace_and_firewall_read_the_same_string_the_same_way(tmp_path: Path) -> None:
    """The same string means the same spec to verify_trace and to Firewall."""
    path = tmp_path / "rules.ltl"
    path.write_text(TEXT, encoding="utf-8")
    for value in (TEXT, str(path), path):
        report = verify_trace(Trace.of("rm"), value)
        assert report.compliance_score == 0.0
        assert isinstance(Firewall(value, keep_trace=True).spec, ast.Spec)


def test_trace_like_values() -> None:
    """A Trace passes through; call records become one."""
    trace = Trace.of("a")
    assert coerce_trace(trace) is trace
    assert coerce_trace([{"name": "a", "arguments": {}}]).names == ("a",)
