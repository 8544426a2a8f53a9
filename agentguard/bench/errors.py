"""Errors of the procedural benchmark (all subclass :mod:`agentguard.errors`)."""

from __future__ import annotations

from agentguard.errors import AgentGuardError


class BenchError(AgentGuardError):
    """Root of the benchmark's own errors."""


class UnknownTemplateError(BenchError, KeyError):
    """A template name that is not one of the registered templates."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown template"


class BadParameterError(BenchError, ValueError):
    """A tool input, difficulty or seed outside its documented range."""


class InstanceTooLongError(BenchError, ValueError):
    """The gold trace exceeds the 50-call filter of Appendix C.3; the instance is dropped."""

    def __init__(self, template: str, difficulty: int, seed: int, calls: int, limit: int) -> None:
        self.template = template
        self.difficulty = difficulty
        self.seed = seed
        self.calls = calls
        self.limit = limit
        super().__init__(
            f"{template} D{difficulty} seed {seed}: gold trace has {calls} calls (limit {limit})"
        )


class InstanceFileError(BenchError, ValueError):
    """An instance JSON file that cannot be read back."""
