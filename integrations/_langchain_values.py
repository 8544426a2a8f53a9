"""Values pydantic hands a LangChain tool, as the plain data the firewall's snapshot holds.

A leaf of the LangChain adapter (it imports nothing of it): the argument readers and the
structured answers share it.
"""

from __future__ import annotations

import dataclasses
import enum
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from agentguard.errors import MissingExtraError, UncheckableArgumentsError
from agentguard.trace.arguments import snapshot_arguments

try:
    from pydantic import BaseModel, SecretBytes, SecretStr
    from pydantic_core import to_jsonable_python

    from ._pydantic_fields import revealed
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("langchain", "langchain-core") from exc


_KEPT: Final = (str, int, float, bool, type(None))
"""Values a snapshot holds as they are (exact types; dates, decimals and UUIDs are
recognised by ``snapshot_arguments`` itself)."""


def plain_value(value: Any) -> Any:
    """``value`` as snapshot data that validates back to it: itself where the snapshot
    holds it (text, numbers, dates, decimals), containers walked, a nested model its
    fields, an enum member its value, a set a sorted list, anything else the JSON form
    pydantic writes for it (a path as text)."""
    kind = type(value)
    if kind in _KEPT:
        return value
    if kind is dict and all(type(k) is str for k in value):
        return {k: plain_value(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [plain_value(v) for v in value]
    if isinstance(value, BaseModel):  # its fields as the function gets them (not a dump:
        # a dump leaves out Field(exclude=True) fields and runs the model's serializers)
        fields = {name: plain_value(getattr(value, name)) for name in type(value).model_fields}
        extra = value.__pydantic_extra__
        if extra:
            fields.update((str(k), plain_value(v)) for k, v in extra.items())
        return fields
    if isinstance(value, enum.Enum):
        return plain_value(value.value)
    if isinstance(value, (set, frozenset)):
        members = [plain_value(v) for v in value]
        try:
            return sorted(members)
        except TypeError:  # members of mixed types: pydantic's order
            return members
    if isinstance(value, (SecretStr, SecretBytes)):  # the value the tool gets, not a mask
        return plain_value(revealed(value))
    if isinstance(value, (Decimal, Fraction)):
        # checked as the JSON number that is its value, or refused by the snapshot when
        # none is: never turned into text, which a numeric test would judge apart
        return value
    try:
        snapshot_arguments({"value": value})
    except UncheckableArgumentsError:
        return to_jsonable_python(value)
    return value  # a date, a UUID: checked as its JSON form, handed as is


def answer_value(answer: Any) -> Any:
    """A structured answer as data the firewall checks and the trace records: a pydantic
    model its fields (values as :func:`plain_value` gives them), a dataclass the dict of
    its fields, anything else as it is (plain data, or refused by the snapshot)."""
    if isinstance(answer, BaseModel):
        return plain_value(answer)
    if dataclasses.is_dataclass(answer) and not isinstance(answer, type):
        return dataclasses.asdict(answer)
    return answer


def problem_of(exc: Exception) -> str:
    """What a validation error says, one ``field: message`` per error."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = [f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in errors()]
        return "; ".join(parts) or str(exc)
    return str(exc)


__all__ = ["answer_value", "plain_value", "problem_of"]
