"""Skip marks for the oracle engines, so a machine without one still runs the others."""

from __future__ import annotations

import importlib.util

import pytest

from .ltlf_oracle import Engine, engine_available, mona_available, spot_available

needs_mona = pytest.mark.skipif(
    not mona_available(), reason="needs the `mona` executable (apt-get install mona)"
)
needs_spot = pytest.mark.skipif(not spot_available(), reason="needs Spot (pip install spottl)")
needs_ltlf2dfa = pytest.mark.skipif(
    importlib.util.find_spec("ltlf2dfa") is None or not mona_available(),
    reason="needs ltlf2dfa (pip install ltlf2dfa) and the `mona` executable",
)


def needs(engine: Engine) -> pytest.MarkDecorator:
    """The skip mark of ``engine``."""
    return pytest.mark.skipif(not engine_available(engine), reason=f"needs {engine}")


def engine_for(future: bool) -> Engine:
    """Spot for future formulas when it is installed, MONA otherwise."""
    return "spot" if future and spot_available() else "mona"
