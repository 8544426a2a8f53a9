"""The gateway's ``offer`` option (docs/firewall.md, "What may run now"; docs/mcp.md), as
the relay's one seam that changes what a client sees: the server's ``tools/list`` answer
to a client whose run has an offer comes with the tools ``propose`` would refuse now left
out (``"narrow"``) or described as refused (``"annotate"``), and that client is sent
``notifications/tools/list_changed`` when that set changes after a judged call.

The relay works on the raw JSON-RPC messages, so this does too: a listing is changed by
copying the server's result with only ``tools`` replaced (its ``nextCursor``, ``_meta``
and every other field as the server wrote them). Without the option, and in shadow mode,
nothing is changed. Every ``tools/call`` is still judged: a tool left out of the list is
refused when called, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.offering import Offer, Offering, offering, with_alternatives
from agentguard.errors import MissingExtraError

try:
    import mcp_types as types
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("mcp", "mcp") from exc

if TYPE_CHECKING:
    from ._mcp_relay import Relay
    from ._mcp_session import GatewaySession

LIST_CHANGED: Final = "notifications/tools/list_changed"


class Offered:
    """The offer seam of one relay: its client's listings, refusals and list changes.
    Inactive (``offer`` None) it is never called on a message: the relay stays
    transparent."""

    def __init__(self, relay: Relay, offer: Offer | None) -> None:
        self.relay = relay
        self.offers = Offers(offer)

    @property
    def active(self) -> bool:
        return self.offers.offer is not None

    def _known(self) -> list[str]:
        return [t.name for t in self.relay.catalog.tools]

    async def listing(self, message: types.JSONRPCResponse) -> None:
        """Send the client the server's answer to its ``tools/list`` as offered now (its
        run is opened for this: what may run is the run's)."""
        run = await self.relay.session_run()
        result = self.offers.listed(run, self._known(), message.result)
        if result is not message.result:
            message = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=dict(result))
        await self.relay.to_client(message)

    def refusal(self, run: GatewaySession, decision: Decision) -> Decision:
        """A refused call's decision, its message listing the alternatives (not a stop:
        nothing runs after it)."""
        if not self.active or decision.action is Action.STOP:
            return decision
        return with_alternatives(run.firewall, decision)

    def after_call(self) -> None:
        """A call was judged (refused, answered, cancelled): tell the client, if it was
        offered a list, that the tools refused now changed."""
        run = self.relay.run
        if self.active and run is not None and self.offers.changed(run, self._known()):
            self.relay.to_client_soon(types.JSONRPCNotification(jsonrpc="2.0", method=LIST_CHANGED))


class Offers:
    """What one client session was last told is refused (``None``: it never listed the
    tools under the offer), to tell it when that changes."""

    def __init__(self, offer: Offer | None) -> None:
        self.offer = offer
        self.told: frozenset[str] | None = None

    def listed(
        self, run: GatewaySession, known: Iterable[str], result: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """The ``tools/list`` ``result`` (one page) as the client of ``run`` is offered it
        now; ``known``: every tool of the server the gateway knows, so that the page is
        judged as part of the whole list (narrow keeps a final answer only when nothing
        else of the whole list is offered)."""
        page = [t for t in result.get("tools") or [] if isinstance(t, Mapping)]
        names = _names(known, page)
        got = self._offering(run, names)
        if got is None or got.answer is None:  # shadow mode: the client sees the server's list
            return result
        refused = _refused(got, names)
        self.told = (self.told or frozenset()) | refused
        if self.offer == "narrow":
            withheld = set(got.withheld)
            tools = [t for t in page if t.get("name") not in withheld]
        else:
            tools = [
                _annotated(t, got.answer[t["name"]]) if t.get("name") in refused else t
                for t in page
            ]
        kept = [t for t in result.get("tools") or [] if not isinstance(t, Mapping)]
        return {**result, "tools": [*tools, *kept]}

    def changed(self, run: GatewaySession, known: Iterable[str]) -> bool:
        """A call was judged: whether the tools refused now differ from those the client
        was told of (then it is told again at its next listing: the set is remembered)."""
        if self.told is None:
            return False
        names = sorted(set(known))
        got = self._offering(run, names)
        if got is None or got.answer is None:
            return False
        refused = _refused(got, names)
        if refused == self.told:
            return False
        self.told = refused
        return True

    def _offering(self, run: GatewaySession, names: list[str]) -> Offering | None:
        if self.offer is None or not names:
            return None
        return offering(run.firewall, names, self.offer)


def _names(known: Iterable[str], page: list[Mapping[str, Any]]) -> list[str]:
    listed = [t["name"] for t in page if isinstance(t.get("name"), str)]
    return sorted({*known, *listed})


def _refused(got: Offering, names: list[str]) -> frozenset[str]:
    """The server's tools refused now (the answer lists the spec's others too)."""
    assert got.answer is not None
    listed = set(names)
    return frozenset(t.tool for t in got.answer.tools if t.status == "refused" and t.tool in listed)


def _annotated(tool: Mapping[str, Any], entry: Any) -> dict[str, Any]:
    why = ", ".join(entry.constraints) or entry.reason
    note = f"[agentguard: refused now ({why}); a call is refused until this changes] "
    description = tool.get("description")
    return {**tool, "description": note + (description if isinstance(description, str) else "")}


__all__ = ["LIST_CHANGED", "Offered", "Offers"]
