"""Requests that exercise a served configuration: for every listener, virtual host and route,
one request its matcher takes (path, headers, query parameters, method, case), one no route
takes, and for a TLS listener one with a server name no chain serves. Built from the Envoy
resources themselves, so that they follow whatever the translator made.

A regex in a matcher is turned into a string it matches by a small generator that knows the
RE2 syntax the goldens use (classes, `\\d`, `+ * ? {n,m}`, groups, alternation); a sample it
cannot make is left out and named in `skipped`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.matcher.v3 import string_pb2

from gw.explain.listeners import listener_port, terminates_tls
from gw.explain.served import Served
from gw.translator.regex import compile_like_envoy


@dataclass(frozen=True)
class Sample:
    method: str
    scheme: str
    host: str
    port: int
    path: str
    headers: tuple[tuple[str, str], ...] = ()
    sni: str | None = None
    #: The route the sample was made for ("" when it is meant to miss).
    meant_for: str = ""

    def url(self) -> str:
        if self.method == "CONNECT":
            return f"{self.path} (on port {self.port})"
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"


@dataclass
class Samples:
    made: list[Sample] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def samples(served: Served) -> Samples:
    out = Samples()
    for listener in served.listeners:
        port = listener_port(listener)
        tls = terminates_tls(listener)
        for chain in listener.filter_chains:
            names = list(chain.filter_chain_match.server_names)
            for vhost in _vhosts(served, chain):
                host = _host(vhost, names)
                if host is None:
                    out.skipped.append(f"{vhost.name}: no domain to send")
                    continue
                sni = host if tls else None
                scheme = "https" if tls else "http"
                for route in vhost.routes:
                    try:
                        made = _for_route(route, host)
                    except _CannotMake as exc:
                        out.skipped.append(f"{route.name}: {exc}")
                        continue
                    method, path, headers = made
                    sent_host = path if method == "CONNECT" else host
                    out.made.append(
                        Sample(method, scheme, sent_host, port, path, headers, sni, route.name)
                    )
                out.made.append(Sample("GET", scheme, host, port, "/gw-explain/miss", (), sni))
        if tls:
            out.made.append(
                Sample("GET", "https", "unknown.invalid", port, "/", (), "unknown.invalid")
            )
        else:
            out.made.append(Sample("GET", "http", "unknown.invalid", port, "/"))
    return out


def _vhosts(served: Served, chain: object) -> Iterator[rc_pb2.VirtualHost]:
    from envoy.extensions.filters.network.http_connection_manager.v3 import (
        http_connection_manager_pb2 as hcm_pb2,
    )

    for network_filter in chain.filters:  # type: ignore[attr-defined]
        manager = hcm_pb2.HttpConnectionManager()
        if network_filter.typed_config.Unpack(manager) and manager.HasField("rds"):
            config = served.routes.get(manager.rds.route_config_name)
            if config is not None:
                yield from config.virtual_hosts


def _host(vhost: rc_pb2.VirtualHost, server_names: list[str]) -> str | None:
    for domain in [*server_names, *vhost.domains]:
        if domain == "*":
            continue
        if domain.startswith("*"):
            return "sample" + domain[1:]
        if domain.endswith(":*"):
            continue
        if domain.endswith("*"):
            return domain[:-1] + "sample"
        return domain
    return "any.example.org" if "*" in vhost.domains else None


class _CannotMake(Exception):
    pass


def _for_route(route: rc_pb2.Route, host: str) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    match = route.match
    kind = match.WhichOneof("path_specifier")
    if kind == "prefix":
        path = match.prefix
    elif kind == "path":
        path = match.path
    elif kind == "safe_regex":
        path = _matching(match.safe_regex.regex)
    elif kind == "connect_matcher":
        return "CONNECT", f"{host}:443", ()  # the target is where to connect, also the Host
    else:
        raise _CannotMake(f"path {kind}")
    if match.HasField("case_sensitive") and not match.case_sensitive.value:
        path = path.upper()
    method = "GET"
    headers: list[tuple[str, str]] = []
    for header in match.headers:
        if header.name == ":method":
            method = _string(header.string_match)
            continue
        value = _header_value(header)
        if value is not None:
            headers.append((header.name, value))
    query = []
    for param in match.query_parameters:
        if param.WhichOneof("query_parameter_match_specifier") == "present_match":
            if param.present_match:
                query.append(f"{param.name}=1")
        else:
            query.append(f"{param.name}={_string(param.string_match)}")
    target = path + (("?" + "&".join(query)) if query else "")
    return method, target, tuple(headers)


def _header_value(header: rc_pb2.HeaderMatcher) -> str | None:
    spec = header.WhichOneof("header_match_specifier")
    if spec == "present_match":
        wanted = header.present_match != header.invert_match
        return "1" if wanted else None
    if spec == "string_match":
        value = _string(header.string_match)
        return value + "-not" if header.invert_match else value
    raise _CannotMake(f"header matcher {spec}")


def _string(matcher: string_pb2.StringMatcher) -> str:
    kind = matcher.WhichOneof("match_pattern")
    if kind == "safe_regex":
        return _matching(matcher.safe_regex.regex)
    if kind in ("exact", "prefix", "suffix", "contains"):
        return str(getattr(matcher, kind))
    raise _CannotMake(f"string matcher {kind}")


# --- strings a regex matches ------------------------------------------------------------

_TOKEN = re.compile(
    r"\\[dws]|\\.|\[(?:\\.|[^\]])+\]|\((?:\?:)?|\)|\||\.|[*+?]|\{\d+(?:,\d*)?\}|[^\\\[\]()|.*+?{}]"
)


def _matching(pattern: str) -> str:
    """A short string `pattern` fully matches (RE2), or _CannotMake."""
    text = _generate(_TOKEN.findall(pattern.removeprefix("^").removesuffix("$")))
    if compile_like_envoy(pattern).fullmatch(text.encode()) is None:
        raise _CannotMake(f"no sample for regex {pattern!r}")
    return text


def _generate(tokens: list[str]) -> str:
    out: list[str] = []
    stack: list[list[str]] = []
    skipping: list[bool] = []
    last = ""
    for token in tokens:
        if token.startswith("("):
            stack.append(out)
            skipping.append(False)
            out = []
        elif token == ")":
            piece = "".join(out)
            out = stack.pop()
            skipping.pop()
            last = piece
            out.append(piece)
        elif token == "|":
            if skipping:
                skipping[-1] = True  # keep the first alternative of a group
            else:
                break
        elif skipping and skipping[-1]:
            continue
        elif token in ("*", "?") or token.startswith("{0"):
            if out:
                out.pop()
        elif token == "+" or token.startswith("{"):
            count = int(token[1:].split(",")[0].rstrip("}")) if token.startswith("{") else 1
            if out:
                out[-1] = last * count
        else:
            last = _char(token)
            out.append(last)
    return "".join(out)


def _char(token: str) -> str:
    if token in (r"\d",):
        return "7"
    if token in (r"\w", "."):
        return "a"
    if token == r"\s":
        return " "
    if token.startswith("\\"):
        return token[1:]
    if token.startswith("["):
        body = token[1:-1]
        if body.startswith("^"):
            return "a" if "a" not in body else "Z"
        first = body[0] if body[0] != "\\" else body[1]
        return first
    return token


# --- tokens for routes that verify JWTs -------------------------------------------------

JWT_AUTHN = "envoy.filters.http.jwt_authn"
RBAC = "envoy.filters.http.rbac"


def token_samples(
    served: Served, base: Sample, sign: Callable[[dict[str, Any]], str]
) -> list[Sample]:
    """For a sample whose route verifies JWTs: one with a valid token carrying the claims the
    route's first RBAC policy asks for, and (when it asks for any) one without them."""
    from envoy.extensions.filters.http.jwt_authn.v3 import config_pb2 as jwt_pb2
    from envoy.extensions.filters.http.rbac.v3 import rbac_pb2 as rbac_filter_pb2

    found = _route(served, base.meant_for)
    if found is None:
        return []
    route, vhost, config = found
    per_route = _most_specific(JWT_AUTHN, route, vhost, jwt_pb2.PerRouteConfig())
    if per_route is None or per_route.disabled or config is None:
        return []
    provider = _provider(config, config.requirement_map.get(per_route.requirement_name))
    if provider is None:
        return []
    now = int(time.time())
    claims: dict[str, Any] = {"iss": provider.issuer, "sub": "alice", "iat": now, "exp": now + 600}
    if provider.audiences:
        claims["aud"] = provider.audiences[0]
    rbac = _most_specific(RBAC, route, vhost, rbac_filter_pb2.RBACPerRoute())
    asked: dict[str, Any] = {}
    if rbac is not None and rbac.rbac.rules.policies:
        policy = rbac.rbac.rules.policies[sorted(rbac.rbac.rules.policies)[0]]
        for principal in policy.principals[:1]:
            _claims(principal, asked)
    if provider.from_headers:
        header = provider.from_headers[0]
        name, prefix = header.name.lower(), header.value_prefix
    else:
        name, prefix = "authorization", "Bearer "
    made = [_with(base, (name, prefix + sign({**claims, **asked})))]
    if asked:
        made.append(_with(base, (name, prefix + sign(claims))))
    return made


def _with(base: Sample, header: tuple[str, str]) -> Sample:
    return Sample(
        base.method, base.scheme, base.host, base.port, base.path,
        (*base.headers, header), base.sni, base.meant_for,
    )  # fmt: skip


def _route(served: Served, name: str) -> tuple[Any, Any, Any] | None:
    from envoy.extensions.filters.http.jwt_authn.v3 import config_pb2 as jwt_pb2
    from envoy.extensions.filters.network.http_connection_manager.v3 import (
        http_connection_manager_pb2 as hcm_pb2,
    )

    for listener in served.listeners:
        for chain in listener.filter_chains:
            for network_filter in chain.filters:
                manager = hcm_pb2.HttpConnectionManager()
                if not network_filter.typed_config.Unpack(manager):
                    continue
                config = None
                for http_filter in manager.http_filters:
                    if http_filter.name == JWT_AUTHN:
                        config = jwt_pb2.JwtAuthentication()
                        http_filter.typed_config.Unpack(config)
                routes = served.routes.get(manager.rds.route_config_name)
                for vhost in routes.virtual_hosts if routes else ():
                    for route in vhost.routes:
                        if route.name == name:
                            return route, vhost, config
    return None


def _most_specific(name: str, route: Any, vhost: Any, message: Any) -> Any:
    for holder in (route, vhost):
        if name in holder.typed_per_filter_config:
            holder.typed_per_filter_config[name].Unpack(message)
            return message
    return None


def _provider(config: Any, requirement: Any) -> Any:
    while requirement is not None:
        kind = requirement.WhichOneof("requires_type")
        if kind == "provider_name":
            return config.providers.get(requirement.provider_name)
        if kind == "requires_any" and requirement.requires_any.requirements:
            requirement = requirement.requires_any.requirements[0]
        else:
            return None
    return None


def _claims(principal: Any, into: dict[str, Any]) -> None:
    ident = principal.WhichOneof("identifier")
    if ident == "and_ids":
        for inner in principal.and_ids.ids:
            _claims(inner, into)
    elif ident == "or_ids" and principal.or_ids.ids:
        _claims(principal.or_ids.ids[0], into)
    elif ident == "sourced_metadata":
        matcher = principal.sourced_metadata.metadata_matcher
        path = [segment.key for segment in matcher.path][1:]  # after the provider's key
        if not path:
            return
        target = into
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = _value(matcher.value)


def _value(matcher: Any) -> Any:
    kind = matcher.WhichOneof("match_pattern")
    if kind == "bool_match":
        return matcher.bool_match
    if kind == "list_match":
        return [_value(matcher.list_match.one_of)]
    if kind == "string_match":
        try:
            return _string(matcher.string_match)
        except _CannotMake:
            return "unknown"
    return "unknown"
