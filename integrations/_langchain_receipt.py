"""The last check, at the tool's door: the arguments the tool receives are the ones
checked.

The adapter validates a call as the tool will (``_langchain_arguments``), checks that,
and invokes the tool with the checked snapshot; LangChain then validates it once more on
the way in (``BaseTool._parse_input``). A validator whose answer depends on something
else than its input (a counter, the clock, a file, a lookup) can give the tool another
value at that last validation than it gave the check, so the check alone proves nothing
about what runs. The tool is therefore invoked through a copy whose ``_parse_input``
compares what it is about to hand the function with the checked snapshot, and refuses
(:class:`ReceivedOtherArguments`) before the function runs when they differ: the call is
withdrawn, never recorded as run, and the model reads why.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from agentguard.errors import AgentGuardError, UncheckableArgumentsError
from agentguard.trace.arguments import snapshot_arguments
from agentguard.trace.json_values import text_of

from ._langchain_schemas import READERS
from ._langchain_values import plain_value


class ReceivedOtherArguments(AgentGuardError):
    """The tool's own last validation gave other arguments than the check judged."""


def receipt_checked(tool: Any, checked: Mapping[str, Any]) -> Any:
    """``tool``, or a copy of it whose last validation must give exactly ``checked``
    (the injected arguments aside)."""
    original: Callable[..., Any] | None = getattr(tool, "_parse_input", None)
    if original is None:
        return tool
    injected = READERS.of(tool).injected
    expected = dict(checked)

    def parse(tool_input: Any, tool_call_id: str | None = None) -> Any:
        try:
            parsed = original(tool_input, tool_call_id)
        except Exception as exc:
            # pydantic's ValidationError, and anything a validator of the tool's own raises
            # that pydantic passes on (a KeyError of a lookup, a ToolException)
            raise ReceivedOtherArguments(
                "the tool's own validation rejected the arguments checked: "
                f"{type(exc).__name__}: {text_of(exc)}"
            ) from exc
        if isinstance(parsed, Mapping):
            values = {str(k): plain_value(v) for k, v in parsed.items() if k not in injected}
            try:
                same = snapshot_arguments(values) == expected
            except UncheckableArgumentsError:
                same = False
            if not same:
                raise ReceivedOtherArguments(
                    "the tool's own validation gave it other arguments than the ones "
                    "checked (a validator whose answer changes between calls)"
                )
        return parsed

    copied = tool.model_copy() if hasattr(tool, "model_copy") else copy.copy(tool)
    object.__setattr__(copied, "_parse_input", parse)
    return copied


__all__ = ["ReceivedOtherArguments", "receipt_checked"]
