"""mypy checks the options passed through ``guard()``: a misspelt or mistyped Firewall
option is a type error at the call, not a runtime surprise inside an adapter."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = """\
from pathlib import Path

import agentguard


def use(agent: object) -> None:
    agentguard.guard(agent, Path("rules.ltl"), soft_block_limt=2)
    agentguard.guard(agent, Path("rules.ltl"), soft_block_limit="2")
    agentguard.guard(agent, Path("rules.ltl"), soft_block_limit=2, on_decision=print)
    agentguard.guard(agent, 42)
"""


def test_mypy_rejects_a_wrong_option_name_or_type(tmp_path: Path) -> None:
    """A wrong option name, a wrong option type and a non-spec are errors; valid options pass."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET, encoding="utf-8")
    out, err, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),  # shared with the project's own mypy run: warm, fast
            "--no-error-summary",
            str(snippet),
        ]
    )
    errors = [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]
    lines = [int(line.split(":")[1]) for line in out.splitlines() if ": error: " in line]
    assert status == 1, err
    assert lines == [7, 8, 10]
    assert errors[0].startswith('Unexpected keyword argument "soft_block_limt" for "guard"')
    assert errors[1].startswith('Argument "soft_block_limit" to "guard" has incompatible type')
    assert 'Argument 2 to "guard" has incompatible type "int"' in errors[2]
