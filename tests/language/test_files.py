"""What one spec reads (language/files.py): each file once, and the whole capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentguard.errors import SpecSemanticError
from agentguard.language import files, load_spec
from agentguard.language.resolver import Resolver


def _resolve(top: Path) -> Resolver:
    resolver = Resolver()
    resolver.resolve_spec(top.read_text(), str(top), top.parent)
    return resolver


def test_a_diamond_import_is_read_once(tmp_path: Path) -> None:
    """top imports left and right, both import base: base is read (and declared) once."""
    (tmp_path / "base.ltl").write_text("tool lookup()\n")
    (tmp_path / "left.ltl").write_text('import "base.ltl"\ntool left()\n')
    (tmp_path / "right.ltl").write_text('import "base.ltl"\ntool right()\n')
    top = tmp_path / "top.ltl"
    top.write_text('import "left.ltl"\nimport "right.ltl"\nconstraint c := G lookup')
    reads = _resolve(top).declarations.reads
    names = ("base.ltl", "left.ltl", "right.ltl", "top.ltl")
    assert reads.files == 3
    assert reads.bytes == sum((tmp_path / n).stat().st_size for n in names)


def test_a_lattice_of_diamonds_reads_each_file_once(tmp_path: Path) -> None:
    """Twenty layers of two files each importing both files below: 2^20 import paths,
    forty files read."""
    for layer in range(20):
        below = "".join(f'import "l{layer + 1}_{s}.ltl"\n' for s in "ab") if layer < 19 else ""
        for side in "ab":
            (tmp_path / f"l{layer}_{side}.ltl").write_text(below + f"tool t{layer}{side}()\n")
    top = tmp_path / "top.ltl"
    top.write_text('import "l0_a.ltl"\nimport "l0_b.ltl"\n')
    assert _resolve(top).declarations.reads.files == 40


def test_a_hard_link_back_to_the_spec_is_a_cycle(tmp_path: Path) -> None:
    """The spec imported under another name is the spec itself: a cyclic import."""
    top = tmp_path / "top.ltl"
    top.write_text('import "again.ltl"\ntool t()\n')
    os.link(top, tmp_path / "again.ltl")
    with pytest.raises(SpecSemanticError, match=r"cyclic import: top\.ltl -> top\.ltl"):
        load_spec(top)


def test_the_total_counts_the_spec_text_itself(tmp_path: Path) -> None:
    """A spec text near the cap leaves room for no large import."""
    (tmp_path / "big.ltl").write_text("#" * 1000 + "\n")
    text = 'import "big.ltl"\n' + "#" * (files.MAX_TOTAL_SPEC_BYTES - 500)
    with pytest.raises(SpecSemanticError, match="MAX_TOTAL_SPEC_BYTES") as caught:
        Resolver().resolve_spec(text, str(tmp_path / "top.ltl"), tmp_path)
    (problem,) = caught.value.problems
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == (1, 1)


def test_imports_that_fit_after_a_refused_one_are_still_read(tmp_path: Path) -> None:
    """Each import is checked against what is left: a small one after a refused large one
    is read (the spec is refused all the same, naming only the large one)."""
    (tmp_path / "large.ltl").write_text("#" * (files.MAX_TOTAL_SPEC_BYTES - 10) + "\n")
    (tmp_path / "small.ltl").write_text("tool t()\n")
    resolver = Resolver()
    with pytest.raises(SpecSemanticError) as caught:
        resolver.resolve_spec(
            'import "large.ltl"\nimport "small.ltl"\n', str(tmp_path / "top.ltl"), tmp_path
        )
    assert [p.location.line for p in caught.value.problems if p.location] == [1]
    assert resolver.declarations.reads.files == 1


def test_the_shipped_specs_read_far_below_the_caps() -> None:
    """Every shipped spec reads under 1% of ``MAX_TOTAL_SPEC_BYTES``."""
    shipped = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.ltl"))
    assert shipped
    for path in shipped:
        reads = _resolve(path).declarations.reads
        assert reads.bytes < files.MAX_TOTAL_SPEC_BYTES // 100
        assert reads.files < files.MAX_SPEC_FILES
