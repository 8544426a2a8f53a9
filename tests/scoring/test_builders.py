"""The bulk builders make the very objects the dataclass constructors make."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from agentguard.scoring.builders import compliance_report, constraint_result
from agentguard.scoring.report import ComplianceReport, ConstraintResult


def test_constraint_result_equals_the_constructor() -> None:
    """Every field set, equal and hashing alike, still frozen."""
    args = ("c", "L1", 2.0, False, "why", "HARD_BLOCK", "msg", None)
    built = constraint_result(*args)
    made = ConstraintResult(*args)
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    assert built.to_dict(extended=True) == made.to_dict(extended=True)


def test_compliance_report_equals_the_constructor() -> None:
    """A built report equals the constructed one and serialises the same."""
    result = ConstraintResult("c", None, 1.0, True, "ok")
    args = (1.0, "FULL", "All constraints satisfied.", ("a",), (result,), "spec", ())
    built = compliance_report(*args)
    made = ComplianceReport(*args)
    assert built == made and built.to_dict(extended=True) == made.to_dict(extended=True)
    with pytest.raises(FrozenInstanceError):
        built.details = "x"  # type: ignore[misc]
