"""The package version, in a leaf module so the CLI can print it without importing the
package face (``agentguard/__init__.py`` sits above every layer)."""

from __future__ import annotations

__version__ = "0.1.0"
