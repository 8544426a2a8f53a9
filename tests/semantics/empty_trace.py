"""The documented empty-trace rule as one table (docs/language.md): what each formula is
worth on a trace with no calls.

The offline evaluator's tests and the online monitor's (its final verdict when a run ends
before any call) both read it, so the two are held to the same convention.
"""

from __future__ import annotations

from typing import Final

#: (formula text, its value on the empty trace): atoms and strong operators are false,
#: weak ones (N, G, W, R, Z, H) true, quantifiers over an empty domain as in logic.
EMPTY_TRACE_VALUES: Final[tuple[tuple[str, bool], ...]] = (
    ("a", False),
    ("X a", False),
    ("N a", True),
    ("F a", False),
    ("G a", True),
    ("a U b", False),
    ("a W b", True),
    ("a R b", True),
    ("Y a", False),
    ("Z a", True),
    ("O a", False),
    ("H a", True),
    ("a S b", False),
    ("!a", True),
    ("Called(a)", False),
    ("CalledN(a, 0, =)", True),
    ("forall x: a(k = x)", True),
    ("exists x: a(k = x)", False),
)
