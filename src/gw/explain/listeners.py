"""Which listener takes the connection, which of its filter chains serves it, and the HTTP
connection manager (and route configuration) that chain runs.

Listeners are told apart by port (and by address when two share a port). Filter chains, as
Envoy picks them for what gw configures: by the SNI of the TLS handshake (exact server name,
then the longest `*.` wildcard that matches, then a chain without server names), a plain
connection having no SNI; among the chains of that server name, by the client's address
(the most specific source range that holds it, else a chain without source ranges: a
hybrid gateway's parts); a chain that names a transport protocol other than the
connection's is skipped; no chain left means the connection is closed (gw's HTTPS listener
has no default chain: a client asking for a name gw does not serve gets no certificate).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from envoy.config.listener.v3 import listener_components_pb2 as lc_pb2
from envoy.config.listener.v3 import listener_pb2
from envoy.config.route.v3 import route_pb2, scoped_route_pb2
from envoy.extensions.filters.listener.proxy_protocol.v3 import proxy_protocol_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.extensions.transport_sockets.tcp_stats.v3 import tcp_stats_pb2
from envoy.extensions.transport_sockets.tls.v3 import tls_pb2

from gw.explain.request import Request
from gw.explain.served import Served

HCM = (
    "type.googleapis.com/"
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
)


@dataclass(frozen=True, slots=True)
class Connection:
    listener: listener_pb2.Listener | None
    chain: lc_pb2.FilterChain | None
    manager: hcm_pb2.HttpConnectionManager | None
    routes: route_pb2.RouteConfiguration | None
    #: One line per decision: the listener, the chain, the route configuration.
    steps: tuple[str, ...]
    #: Why the connection goes no further (None: it reaches the HTTP connection manager, or
    #: a chain without one, `manager` None, whose TCP proxy `tcp.py` explains).
    closed: str | None = None


def listener_port(listener: listener_pb2.Listener) -> int:
    return int(listener.address.socket_address.port_value)


def listener_address(listener: listener_pb2.Listener) -> str:
    address = listener.address.socket_address
    host = f"[{address.address}]" if ":" in address.address else address.address
    return f"{host}:{address.port_value}"


def connect(served: Served, request: Request, port: int) -> Connection:
    steps: list[str] = []
    candidates = [lis for lis in served.listeners if listener_port(lis) == port]
    if not candidates:
        ports = ", ".join(str(p) for p in sorted({listener_port(lis) for lis in served.listeners}))
        return Connection(
            None, None, None, None, (), f"no listener on port {port} (listeners: {ports or 'none'})"
        )
    listener = candidates[0]
    steps.append(f"listener {listener.name} on {listener_address(listener)}")
    if requires_proxy_protocol(listener):
        return Connection(
            listener,
            None,
            None,
            None,
            tuple(steps),
            "the listener expects the PROXY protocol header first (what a load balancer in "
            "front sends): a client that does not send it is disconnected",
        )
    chain, why = select_chain(listener.filter_chains, request, listener)
    if chain is None:
        return Connection(listener, None, None, None, tuple(steps), why)
    steps.append(why)
    if request.tls and requires_client_certificate(chain):
        return Connection(
            listener,
            chain,
            None,
            None,
            tuple(steps),
            "the chain requires a client certificate (mutual TLS), which explain does not "
            "send: the TLS handshake fails",
        )
    manager = manager_of(chain)
    if manager is None:  # a TCP proxy (`tcp.py`), or nothing explain knows
        return Connection(listener, chain, None, None, tuple(steps))
    if request.tls and not chain_terminates_tls(chain):
        return Connection(
            listener,
            chain,
            None,
            None,
            tuple(steps),
            f"filter chain {_name(chain)} serves plain HTTP: a TLS client's handshake gets no "
            "answer (use an http:// URL)",
        )
    if manager.HasField("route_config"):
        routes = manager.route_config
        steps.append(f"inline route configuration {routes.name or '(unnamed)'}")
    else:
        name, problem = manager.rds.route_config_name, None
        if manager.HasField("scoped_routes"):
            scope = _scope(manager.scoped_routes, request, served)
            if scope is None:
                problem = (
                    f"no scope of {manager.scoped_routes.name} for host {_scope_key(request)!r}"
                    " (the listener is sharded by host): Envoy answers 404"
                )
            else:
                name = scope.route_configuration_name
                steps.append(f"scope {scope.name} (the listener is sharded by host)")
        found = served.routes.get(name) if problem is None else None
        if found is None:
            problem = problem or (
                f"route configuration {name} is not served (Envoy answers 404 to everything)"
            )
            return Connection(listener, chain, manager, None, tuple(steps), problem)
        routes = found
        steps.append(f"route configuration {name}")
    return Connection(listener, chain, manager, routes, tuple(steps))


def _scope_key(request: Request) -> str:
    """The scope key gw's sharded listeners take: the `Host` up to its first `:`."""
    return request.authority.split(":", 1)[0]


def _scope(
    scoped: hcm_pb2.ScopedRoutes, request: Request, served: Served
) -> scoped_route_pb2.ScopedRouteConfiguration | None:
    """The scope of `scoped` whose key is the request's host (compared as sent, as Envoy
    does), if one is served."""
    key, prefix = _scope_key(request), scoped.name + "/"
    named = served.scopes.get(prefix + key)  # gw names a scope after its host
    candidates = [named] if named is not None else served.scopes.values()
    for scope in candidates:
        fragments = [f.string_key for f in scope.key.fragments]
        if scope.name.startswith(prefix) and fragments == [key]:
            return scope
    return None


def select_chain(
    chains: Sequence[lc_pb2.FilterChain], request: Request, listener: listener_pb2.Listener
) -> tuple[lc_pb2.FilterChain | None, str]:
    transport = "tls" if request.tls else "raw_buffer"
    usable = [
        c
        for c in chains
        if not c.filter_chain_match.transport_protocol
        or c.filter_chain_match.transport_protocol == transport
    ]
    sni = request.sni.lower() if request.sni else None
    if sni is not None:
        exact = [c for c in usable if sni in (n.lower() for n in c.filter_chain_match.server_names)]
        if exact:
            return _by_source(exact, request, f"SNI {sni!r} is one of its server names")
        wildcards = [
            (name.lower()[1:], chain)
            for chain in usable
            for name in chain.filter_chain_match.server_names
            if name.startswith("*.")
        ]
        matching = [(s, c) for s, c in wildcards if sni.endswith(s)]
        if matching:
            suffix = max(len(s) for s, _ in matching)
            longest = [c for s, c in matching if len(s) == suffix]
            return _by_source(longest, request, f"SNI {sni!r} matches '*{sni[-suffix:]}'")
    plain = _from([c for c in usable if not c.filter_chain_match.server_names], request.source_ip)
    if plain:
        chain = plain[0]
        tls = chain_terminates_tls(chain)
        if tls and not request.tls:
            return None, (
                f"the listener on port {listener_port(listener)} terminates TLS: a plain HTTP "
                "request fails the handshake (use an https:// URL)"
            )
        why = "no SNI was sent" if sni is None else f"no chain names SNI {sni!r}"
        return chain, f"filter chain {_name(chain)}: the chain without server names ({why})"
    if listener.HasField("default_filter_chain"):
        return listener.default_filter_chain, "the listener's default filter chain"
    if not request.tls and any(chain_terminates_tls(c) for c in chains):
        return None, (
            f"the listener on port {listener_port(listener)} terminates TLS: a plain HTTP "
            "request gets no answer (use an https:// URL)"
        )
    names = sorted({n for c in chains for n in c.filter_chain_match.server_names})
    asked = f"SNI {sni!r}" if sni else "no SNI"
    return None, (
        f"no filter chain takes a connection with {asked} (server names: {', '.join(names)}): "
        "Envoy closes it during the TLS handshake"
    )


def _by_source(
    chains: Sequence[lc_pb2.FilterChain], request: Request, why: str
) -> tuple[lc_pb2.FilterChain | None, str]:
    """Among the chains of one server name, the one for the client's address."""
    found = _from(chains, request.source_ip)
    if not found:
        return None, (
            f"the filter chains for that server name take no client from {request.source_ip}: "
            "Envoy closes the connection"
        )
    return found[0], f"filter chain {_name(found[0])}: {why}"


def _from(chains: Sequence[lc_pb2.FilterChain], source: str) -> list[lc_pb2.FilterChain]:
    """The chains Envoy considers for a client at `source`: those whose most specific
    source range holds it, else those without source ranges."""
    client = ipaddress.ip_address(source)
    scored: list[tuple[int, lc_pb2.FilterChain]] = []
    for chain in chains:
        ranges = chain.filter_chain_match.source_prefix_ranges
        if not ranges:
            scored.append((0, chain))
            continue
        lengths = [
            r.prefix_len.value + 1
            for r in ranges
            if client in ipaddress.ip_network(f"{r.address_prefix}/{r.prefix_len.value}", False)
        ]
        if lengths:
            scored.append((max(lengths), chain))
    best = max((score for score, _ in scored), default=None)
    return [chain for score, chain in scored if score == best]


def _name(chain: lc_pb2.FilterChain) -> str:
    return chain.name or "(unnamed)"


def manager_of(chain: lc_pb2.FilterChain) -> hcm_pb2.HttpConnectionManager | None:
    for network_filter in chain.filters:
        if network_filter.typed_config.type_url == HCM:
            manager = hcm_pb2.HttpConnectionManager()
            network_filter.typed_config.Unpack(manager)
            return manager
    return None


def tls_context(chain: lc_pb2.FilterChain) -> tls_pb2.DownstreamTlsContext | None:
    """The chain's TLS settings; None for a plain chain. A chain with `tcpStats` has its
    transport socket (TLS or plain bytes) inside Envoy's `tcp_stats` socket."""
    socket = chain.transport_socket
    stats = tcp_stats_pb2.Config()
    if socket.typed_config.Unpack(stats):
        socket = stats.transport_socket
    context = tls_pb2.DownstreamTlsContext()
    return context if socket.typed_config.Unpack(context) else None


def chain_terminates_tls(chain: lc_pb2.FilterChain) -> bool:
    return tls_context(chain) is not None


def terminates_tls(listener: listener_pb2.Listener) -> bool:
    return any(chain_terminates_tls(c) for c in listener.filter_chains)


def choose_port(served: Served, request: Request, proxy_port: int | None) -> tuple[int | None, str]:
    """The listener port a request is explained on: the URL's when a listener has it; else
    the proxy's port for the scheme (`gwctl proxy url`), else the only listener of that kind
    (a Service port in front of the proxy differs from its listener's). A note says which."""
    ports = {listener_port(lis) for lis in served.listeners}
    if request.port in ports:
        return request.port, ""
    kind = {listener_port(lis) for lis in served.listeners if terminates_tls(lis) == request.tls}
    asked = f"port {request.port} is no listener's" if request.port else "the URL names no port"
    if proxy_port in kind:
        chosen: int | None = proxy_port
    elif len(kind) == 1:
        chosen = next(iter(kind))
    else:
        listed = ", ".join(str(p) for p in sorted(ports)) or "none"
        return None, f"{asked}; give one of the listener ports in the URL: {listed}"
    return chosen, f"{asked}: the proxy's {request.scheme} listener on port {chosen} is assumed"


def requires_client_certificate(chain: lc_pb2.FilterChain) -> bool:
    """A client certificate is required, or checks are set that only a certificate can pass
    (subject alt names, hashes): Envoy then fails a handshake without one, whatever
    `require_client_certificate` says."""
    context = tls_context(chain)
    if context is None:
        return False
    common = context.common_tls_context
    validation = (
        common.combined_validation_context.default_validation_context
        if common.HasField("combined_validation_context")
        else common.validation_context
    )
    checks = (
        validation.match_typed_subject_alt_names,
        validation.match_subject_alt_names,
        validation.verify_certificate_hash,
        validation.verify_certificate_spki,
    )
    return bool(context.require_client_certificate.value) or any(len(c) for c in checks)


_PROXY_PROTOCOL = "envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol"


def requires_proxy_protocol(listener: listener_pb2.Listener) -> bool:
    for listener_filter in listener.listener_filters:
        if listener_filter.typed_config.type_url.rsplit("/", 1)[-1] == _PROXY_PROTOCOL:
            config = proxy_protocol_pb2.ProxyProtocol()
            listener_filter.typed_config.Unpack(config)
            return not config.allow_requests_without_proxy_protocol
    return False
