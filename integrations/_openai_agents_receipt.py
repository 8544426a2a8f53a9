"""The last check at an agent tool's door: its agent receives the arguments checked.

A function tool receives the arguments agentguard validated and handed over as the SDK's
prepared arguments (``_openai_agents_args.handover``). An agent tool (``Agent.as_tool``,
with ``parameters=`` a model of the user's) takes no prepared arguments: the SDK
validates the JSON it is handed once more, with the parameters' ``TypeAdapter``, and
builds the nested agent's input from that. A validator whose answer changes between
calls (a counter, the clock, a file) could give the nested agent another value there
than the one checked. So the adapter in the SDK's invoker is wrapped, once per tool, by
one whose validation, in a call agentguard hands over, must give exactly the checked
snapshot, or refuses before the nested agent starts (the call is then withdrawn: it
never ran). Outside such a call (the SDK used unguarded) the wrapper changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter


@dataclass
class Receipt:
    """One handed-over call: the checked arguments' JSON text, and why the tool's own
    validation refused to hand them on (None while it did not)."""

    expected: str
    refused: str | None = None
    checked: bool = False


_RECEIPT: ContextVar[Receipt | None] = ContextVar("agentguard_agent_tool_receipt", default=None)


class ReceiptAdapter:
    """An agent tool's parameters adapter whose first validation in a handed-over call
    is compared with the checked snapshot (``same`` renders a validated value as the
    snapshot's JSON text)."""

    def __init__(self, adapter: TypeAdapter[Any], same: Any) -> None:
        self.agentguard_adapter = adapter
        self._same = same

    def validate_python(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        parsed = self.agentguard_adapter.validate_python(data, *args, **kwargs)
        receipt = _RECEIPT.get()
        if receipt is not None and not receipt.checked:
            receipt.checked = True  # the tool's own validation: a nested agent's are theirs
            received = self._same(self.agentguard_adapter, parsed)
            if received != receipt.expected:
                receipt.refused = (
                    f"the validation of the agent tool's arguments gave it {received}, not "
                    f"the {receipt.expected} checked (a validator whose answer changes "
                    "between calls), so its agent never ran"
                )
                raise ValueError(receipt.refused)
        return parsed

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agentguard_adapter, name)


def adapter_of(value: Any) -> TypeAdapter[Any] | None:
    """The SDK's adapter, ``value`` itself or the one a :class:`ReceiptAdapter` wraps."""
    if isinstance(value, ReceiptAdapter):
        return value.agentguard_adapter
    return value if isinstance(value, TypeAdapter) else None


def _wrap(invoker: Any, same: Any) -> bool:
    """Wrap the parameters adapter the agent tool's invoker closes over (once); whether
    the invoker has one (an agent tool)."""
    inner = getattr(invoker, "_invoke_tool_impl", invoker)
    for cell in getattr(inner, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, ReceiptAdapter):
            return True
        if isinstance(value, TypeAdapter):
            cell.cell_contents = ReceiptAdapter(value, same)
            return True
    return False


@contextmanager
def received_as_checked(invoker: Any, text: str, same: Any) -> Iterator[Receipt]:
    """For the call about to be handed ``text``: an agent tool's own validation must give
    it back (``same(adapter, parsed)`` renders what it gave), else its
    :class:`Receipt` says why it refused; any other tool's receipt stays empty."""
    receipt = Receipt(text)
    if not _wrap(invoker, same):
        yield receipt
        return
    token = _RECEIPT.set(receipt)
    try:
        yield receipt
    finally:
        _RECEIPT.reset(token)


__all__ = ["Receipt", "ReceiptAdapter", "adapter_of", "received_as_checked"]
