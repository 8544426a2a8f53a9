"""A source checkout resolves ``agentguard.integrations`` and nothing else of the repo."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import importlib, json, sys
import agentguard
import agentguard.integrations
out = {"agentguard": agentguard.__file__, "integrations": agentguard.integrations.__file__}
for name in ("agentguard.tests", "agentguard.benchmarks", "agentguard.examples"):
    try:
        importlib.import_module(name)
        out[name] = "importable"
    except ImportError:
        out[name] = "absent"
print(json.dumps(out))
"""


def _fake_checkout(root: Path) -> None:
    shutil.copytree(
        REPO / "agentguard", root / "agentguard", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(
        REPO / "integrations", root / "integrations", ignore=shutil.ignore_patterns("__pycache__")
    )
    for folder in ("tests", "benchmarks", "examples"):
        (root / folder).mkdir()
        (root / folder / "__init__.py").write_text("")


def _probe(root: Path, code: str) -> dict[str, str]:
    """Run ``code`` at the checkout ``root`` (it prints one JSON line); that line, parsed."""
    import json

    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def test_checkout_resolves_only_integrations(tmp_path: Path) -> None:
    """Run at a checkout's root, agentguard.integrations maps to ./integrations; tests/ etc. do not leak."""

    _fake_checkout(tmp_path)
    out = _probe(tmp_path, PROBE)
    assert Path(out["agentguard"]).parent == tmp_path / "agentguard"
    assert Path(out["integrations"]) == tmp_path / "integrations" / "__init__.py"
    assert out["agentguard.tests"] == "absent"
    assert out["agentguard.benchmarks"] == "absent"
    assert out["agentguard.examples"] == "absent"


def test_every_adapter_module_imports_from_a_checkout(tmp_path: Path) -> None:
    """Each module of integrations/ (adapters and their private siblings) imports as
    agentguard.integrations.<name> from a checkout, from the checkout's folder; the wheel
    ships the same folder whole (pyproject maps the package to it)."""

    _fake_checkout(tmp_path)
    names = sorted(p.stem for p in (REPO / "integrations").glob("*.py") if p.stem != "__init__")
    probe = (
        "import importlib, json\n"
        f"names = {names!r}\n"
        "print(json.dumps({n: importlib.import_module('agentguard.integrations.' + n).__file__"
        " for n in names}))\n"
    )
    out = _probe(tmp_path, probe)
    assert "_langchain_turns" in out
    assert {n: Path(f) for n, f in out.items()} == {
        n: tmp_path / "integrations" / f"{n}.py" for n in names
    }
