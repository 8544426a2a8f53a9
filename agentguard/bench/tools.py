"""The eight deterministic tools of AgentLTL Table 6.

Each tool is a pure integer function. The three stateful tools (``tool_a_list``,
``tool_iterations``, ``tool_expand``) take the run's seed and difficulty at
construction, so one run can never leak state into another. Results are small
JSON objects (``{"result": n}``, ``{"numbers": [...]}``, ``{"children": [...]}``),
matching the records of Appendix B.

``TOOL_INFOS`` carries a name, description and typed input schema for each tool, so
the framework integrations can wrap them without this module importing a framework.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentguard.bench.errors import BadParameterError

ToolResult = dict[str, Any]
ToolFn = Callable[..., ToolResult]
ParamType = Literal["integer", "array"]


def _int(name: str, value: Any) -> int:
    """An integer argument; integral floats (``3.0``) are accepted, bools are not."""
    if isinstance(value, bool):
        raise BadParameterError(f"argument {name!r} must be an integer, got a bool")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise BadParameterError(f"argument {name!r} must be an integer, got {value!r}")


def _ints(name: str, value: Any) -> list[int]:
    if not isinstance(value, (list, tuple)):
        raise BadParameterError(f"argument {name!r} must be a list of integers, got {value!r}")
    return [_int(name, v) for v in value]


def _difficulty(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise BadParameterError(f"difficulty must be an integer in 1..5, got {value!r}")
    return value


# -- stateless tools -------------------------------------------------------------------


def tool_a(i: int) -> ToolResult:
    """``(3i + 5) mod 7 + 1``, in 1..7."""
    return {"result": (3 * _int("i", i) + 5) % 7 + 1}


def tool_b(i: int, j: int) -> ToolResult:
    """``(i·j + 11) mod 100``, in 0..99."""
    return {"result": (_int("i", i) * _int("j", j) + 11) % 100}


def tool_c(x: int) -> ToolResult:
    """``3x + 1``."""
    return {"result": 3 * _int("x", x) + 1}


def tool_d(numbers: Sequence[int]) -> ToolResult:
    """The sum of ``numbers``."""
    return {"result": sum(_ints("numbers", numbers))}


def tool_value(node: int) -> ToolResult:
    """``(13n + 3) mod 50``, in 0..49."""
    return {"result": (13 * _int("node", node) + 3) % 50}


# -- stateful tools (seed and difficulty fixed at construction) ---------------------------


@dataclass(frozen=True, slots=True)
class ToolAList:
    """``[((s(k+1)·7 + 13) mod 50) + 1 for k in 0..d+1]``: ``d + 2`` items in 1..50.

    ``s`` is the ``seed`` argument of the call (the prompt states it); ``d`` is fixed
    at construction.
    """

    seed: int
    difficulty: int

    def __post_init__(self) -> None:
        _difficulty(self.difficulty)

    def __call__(self, seed: int) -> ToolResult:
        s = _int("seed", seed)
        return {"numbers": [((s * (k + 1) * 7 + 13) % 50) + 1 for k in range(self.difficulty + 2)]}


@dataclass(frozen=True, slots=True)
class ToolIterations:
    """``(s mod 5) + d + 2``, at least 3: the loop count of tool_condition_branching."""

    seed: int
    difficulty: int

    def __post_init__(self) -> None:
        _difficulty(self.difficulty)

    def __call__(self, seed: int) -> ToolResult:
        return {"result": (_int("seed", seed) % 5) + self.difficulty + 2}


@dataclass(frozen=True, slots=True)
class ToolExpand:
    """``min(d, 3)`` children of ``n``: ``(n·s + 7(k+1) + 3) mod 20d + 1``.

    Both the run seed ``s`` and difficulty ``d`` are fixed at construction.
    """

    seed: int
    difficulty: int

    def __post_init__(self) -> None:
        _difficulty(self.difficulty)

    def __call__(self, node: int) -> ToolResult:
        n, s, d = _int("node", node), self.seed, self.difficulty
        return {"children": [(n * s + 7 * (k + 1) + 3) % (20 * d) + 1 for k in range(min(d, 3))]}


# -- metadata for integrations --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolParam:
    """One typed input of a tool."""

    name: str
    type: ParamType
    description: str


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """Name, description and input schema of a tool, framework-neutral."""

    name: str
    description: str
    params: tuple[ToolParam, ...]
    output: str
    stateful: bool = False

    def json_schema(self) -> dict[str, Any]:
        """A JSON Schema object for the arguments (OpenAI / LangChain ``args_schema`` shape)."""
        props: dict[str, Any] = {}
        for p in self.params:
            prop: dict[str, Any] = {"type": p.type, "description": p.description}
            if p.type == "array":
                prop["items"] = {"type": "integer"}
            props[p.name] = prop
        return {
            "type": "object",
            "properties": props,
            "required": [p.name for p in self.params],
            "additionalProperties": False,
        }

    def smolagents_inputs(self) -> dict[str, dict[str, str]]:
        """The ``inputs`` mapping a ``smolagents.Tool`` subclass declares."""
        return {p.name: {"type": p.type, "description": p.description} for p in self.params}


def _p(name: str, type_: ParamType, description: str) -> ToolParam:
    return ToolParam(name, type_, description)


TOOL_INFOS: Mapping[str, ToolInfo] = {
    info.name: info
    for info in (
        ToolInfo(
            "tool_a",
            "Deterministic integer tool A: maps i to a value in 1..7.",
            (_p("i", "integer", "input integer i"),),
            '{"result": int}',
        ),
        ToolInfo(
            "tool_b",
            "Deterministic integer tool B: maps (i, j) to a value in 0..99.",
            (
                _p("i", "integer", "first input integer i"),
                _p("j", "integer", "second input integer j"),
            ),
            '{"result": int}',
        ),
        ToolInfo(
            "tool_c",
            "Deterministic integer tool C: transforms x.",
            (_p("x", "integer", "input integer x"),),
            '{"result": int}',
        ),
        ToolInfo(
            "tool_d",
            "Deterministic integer tool D: aggregates a list of integers.",
            (_p("numbers", "array", "the integers to aggregate"),),
            '{"result": int}',
        ),
        ToolInfo(
            "tool_a_list",
            "Returns the list of integers to process for a seed.",
            (_p("seed", "integer", "the seed stated in the task"),),
            '{"numbers": [int, ...]}',
            stateful=True,
        ),
        ToolInfo(
            "tool_iterations",
            "Returns the number of iterations to run for a seed.",
            (_p("seed", "integer", "the seed stated in the task"),),
            '{"result": int}',
            stateful=True,
        ),
        ToolInfo(
            "tool_expand",
            "Returns the child nodes of a graph node.",
            (_p("node", "integer", "the node to expand"),),
            '{"children": [int, ...]}',
            stateful=True,
        ),
        ToolInfo(
            "tool_value",
            "Returns the value of a graph node, in 0..49.",
            (_p("node", "integer", "the node to score"),),
            '{"result": int}',
        ),
    )
}
"""Metadata of the eight tools, in Table 6 order."""

TOOL_NAMES: tuple[str, ...] = tuple(TOOL_INFOS)


def make_tools(seed: int, difficulty: int) -> dict[str, ToolFn]:
    """Fresh callables for one run (step (iv) of Appendix C.4)."""
    seed = _int("seed", seed)
    return {
        "tool_a": tool_a,
        "tool_b": tool_b,
        "tool_c": tool_c,
        "tool_d": tool_d,
        "tool_a_list": ToolAList(seed, difficulty),
        "tool_iterations": ToolIterations(seed, difficulty),
        "tool_expand": ToolExpand(seed, difficulty),
        "tool_value": tool_value,
    }


Aliases = Mapping[str, Mapping[str, Any]]
"""Shown tool name -> ``{"tool": base name, "args": {shown arg: base arg}}`` (Appendix D.4)."""


class Toolbox:
    """The tools of one run, callable by name with an argument mapping (as agents call them).

    ``names`` restricts the tools (shown names when ``aliases`` renames them).
    """

    __slots__ = ("_aliases", "_tools", "difficulty", "seed")

    def __init__(
        self,
        seed: int,
        difficulty: int,
        names: Sequence[str] | None = None,
        *,
        aliases: Aliases | None = None,
    ) -> None:
        self.seed = seed
        self.difficulty = difficulty
        self._aliases = dict(aliases or {})
        tools = make_tools(seed, difficulty)
        self._tools = {
            n: tools[self._base(n)] for n in (names or TOOL_NAMES) if self._base(n) in tools
        }

    def _base(self, name: str) -> str:
        alias = self._aliases.get(name)
        return str(alias["tool"]) if alias else name

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def function(self, name: str) -> ToolFn:
        if name not in self._tools:
            raise BadParameterError(f"unknown tool {name!r}; available: {', '.join(self._tools)}")
        return self._tools[name]

    def call(self, name: str, args: Mapping[str, Any]) -> ToolResult:
        """Run ``name`` with keyword ``args``; wrong names or arguments raise BadParameterError."""
        fn = self.function(name)
        base = self._base(name)
        renames: Mapping[str, str] = self._aliases.get(name, {}).get("args", {})
        base_args = {renames.get(k, k): v for k, v in args.items()}
        expected = {p.name for p in TOOL_INFOS[base].params}
        if set(base_args) != expected:
            shown = sorted({v: k for k, v in renames.items()}.get(a, a) for a in expected)
            raise BadParameterError(f"{name} takes arguments {shown}, got {sorted(args)}")
        return fn(**base_args)


def python_tools(
    seed: int,
    difficulty: int,
    names: Sequence[str] | None = None,
    *,
    aliases: Aliases | None = None,
) -> list[Callable[..., ToolResult]]:
    """Plain typed functions for one run, ready for ``smolagents.tool`` or
    ``langchain_core.tools.StructuredTool.from_function``.

    Each has the (shown) tool name, a Google-style docstring with an ``Args:`` section,
    type annotations and an ``inspect.Signature``, so framework decorators can read the
    schema. ``aliases`` renames tools and arguments as in Appendix D.4.
    """
    import inspect

    box = Toolbox(seed, difficulty, names, aliases=aliases)
    out: list[Callable[..., ToolResult]] = []
    for shown in box.names:
        base = box._base(shown)
        info = TOOL_INFOS[base]
        renames = {v: k for k, v in dict((aliases or {}).get(shown, {}).get("args", {})).items()}
        params = [(renames.get(p.name, p.name), p) for p in info.params]
        fn = _bind(box, shown)
        fn.__name__ = fn.__qualname__ = shown
        fn.__doc__ = (
            info.description
            + "\n\nArgs:\n"
            + "".join(f"    {name}: {p.description}\n" for name, p in params)
        )
        hints: dict[str, Any] = {
            name: (int if p.type == "integer" else list[int]) for name, p in params
        }
        hints["return"] = dict[str, Any]
        fn.__annotations__ = hints
        fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter(
                    name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hints[name]
                )
                for name, _ in params
            ],
            return_annotation=dict[str, Any],
        )
        out.append(fn)
    return out


def _bind(box: Toolbox, name: str) -> Callable[..., ToolResult]:
    def run(**kwargs: Any) -> ToolResult:
        return box.call(name, kwargs)

    return run
