"""The hierarchy drawn in ``agentguard/errors.py`` names every error and warning class."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator

import agentguard
import agentguard.errors
from agentguard.enforcement.decision import RunStopped
from agentguard.errors import AgentGuardError


def _import_everything() -> None:
    """Import every module of the package (and the adapters), so subclasses are defined."""
    for info in pkgutil.walk_packages(agentguard.__path__, "agentguard."):
        if not info.name.endswith("__main__"):  # a __main__ runs the CLI when imported
            importlib.import_module(info.name)
    adapters = importlib.import_module("agentguard.integrations")
    for info in pkgutil.walk_packages(adapters.__path__, "agentguard.integrations."):
        importlib.import_module(info.name)


def _subclasses(root: type[BaseException]) -> Iterator[type[BaseException]]:
    for cls in root.__subclasses__():
        yield cls
        yield from _subclasses(cls)


def _ours(cls: type[BaseException]) -> bool:
    module = cls.__module__
    return module.startswith(("agentguard", "integrations")) and not module.startswith(
        ("tests", "agentguard.tests")
    )


def _drawn_names() -> set[str]:
    doc = agentguard.errors.__doc__ or ""
    return set(re.findall(r"\b[A-Z][A-Za-z]+\b", doc))


def test_every_error_class_is_drawn() -> None:
    """Every AgentGuardError subclass, RunStopped and every warning class is in the drawing."""
    _import_everything()
    classes = {AgentGuardError, RunStopped}
    classes |= {c for c in _subclasses(AgentGuardError) if _ours(c)}
    classes |= {c for c in _subclasses(Warning) if _ours(c)}
    missing = sorted(c.__name__ for c in classes if c.__name__ not in _drawn_names())
    assert not missing, "errors.py's hierarchy does not draw: " + ", ".join(missing)
    assert len(classes) > 20  # the walk really found the package's classes


def test_run_stopped_is_drawn_under_base_exception() -> None:
    """RunStopped is drawn under BaseException, its real root, not under AgentGuardError."""
    doc = agentguard.errors.__doc__ or ""
    tail = doc[doc.index("    BaseException") :]
    assert "└── RunStopped" in tail
    assert not issubclass(RunStopped, AgentGuardError)
    assert issubclass(RunStopped, BaseException) and not issubclass(RunStopped, Exception)
