"""The ToolSandbox worker, one for the session (building its scenarios takes ~20 s).

It is the worker ``agentguard pec --toolsandbox`` uses in this process too
(:func:`~agentguard.pec.toolsandbox_env.shared_worker`), so CLI tests start no other.
"""

from __future__ import annotations

import pytest

from agentguard.pec.toolsandbox_env import ToolSandboxWorker, shared_worker


@pytest.fixture(scope="session")
def toolsandbox_worker(toolsandbox_python: str) -> ToolSandboxWorker:
    return shared_worker(toolsandbox_python)
