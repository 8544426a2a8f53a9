"""One local Ray session shared by every test that needs it (Ray starts slowly)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
