"""Build frozen, slotted dataclasses without their generated ``__init__``, where many
are built at once.

A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__``
(past its own frozen guard), the slowest way to fill a slot: a loader building the
columns, codes and record of each of a thousand traces spent more time there than in
reading their names. :func:`slot_builder` makes a function that stores each field
through its slot's own descriptor instead: the same object, in about half the time.

Only for classes whose ``__init__`` does nothing but store its fields: no
``__post_init__``, no field computed by a default factory at build time (every field is
passed). The builder checks this when it is made, so a class that gains a validation
fails loudly at import instead of being built unchecked. A slotted class that is not a
dataclass (the trace) names the slots to fill, in order, and its other constructors
stay its own.

A leaf: it imports nothing from the package.
"""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def slot_builder(cls: type[T], slots: Sequence[str] | None = None) -> Callable[..., T]:
    """``build(*fields) -> cls``: every field, positionally, in declaration order (or
    the ``slots`` named, in their order, for a class that is not a dataclass)."""
    if "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__} is not a slotted class")
    if slots is None:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is not a dataclass: name its slots")
        if hasattr(cls, "__post_init__"):
            raise TypeError(
                f"{cls.__name__} validates in __post_init__: build it with its __init__"
            )
        names = [f.name for f in dataclasses.fields(cls)]
    else:
        names = list(slots)
        if sorted(names) != sorted(vars(cls)["__slots__"]):
            raise TypeError(f"{cls.__name__}: name each of its slots once")
    if not all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
        raise TypeError(f"{cls.__name__} has a field that is not a plain name")
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    for n in names:
        scope[f"_set_{n}"] = getattr(cls, n).__set__
    twin = _twin(cls)
    if twin is not None:  # plain stores into the twin, then the object becomes a cls
        scope["_twin"] = twin
        lines = [f"def build({', '.join(names)}):", "    self = _new(_twin)"]
        lines += [f"    self.{n} = {n}" for n in names]
        lines += ["    self.__class__ = _cls", "    return self"]
    else:
        lines = [f"def build({', '.join(names)}):", "    self = _new(_cls)"]
        lines += [f"    _set_{n}(self, {n})" for n in names]
        lines.append("    return self")
    exec("\n".join(lines), scope)  # the text is made of checked field names
    build: Callable[..., T] = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    build.__doc__ = f"A {cls.__name__} from all its fields, as its __init__ makes it."
    return build


def _twin(cls: type) -> type | None:
    """A plain class with the very slots of ``cls`` (None where CPython would not let an
    object change between the two).

    A frozen class guards ``__setattr__``, so each of its slots is filled through a call
    of the slot's descriptor; a class with the same slots and no guard takes plain stores
    (one bytecode each, specialised by the interpreter), and an object built in it can
    then take ``cls`` as its class: the layouts are the same, so ``__class__``
    assignment allows it. About twice as fast again as the descriptor calls, for the
    same object: of type ``cls``, frozen from then on. Tried once here: a class whose
    layout differs (a base with its own slots, a ``__dict__``) keeps the descriptors.
    """
    slots = vars(cls).get("__slots__")
    if cls.__bases__ != (object,) or not isinstance(slots, tuple) or "__dict__" in slots:
        return None
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": slots, "__module__": __name__})
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:
        return None
    return twin


__all__ = ["slot_builder"]
