"""Transformation scripts → Lua for Envoy's Lua filter.

On a plain listener, what a route runs is in two parts. The shared script
(`shared_source`) is gw's fixed runtime (`transform_runtime.lua`, `transform_engine.lua`:
JSON, template values and functions, the regex machine, the steps) and a dispatcher; the
listener filter holds it once per variant (`SHARED_NAMES`: by the hooks it defines),
compiled once per worker. A route's rules (`route_rules`) are a Lua chunk returning the
table `S` of its stage's rules, in which every template is compiled to a Lua function and
every regex to a program; they travel in the route's `LuaPerRoute.filter_context`, and
the dispatcher compiles each distinct chunk once per worker, the first time a request
needs it. A TLS virtual host's routes carry the runtime and their rules in one script
(`standalone_source`; `transform_script.TransformScript._run` says why). The output is
deterministic: the same IR gives the same bytes.

Before, every route's `LuaPerRoute.source_code` held the whole runtime (35 KB) with its
rules: Envoy spent 81 KiB of memory per such route (90 MiB for 1,000, against 11 MiB
without), and each route configuration carried 37 KB per route.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from importlib import resources

from gw.translator import ir
from gw.translator.envoy.transform_templates import compile_template, lua_string
from gw.translator.regex_program import compile_program, lua_pattern

_OPS = {"byte": 1, "split": 2, "jmp": 3, "save": 4, "assert": 5, "match": 6}


@functools.cache
def runtime() -> str:
    here = resources.files("gw.translator.envoy")
    return (
        "\n".join(
            (here / name).read_text(encoding="utf-8")
            for name in ("transform_runtime.lua", "transform_engine.lua")
        ).replace("\nreturn R\n", "\n")
        + "\nreturn R\n"
    )


#: The shared scripts in the filter's `source_codes` (what `LuaPerRoute.name` says), by
#: the hooks they define: Envoy runs a coroutine per request for each hook a script has,
#: so rules that need only one run in the script that has only that one.
SHARED_NAMES: dict[tuple[bool, bool], str] = {
    (True, True): "gw.transform",
    (True, False): "gw.transform.request",
    (False, True): "gw.transform.response",
}
#: The keys of a route's `LuaPerRoute.filter_context`: its rules, and a digest of them
#: that the dispatcher reads on every request (a short string; the rules are kilobytes).
RULES_KEY = "rules"
ID_KEY = "id"

#: Rules kept per worker in one generation (see `_DISPATCHER`).
GENERATION = 4096

#: Finds the rules of the route a request is on: each distinct chunk compiled once per
#: worker, the first time a request needs it, and kept by its digest in two generations.
#: Rules found in the older one move to the current one; when the current one holds
#: `generation` rules it becomes the older one, and what was older is dropped. The rules of
#: route configurations long replaced go, those in use stay (up to twice `generation` in
#: use, none is compiled twice), and the memory is bounded.
_DISPATCHER = """
local kept, older, count = {{}}, {{}}, 0
local function rules(handle)
  local context = handle:filterContext()
  local id = context:get("{id}")
  local S = kept[id]
  if S == nil then
    S = older[id]
    if S == nil then
      S = assert(loadstring(context:get("{rules}"), "=gw.transform"))(R)
    end
    if count >= {generation} then kept, older, count = {{}}, kept, 0 end
    kept[id], count = S, count + 1
  end
  return S
end
"""
_ON_REQUEST = "function envoy_on_request(handle) R.on_request(handle, rules(handle)) end\n"
_ON_RESPONSE = "function envoy_on_response(handle) R.on_response(handle, rules(handle)) end\n"


def shared_source(on_request: bool, on_response: bool) -> str:
    """A listener filter's script with the hooks asked for: the runtime, the dispatcher,
    the hooks."""
    return shared_source_kept(on_request, on_response, GENERATION)


@functools.cache
def shared_source_kept(on_request: bool, on_response: bool, generation: int) -> str:
    """`shared_source` keeping `generation` rules per generation (tests keep fewer)."""
    hooks = (_ON_REQUEST if on_request else "") + (_ON_RESPONSE if on_response else "")
    dispatcher = _DISPATCHER.format(id=ID_KEY, rules=RULES_KEY, generation=generation)
    return "local R = (function()\n" + runtime() + "end)()\n" + dispatcher + hooks


@dataclass(frozen=True, slots=True)
class RouteRules:
    """A stage's rules on one route (or virtual host), as its `LuaPerRoute` carries them:
    the chunk (`source`), its digest, and the hooks they need, which name the shared
    script that runs them (`script`; None: no hook, nothing to run).

    A response step reads request headers from Envoy (`requestHeaders()`); what it needs
    kept from the request is the rule that was chosen, unless there is only one,
    unconditional: only then does the request side keep it (`S.keeps`), and only then, or
    when a request step or clearRouteCache exists, does it need the request hook."""

    source: str
    digest: str
    on_request: bool
    on_response: bool

    @property
    def script(self) -> str | None:
        return SHARED_NAMES.get((self.on_request, self.on_response))


@functools.lru_cache(maxsize=1024)
def route_rules(script: ir.TransformationScript, state_namespace: str) -> RouteRules:
    """`script`'s rules for the stage whose metadata namespace is `state_namespace`. Kept
    per script (a pure function of it): the routes of a host all run their host's rules
    when they have none of their own."""
    source = _rules_source(script, state_namespace)
    keeps = _responds(script) and not _static(script)
    on_request = keeps or any(r.request or r.clear_route_cache for r in script.request_rules)
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    return RouteRules(source, digest, on_request, _responds(script))


@functools.lru_cache(maxsize=1024)
def standalone_source(script: ir.TransformationScript, state_namespace: str) -> str:
    """The whole script of `script` on one route, runtime and rules together, for a
    route's `LuaPerRoute.source_code` (the routes of TLS virtual hosts): the same rules,
    run by the same runtime steps, with only the hooks they need."""
    rules = route_rules(script, state_namespace)
    body = rules.source.removeprefix(_TAKES_RUNTIME)
    hooks = [
        *([_STANDALONE_REQUEST] if rules.on_request else []),
        *([_STANDALONE_RESPONSE] if rules.on_response else []),
    ]
    runs = "local S = (function(R)\n" + body + "end)(R)\n"
    return "local R = (function()\n" + runtime() + "end)()\n" + runs + "".join(hooks)


_STANDALONE_REQUEST = "function envoy_on_request(handle) R.on_request(handle, S) end\n"
_STANDALONE_RESPONSE = "function envoy_on_response(handle) R.on_response(handle, S) end\n"


def _static(script: ir.TransformationScript) -> bool:
    rules = script.request_rules
    return len(rules) == 0 or (len(rules) == 1 and rules[0].condition is None)


def _rules_source(script: ir.TransformationScript, state_namespace: str) -> str:
    """A chunk that takes the runtime `R` and returns `S`, the rules."""
    rules = script.request_rules
    static = _static(script)
    keeps = _responds(script) and not static
    lines = [
        "return {",
        f"  state = {lua_string(state_namespace)}, log = {_bool(script.log)},",
        f"  keeps = {_bool(keeps)}, rule = {'1' if rules and static else 'nil'},",
        "  request = {",
        *(f"    {_request_rule(r)}," for r in rules),
        "  },",
        "  response = {",
        *(f"    {_response_rule(r)}," for r in script.response_rules),
        "  },",
        "}",
    ]
    return _TAKES_RUNTIME + "\n".join(lines) + "\n"


#: How a rules chunk starts: it is given the runtime `R` (`standalone_source` runs the
#: rest inside its own script, where `R` is already there).
_TAKES_RUNTIME = "local R = ...\n"


def _responds(script: ir.TransformationScript) -> bool:
    return bool(script.response_rules) or any(r.response for r in script.request_rules)


def _calls(step: ir.TemplateTransformation, name: str) -> list[ir.Call]:
    found: list[ir.Call] = []

    def walk(value: object) -> None:
        if isinstance(value, ir.Call) and value.call == name:
            found.append(value)
        if isinstance(value, tuple):
            for item in value:
                walk(item)
        elif hasattr(value, "__dataclass_fields__"):
            for field in value.__dataclass_fields__:
                walk(getattr(value, field))

    walk(step)
    return found


def _request_rule(rule: ir.RequestRule) -> str:
    return (
        "{ condition = "
        + _condition(rule.condition)
        + f", clear_route_cache = {_bool(rule.clear_route_cache)}"
        + f", request = {_step(rule.request)}, response = {_step(rule.response)} }}"
    )


def _response_rule(rule: ir.ResponseRule) -> str:
    headers = ", ".join(_header_match(h) for h in rule.headers)
    return f"{{ headers = {{ {headers} }}, response = {_step(rule.response)} }}"


def _condition(c: ir.RequestCondition | None) -> str:
    if c is None:
        return "nil"
    path = c.path if c.case_sensitive or c.path_kind == "regex" else c.path.lower()
    regex = c.path if c.case_sensitive else f"(?i:{c.path})"
    parts = [
        f"kind = {lua_string(c.path_kind)}",
        f"path = {lua_string(path)}",
        f"case_sensitive = {_bool(c.case_sensitive)}",
        "headers = {" + ", ".join(_header_match(h) for h in c.headers) + "}",
        "query = {" + ", ".join(_header_match(h) for h in c.query) + "}",
    ]
    if c.path_kind == "regex":
        parts.append(_regex_fields(regex))
    if c.methods:
        parts.append(
            "methods = {" + "".join(f"[{lua_string(m)}] = true, " for m in c.methods) + "}"
        )
    return "{ " + ", ".join(parts) + " }"


def _header_match(h: ir.MatchHeader) -> str:
    parts = [f"name = {lua_string(h.name.lower())}", f"invert = {_bool(h.invert)}"]
    if h.value:
        parts.append(f"value = {lua_string(h.value)}")
        if h.regex:
            parts.append(_regex_fields(h.value))
    return "{ " + ", ".join(parts) + " }"


def _step(step: ir.Step | None) -> str:
    if step is None:
        return "nil"
    if isinstance(step, ir.HeaderBodyTransformation):
        return (
            "{ header_body = true, reads_body = true, "
            f"add_request_metadata = {_bool(step.add_request_metadata)} }}"
        )
    esc = step.escape_characters
    fields = [
        f"advanced = {_bool(step.advanced)}",
        f"parse_json = {_bool(step.parse_json)}",
        f"ignore_parse_errors = {_bool(step.ignore_parse_errors)}",
        f"passthrough = {_bool(step.passthrough)}",
        f"body = {lua_string(step.body)}",
        f"reads_body = {_bool(_reads_body(step))}",
        "extractors = {" + ", ".join(_extractor(e) for e in step.extractors) + "}",
        f"headers = {_rendered(step.headers, esc)}",
        "remove = {" + ", ".join(lua_string(h) for h in step.headers_to_remove) + "}",
        f"append = {_rendered(step.headers_to_append, esc)}",
        "metadata = {"
        + ", ".join(
            f"{{ namespace = {lua_string(m.namespace)}, key = {lua_string(m.key)}, "
            f"json = {_bool(m.json_to_proto)}, template = {compile_template(m.template, esc)} }}"
            for m in step.dynamic_metadata
        )
        + "}",
        "merged_keys = {"
        + ", ".join(
            f"{{ path = {_path(m.key)}, override_empty = {_bool(m.override_empty)}, "
            f"template = {compile_template(m.template, esc)} }}"
            for m in step.merged_keys
        )
        + "}",
    ]
    if step.body == "template":
        fields.append(f"body_template = {compile_template(step.body_template, esc)}")
    return "{ " + ", ".join(fields) + " }"


def _rendered(headers: tuple[ir.RenderedHeader, ...], escape: bool) -> str:
    items = (
        f"{{ name = {lua_string(h.name)}, template = {compile_template(h.template, escape)} }}"
        for h in headers
    )
    return "{" + ", ".join(items) + "}"


def _reads_body(step: ir.TemplateTransformation) -> bool:
    """Whether the step needs the whole body (then it is buffered before anything else)."""
    return (
        step.parse_json
        or step.body != "keep"
        or any(e.header is None for e in step.extractors)
        or bool(_calls(step, "body"))
    )


def _extractor(e: ir.TemplateExtractor) -> str:
    replacement = ", ".join(str(p) if isinstance(p, int) else lua_string(p) for p in e.replacement)
    header = lua_string(e.header) if e.header is not None else "nil"
    return (
        f"{{ name = {lua_string(e.name)}, path = {_path(e.name)}, header = {header}, "
        f"mode = {lua_string(e.mode)}, subgroup = {e.subgroup}, "
        f"replacement = {{ {replacement} }}, {_regex_fields(e.regex)} }}"
    )


def _regex_fields(regex: str) -> str:
    """The regex's program, and its Lua pattern when there is an exact one (faster)."""
    fields = f"prog = {program(regex)}"
    found = lua_pattern(regex)
    if found is not None:
        fields += f", lp = {lua_string(found.pattern)}, lp_max = {found.max_length}"
    return fields


def _path(name: str) -> str:
    return "{ " + ", ".join(lua_string(p) for p in name.split(".")) + " }"


def program(regex: str) -> str:
    """A regex as a Lua table of instructions (1-based program counters)."""
    out = []
    for instruction in compile_program(regex).instructions:
        op, args = instruction[0], instruction[1:]
        if op == "byte":
            ranges = ", ".join(str(r) for r in args[0])
            out.append(f"{{1, R.byteset({{{ranges}}}, {_bool(args[1])})}}")
        elif op in ("split", "jmp"):
            out.append("{" + ", ".join([str(_OPS[op]), *(str(a + 1) for a in args)]) + "}")
        elif op == "assert":
            out.append(f"{{5, {lua_string(args[0])}}}")
        else:
            out.append("{" + ", ".join([str(_OPS[op]), *(str(a) for a in args)]) + "}")
    return "{" + ", ".join(out) + "}"


def _bool(value: bool) -> str:
    return "true" if value else "false"
