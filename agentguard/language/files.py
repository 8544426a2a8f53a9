"""Reading spec files safely: regular files only, of bounded size, inside allowed folders.

A spec names its imports, so a hostile or careless spec could otherwise make agentguard
read ``/dev/zero`` (forever), a FIFO (block), a 13 MB file (minutes of parsing), or any
file on the machine (and echo its first token in a syntax error). Every spec read goes
through :func:`read_spec_file`; imports are also confined by :func:`inside`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from agentguard.errors import SpecImportError, SpecTooLargeError

MAX_SPEC_BYTES: Final = 1_000_000
"""Largest spec file (or spec text, in characters) agentguard reads: 1 MB. The shipped
specs are under 3 kB and generated benchmark specs under 20 kB."""


def check_size(size: int, what: str) -> None:
    """Refuse a spec larger than :data:`MAX_SPEC_BYTES` before parsing it."""
    if size > MAX_SPEC_BYTES:
        raise SpecTooLargeError(
            f"{what}: spec is {size:,} bytes, over the {MAX_SPEC_BYTES:,}-byte limit "
            "(agentguard.language.files.MAX_SPEC_BYTES)"
        )


def read_spec_file(path: Path) -> str:
    """The text of a spec file; a clear error for anything but a small regular UTF-8 file."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise SpecImportError(f"{path}: cannot read spec ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise SpecImportError(f"{path}: not a regular file (a device, FIFO or folder)")
    check_size(info.st_size, str(path))
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecImportError(f"{path}: cannot read spec ({exc.strerror or exc})") from None
    check_size(len(data), str(path))  # the file grew after the stat
    try:
        return data.decode("utf-8-sig")  # a leading byte-order mark is tolerated
    except UnicodeDecodeError as exc:
        raise SpecImportError(
            f"{path}: cannot decode spec as UTF-8 (byte {exc.start}: {exc.reason})"
        ) from None


def inside(path: Path, roots: Iterable[Path]) -> bool:
    """Is the resolved ``path`` (symlinks followed) within one of the resolved ``roots``?"""
    return any(path == root or root in path.parents for root in roots)
