"""No false warnings on the benchmark's generated specs (the paper grid's seed 42, d1 and d5)."""

from __future__ import annotations

import pytest

from agentguard.analysis import lint_spec
from agentguard.bench.generate import generate_instance, instance_spec_text
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.language import parse_spec


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_generated_spec_lints_clean(template: str) -> None:
    """Every generated spec is a satisfiable procedure (its gold trace passes): no warning."""
    spec = parse_spec(instance_spec_text(generate_instance(template, 1, 42)))
    assert lint_spec(spec) == ()


def test_hardest_exists_instance_lints_clean() -> None:
    """A difficulty-5 instance with quantified and counted constraints lints clean too."""
    spec = parse_spec(instance_spec_text(generate_instance("exists_selection", 5, 42)))
    assert lint_spec(spec) == ()
