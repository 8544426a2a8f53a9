"""The gateway's ``offer`` option (docs/firewall.md, "What may run now"; docs/mcp.md):
``tools/list`` answered per client run with the tools ``propose`` would refuse now left
out (``"narrow"``) or described as refused (``"annotate"``), and
``notifications/tools/list_changed`` sent to the client when that set changes after a
call. Every ``tools/call`` is still judged: a tool left out of the list is refused when
called, as before."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from agentguard.enforcement.offering import Offer, offering

from ._mcp_session import GatewaySession

if TYPE_CHECKING:  # the gateway imports the SDK itself, with its missing-extra message
    from mcp import types


class Offers:
    """What each run's client was last told is withheld, to tell it when that changes."""

    def __init__(self, offer: Offer | None) -> None:
        self.offer = offer
        self._told: weakref.WeakKeyDictionary[GatewaySession, frozenset[str]] = (
            weakref.WeakKeyDictionary()
        )

    def listed(self, run: GatewaySession, page: types.ListToolsResult) -> types.ListToolsResult:
        """``page`` as the client of ``run`` is offered it now."""
        if self.offer is None:
            return page
        got = offering(run.firewall, [t.name for t in page.tools], self.offer)
        if got.answer is None:  # shadow mode: the client sees the server's list
            return page
        refused = {t.tool for t in got.answer.tools if t.status == "refused"}
        self._told[run] = self._told.get(run, frozenset()) | refused
        if self.offer == "narrow":
            tools = [t for t in page.tools if t.name not in got.withheld]
        else:
            tools = [
                _annotated(t, got.answer[t.name]) if t.name in refused else t for t in page.tools
            ]
        return page.model_copy(update={"tools": tools})

    async def after_call(self, run: GatewaySession, tools: list[str], connection: Any) -> None:
        """A call was judged: tell the client if the tools refused now changed."""
        if self.offer is None or connection is None or run not in self._told:
            return
        got = offering(run.firewall, tools, self.offer)
        if got.answer is None:
            return
        refused = frozenset(t.tool for t in got.answer.tools if t.status == "refused")
        if refused != self._told[run]:
            self._told[run] = refused
            await connection.send_tool_list_changed()  # best-effort: never raises


def _annotated(tool: types.Tool, entry: Any) -> types.Tool:
    why = ", ".join(entry.constraints) or entry.reason
    note = f"[agentguard: refused now ({why}); a call is refused until this changes] "
    return tool.model_copy(update={"description": note + (tool.description or "")})


__all__ = ["Offers"]
