"""A faster `__init__` for the IR's frozen dataclasses, with the same signature and result.

A frozen dataclass's generated `__init__` sets each field with `object.__setattr__(self,
name, value)`, which looks the field's slot up by name on every call: with some twenty
IR objects made for each virtual host, that was a tenth of a full translation. The
`__init__` made here calls each slot's own setter instead (`member_descriptor.__set__`),
about a third cheaper. Everything else stays the dataclass's: fields, defaults, equality,
hashing, `repr`, `dataclasses.replace`, and the `FrozenInstanceError` on assignment.

Only what the IR uses is supported (keyword-only fields with a default, a default factory
or neither; slots; no `__post_init__`, no `init=False`); anything else is refused when the
package is imported, so that a new IR class cannot silently get another meaning.
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: Marks an argument left to its default factory (a value no caller can pass).
_FACTORY = object()


def use_slot_setters(cls: type[Any]) -> None:
    """Give `cls`, a frozen, slotted, keyword-only dataclass, an `__init__` that sets its
    slots directly."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: not a frozen dataclass with slots")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: __post_init__ is not supported here")
    scope: dict[str, Any] = {"_FACTORY": _FACTORY}
    params_src, body = [], []
    for f in dataclasses.fields(cls):
        if not f.init or not f.kw_only:
            raise TypeError(f"{cls.__name__}.{f.name}: only keyword-only init fields")
        name = f.name
        scope[f"_set_{name}"] = cls.__dict__[name].__set__
        value = name
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{name}"] = f.default
            params_src.append(f"{name}=_default_{name}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{name}"] = f.default_factory
            params_src.append(f"{name}=_FACTORY")
            value = f"_factory_{name}() if {name} is _FACTORY else {name}"
        else:
            params_src.append(name)
        body.append(f"    _set_{name}(self, {value})")
    signature = f"self, *, {', '.join(params_src)}" if params_src else "self"
    source = f"def __init__({signature}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, scope)  # as `dataclasses` makes its own __init__
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init
