"""Spec inputs are confined and bounded: imports stay in the spec's tree, sizes are capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentguard.errors import SpecImportError, SpecSemanticError, SpecTooLargeError
from agentguard.language import load_spec, parse_spec
from agentguard.language.files import MAX_SPEC_BYTES


def _import_problem(main: Path) -> str:
    with pytest.raises(SpecSemanticError) as info:
        load_spec(main)
    (problem,) = info.value.problems
    return problem.message


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """spec/ holds the importing spec; secret.txt sits next to it, outside its tree."""
    (tmp_path / "spec").mkdir()
    (tmp_path / "secret.txt").write_text("TOPSECRET_TOKEN and more\n")
    (tmp_path / "other.ltl").write_text("constraint o := G !x\n")
    return tmp_path / "spec"


def test_imports_inside_the_tree_still_work(tree: Path) -> None:
    """A sibling or a sub-folder import is read as before."""
    (tree / "lib").mkdir()
    (tree / "lib" / "common.ltl").write_text("constraint c := G !rm\n")
    (tree / "main.ltl").write_text('import "lib/common.ltl"\nconstraint m := F done\n')
    assert [c.name for c in load_spec(tree / "main.ltl").constraints] == ["c", "m"]


@pytest.mark.parametrize("target", ["../secret.txt", "../other.ltl"])
def test_parent_folder_import_is_refused_without_echoing_content(tree: Path, target: str) -> None:
    """`..` leaves the tree: refused at the import's line, and the file is never shown."""
    (tree / "main.ltl").write_text(f'import "{target}"\n')
    message = _import_problem(tree / "main.ltl")
    assert "outside the spec's folder" in message and "TOPSECRET" not in message


def test_absolute_import_is_refused(tree: Path) -> None:
    """An absolute path outside the tree is refused."""
    (tree / "main.ltl").write_text(f'import "{tree.parent / "secret.txt"}"\n')
    assert "outside the spec's folder" in _import_problem(tree / "main.ltl")


def test_symlink_out_of_the_tree_is_refused(tree: Path) -> None:
    """A symlink inside the tree pointing outside it is resolved, then refused."""
    os.symlink(tree.parent / "other.ltl", tree / "link.ltl")
    (tree / "main.ltl").write_text('import "link.ltl"\n')
    assert "outside the spec's folder" in _import_problem(tree / "main.ltl")


def test_allowed_folder_lets_the_import_through(tree: Path) -> None:
    """The user can allow another folder explicitly."""
    (tree / "main.ltl").write_text('import "../other.ltl"\n')
    spec = load_spec(tree / "main.ltl", allow_imports_from=[tree.parent])
    assert [c.name for c in spec.constraints] == ["o"]


def test_device_import_is_refused_quickly(tmp_path: Path) -> None:
    """`/dev/zero` is not a regular file: refused at once (reading it would never end)."""
    main = tmp_path / "main.ltl"
    main.write_text('import "/dev/zero"\n')
    with pytest.raises(SpecSemanticError) as info:
        load_spec(main, allow_imports_from=["/dev"])
    assert "not a regular file" in info.value.problems[0].message


def test_non_spec_file_in_the_tree_is_not_echoed(tree: Path) -> None:
    """A syntax error in an imported non-.ltl file names the place, not the content."""
    (tree / "notes.txt").write_text("TOPSECRET_TOKEN\n")
    (tree / "main.ltl").write_text('import "notes.txt"\n')
    message = _import_problem(tree / "main.ltl")
    assert "TOPSECRET" not in message and "not AgentLTL" in message


def test_fifo_spec_is_refused(tmp_path: Path) -> None:
    """A FIFO given as the spec file is refused instead of blocking."""
    fifo = tmp_path / "spec.ltl"
    os.mkfifo(fifo)
    with pytest.raises(SpecImportError, match="not a regular file"):
        load_spec(fifo)


def test_oversized_spec_is_refused_before_parsing(tmp_path: Path) -> None:
    """A spec over the documented limit is refused with the limit in the message."""
    big = tmp_path / "big.ltl"
    big.write_text("# padding\n" * (MAX_SPEC_BYTES // 10 + 10))
    with pytest.raises(SpecTooLargeError, match="limit"):
        load_spec(big)
    with pytest.raises(SpecTooLargeError):
        parse_spec("#" * (MAX_SPEC_BYTES + 1))
