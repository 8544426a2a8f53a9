"""Reading spec files safely: regular files only, of bounded size, inside allowed folders.

A spec names its imports, so a hostile or careless spec could otherwise make agentguard
read ``/dev/zero`` (forever), a FIFO (block), a 13 MB file (minutes of parsing), or any
file on the machine (and echo its first token in a syntax error). Every spec read goes
through :func:`read_spec_file`; imports are also confined by :func:`inside`, and counted
by :class:`SpecReads`: capping each file alone let forty imports of 850 kB each be read
and parsed for one spec (11 s and 247 MB apiece).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from agentguard.errors import SpecImportError, SpecTooLargeError

MAX_SPEC_BYTES: Final = 1_000_000
"""Largest spec file (or spec text, in characters) agentguard reads: 1 MB. The shipped
specs are under 3 kB and generated benchmark specs under 20 kB."""


MAX_TOTAL_SPEC_BYTES: Final = 1_000_000
"""Most bytes one spec reads, its text and every file it imports (transitively) together:
1 MB, so a spec with its imports costs no more to read and parse than one largest file."""

MAX_SPEC_FILES: Final = 100
"""Most files one spec imports, transitively (each is opened and parsed once)."""


def check_size(size: int, what: str) -> None:
    """Refuse a spec larger than :data:`MAX_SPEC_BYTES` before parsing it."""
    if size > MAX_SPEC_BYTES:
        raise SpecTooLargeError(
            f"{what}: spec is {size:,} bytes, over the {MAX_SPEC_BYTES:,}-byte limit "
            "(agentguard.language.files.MAX_SPEC_BYTES)"
        )


def read_spec_file(path: Path) -> str:
    """The text of a spec file; a clear error for anything but a small regular UTF-8 file."""
    return _decode(path, _read(path, MAX_SPEC_BYTES, check_size))


def _read(path: Path, limit: int, check: Callable[[int, str], None]) -> bytes:
    """At most ``limit`` + 1 bytes of a regular file, ``check``-ed on its size before and
    after reading (the file may grow in between)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise SpecImportError(f"{path}: cannot read spec ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise SpecImportError(f"{path}: not a regular file (a device, FIFO or folder)")
    check(info.st_size, str(path))
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise SpecImportError(f"{path}: cannot read spec ({exc.strerror or exc})") from None
    check(len(data), str(path))
    return data


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")  # a leading byte-order mark is tolerated
    except UnicodeDecodeError as exc:
        raise SpecImportError(
            f"{path}: cannot decode spec as UTF-8 (byte {exc.start}: {exc.reason})"
        ) from None


class SpecReads:
    """What one spec has read so far, imports included: bytes and files, each capped.

    Mutable on purpose (one per resolution, like a counter): the resolver reads every
    import through :meth:`read`, which refuses the file that would cross
    :data:`MAX_TOTAL_SPEC_BYTES` or :data:`MAX_SPEC_FILES` before reading it. A file
    imported twice (a diamond) is read once: the resolver skips a path already loaded.
    """

    __slots__ = ("bytes", "files")

    def __init__(self) -> None:
        self.bytes = 0
        self.files = 0

    def count_text(self, text: str) -> None:
        """Count the top spec's own text (in characters, as :func:`check_size` does)."""
        self.bytes += len(text)

    def read(self, path: Path) -> str:
        """The text of the imported file ``path``, counted against both caps."""
        if self.files >= MAX_SPEC_FILES:
            raise SpecTooLargeError(
                f"{path}: the spec already imports {self.files} files, the limit "
                "(agentguard.language.files.MAX_SPEC_FILES)"
            )
        left = MAX_TOTAL_SPEC_BYTES - self.bytes

        def check(size: int, what: str) -> None:
            check_size(size, what)
            if size > left:
                raise SpecTooLargeError(
                    f"{what}: {size:,} more bytes would make the spec and its imports "
                    f"{self.bytes + size:,} bytes, over the {MAX_TOTAL_SPEC_BYTES:,}-byte "
                    "limit (agentguard.language.files.MAX_TOTAL_SPEC_BYTES)"
                )

        data = _read(path, min(MAX_SPEC_BYTES, max(left, 0)), check)
        self.files += 1
        self.bytes += len(data)
        return _decode(path, data)


def identity(path: Path) -> tuple[int, int] | None:
    """The file ``path`` names, as (device, inode): two names of one file (hard links, a
    bind mount) are one import. None when it cannot be stat-ed (reading it will say why)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
    return info.st_dev, info.st_ino


def inside(path: Path, roots: Iterable[Path]) -> bool:
    """Is the resolved ``path`` (symlinks followed) within one of the resolved ``roots``?"""
    return any(path == root or root in path.parents for root in roots)
