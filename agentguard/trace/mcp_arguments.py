"""The arguments an MCP server acts on: a ``tools/call``'s arguments read by the tool's
``inputSchema`` (from ``tools/list``).

A server fills in the ``default`` its schema declares for an argument the client left out,
and a Python server (``MCPServer``, FastMCP: pydantic) converts what it can, so the text
``"9000"`` becomes ``9000.0`` for a ``number``. A check of the arguments as the client sent
them would judge something else than what runs: ``delete(path)`` with ``force`` defaulted
to ``true`` would pass ``G !delete(force = true)``. So, by one rule for the MCP gateway
(live) and the MCP message-log reader (offline):

* **defaults are filled in**, as the server will: each property the schema declares with
  a ``default`` that the arguments lack, in nested objects too (an object's properties, an
  array's items), following local ``$ref``s and ``allOf``; of ``anyOf`` / ``oneOf`` the
  branches the value fits (when they fill in different values, which one the server
  takes is not known: a problem);
* **a key the schema does not declare** is refused where the object declares its
  properties and says nothing of others (pydantic's default, ``extra="ignore"``): the
  server may drop it, or read it as a field under the field's own name beside its
  alias (``skip_checks`` for ``skipChecks``), so what it acts on is not known;
* **a number JSON cannot carry** (``1e999``, read as infinity, which the SDK sends as
  ``null``) is refused: the server would get another value;
* **text is never converted, it is refused**: a value that does not fit the type its
  schema declares (``"9000"`` for a ``number``, ``"yes"`` for a ``boolean``) is a problem,
  and so is text that reads as a number or a boolean where the schema takes either (a
  ``Decimal`` is ``anyOf`` number or string in pydantic's schema, and becomes a number):
  how a server converts text is its own (pydantic reads ``"yes"`` as ``true``), so a check
  of any one reading would be a guess. A client can always send the value typed.
* **JSON text a field reads** (``contentMediaType: application/json``: pydantic's
  ``Json``) is judged decoded, as the server acts on it (the client cannot send it any
  other way);
* **JSON in text** is refused where the server may decode it: ``MCPServer`` (and FastMCP)
  runs ``json.loads`` on a top-level text argument whose parameter is not annotated
  ``str``, and acts on the list, object or null it reads. So text that reads as one of
  those is a problem in a top-level argument whose schema takes that type too
  (``str | list[str]``: ``anyOf`` string or array), takes anything (``Any``: no type),
  or is the SDK's schema of an *unannotated* parameter (``{"title": <its own name>,
  "type": "string"}``, a ``default`` beside them if it has one; the SDK reads it as ``Any``): ``'["/prod"]'`` would be judged as
  text and acted on as a list.

The gateway judges the filled-in arguments and refuses a call with a problem, naming the
argument and the type to send (docs/mcp.md). A schema is read within a budget: one too
deep or too large to read (a ``$ref`` loop) is a problem too, never a call let through
unread. Depends on nothing else of the package.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

MAX_DEPTH: Final = 200  # schema and value levels followed together
MAX_STEPS: Final = 100_000  # schema nodes read per call: a hostile schema cannot stall a call
_MAX_REF_HOPS: Final = 32
_TYPE_WORDS: Final = {
    "string": "text",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "a list",
}
_BOOLEAN_TEXTS: Final = frozenset(
    {"true", "false", "t", "f", "yes", "no", "y", "n", "on", "off", "1", "0"}
)


@dataclass(frozen=True, slots=True)
class ServerArguments:
    """``args`` with the schema's defaults filled in; ``problem``: why the server's
    reading of them is not known (the call is refused), or None."""

    args: dict[str, Any]
    problem: str | None = None


def server_arguments(schema: Any, args: Mapping[str, Any]) -> ServerArguments:
    """The arguments the server acts on, read by its ``inputSchema`` (see the module)."""
    given = dict(args)
    unsent = _not_json(given)
    if unsent is not None:
        return ServerArguments(given, unsent)
    if not isinstance(schema, Mapping):
        return ServerArguments(given)
    reader = _Reader(schema)
    try:
        _refuse_decodable(reader, schema, given)
        filled = reader.fill(schema, given, "", 0)
    except _Unknown as exc:
        return ServerArguments(given, str(exc))
    return ServerArguments(filled if isinstance(filled, dict) else given)


def _not_json(args: dict[str, Any]) -> str | None:
    """A number JSON cannot carry (``1e999`` read as infinity): the request would carry
    another value (the SDK writes ``null``), so it is not judged."""
    stack: list[tuple[str, Any]] = list(args.items())
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return (
                f"argument {path!r} is {value!r}, which JSON cannot carry (the server would "
                "get another value): send a finite number"
            )
        if isinstance(value, Mapping):
            stack.extend((_join(path, str(k)), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
    return None


class _Unknown(Exception):
    """The server's reading of an argument is not known (caught in ``server_arguments``);
    ``mismatch_at``: the path of a value that does not fit its schema's type."""

    def __init__(self, message: str, mismatch_at: str | None = None) -> None:
        super().__init__(message)
        self.mismatch_at = mismatch_at


class _Reader:
    """One call's walk of a schema and its value together, within the budget."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.steps = 0

    def fill(self, schema: Any, value: Any, path: str, depth: int) -> Any:
        """``value`` with the defaults of ``schema`` filled in; raises ``_Unknown``."""
        self.steps += 1
        if depth > MAX_DEPTH or self.steps > MAX_STEPS:
            raise _Unknown(
                f"the tool's input schema is too deep or too large to read at {_name(path)}"
            )
        s = self.resolve(schema)
        if isinstance(value, str) and s.get("contentMediaType") == "application/json":
            decoded = _decoded(value)  # JSON text a field reads decoded: judged by its contents
            if decoded is not _NOT_JSON:
                content = s.get("contentSchema")
                inner = content if isinstance(content, Mapping) else {}
                return self.fill(inner, decoded, path, depth + 1)
        for part in _schemas(s.get("allOf")):
            value = self.fill(part, value, path, depth + 1)
        branches = [*_schemas(s.get("anyOf")), *_schemas(s.get("oneOf"))]
        if branches:
            value = self.union(branches, value, path, depth)
        kinds = _types(s.get("type"))
        if kinds:
            if not any(_fits(kind, value) for kind in kinds):
                raise _Unknown(_mismatch(path, kinds, value), mismatch_at=path)
            _refuse_ambiguous_text(kinds, value, path)
        if isinstance(value, dict):
            return self.object(s, value, path, depth)
        if isinstance(value, list):
            return self.array(s, value, path, depth)
        return value

    def union(self, branches: list[Mapping[str, Any]], value: Any, path: str, depth: int) -> Any:
        fitting: list[Any] = []
        inner: list[_Unknown] = []  # branches the value's type fits, failing further in
        for branch in branches:
            try:
                fitting.append(self.fill(branch, value, path, depth + 1))
            except _Unknown as exc:
                if exc.mismatch_at != path:
                    inner.append(exc)
        kinds = [k for b in branches for k in _types(self.resolve(b).get("type"))]
        if not fitting:
            if len(inner) == 1:
                raise inner[0]
            raise _Unknown(_mismatch(path, kinds, value), mismatch_at=path)
        _refuse_ambiguous_text(kinds, value, path)
        first = _canonical(fitting[0])
        if any(_canonical(other) != first for other in fitting[1:]):
            raise _Unknown(
                f"argument {_name(path)} fits several of the tool's input schemas, which "
                "fill in different defaults: pass every field of it explicitly"
            )
        return fitting[0]

    def object(self, s: Mapping[str, Any], value: dict[str, Any], path: str, depth: int) -> Any:
        props = s.get("properties")
        declared: Mapping[str, Any] = props if isinstance(props, Mapping) else {}
        if declared and not _OPEN.intersection(s):  # (pydantic's "ignore": no keyword)
            unknown = next((k for k in value if k not in declared), None)
            if unknown is not None:
                raise _Unknown(
                    f"argument {_name(_join(path, str(unknown)))} is not in the tool's input "
                    "schema: the server may drop it or read it as one of its fields (pydantic "
                    "reads a field by its own name beside its alias), so agentguard cannot "
                    "judge it: leave it out, or send it under the schema's name"
                )
        out = dict(value)
        for key, prop in declared.items():
            where = _join(path, str(key))
            if key in out:
                out[key] = self.fill(prop, out[key], where, depth + 1)
                continue
            found, default = self.default(prop)
            if found:
                try:  # the server's own default, filled in as it fills one in
                    out[key] = self.fill(prop, copy.deepcopy(default), where, depth + 1)
                except _Unknown:  # a default that does not fit its own type: as it is
                    out[key] = copy.deepcopy(default)
        extra = s.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in [k for k in out if k not in declared]:
                out[key] = self.fill(extra, out[key], _join(path, key), depth + 1)
        return out

    def array(self, s: Mapping[str, Any], value: list[Any], path: str, depth: int) -> Any:
        items, prefix = s.get("items"), s.get("prefixItems")
        if isinstance(items, list):  # draft 4-7 tuple validation
            items, prefix = s.get("additionalItems"), items
        out = list(value)
        for i, item in enumerate(out):
            sub = prefix[i] if isinstance(prefix, list) and i < len(prefix) else items
            if isinstance(sub, Mapping):
                out[i] = self.fill(sub, item, f"{path}[{i}]", depth + 1)
        return out

    def default(self, prop: Any) -> tuple[bool, Any]:
        """``(declared, value)`` of a property's ``default`` (beside a ``$ref`` or behind it)."""
        if isinstance(prop, Mapping) and "default" in prop:
            return True, prop["default"]
        resolved = self.resolve(prop)
        return ("default" in resolved), resolved.get("default")

    def resolve(self, schema: Any) -> Mapping[str, Any]:
        """``schema`` with its local ``$ref``s followed (its own keywords over the target's)."""
        out: Any = schema
        for _ in range(_MAX_REF_HOPS):
            if not isinstance(out, Mapping) or not isinstance(out.get("$ref"), str):
                break
            own = {k: v for k, v in out.items() if k != "$ref"}
            target = self.pointer(out["$ref"])
            out = {**target, **own} if isinstance(target, Mapping) else own
            self.steps += 1
        else:
            raise _Unknown("the tool's input schema has a $ref loop")
        return out if isinstance(out, Mapping) else {}

    def pointer(self, ref: str) -> Any:
        """The part of the root schema a local JSON pointer (``#/$defs/Name``) names."""
        if not ref.startswith("#"):
            return None  # a remote schema is not fetched: nothing known of it
        node: Any = self.root
        for raw in ref[1:].split("/")[1:]:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node


def _schemas(raw: Any) -> list[Mapping[str, Any]]:
    return [s for s in raw if isinstance(s, Mapping)] if isinstance(raw, list) else []


def _types(raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    return [t for t in raw if isinstance(t, str)] if isinstance(raw, list) else []


def _fits(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, list)
    return True  # a type name JSON Schema does not define restricts nothing known


def _refuse_ambiguous_text(kinds: list[str], value: Any, path: str) -> None:
    """Text where the schema also takes a number or a boolean that the text reads as:
    a server may convert it (pydantic does), so what it acts on is not known."""
    if not isinstance(value, str) or "string" not in kinds:
        return
    reads = []
    if {"number", "integer"} & set(kinds) and _reads_as_number(value):
        reads.append("a number")
    if "boolean" in kinds and value.strip().lower() in _BOOLEAN_TEXTS:
        reads.append("a boolean")
    if reads:
        raise _Unknown(
            f"argument {_name(path)} is the text {_short(value)}, which the tool's input "
            f"schema also takes as {' or '.join(reads)}; the server may act on either, so "
            f"agentguard cannot judge it: send it as {reads[0]}"
        )


def _refuse_decodable(reader: _Reader, schema: Mapping[str, Any], args: dict[str, Any]) -> None:
    """JSON text in a top-level argument the server may decode (see the module)."""
    props = reader.resolve(schema).get("properties")
    if not isinstance(props, Mapping):
        return
    for key, value in args.items():
        if not isinstance(value, str) or not value.strip().startswith(("[", "{", "n")):
            continue
        prop = props.get(key)
        if not isinstance(prop, Mapping):
            continue
        decoded = _decoded(value)
        if decoded is _NOT_JSON:
            continue
        wanted = _json_kind(decoded)
        if not wanted:
            continue
        if prop.get("title") == key and prop.get("type") == "string" and set(prop) <= _MARKER:
            takes = True  # MCPServer's schema of an unannotated parameter: read as Any
        else:
            resolved = reader.resolve(prop)
            branches = [*_schemas(resolved.get("anyOf")), *_schemas(resolved.get("oneOf"))]
            kinds = _types(resolved.get("type"))
            kinds += [k for b in branches for k in _types(reader.resolve(b).get("type"))]
            takes = wanted in kinds or not (kinds or branches or _restricts(resolved))
        if takes:
            raise _Unknown(
                f"argument {key!r} is the text {_short(value)}, which is JSON for "
                f"{_TYPE_WORDS[wanted]}; the server may decode it (MCPServer does, for a "
                "parameter not annotated str) and act on either, so agentguard cannot "
                f"judge it: send it as {_TYPE_WORDS[wanted]}, or annotate the parameter str"
            )


_OPEN: Final = frozenset({"additionalProperties", "patternProperties", "unevaluatedProperties"})
"""The keywords by which an object schema says what its undeclared keys are."""
_NOT_JSON: Final = object()
_MARKER: Final = frozenset({"title", "type", "default"})
"""The keys of ``MCPServer``'s schema of an unannotated parameter (with a default, too)."""
_RESTRICTING: Final = frozenset({"allOf", "enum", "const", "$ref", "not", "if"})


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return "object" if isinstance(value, dict) else "array" if isinstance(value, list) else ""


def _restricts(schema: Mapping[str, Any]) -> bool:
    return any(k in schema for k in _RESTRICTING)


def _reads_as_number(text: str) -> bool:
    try:
        float(text.strip())
    except ValueError:
        return False
    return True


def _mismatch(path: str, kinds: list[str], value: Any) -> str:
    wanted = " or ".join(dict.fromkeys(_TYPE_WORDS.get(k, k) for k in kinds)) or "another type"
    return (
        f"argument {_name(path)} is {_described(value)} where the tool's input schema takes "
        f"{wanted}: send it as {wanted} (agentguard judges the value the server acts on, "
        "and does not guess how the server would convert it)"
    )


def _described(value: Any) -> str:
    if isinstance(value, str):
        return f"the text {_short(value)}"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if value is None:
        return "null"
    return "an object" if isinstance(value, Mapping) else "a list"


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _name(path: str) -> str:
    return repr(path) if path else "(the arguments)"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _canonical(value: Any) -> str:
    """Equal texts for equal JSON values of the same JSON types (``1 != true``)."""
    return json.dumps(value, sort_keys=True, default=repr)


__all__ = ["MAX_DEPTH", "MAX_STEPS", "ServerArguments", "server_arguments"]
