"""What a tool's pydantic arguments model does to a value on the way in that the checked
snapshot must undo on the way back, shared by the LangChain and OpenAI Agents adapters.

Both adapters judge the values a tool's function receives and hand the tool that very
snapshot, which its model validates again. Three kinds of field read their input as
something else than what they give the function, so the snapshot is handed in the form
the field reads:

* ``Json[...]`` fields read JSON *text* and give the function the decoded value: the
  spec judges the value (``settings.mode``), the tool is handed its JSON text;
* a field with an alias (``from_: str = Field(alias="from")``, a Python keyword as an
  argument's name) reads only its alias unless the model populates by name: the tool
  is handed the value under the alias;
* ``Base64Str`` / ``Base64Bytes`` (pydantic's encoded types) decode on the way in: the
  spec judges the decoded value, the tool is handed it encoded;
* and so on inside: a nested model's fields (one, optional, in a list, a map or a
  tuple's positions) are handed by the same rules, so a ``Json`` field, an encoding or
  an alias at any depth reads back;
* ``SecretStr`` / ``SecretBytes`` hide their value in every dump (``"**********"``): the
  snapshot holds the value itself, so the tool gets the credential the model gave and a
  spec can judge it. (The decision log records it like any argument: a log redactor
  keeps it out, docs/firewall.md.)

Depends on pydantic only.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Final, Union, get_args, get_origin

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    EncodedBytes,
    EncodedStr,
    Json,
    SecretBytes,
    SecretStr,
)
from pydantic.fields import FieldInfo
from pydantic_core import to_json

_JSON: Final[Any] = Json  # (a generic class: compared by identity, not isinstance)


def revealed(value: Any) -> Any:
    """A secret's value (a ``SecretStr``'s text, a ``SecretBytes``' bytes), else ``value``."""
    if isinstance(value, (SecretStr, SecretBytes)):
        return value.get_secret_value()
    return value


@dataclass(frozen=True, slots=True)
class _Json:
    """A value read as JSON text: handed as its text."""


@dataclass(frozen=True, slots=True)
class _Model:
    """A nested model's values: handed in the form it reads (:func:`handed_form`)."""

    model: type[BaseModel]


@dataclass(frozen=True, slots=True)
class _Each:
    """A list's items (``values``: a map's values), each handed in ``form``."""

    form: _Form
    values: bool = False


@dataclass(frozen=True, slots=True)
class _Encoded:
    """A value its type decodes on the way in (``Base64Str``, ``Base64Bytes``: pydantic's
    ``EncodedStr`` / ``EncodedBytes``): handed encoded."""

    marker: EncodedStr | EncodedBytes


@dataclass(frozen=True, slots=True)
class _Positions:
    """A fixed tuple's items, each handed in its own form (None: as it is)."""

    forms: tuple[_Form | None, ...]


_Form = _Json | _Encoded | _Model | _Each | _Positions
_JSON_FORM: Final = _Json()


@dataclass(frozen=True, slots=True)
class _Field:
    """How one field is handed: under ``key`` (a path: ``AliasPath``), in ``form``."""

    key: tuple[str, ...]
    form: _Form | None = None


_PLANS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, _Field] | None] = (
    weakref.WeakKeyDictionary()
)


def _plan(
    model: type[BaseModel], seen: frozenset[type[BaseModel]] = frozenset()
) -> dict[str, _Field] | None:
    """The fields of ``model`` handed otherwise than as their checked value under their
    name; None when none is (remembered per model; a model nested in itself is followed
    once)."""
    if model in _PLANS:
        return _PLANS[model]
    by_name = bool(
        model.model_config.get("populate_by_name") or model.model_config.get("validate_by_name")
    )
    plan: dict[str, _Field] = {}
    for name, field in model.model_fields.items():
        key = (name,) if by_name else _alias(field) or (name,)
        form: _Form | None = _marked(field.metadata)
        if form is None:
            form = _form(field.annotation, seen | {model})
        entry = _Field(key, form)
        if entry != _Field((name,)):
            plan[name] = entry
    found = plan or None
    _PLANS[model] = found
    return found


def _form(kind: Any, seen: frozenset[type[BaseModel]], depth: int = 0) -> _Form | None:
    """How a value of the type ``kind`` is handed (None: as it is)."""
    if depth > 8:
        return None
    if _is_json(kind):
        return _JSON_FORM
    origin, args = get_origin(kind), get_args(kind)
    if origin is Annotated:
        return _marked(args[1:]) or _form(args[0], seen, depth + 1)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        if kind in seen:
            return None
        return _Model(kind) if _plan(kind, seen) is not None else None
    if origin is tuple and args and args[1:] != (...,):  # tuple[Json[X], int]: by position
        forms = tuple(_form(a, seen, depth + 1) for a in args)
        return None if all(f is None for f in forms) else _Positions(forms)
    if (origin in (list, set, frozenset) and args) or (origin is tuple and args[1:] == (...,)):
        inner = _form(args[0], seen, depth + 1)
        return None if inner is None else _Each(inner)
    if origin is dict and len(args) == 2:
        inner = _form(args[1], seen, depth + 1)
        return None if inner is None else _Each(inner, values=True)
    options = [a for a in args if a is not type(None)]
    if origin in (Union, UnionType) and len(options) == 1:  # Optional[X]
        return _form(options[0], seen, depth + 1)
    return None


def reshapes(model: type[BaseModel]) -> bool:
    """Is anything of ``model`` handed otherwise than as its checked value (a ``Json``
    field, an alias, at any depth)?"""
    return _plan(model) is not None


def handed_form(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    """Checked values of ``model`` (by field name, decoded) in the form it reads: ``Json``
    values as their text (None stays None), aliased fields under their alias (an
    ``AliasPath`` as the objects it reads through), nested models, lists and maps of
    them likewise."""
    plan = _plan(model) or {}
    out: dict[str, Any] = {}
    for name, value in values.items():
        field = plan.get(name)
        if field is None:
            out[name] = value
            continue
        handed = value if field.form is None else _handed(field.form, value)
        into = out
        for part in field.key[:-1]:
            nested = into.setdefault(part, {})
            into = nested if isinstance(nested, dict) else into
        into[field.key[-1]] = handed
    return out


def _marked(metadata: Any) -> _Form | None:
    """The form an ``Annotated`` type's markers give its value (``Json``, an encoding)."""
    for marker in metadata:
        if _is_json(marker):
            return _JSON_FORM
        if isinstance(marker, (EncodedStr, EncodedBytes)):
            return _Encoded(marker)
    return None


def _handed(form: _Form, value: Any) -> Any:
    if isinstance(form, _Positions):
        if not isinstance(value, list) or len(value) != len(form.forms):
            return value
        return [v if f is None else _handed(f, v) for f, v in zip(form.forms, value, strict=True)]
    if isinstance(form, _Json):
        return None if value is None else json_text(value)
    if isinstance(form, _Encoded):
        return _encoded(form.marker, value)
    if isinstance(form, _Model):
        return handed_form(form.model, value) if isinstance(value, Mapping) else value
    if form.values:
        return (
            {k: _handed(form.form, v) for k, v in value.items()}
            if isinstance(value, Mapping)
            else value
        )
    return [_handed(form.form, v) for v in value] if isinstance(value, list) else value


def _encoded(marker: EncodedStr | EncodedBytes, value: Any) -> Any:
    if isinstance(marker, EncodedStr) and isinstance(value, str):
        return marker.encode_str(value)
    if isinstance(marker, EncodedBytes) and isinstance(value, (str, bytes)):
        raw = value.encode("utf-8") if isinstance(value, str) else value
        return marker.encode(raw).decode("ascii", "replace")
    return value


def _alias(field: FieldInfo) -> tuple[str, ...] | None:
    """The key (a path, for an ``AliasPath`` of names) a field is read under when not by
    its name (the first of a choice)."""
    alias: Any = field.validation_alias
    if isinstance(alias, AliasChoices):
        alias = next((c for c in alias.choices if isinstance(c, (str, AliasPath))), None)
    if isinstance(alias, AliasPath) and all(isinstance(p, str) for p in alias.path):
        return tuple(str(p) for p in alias.path)
    if not isinstance(alias, str):
        alias = field.alias
    return (alias,) if isinstance(alias, str) else None


def _is_json(marker: Any) -> bool:
    return marker is _JSON or type(marker) is _JSON


def json_text(value: Any) -> str:
    """The JSON text a ``Json`` field reads back to ``value`` (written as pydantic writes
    it: its round-trip dump of the field is this very text)."""
    return to_json(value).decode("utf-8")


__all__ = ["handed_form", "json_text", "reshapes", "revealed"]
