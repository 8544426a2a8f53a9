"""Every exception agentguard raises, and where each one lives.

This module is a leaf (it imports nothing from the package), so any layer can raise the
root errors. Errors that belong to one part live beside it and are drawn here with their
module. ``tests/test_errors_hierarchy.py`` checks that every error and warning class of the
package appears in this drawing.

Hierarchy::

    AgentGuardError
    ├── SpecError
    │   ├── SpecSyntaxError (ValueError)      malformed `.ltl` text: file, line, column, caret
    │   ├── SpecSemanticError (ValueError)    all semantic problems of a spec, collected
    │   ├── SpecImportError (ImportError)     an `import` that cannot be read, or a cycle
    │   ├── SpecTooLargeError (ValueError)    a spec file or text over the size limit
    │   └── SpecInputError (TypeError)        scoring.inputs: a value that is no Spec, path or text
    ├── TraceError (ValueError)
    │   └── TraceRecordError                  one bad record: file and line / record index
    ├── EvaluationError                       a formula cannot be evaluated (e.g. unbound name)
    │   └── PredicateError                    a user predicate or extractor raised
    ├── MissingExtraError (ImportError)       an optional extra is not installed
    ├── CallArgumentsError (TypeError)      a call's arguments handed to the firewall are
    │                                         no mapping (a list, JSON text)
    ├── UncheckableArgumentsError (ValueError) trace.arguments: an argument value the
    │                                         check cannot hold faithfully (an object,
    │                                         bytes, too deep): the call is refused
    ├── MonitorStateError (ValueError)        monitor.monitor: a saved state does not fit
    ├── FirewallConfigError (ValueError)      enforcement.options: bad Firewall options
    ├── ToolMismatchError (ValueError)        enforcement.agent_tools: the spec names a tool,
    │                                         parameter or type the agent's tools lack, and
    │                                         strict_tools=True makes that an error
    ├── FirewallStateError (ValueError)       enforcement.firewall: a saved state does not fit
    ├── TraceNotKeptError (RuntimeError)      enforcement.reporting: the trace of a Firewall
    │                                         built without keep_trace=True
    ├── FirewallProtocolError (ValueError)    enforcement.flight: an adapter broke the
    │                                         propose / executed / withdraw protocol
    ├── ApprovalError (ValueError)            enforcement.approval: an approver's answer that
    │                                         is not an approval
    ├── OtelMissingError (ImportError)        enforcement.otel: spans asked for without the
    │                                         [otel] extra
    ├── ChainForkError (RuntimeError)         enforcement.continuing: a second firewall restored
    │                                         from one saved run would fork its log's chain
    ├── HeadsFileError (ValueError)           enforcement.log_anchor: a heads file line is
    │                                         not a head (file and line named)
    ├── CaseFileError (ValueError)            cli.policy_test: a policy case file is malformed
    ├── UnsupportedAgentError (TypeError)     guard: `guard()` does not know this agent
    ├── AlreadyGuardedError (ValueError)      guard: the agent is guarded already
    ├── PecError (ValueError)                 pec.errors: bad PEC input
    ├── ReplayError                           pec.errors: an episode cannot be replayed
    ├── BenchError                            bench.errors: the procedural benchmark
    │   ├── UnknownTemplateError (KeyError)   no template of that name
    │   ├── BadParameterError (ValueError)    a template parameter out of range
    │   ├── InstanceTooLongError (ValueError) the instance exceeds the call budget
    │   └── InstanceFileError (ValueError)    an instance file cannot be read
    ├── MiningError (ValueError)              mining.errors: nothing readable to mine, or a
    │                                         threshold out of range
    ├── GroupFieldError (ValueError)          report.batch: a `--group-by` field is missing
    ├── ScriptExhaustedError (RuntimeError)   testing.script: a scripted model ran out
    ├── NoScriptError (LookupError)           testing.agentdojo_models: no AgentDojo task has
    │                                         the prompt a scripted agent was given
    ├── MiddlewareOrderError (ValueError)     integrations.langchain: AgentGuardMiddleware
    │                                         listed inside a middleware that may handle a
    │                                         tool's error (refused by create_agent)
    ├── ReceivedOtherArguments                integrations.langchain: the tool's last
    │                                         validation gave other arguments than checked
    ├── GatewayError (RuntimeError)           integrations.mcp: the upstream MCP server
    │                                         could not be started or listed
    ├── GuardControlError (RuntimeError)      integrations.openai_agents: a guard control
    │                                         (next_run...) called from inside a run
    ├── ToolCallBlocked                       integrations.smolagents: a blocked call, raised
    │                                         inside a CodeAgent's code for the model to see
    ├── ToolArgumentsError (TypeError)        integrations.smolagents: positional arguments
    │                                         that do not fit the tool's inputs
    ├── FinalAnswerRefused                    integrations.smolagents: final answer refused
    ├── StreamSupersededError (RuntimeError)  integrations.smolagents: a streamed run resumed
    │                                         after another run of the agent began
    └── ExposedToolsError (ValueError)        integrations.smolagents: authorised imports let
                                              model code reach the unguarded tools

    BaseException
    └── RunStopped                            enforcement.decision: a HARD_STOP ends the run;
                                              carries the Decision and escapes
                                              `except Exception` (not an AgentGuardError)

    AgentGuardWarning (UserWarning)           warnings.warn category; `-W error` makes it fatal
    └── ToolMismatchWarning                   the spec's tools differ from the agent's

Errors are plain data: building one never logs or does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class AgentGuardError(Exception):
    """Root of every error agentguard raises on purpose."""


class SpecError(AgentGuardError):
    """A specification could not be loaded."""


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where something is in a spec file (1-based line and column)."""

    source: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.column}"


def draw_caret(text: str, line: int, column: int) -> str:
    """The offending line with a caret under the column, as lark's get_context does."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].expandtabs(1)
    return f"    {src}\n    {' ' * max(column - 1, 0)}^"


class SpecSyntaxError(SpecError, ValueError):
    """The spec text does not follow the grammar."""

    def __init__(
        self,
        message: str,
        location: SourceLocation,
        context: str = "",
        expected: Sequence[str] = (),
    ) -> None:
        self.message = message
        self.location = location
        self.context = context
        self.expected = tuple(expected)
        super().__init__(str(self))

    @property
    def source(self) -> str:
        return self.location.source

    @property
    def line(self) -> int:
        return self.location.line

    @property
    def column(self) -> int:
        return self.location.column

    def __str__(self) -> str:
        out = f"{self.location}: syntax error: {self.message}"
        if self.expected:
            out += f" (expected one of: {', '.join(sorted(self.expected)[:12])})"
        if self.context:
            out += "\n" + self.context
        return out


@dataclass(frozen=True, slots=True)
class Problem:
    """One semantic problem with its location."""

    message: str
    location: SourceLocation | None

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class SpecSemanticError(SpecError, ValueError):
    """One or more semantic problems, all reported together."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__(str(self))

    def __str__(self) -> str:
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in spec:"
        return head + "".join(f"\n  {p}" for p in self.problems)


class SpecImportError(SpecError, ImportError):
    """An imported spec cannot be found or the imports form a cycle."""


class SpecTooLargeError(SpecError, ValueError):
    """A spec over ``agentguard.language.files.MAX_SPEC_BYTES``, refused before parsing."""


class TraceError(AgentGuardError, ValueError):
    """A trace or metrics record is malformed."""


class TraceRecordError(TraceError):
    """One record is malformed; names the file and line (or record index)."""

    def __init__(self, message: str, *, source: str = "<trace>", record: int | None = None) -> None:
        self.message = message
        self.source = source
        self.record = record
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.source if self.record is None else f"{self.source}:{self.record}"
        return f"{where}: {self.message}"


class CallArgumentsError(AgentGuardError, TypeError):
    """A call was handed to the firewall with arguments that are not a mapping of
    names to values (a list, a JSON string): refused before anything is checked."""

    def __init__(self, tool: str, args: object) -> None:
        self.tool = tool
        hint = " (JSON text? decode it first: json.loads)" if isinstance(args, (str, bytes)) else ""
        super().__init__(
            f"the arguments of a {tool!r} call must be a mapping of argument names to "
            f"values, got {type(args).__name__}{hint}"
        )


class UncheckableArgumentsError(AgentGuardError, ValueError):
    """An argument value the firewall cannot check faithfully (a custom object, bytes, a
    set, nesting past the limit): the call is refused, never judged on a summary.

    ``where`` names the value (``argument 'items[2].name'``), ``reason`` says what it is.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where} {reason}")


class EvaluationError(AgentGuardError):
    """A formula could not be evaluated."""


class PredicateError(EvaluationError):
    """A user predicate, domain extractor or matcher raised."""


class MissingExtraError(AgentGuardError, ImportError):
    """An optional dependency is missing; says which extra to install."""

    def __init__(self, extra: str, module: str) -> None:
        self.extra = extra
        super().__init__(f"{module} is not installed: pip install 'agentguard[{extra}]'")


__all__ = [
    "AgentGuardError",
    "EvaluationError",
    "MissingExtraError",
    "PredicateError",
    "Problem",
    "SourceLocation",
    "SpecError",
    "SpecImportError",
    "SpecSemanticError",
    "SpecSyntaxError",
    "TraceError",
    "TraceRecordError",
    "draw_caret",
]


class AgentGuardWarning(UserWarning):
    """Root of the warnings agentguard emits (filter them by this class)."""


class ToolMismatchWarning(AgentGuardWarning):
    """The spec names a tool, parameter or type the agent's tools do not have.

    Emitted when the agent's tools are known (see ``agentguard.analysis.compare_tools``):
    such a constraint would never fire, or the declaration would refuse every call.
    """
