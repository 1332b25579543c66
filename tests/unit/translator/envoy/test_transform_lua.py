"""gw's Lua transformation runtime in LuaJIT (lupa): the JSON decoder and encoder, the
regex machine against Python's `re` (same semantics for the patterns gw accepts), the
template functions, and whole scripts on a stand-in stream handle."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from envoy.config.listener.v3 import listener_pb2
from envoy.config.route.v3 import route_pb2
from envoy.extensions.filters.http.lua.v3 import lua_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf.message import Message
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.transform_lua import (
    ID_KEY,
    RULES_KEY,
    SHARED_NAMES,
    RouteRules,
    program,
    route_rules,
    runtime,
    shared_source,
    shared_source_kept,
    standalone_source,
)
from gw.translator.envoy.transform_templates import compile_template
from gw.translator.gateway.template import parse_template
from gw.translator.regex_program import lua_pattern
from tests.golden.test_golden import ALL_CASES, case_id, translate_case
from tests.support.lua_envoy import LuaEnvoy

lupa = pytest.importorskip("lupa.luajit21")


@pytest.fixture(scope="module")
def lua() -> Any:
    runtime_lua = lupa.LuaRuntime(unpack_returned_tuples=True)
    runtime_lua.execute("R = (function()\n" + runtime() + "end)()")
    return runtime_lua


def roundtrip(lua: Any, text: str) -> str:
    out: str = lua.eval("function(s) return R.encode(R.decode(s)) end")(text)
    return out


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)))
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON, ascii_only=st.booleans(), indent=st.sampled_from([None, 2]))
def test_json_round_trips(lua: Any, value: Any, ascii_only: bool, indent: int | None) -> None:
    encoded = roundtrip(lua, json.dumps(value, ensure_ascii=ascii_only, indent=indent))
    assert json.loads(encoded) == value


def test_json_output_is_compact_with_sorted_keys(lua: Any) -> None:
    """The established gateway's output: keys sorted, no spaces, UTF-8 kept."""
    assert roundtrip(lua, '{ "b": [1, {"z": 1, "a": "é"}], "a": null }') == (
        '{"a":null,"b":[1,{"a":"é","z":1}]}'
    )


@pytest.mark.parametrize(
    "text",
    ["", "{", '{"a":}', "[1,]", "01", "1.", "tru", '"\\x"', '"a\nb"', '"\\ud800"', "[1] x", "nul"],
)
def test_invalid_json_is_refused(lua: Any, text: str) -> None:
    check = lua.eval("function(s) local ok, e = pcall(R.decode, s) return ok, e and e.gw end")
    ok, message = check(text)
    assert not ok
    assert message.startswith("the body is not valid JSON")


def test_json_escapes_and_numbers(lua: Any) -> None:
    assert roundtrip(lua, '"\\u00e9\\ud83d\\ude00\\n\\"\\/"') == '"é😀\\n\\"/"'
    assert roundtrip(lua, "[1, -0, 2.5, 1e3, 0.1, 12345678901234567]") == (
        "[1,0,2.5,1000,0.1,12345678901234568]"
    )


_PATTERNS = [
    r"(.*foo=([^&]*).*)",
    r"[\s\S]*id: ([0-9]{4})[\s\S]*",
    r"a|ab|abc",
    r"(a+)(b*?)c?",
    r"(?i)hello\s(\w+)",
    r"^x$",
    r"(a|b){2,3}c",
    r"\bword\b",
    r"[^a-c]+",
    r"(\d+)-(\d+)",
    r"a.*?b",
    r"(?s)a.b",
    r"x*",
    r"[a-]z",
]


@settings(max_examples=200, deadline=None)
@given(pattern=st.sampled_from(_PATTERNS), text=st.text(alphabet="abcdxwor-=&fi:1234 \nHhEeLlo"))
@example(pattern="^x$", text="x\n")  # RE2's `$` does not match before a last newline
def test_regex_machine_agrees_with_python(lua: Any, pattern: str, text: str) -> None:
    """Leftmost-first search and full matches with the same groups as Python's engine,
    which agrees with RE2 on these patterns once RE2's `$` (the end of the text only) is
    written `\\Z` for Python, whose `$` also matches before a last newline (`\\s` differs
    too, on characters the texts do not hold)."""
    prog = lua.execute("return " + program(pattern))
    search = lua.eval(
        "function(p, s, whole) local c = R.search(p, s, 1, whole) if not c then return nil end "
        "local out = {} for k = 0, 20 do out[k] = c[k] or -1 end return out end"
    )
    for whole in (False, True):
        expected = (re.fullmatch if whole else re.search)(pattern.replace("$", r"\Z"), text)
        got = search(prog, text.encode(), whole)
        if expected is None:
            assert got is None, (pattern, text, whole)
            continue
        assert got is not None, (pattern, text, whole)
        for group in range((expected.re.groups or 0) + 1):
            start, end = expected.span(group)
            if start < 0:
                assert got[2 * group] == -1 or got[2 * group + 1] == -1
            else:
                assert (got[2 * group] - 1, got[2 * group + 1] - 1) == (start, end), group


def render(lua: Any, template: str, data: str = "{}", headers: dict[str, str] | None = None) -> str:
    fn = lua.execute("return " + compile_template(parse_template(template).nodes, False))
    context = lua.eval(
        "function(d, h) return {data = R.decode(d), extractions = {}, randoms = {}, "
        "header = function(n) return h[n] or '' end, request_header = function(n) return h[n] "
        "or '' end, body = function() return '' end} end"
    )
    out: str = fn(context(data, lua.table_from(headers or {})))
    return out


@pytest.mark.parametrize(
    ("template", "data", "expected"),
    [
        (
            '{{ substring("abcdef", 2) }}|{{ substring("abcdef", 1, 2) }}|{{ substring("ab", 5) }}',
            "{}",
            "cdef|bc|",
        ),
        ('{{ substring("abc", 0, -1) }}', "{}", "abc"),
        (
            '{{ base64_encode("hi?") }} {{ base64_decode("aGk/") }} {{ base64url_encode("hi?") }}',
            "{}",
            "aGk/ hi? aGk_",
        ),
        (
            "{{ a }}|{{ b }}|{{ c }}|{{ d }}|{{ e }}",
            '{"a":"s","b":1.5,"c":null,"d":[1,{"x":true}],"e":7}',
            's|1.5||[1,{"x":true}]|7',
        ),
        (
            '{{ length(xs) }} {{ first(xs) }} {{ last(xs) }} {{ join(xs, "-") }} {{ at(xs, 1) }}',
            '{"xs":[3,4,5]}',
            "3 3 5 3-4-5 4",
        ),
        (
            "{% if 2 in xs and not false %}in{% endif %}{% if xs %}!{% endif %}",
            '{"xs":[1,2]}',
            "in!",
        ),
        (
            '{{ replace("a.b.c", ".", "%") }} {{ lower("AbC") }} {{ capitalize("hELLO") }}',
            "{}",
            "a%b%c abc Hello",
        ),
        (
            '{{ int("42") + 1 }} {{ 7 % 3 }} {{ 2 ^ 10 }} {{ round(3.14159, 2) }}',
            "{}",
            "43 1 1024 3.14",
        ),
        (
            '{{ exists("a") }} {{ exists("zz") }} {{ existsIn(o, "k") }}',
            '{"a":1,"o":{"k":1}}',
            "true false true",
        ),
        ('{{ word_count("a b  c") }} {{ raw_string("q\\"t") }}', "{}", 'q\\"t'.join(["3 ", ""])),
        (
            "{% for x in xs %}{{ loop.index1 }}{% if loop.is_last %}.{% endif %}{% endfor %}",
            '{"xs":[0,0,0]}',
            "123.",
        ),
        ('{{ default(a.b, "d") }}{{ default(x, "d") }}', '{"x":"set"}', "dset"),
    ],
)
def test_template_functions(lua: Any, template: str, data: str, expected: str) -> None:
    assert render(lua, template, data) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ('{% if a == "x" %}1{% else if a == "y" %}2{% else %}3{% endif %}', "2"),
        ('{% if a == "x" %}1{% else if a == "z" %}2{% endif %}.', "."),
        ("{% if a != 1 and a %}[{% if n == 2 %}{{ a }}{% endif %}]{% endif %}", "[y]"),
        ("{% if not n == 3 or false %}{% endif %}-{% if 0 %}zero{% endif %}", "-"),
        ("{% if o %}{{ o }}{% endif %}{% if e %}x{% else %}{{ e }}{% endif %}", '{"k":1}[]'),
        ("{{ a }}" * 50, "y" * 50),
        ("{% if a %}" + "{{ a }}" * 45 + "{% endif %}", "y" * 45),
    ],
)
def test_templates_with_ifs_as_one_expression_or_a_table(
    lua: Any, template: str, expected: str
) -> None:
    """Text, values and ifs compile to one expression (longer ones to the table form): the
    same output either way, comparisons with literals as Lua's own equality."""
    compiled = compile_template(parse_template(template).nodes, False)
    assert ("table.concat" in compiled) == (template.count("{{") > 40)
    assert render(lua, template, '{"a": "y", "n": 2, "o": {"k": 1}, "e": []}') == expected


def test_replace_with_random_is_random_and_stable_within_a_render(lua: Any) -> None:
    first = render(lua, '{{ replace_with_random("k-x-k", "k") }}')
    second = render(lua, '{{ replace_with_random("k-x-k", "k") }}')
    left, middle, right = first.split("-")
    assert left == right and middle == "x" and re.fullmatch(r"[A-Za-z0-9+/]{22}", left)
    assert second.split("-")[0] != left


def _script(request: ir.Step | None = None, response: ir.Step | None = None) -> RouteRules:
    rule = ir.RequestRule(request=request, response=response)
    return route_rules(ir.TransformationScript(request_rules=(rule,)), "gw.transform.regular")


def _template(text: str) -> tuple[ir.Node, ...]:
    return parse_template(text).nodes


def test_request_step_order_and_header_rules() -> None:
    step = ir.TemplateTransformation(
        headers=(
            ir.RenderedHeader(name="x-a", template=_template('{{ header("x-in") }}!')),
            ir.RenderedHeader(name="x-gone", template=()),
            ir.RenderedHeader(name="x-both", template=_template("set")),
        ),
        headers_to_remove=("x-both",),
        headers_to_append=(ir.RenderedHeader(name="x-both", template=_template("appended")),),
        parse_json=False,
    )
    envoy = LuaEnvoy()
    handle = envoy.run(
        _script(step), "request", [("x-in", "v"), ("x-gone", "old"), ("x-a", "client")]
    )
    assert envoy.headers(handle) == [("x-in", "v"), ("x-a", "v!"), ("x-both", "appended")]


def test_a_header_value_with_a_line_break_is_a_bad_request() -> None:
    step = ir.TemplateTransformation(
        headers=(ir.RenderedHeader(name="x-a", template=_template("{{ v }}")),),
    )
    envoy = LuaEnvoy()
    handle = envoy.run(_script(step), "request", [(":path", "/")], '{"v": "a\\r\\nb: c"}')
    assert handle.responded.headers[":status"] == "400"
    assert (
        handle.responded.body == "bad request: the value of header x-a would contain a line break"
    )


def test_response_reads_the_request_headers_from_envoy() -> None:
    """request_header() on a response reads the stream's request headers (Envoy's
    `requestHeaders()`): response-only rules do nothing on the request and keep nothing."""
    step = ir.TemplateTransformation(
        headers=(
            ir.RenderedHeader(name="x-echo", template=_template('{{ request_header("x-q") }}')),
            ir.RenderedHeader(
                name="x-named", template=_template('{{ request_header(header("x-which")) }}')
            ),
        ),
        parse_json=False,
    )
    envoy = LuaEnvoy()
    source = _script(response=step)
    assert (source.on_request, source.on_response, source.script) == (
        False,
        True,
        "gw.transform.response",
    )
    envoy.run(source, "request", [("x-q", "asked"), ("x-other", "too")])
    handle = envoy.run(source, "response", [(":status", "200"), ("x-which", "X-Other")])
    assert ("x-echo", "asked") in envoy.headers(handle)
    assert ("x-named", "too") in envoy.headers(handle)
    assert len(envoy.metadata) == 0


def test_a_response_reads_the_request_as_the_request_step_left_it() -> None:
    """With matchers the chosen rule is kept (its index, in dynamic metadata); request
    headers the request step set are what request_header() reads on the response."""
    request = ir.TemplateTransformation(
        headers=(ir.RenderedHeader(name="x-q", template=_template("changed")),),
    )
    response = ir.TemplateTransformation(
        headers=(
            ir.RenderedHeader(name="x-echo", template=_template('{{ request_header("x-q") }}')),
        ),
    )
    rules = (
        ir.RequestRule(
            condition=ir.RequestCondition(path_kind="prefix", path="/a"), response=response
        ),
        ir.RequestRule(request=request, response=response),
    )
    source = route_rules(ir.TransformationScript(request_rules=rules), "gw.transform.regular")
    envoy = LuaEnvoy()
    envoy.run(source, "request", [(":path", "/b"), ("x-q", "asked")])
    assert envoy.metadata["gw.transform.regular"]["request"] == 2
    handle = envoy.run(source, "response", [(":status", "200")])
    assert ("x-echo", "changed") in envoy.headers(handle)


def test_dynamic_metadata_reads_nested_keys() -> None:
    step = ir.TemplateTransformation(
        headers=(
            ir.RenderedHeader(
                name="x-customer",
                template=_template(
                    '{{ dynamic_metadata("config_0:sub", "envoy.filters.http.ext_authz") }}'
                ),
            ),
            ir.RenderedHeader(
                name="x-missing", template=_template('{{ dynamic_metadata("config_0:no:x") }}!')
            ),
        ),
        parse_json=False,
    )
    envoy = LuaEnvoy()
    envoy.metadata["envoy.filters.http.ext_authz"] = envoy.lua.table(
        config_0=envoy.lua.table(sub="my-client")
    )
    handle = envoy.run(_script(step), "request", [(":path", "/")])
    assert ("x-customer", "my-client") in envoy.headers(handle)
    assert ("x-missing", "!") in envoy.headers(handle)


@settings(max_examples=200, deadline=None)
@given(
    pattern=st.sampled_from(
        [r"(.*foo=([^&]*).*)", r".*tenant=([a-z]+).*", r"org=(\w+)", r"(?i)ab+c", r"a.*?b",
         r"x\.y", r"[\s\S]*x", r"(a|b)+c?"]
    ),
    text=st.text(alphabet="abcxyfo=&.tenant\nB", max_size=30),
)  # fmt: skip
def test_lua_patterns_agree_with_the_machine(lua: Any, pattern: str, text: str) -> None:
    """Where gw serves a regex as a Lua pattern, it extracts what the Pike machine does."""
    found = lua_pattern(pattern)
    if found is None:
        return
    extract = lua.eval(
        "function(lp, prog, s, g) local e = {mode = 'extract', subgroup = g, prog = prog} "
        "local b = R.extract(e, s) e.lp, e.lp_max = lp, 1e9 return R.extract(e, s), b end"
    )
    prog = lua.execute("return " + program(pattern))
    for group in range(re.compile(pattern).groups + 1):
        by_pattern, by_machine = extract(found.pattern, prog, text.encode(), group)
        assert by_pattern == by_machine, (pattern, text, group)


def test_merge_json_keys_and_single_replace_of_a_group() -> None:
    step = ir.TemplateTransformation(
        extractors=(
            ir.TemplateExtractor(
                name="masked", header="x-card", regex=r"(\d{4})-(\d{4})", subgroup=1,
                mode="single_replace", replacement=("****",),
            ),
        ),
        body="merge_json_keys",
        merged_keys=(
            ir.MergedKey(key="card", template=_template("{{ masked }}")),
            ir.MergedKey(key="meta.count", template=_template("{{ length(items) }}")),
            ir.MergedKey(key="gone", template=()),
            ir.MergedKey(key="kept", template=(), override_empty=True),
        ),
    )  # fmt: skip
    envoy = LuaEnvoy()
    handle = envoy.run(
        _script(step), "request", [("x-card", "1234-5678")], '{"items": [1, 2], "gone": 1}'
    )
    assert json.loads(handle.raw) == {
        "items": [1, 2], "gone": 1, "card": "****-5678", "meta": {"count": 2}, "kept": "",
        "masked": "****-5678",
    }  # fmt: skip


def _messages(resources: Any, message: type[Message]) -> list[Any]:
    return [message.FromString(r.SerializeToString()) for r in resources.values()]


def _lua_filters(listener: listener_pb2.Listener) -> list[lua_pb2.Lua]:
    out = []
    for chain in listener.filter_chains:
        for network in chain.filters:
            if network.name != names.HCM:
                continue
            manager = hcm_pb2.HttpConnectionManager()
            network.typed_config.Unpack(manager)
            for http_filter in manager.http_filters:
                if http_filter.name.endswith(".lua"):
                    config = lua_pb2.Lua()
                    http_filter.typed_config.Unpack(config)
                    out.append(config)
    return out


def test_routes_carry_rules_and_name_a_shared_script(tmp_path: Path) -> None:
    """The runtime is in each listener Lua filter once per variant of the shared script;
    a route's config names the variant for its hooks and carries only its rules and their
    digest (every route's script held the runtime before: 81 KiB of Envoy's memory each)."""
    case = next(c for c in ALL_CASES if case_id(c) == "transformation-templates")
    _, result = translate_case(case, tmp_path)
    (xds,) = result.served.values()
    filters = [
        f
        for listener in _messages(xds.resources[names.LISTENER], listener_pb2.Listener)
        for f in _lua_filters(listener)
    ]
    assert filters
    for config in filters:
        assert set(config.source_codes) == set(SHARED_NAMES.values())
        assert not config.HasField("default_source_code")
        for (on_request, on_response), name in SHARED_NAMES.items():
            source = config.source_codes[name].inline_string
            assert source == shared_source(on_request, on_response) and runtime() in source
    found = [
        lua_pb2.LuaPerRoute.FromString(typed[name].value)
        for routes in _messages(xds.resources[names.ROUTE], route_pb2.RouteConfiguration)
        for vhost in routes.virtual_hosts
        for typed in (
            vhost.typed_per_filter_config,
            *(r.typed_per_filter_config for r in vhost.routes),
        )
        for name in typed
        if name.endswith(".lua")
    ]
    running = [c for c in found if not c.disabled]
    assert running and not any(c.HasField("source_code") for c in found)
    for config in running:
        rules = config.filter_context.fields[RULES_KEY].string_value
        assert config.name in SHARED_NAMES.values()
        digest = hashlib.sha256(rules.encode()).hexdigest()[:24]
        assert config.filter_context.fields[ID_KEY].string_value == digest
        assert rules.startswith("local R = ...\nreturn {") and runtime() not in rules


def test_a_tls_hosts_routes_carry_whole_scripts(tmp_path: Path) -> None:
    """A TLS virtual host's chain is its own, and Envoy sends a TLS listener whole when a
    chain changes: its Lua filter holds no script, and its routes carry whole ones."""
    case = next(c for c in ALL_CASES if case_id(c) == "transform-tls-host")
    _, result = translate_case(case, tmp_path)
    (xds,) = result.served.values()
    tls = [
        listener
        for listener in _messages(xds.resources[names.LISTENER], listener_pb2.Listener)
        if any(chain.filter_chain_match.server_names for chain in listener.filter_chains)
    ]
    (config,) = [f for listener in tls for f in _lua_filters(listener)]
    assert len(config.source_codes) == 0 and not config.HasField("default_source_code")
    (route_config,) = [
        lua_pb2.LuaPerRoute.FromString(route.typed_per_filter_config[name].value)
        for routes in _messages(xds.resources[names.ROUTE], route_pb2.RouteConfiguration)
        for vhost in routes.virtual_hosts
        for route in vhost.routes
        for name in route.typed_per_filter_config
        if name.endswith(".lua")
    ]
    source = route_config.source_code.inline_string
    assert runtime() in source and not route_config.name
    assert "function envoy_on_request" in source and "envoy_on_response" not in source


@pytest.mark.parametrize("with_response", [False, True])
def test_a_whole_script_does_what_the_shared_one_does(with_response: bool) -> None:
    """The same rules, run by the shared script (plain listeners) and as a whole script
    (TLS virtual hosts), change the request and the response alike."""
    step = ir.TemplateTransformation(
        headers=(ir.RenderedHeader(name="x-a", template=_template('{{ header("x-in") }}!')),),
        parse_json=False,
    )
    echo = ir.TemplateTransformation(
        headers=(
            ir.RenderedHeader(name="x-echo", template=_template('{{ request_header("x-in") }}')),
        ),
        parse_json=False,
    )
    rule = ir.RequestRule(request=step, response=echo if with_response else None)
    script = ir.TransformationScript(request_rules=(rule,))
    shared, whole = LuaEnvoy(), LuaEnvoy()
    rules = route_rules(script, "gw.transform.regular")
    source = standalone_source(script, "gw.transform.regular")
    outcomes = []
    for envoy, run in (
        (shared, lambda *a: shared.run(rules, *a)),
        (whole, lambda *a: whole.run_script(source, *a)),
    ):
        request = envoy.headers(run("request", [("x-in", "v")]))
        response = envoy.headers(run("response", [(":status", "200")]))
        outcomes.append((request, response))
    assert outcomes[0] == outcomes[1]
    assert ("x-a", "v!") in outcomes[0][0]
    assert (("x-echo", "v") in outcomes[0][1]) is with_response


def test_the_dispatcher_compiles_each_rules_once_and_keeps_two_generations() -> None:
    """Each distinct rules chunk is compiled once per worker; when a generation is full
    it becomes the older one, rules found there move back without being compiled again,
    and only what neither holds is compiled (here a generation of 2)."""
    envoy = LuaEnvoy()
    lua = envoy.lua
    compiled: list[str] = []
    loadstring = lua.globals().loadstring

    def counted(code: str, name: str) -> Any:
        compiled.append(code)
        return loadstring(code, name)

    env = lua.eval("setmetatable({}, {__index = _G})")
    env.loadstring = counted
    chunk = loadstring(shared_source_kept(True, False, 2))
    lua.globals().setfenv(chunk, env)
    chunk()
    sources = {}

    def ask(name: str) -> None:
        header = ir.RenderedHeader(name=f"x-{name}", template=_template(name))
        step = ir.TemplateTransformation(headers=(header,), parse_json=False)
        script = ir.TransformationScript(request_rules=(ir.RequestRule(request=step),))
        rules = route_rules(script, "gw.transform.regular")
        sources[name] = rules.source
        context = lua.table_from({ID_KEY: rules.digest, RULES_KEY: rules.source})
        handle = lua.globals().make_handle(lua.table(), "", envoy.metadata, None, context)
        env.envoy_on_request(handle)
        assert (f"x-{name}", name) in envoy.headers(handle)

    for name in "a b a c a b c d a".split():
        ask(name)
    assert compiled == [sources[n] for n in "a b c d a".split()]
