"""The AgentLTL parser, built once per grammar and kept in the user's cache directory.

Building the LALR tables takes about 0.3 s, paid by every process that reads a spec: the
MCP proxy pays it before it can answer a client's ``initialize``. Loading the saved
tables takes a few milliseconds. A saved parser is a pickle, so it is read only when it
can be trusted to be what this code wrote:

* it is found by a key naming everything the tables depend on (the grammar text, the
  parser's options, lark's version, the Python version and this file's format), so a
  new grammar or lark never reads an old parser;
* it lives in a directory of the current user's that nobody else can write (on POSIX:
  owned by the user, not group- or world-writable, the file likewise), never in a
  shared temporary directory where another user could plant one;
* its payload's SHA-256 is checked before it is unpickled, and it is written to a
  temporary file renamed into place, so a torn or corrupt file is never loaded.

Anything else (no cache directory, one that cannot be written, a file that fails a
check or fails to load) builds the parser as if there were no cache, silently: the
cache is an optimisation, never a source of errors. ``AGENTGUARD_PARSER_CACHE=0``
turns it off.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import lark
from lark import Lark

FORMAT: Final = b"agentguard-parser-cache 1"
"""The first line of a cache file; a new layout changes it (and so every key)."""
OFF: Final = "AGENTGUARD_PARSER_CACHE"
"""Set to ``0`` to build the parser every time (no cache read or written)."""


def cached_parser(grammar: str, options: dict[str, Any], build: Callable[[], Lark]) -> Lark:
    """The parser of ``grammar`` with ``options``: loaded from the cache when a trusted
    entry is there, else ``build()`` (then saved for the next process, if possible)."""
    folder = cache_dir()
    if folder is None:
        return build()
    key = cache_key(grammar, options)
    path = folder / f"agentltl-{key[:32]}.parser"
    loaded = _load(path, key)
    if loaded is not None:
        return loaded
    built = build()
    _save(path, key, built)
    return built


def cache_key(grammar: str, options: dict[str, Any]) -> str:
    """What the saved tables depend on, hashed (see the module)."""
    parts = (FORMAT.decode(), grammar, repr(sorted(options.items())), lark.__version__)
    text = "\0".join((*parts, sys.implementation.name, repr(sys.version_info[:2])))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_dir() -> Path | None:
    """The user's cache directory for agentguard (created, private), or None when there is
    none that can be trusted, or the cache is turned off."""
    if os.environ.get(OFF, "").strip() in ("0", "false", "no", "off"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if sys.platform == "win32":  # pragma: no cover - the CI runs on Linux
        base = base or os.environ.get("LOCALAPPDATA", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    folder = root / "agentguard"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # read-only home, no home at all
        return None
    return folder if _private(folder) else None


def _private(path: Path) -> bool:
    """Is ``path`` (not a link) the current user's, and writable by nobody else?"""
    try:
        info = path.lstat()
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode):
        return False
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: the profile is the user's
        return True
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _load(path: Path, key: str) -> Lark | None:
    if not _private(path):
        return None
    try:
        data = path.read_bytes()
        header, expected, digest, payload = data.split(b"\n", 3)
        if header != FORMAT or expected != key.encode():
            return None
        if hashlib.sha256(payload).hexdigest().encode() != digest:
            return None  # torn or corrupt: never unpickled
        return Lark.load(io.BytesIO(payload))
    except Exception:  # noqa: BLE001 - a cache that fails to load is no cache
        return None


def _save(path: Path, key: str, parser: Lark) -> None:
    try:
        buffer = io.BytesIO()
        if hasattr(parser, "grammar"):  # saved too, as lark's ``cache_grammar`` does: a
            # loaded parser keeps its grammar (``hypothesis.extra.lark`` generates from it)
            parser.__serialize_fields__ = [*Lark.__serialize_fields__, "grammar"]
        parser.save(buffer)
        payload = buffer.getvalue()
        digest = hashlib.sha256(payload).hexdigest().encode()
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".agentltl-", suffix=".tmp")
    except Exception:  # noqa: BLE001 - an unwritable cache is no cache
        return
    try:
        with os.fdopen(fd, "wb") as out:  # mkstemp's file is the user's alone (0600)
            out.write(b"\n".join((FORMAT, key.encode(), digest, payload)))
        os.replace(temp, path)  # whole or not at all: a reader never sees half a file
    except OSError:
        Path(temp).unlink(missing_ok=True)


__all__ = ["FORMAT", "OFF", "cache_dir", "cache_key", "cached_parser"]
