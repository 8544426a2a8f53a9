"""What a smolagents agent offers its model before each step (the ``offer`` option,
docs/firewall.md, "What may run now").

The agent's model is wrapped, for this agent only, by :class:`OfferingModel`: before each
``generate`` it asks the firewall what may run now, drops the tools ``propose`` would
refuse from ``tools_to_call_from`` (``"narrow"``; a ToolCallingAgent's tools) and
renders the system prompt again with the tools offered (a CodeAgent's tools are offered
in its prompt) plus the note. Nothing else changes: the tools stay the agent's, and
every call is still checked (a withheld tool called anyway is refused).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentguard.enforcement.offering import Offering, offering
from agentguard.guard import GuardSession


class OfferingModel:
    """The agent's model, offering the model what may run now (see the module docstring).

    Every attribute but ``generate`` and ``generate_stream`` is the wrapped model's."""

    def __init__(self, model: Any, agent: Any, session: GuardSession) -> None:
        self.__dict__["_model"] = model
        self.__dict__["_agent"] = agent
        self.__dict__["_session"] = session

    @property
    def wrapped(self) -> Any:
        return self.__dict__["_model"]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_model"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__dict__["_model"], name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.generate(*args, **kwargs)

    def generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        messages, kwargs = self._offered(messages, kwargs)
        return self.wrapped.generate(messages, *args, **kwargs)

    def generate_stream(self, messages: list[Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        messages, kwargs = self._offered(messages, kwargs)
        return self.wrapped.generate_stream(messages, *args, **kwargs)  # type: ignore[no-any-return]

    def _offered(
        self, messages: list[Any], kwargs: dict[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        session: GuardSession = self.__dict__["_session"]
        agent = self.__dict__["_agent"]
        if session.offer is None:
            return messages, kwargs
        tools = dict(getattr(agent, "tools", {}) or {})
        managed = dict(getattr(agent, "managed_agents", {}) or {})
        got = offering(session.firewall, [*tools, *managed], session.offer)
        if not got.note:
            return messages, kwargs
        offered = kwargs.get("tools_to_call_from")
        if offered is not None:
            kwargs = {
                **kwargs,
                "tools_to_call_from": [t for t in offered if _name(t) not in got.withheld],
            }
        return _with_prompt(messages, _prompt(agent, tools, got) + "\n\n" + got.note), kwargs


def _prompt(agent: Any, tools: dict[str, Any], got: Offering) -> str:
    """The agent's system prompt rendered with the offered tools only: its own
    ``initialize_system_prompt`` reads ``agent.tools``, set to them for that call (no
    tool runs meanwhile: the model has not answered yet)."""
    if not got.withheld:
        return str(agent.system_prompt)
    own = agent.tools  # the agent's own mapping is put back, not a copy of it
    agent.tools = {n: t for n, t in tools.items() if n not in got.withheld}
    try:
        return str(agent.initialize_system_prompt())
    finally:
        agent.tools = own


def _with_prompt(messages: list[Any], prompt: str) -> list[Any]:
    """``messages`` with the system message's text replaced by ``prompt``."""
    out = list(messages)
    for i, message in enumerate(out):
        role = getattr(message, "role", None)
        if getattr(role, "value", role) == "system":
            out[i] = type(message)(role=message.role, content=[{"type": "text", "text": prompt}])
            break
    return out


def _name(tool: Any) -> str:
    return str(getattr(tool, "name", ""))


__all__ = ["OfferingModel"]
