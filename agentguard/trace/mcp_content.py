"""MCP tool results as a spec sees them: a ``CallToolResult`` unwrapped to its value.

An MCP server answers ``tools/call`` with content blocks, e.g.
``{"content": [{"type": "text", "text": "{\\"verified\\": true}"}], "isError": false}``.
A spec tests the value the model reads, so ``result.verified`` must find ``true`` there:

* one text block is its text, JSON decoded (``{"verified": true}``);
* several blocks are a list, each text block decoded, other blocks (images, resources)
  kept as they are;
* no content at all is the ``structuredContent`` (None if there is none either);
* ``isError: true`` marks the call as a tool error (the text stays the result);
* a bare list of content blocks (``[{"type": "text", "text": "..."}]``: the ``content``
  alone, as some servers and SDKs, LangChain's MCP adapters among them, return it) is
  unwrapped the same way (:func:`is_content_list`); it says nothing about errors.

A request answered with a JSON-RPC ``error`` instead of a result is told apart by its code
(:func:`rejected_request`): the codes JSON-RPC reserves for a request refused as it was
read (parse error, invalid request, method not found, invalid params) mean no handler
ran, so the call never ran; any other code (internal error, a server's own codes: the
SDK answers with these when a handler raised them or failed) may have come from a tool
that had begun, so the call ran, with :func:`jsonrpc_error_text` as its error. A request
the client cancelled (``notifications/cancelled``) and that got no answer was sent, so it
may have run: it ran, with :data:`CANCELLED_TEXT` as its error (so does one answered
with :data:`REQUEST_CANCELLED`, as the SDK's HTTP transport answers a cancellation).

The text is preferred over ``structuredContent`` because it is what the model reads
(servers built with the SDK wrap a scalar return value as ``{"result": ...}`` in the
structured copy only). Used by the MCP proxy online and by the trace loaders offline,
so both see the same value. Depends only on the JSON decoding of
:mod:`agentguard.trace.call_fields`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import unquote

from agentguard.trace.call_fields import decode_result


def is_call_tool_result(value: Any) -> bool:
    """An object shaped like an MCP ``CallToolResult``: a ``content`` list of typed blocks
    (``isError`` / ``structuredContent`` optional), and no other keys but ``_meta``."""
    if not isinstance(value, Mapping):
        return False
    content = value.get("content")
    if not isinstance(content, list):
        return False
    if not all(isinstance(b, Mapping) and isinstance(b.get("type"), str) for b in content):
        return False
    allowed = {"content", "isError", "structuredContent", "_meta", "resultType"}
    return set(value) <= allowed


CONTENT_BLOCK_KEYS: Final = {
    "text": frozenset({"type", "text", "annotations", "_meta"}),
    "image": frozenset({"type", "data", "mimeType", "annotations", "_meta"}),
    "audio": frozenset({"type", "data", "mimeType", "annotations", "_meta"}),
    "resource": frozenset({"type", "resource", "annotations", "_meta"}),
    "resource_link": frozenset(
        {
            "type",
            "uri",
            "name",
            "title",
            "description",
            "mimeType",
            "size",
            "annotations",
            "_meta",
            "icons",
        }
    ),
}
"""MCP's content block types and the keys each may carry (the 2025-06-18 schema)."""
_REQUIRED: Final = {
    "text": "text",
    "image": "data",
    "audio": "data",
    "resource": "resource",
    "resource_link": "uri",
}
"""The field each block type cannot do without."""


def is_content_list(value: Any) -> bool:
    """A non-empty list of MCP content blocks and nothing else: each a known block type
    with its required field and no key that type does not have. Stricter than a
    ``CallToolResult``'s ``content`` (which its envelope vouches for): a tool's own list
    of records that merely have a ``type`` key is left alone."""
    if not isinstance(value, list) or not value:
        return False
    for block in value:
        if not isinstance(block, Mapping):
            return False
        kind = block.get("type")
        if not isinstance(kind, str) or not set(block) <= CONTENT_BLOCK_KEYS.get(kind, set()):
            return False
        if _REQUIRED.get(kind, "type") not in block:
            return False
    return True


def unwrap_call_tool_result(value: Mapping[str, Any]) -> tuple[Any, bool]:
    """``(the result a spec sees, is_error)`` of a ``CallToolResult`` (see the docstring)."""
    content = value.get("content")
    blocks: Sequence[Any] = content if isinstance(content, list) else ()
    error = value.get("isError") is True
    if not blocks:
        return value.get("structuredContent"), error
    values = [_block(b) for b in blocks]
    return (values[0] if len(values) == 1 else values), error


def _block(block: Any) -> Any:
    if isinstance(block, Mapping) and block.get("type") == "text":
        return decode_result(block.get("text", ""))
    return block


def mcp_result(value: Any) -> tuple[Any, bool | None]:
    """``value`` unwrapped when it is a ``CallToolResult`` or a bare list of content
    blocks, else as it is; ``is_error`` is None when ``value`` was no ``CallToolResult``
    (nothing to say about errors)."""
    if is_call_tool_result(value):
        return unwrap_call_tool_result(value)
    if is_content_list(value):
        return unwrap_call_tool_result({"content": value})[0], None
    return value, None


RESOURCE_READ: Final = "resources/read"
"""The trace event of an MCP ``resources/read``: a read is an effect (reading
``file:///etc/passwd`` exfiltrates as a tool call does), so it enters the trace as a call
of this name with the argument ``uri``, judged by the spec like any call."""

_DECODINGS: Final = 16  # a uri percent-encoded deeper than this names nothing real


def read_arguments(uri: str) -> dict[str, Any]:
    """The arguments of a ``resources/read`` of ``uri`` as a spec judges them: the name
    a server reads. A server may take the uri apart with ``urllib.parse`` (which drops
    tabs and line breaks anywhere and controls and spaces at the ends) and unquote the
    path, or match it against resource templates, which decode escapes (RFC 6570, as
    the SDK's ``MCPServer`` does); a file server resolves ``..`` and repeated slashes,
    and ignores a ``file:`` uri's host (``localhost``, user, port alike). So: those
    characters are dropped, the scheme lower-cased, the query and fragment split off
    where the text itself has ``?`` or ``#`` (an escaped one is the path's), the rest
    percent-decoded until nothing changes and its path normalised (:func:`_normalised`);
    a ``file:`` uri names its path only (``file:///etc/passwd``). A spec must see the
    name read, not text its patterns do not recognise. (A reading the server does not
    share names another resource, which a pattern then matches only more, or an
    allow-list only less.)"""
    text = uri.translate(_DROPPED).strip(_ENDS)
    scheme = _SCHEME.match(text)
    head = scheme.group(0).lower() if scheme else ""
    rest = text[len(head) :]
    ends = [i for i in (rest.find("?"), rest.find("#")) if i >= 0]
    cut = min(ends) if ends else len(rest)
    path, tail = _unquoted(rest[:cut]), _unquoted(rest[cut:])
    return {"uri": head + _normalised(path, local=head == "file:") + tail}


_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_DROPPED: Final = str.maketrans("", "", "\t\r\n")
_ENDS: Final = "".join(map(chr, range(0x21)))  # C0 controls and the space


def _unquoted(text: str) -> str:
    for _ in range(_DECODINGS):
        plain = unquote(text, errors="replace")
        if plain == text:
            break
        text = plain
    return text


def _normalised(path: str, *, local: bool) -> str:
    """The part of a uri between its scheme and its query, normalised: ``.`` and ``..``
    segments resolved and repeated slashes made one; a backslash separates too (a
    server on Windows reads one so). The name after ``//`` is a segment like the
    others: a resource template (``notes://{+path}``) reads ``notes://public/../private``
    as the path ``public/../private``, so a ``..`` may climb over it; a ``..`` with
    nothing left to climb is kept where the path is not rooted (``notes://../x``: the
    server resolves it, the spec must see it). ``local`` (``file:``): the host is
    dropped, and the path is rooted."""
    path = path.replace("\\", "/")
    if local:
        if path.startswith("//") and not path.startswith("///"):  # file://host/path
            slash = path.find("/", 2)
            path = "/" if slash < 0 else path[slash:]
        if path.startswith("/"):
            return "///" + _path(path.lstrip("/"), rooted=True)
        return _path(path, rooted=False)
    lead = "///" if path.startswith("///") else "//" if path.startswith("//") else ""
    if not lead and path.startswith("/"):
        lead = "/"
    return lead + _path(path.lstrip("/"), rooted=lead in ("/", "///"))


def _path(path: str, *, rooted: bool) -> str:
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept and kept[-1] != "..":
                kept.pop()
            elif not rooted:
                kept.append(segment)
        elif segment not in ("", "."):
            kept.append(segment)
    out = "/".join(kept)
    if kept and (path.endswith("/") or segments[-1] in (".", "..")):
        out += "/"
    return out


def unwrap_read_resource_result(value: Any) -> Any:
    """The result a spec sees of a ``ReadResourceResult``: its ``contents``, one item
    being its text (JSON decoded) or, for binary content, the item itself; several a list."""
    contents = value.get("contents") if isinstance(value, Mapping) else None
    if not isinstance(contents, list):
        return value
    values = [
        decode_result(c["text"]) if isinstance(c, Mapping) and isinstance(c.get("text"), str) else c
        for c in contents
    ]
    return values[0] if len(values) == 1 else values


REJECTED_REQUEST_CODES: Final = frozenset({-32700, -32600, -32601, -32602})
"""JSON-RPC 2.0's parse error, invalid request, method not found and invalid params."""


def rejected_request(code: Any) -> bool:
    """A JSON-RPC error ``code`` saying the request was refused before any handler ran
    (the tool never ran); an unknown or missing code is not one (it may have run)."""
    return type(code) is int and code in REJECTED_REQUEST_CODES


CANCELLED_TEXT: Final = "the client cancelled the request while the server ran it"
"""The error of a ``tools/call`` the client cancelled before its answer came."""
REQUEST_CANCELLED: Final = -32800
"""The code the SDK's streamable HTTP transport answers a cancelled request with."""


def jsonrpc_error_text(code: Any, message: Any) -> str:
    """The error a call answered with a JSON-RPC error that may have run carries, the
    same live (the MCP proxy) and from a message log (the MCP trace reader); a
    cancelled request's (:data:`REQUEST_CANCELLED`) is :data:`CANCELLED_TEXT`, as when
    the cancellation leaves the request unanswered."""
    if code == REQUEST_CANCELLED and type(code) is int:
        return CANCELLED_TEXT
    return f"the server answered with JSON-RPC error {code}: {message}"


__all__ = [
    "CANCELLED_TEXT",
    "REJECTED_REQUEST_CODES",
    "REQUEST_CANCELLED",
    "RESOURCE_READ",
    "is_call_tool_result",
    "jsonrpc_error_text",
    "mcp_result",
    "read_arguments",
    "rejected_request",
    "unwrap_call_tool_result",
    "unwrap_read_resource_result",
]
