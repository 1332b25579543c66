"""A faster `__init__` for the IR's frozen dataclasses, with the same signature and result.

A frozen dataclass's generated `__init__` sets each field with `object.__setattr__(self,
name, value)`, which looks the field's slot up by name on every call: with some twenty
IR objects made for each virtual host, that was a tenth of a full translation. The
`__init__` made here calls each slot's own setter instead (`member_descriptor.__set__`),
about a third cheaper. Everything else stays the dataclass's: fields, defaults, equality,
hashing, `repr`, `dataclasses.replace`, and the `FrozenInstanceError` on assignment.

The translator's own per-host records (a host's contribution, its memo, its references)
get it too: they are made as often as the IR objects.

Only what those classes use is supported (fields with a default, a default factory or
neither, positional or keyword-only; slots; no `__post_init__`, no `init=False`); anything
else is refused when the class is given it, so that a class cannot silently get another
meaning.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

C = TypeVar("C", bound=type[Any])

#: Marks an argument left to its default factory (a value no caller can pass).
_FACTORY = object()


def use_slot_setters(cls: C) -> C:
    """Give `cls`, a frozen, slotted dataclass, an `__init__` that sets its slots directly.

    The parameters are the dataclass's own: its positional fields in order, then its
    keyword-only ones (which a dataclass also puts last). Returns `cls`, so that it can
    decorate the class (above `@dataclass`)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: not a frozen dataclass with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: __post_init__ is not supported here")
    scope: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: only fields set by __init__")
        into = keyword if f.kw_only else positional
        name = f.name
        scope[f"_set_{name}"] = cls.__dict__[name].__set__
        value = name
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{name}"] = f.default
            into.append(f"{name}=_default_{name}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{name}"] = f.default_factory
            into.append(f"{name}=_FACTORY")
            value = f"_factory_{name}() if {name} is _FACTORY else {name}"
        else:
            into.append(name)
        body.append(f"    _set_{name}(self, {value})")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, scope)  # as `dataclasses` makes its own __init__
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init
    return cls
