"""Resolves ``agentguard.integrations`` in a source checkout, and nothing else.

The adapters live in the repository's top-level ``integrations/`` folder; an install maps
that folder to ``agentguard.integrations`` (setuptools ``package-dir``). Run from a checkout
(``python -m agentguard demo`` at the repo root puts ``./agentguard`` first on
``sys.path``), the package folder has no ``integrations`` inside it. Appending the repo root
to ``agentguard.__path__`` would fix that but would also make ``agentguard.tests``,
``agentguard.benchmarks`` and ``agentguard.examples`` importable; this finder answers for
the one package name only. It is a leaf: it imports nothing from agentguard.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

PACKAGE: Final = "agentguard.integrations"


class IntegrationsFinder:
    """Finds ``agentguard.integrations`` in ``<checkout>/integrations``. (A meta path
    finder is any object with ``find_spec``; ``importlib.abc.MetaPathFinder`` would
    import ``importlib.resources``, tempfile and the compressors on every start.)"""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        del path, target  # the protocol's; this finder answers for one absolute name only
        if fullname != PACKAGE:
            return None
        return importlib.util.spec_from_file_location(
            PACKAGE,
            self.folder / "__init__.py",
            submodule_search_locations=[str(self.folder)],
        )


def install(package_dir: Path) -> None:
    """Add the finder when ``package_dir`` is a checkout's ``agentguard/`` folder.

    An installed package (``integrations`` inside it) or a checkout without the folder
    needs nothing; installing twice is harmless.
    """
    if (package_dir / "integrations").is_dir():
        return
    folder = package_dir.parent / "integrations"
    if not (folder / "__init__.py").is_file():
        return
    if any(isinstance(f, IntegrationsFinder) for f in sys.meta_path):
        return
    # first, so that an editable install elsewhere cannot pair this checkout's core with
    # another tree's adapters
    sys.meta_path.insert(0, IntegrationsFinder(folder))
