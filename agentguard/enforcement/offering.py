"""What an adapter offers the model before its turn, from :meth:`Firewall.permissions`.

The one option every adapter takes, ``offer``:

* ``"narrow"``: the tools ``propose`` would refuse whatever their arguments are not
  offered, a final-answer tool included while an obligation is open (unless nothing
  else would be offered: the final answer then stays), nor the tools whose call now
  would doom the run (``ToolPermission.doomed``: allowed, but no compliant end would
  follow; unless every tool is refused or doomed: the doomed then stay), and the model
  reads a note of the conditions and the obligations ("Before finishing: ...");
* ``"annotate"``: every tool is offered, and the note says which are refused now;
* ``None`` (the default): nothing changes.

In shadow mode nothing changes either: the model must act as it would without the
policy, so that shadow mode measures the policy, not the note. The answer only informs:
``propose`` still checks every call, and a refusal lists the alternatives
(:func:`refusal_note`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final, Literal

from agentguard.enforcement.decision import Action, Decision
from agentguard.enforcement.options import FirewallConfigError
from agentguard.enforcement.permissions import Permissions, conditions

if TYPE_CHECKING:
    from agentguard.enforcement.firewall import Firewall

Offer = Literal["narrow", "annotate"]
OFFERS: Final = ("narrow", "annotate")


@dataclass(frozen=True, slots=True)
class Offering:
    """The tools to offer for the next model turn, those held back, and the note."""

    tools: tuple[str, ...]
    withheld: tuple[str, ...]
    note: str
    answer: Permissions | None


def check_offer(offer: object) -> Offer | None:
    """The ``offer`` option, or a :class:`FirewallConfigError` naming the choices."""
    if offer is None or offer in OFFERS:
        return offer
    raise FirewallConfigError(f"offer must be one of {', '.join(OFFERS)} or None, not {offer!r}")


def offering(firewall: Firewall, names: Sequence[str], offer: Offer | None) -> Offering:
    """What to offer of the tools ``names`` under ``offer`` (see the module docstring)."""
    if offer is None or firewall.mode == "shadow":
        return Offering(tuple(names), (), "", None)
    answer = firewall.permissions(names)
    withheld: tuple[str, ...] = ()
    if offer == "narrow":
        withheld = tuple(n for n in names if answer[n].status == "refused" or answer[n].doomed)
        if len(withheld) == len(names):  # every call refused or doomed: the doomed stay
            withheld = tuple(n for n in names if answer[n].status == "refused")
        if len(withheld) == len(names):  # nothing left: the final answer stays offered
            final = set(firewall.final_tools)
            withheld = tuple(n for n in withheld if n not in final)
            firewall.offered_only_the_end(answer, names)  # it will not be sent back
    kept = tuple(n for n in names if n not in withheld)
    return Offering(kept, withheld, answer.describe(tuple(names)), answer)


def refusal_note(firewall: Firewall, names: Sequence[str] | None = None) -> str:
    """The alternatives a refused call's message lists: the tools allowed now and the
    conditions of the others (``names``: the agent's tools, when known)."""
    answer = firewall.permissions(names or ())
    listed = [t for t in answer.tools if names is None or t.tool in names]
    free = [t.tool for t in listed if t.status == "free"]
    parts = []
    if free:
        parts.append("Allowed now: " + ", ".join(free) + ".")
    for t in listed:
        if t.status == "conditional":
            parts.append(f"{t.tool} only if: {conditions(t)}.")
    todo = [o.hint for o in answer.obligations if o.certain and o.hint]
    if todo:
        parts.append("Before finishing: " + "; ".join(todo) + ".")
    return " ".join(parts)


def with_alternatives(firewall: Firewall, decision: Decision) -> Decision:
    """A refusal whose message also lists the alternatives (what the model reads; the
    log keeps the firewall's own message)."""
    note = refusal_note(firewall)
    if not note:
        return decision
    return replace(decision, message=f"{decision.message}\n{note}")


def explained(firewall: Firewall, decisions: list[Decision]) -> list[Decision]:
    """``decisions`` with each BLOCK's message listing the alternatives."""
    return [with_alternatives(firewall, d) if d.action is Action.BLOCK else d for d in decisions]


__all__ = [
    "OFFERS",
    "Offer",
    "Offering",
    "check_offer",
    "explained",
    "offering",
    "refusal_note",
    "with_alternatives",
]
