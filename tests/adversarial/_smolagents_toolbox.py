"""A module holding the adversarial tests' tools in a registry, a class and an object,
none of them under a name of its own (it defines none, and does not keep their module):
authorising its import hands model code the original tools all the same."""

from __future__ import annotations

from typing import Any


def _tools() -> dict[str, Any]:
    from tests.adversarial._smolagents_support import refund, wipe

    return {"refund": refund, "wipe": wipe}


REGISTRY: dict[str, Any] = {"refund": _tools()["refund"]}


class Kit:
    cleaner = _tools()["wipe"]


class Box:
    def __init__(self) -> None:
        self.tools = [_tools()["refund"]]


BOX = Box()
