"""Rego policies checked the way gw's extauth server will run them, so that a mistake is a
status on the AuthConfig rather than requests that are always refused.

The engine is rego-cpp (`regopy`), which reads Rego v1 and the older v0 syntax. A policy is
checked twice: it must compile with its query (syntax, undefined references, the query
itself), and every function it calls must exist, since the engine only finds a missing one
when a request reaches the call. The built-ins OPA 1.0 removed (`any`, `all`, `re_match`,
...) and those that would reach out of the policy (`http.send`) are not in the engine.
Results are remembered by modules and query: an unchanged policy is not compiled again.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regopy

#: What to do about a function the engine lacks.
_INSTEAD = {
    "any": "write `x in {...}` or `some x in xs` instead",
    "all": "write `every x in xs { ... }` instead",
    "re_match": "write regex.match instead",
    "http.send": "policies cannot call services; pass data through the chain's state",
    "print": "remove the debugging call",
    "trace": "remove the debugging call",
}
_TOKENS = re.compile(r'#[^\n]*|"(?:\\.|[^"\\\n])*"|`[^`]*`')
_CALL = re.compile(r"(?<![\w.\]])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\(")
#: A function's head: `name(args)` followed by `:=`, `=`, `{` or `if`.
_DEFINED = re.compile(r"^\s*([A-Za-z_]\w*)\s*\([^()\n]*\)\s*(?::=|=|\{|if\b)", re.MULTILINE)
_IMPORT = re.compile(r"^\s*import\s+([\w.]+)(?:\s+as\s+(\w+))?", re.MULTILINE)
_KEYWORDS = frozenset({"not", "some", "every", "with", "in", "if", "contains", "else", "default"})
#: One error of the engine: `(error <n>:<module>|<offset>|<length>` (no location for the
#: query) and its `(errormsg <n>:<text>)`.
_ERROR = re.compile(r"\(error(?: \d+:([^|\n]*)\|(\d+)\|\d+)?\s*\(errormsg \d+:([^\n]*)\)")


@lru_cache(maxsize=256)
def problems(modules: tuple[tuple[str, str], ...], query: str) -> tuple[str, ...]:
    """What is wrong with `modules` ((name, source) pairs) queried by `query` (empty: fine).
    The engine is loaded when a policy is first checked: it is about 10 MB of the control
    plane's memory, which a folder without Rego policies does not need."""
    import regopy

    interpreter = regopy.Interpreter()
    interpreter.log_level = regopy.LogLevel.NONE  # errors come back here, not on stdout
    sources = dict(modules)
    try:
        for name, source in modules:
            interpreter.add_module(name, source)
        interpreter.build(query)
    except regopy.RegoError as exc:
        return tuple(_describe(str(exc), sources))
    return tuple(_missing_functions(modules, query, interpreter))


def _describe(error: str, sources: dict[str, str]) -> list[str]:
    """The engine's errors as `<module>:<line>:<column>: <message>`."""
    out = []
    for name, offset, message in _ERROR.findall(error):
        source = sources.get(name)
        if source is None:
            out.append(f"the query: {message.strip()}")
            continue
        before = source[: int(offset)]
        line, column = before.count("\n") + 1, int(offset) - before.rfind("\n")
        out.append(f"{name}:{line}:{column}: {message.strip()}")
    return out or [error.splitlines()[0]]


def _missing_functions(
    modules: tuple[tuple[str, str], ...], query: str, interpreter: regopy.Interpreter
) -> list[str]:
    texts = [(name, _TOKENS.sub(" ", source)) for name, source in modules]
    defined = {d for _, text in texts for d in _DEFINED.findall(text)}
    out = []
    for name, text in [*texts, ("the query", _TOKENS.sub(" ", query))]:
        aliases = {"data", "input"} | {
            alias or path.rsplit(".", 1)[-1] for path, alias in _IMPORT.findall(text)
        }
        for called in dict.fromkeys(_CALL.findall(text)):
            if (
                called in _KEYWORDS
                or called.split(".", 1)[0] in aliases
                or called in defined
                or interpreter.is_builtin(called)
            ):
                continue
            instead = _INSTEAD.get(called, "use a built-in of Rego 1.0")
            out.append(f"{name} calls {called}(), which gw's Rego engine does not have: {instead}")
    return out
