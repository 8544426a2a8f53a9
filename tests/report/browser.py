"""A real headless Chromium for the report tests (Debian package ``chromium``).

CI installs it (``apt-get install -y chromium``); a missing browser fails the tests with
that instruction instead of skipping them, unless ``AGENTGUARD_NO_BROWSER=1`` is set for
local development.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT = 120


def chromium() -> str:
    """The browser's path; fails (or skips under AGENTGUARD_NO_BROWSER=1) when absent."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    message = (
        "headless Chromium is required for the HTML report tests: "
        "apt-get install -y chromium (or set AGENTGUARD_NO_BROWSER=1 to skip locally)"
    )
    if os.environ.get("AGENTGUARD_NO_BROWSER") == "1":
        pytest.skip(message)
    pytest.fail(message)


def _run(page: Path, profile: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        chromium(),
        "--headless",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={profile}",
        *flags,
        page.resolve().as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def dump_dom(page: Path, profile: Path) -> str:
    """The DOM after the page's scripts ran (``--dump-dom``)."""
    return _run(page, profile, "--dump-dom").stdout


def screenshot(page: Path, profile: Path, out: Path, width: int, height: int) -> Path:
    _run(page, profile, f"--window-size={width},{height}", f"--screenshot={out}")
    assert out.exists(), "chromium wrote no screenshot"
    return out


def png_size_and_colours(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values in the pixel data) read with zlib only."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return width, height, len(set(pixels))
