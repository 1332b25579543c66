"""How explain picks a hybrid listener's filter chain, as Envoy does: the SNI name first,
then the most specific source range holding the client (checked against a real Envoy by
tests/e2e/test_tcp.py's hybrid gateway)."""

from __future__ import annotations

from pathlib import Path

from envoy.config.listener.v3 import listener_pb2

from gw.explain.explainer import explain
from gw.explain.listeners import select_chain
from gw.explain.request import Request
from gw.explain.served import Served, sources_from_proxy
from gw.translator.dump import proxy_to_data
from gw.translator.envoy import names
from tests.golden.test_golden import CASES, translate_case


def _listener(tmp_path: Path) -> listener_pb2.Listener:
    _, result = translate_case(CASES / "gateway-hybrid-matched.in.yaml", tmp_path)
    found = result.served["gw-system~gateway-proxy"].of(names.LISTENER)["listener-::-8080"]
    assert isinstance(found, listener_pb2.Listener)
    return found


def _request(source: str, sni: str | None = None) -> Request:
    scheme = "https" if sni else "http"
    return Request(
        method="GET", scheme=scheme, authority="x", target="/", source_ip=source, sni=sni
    )


def _chain(listener: listener_pb2.Listener, source: str, sni: str | None = None) -> str | None:
    chain, _ = select_chain(listener.filter_chains, _request(source, sni), listener)
    return chain.name if chain is not None else None


def test_source_range_then_catch_all(tmp_path: Path) -> None:
    listener = _listener(tmp_path)
    assert _chain(listener, "127.0.0.1") == "listener-::-8080-0"
    assert _chain(listener, "10.1.2.3") == "listener-::-8080-1"


def test_sni_before_source(tmp_path: Path) -> None:
    listener = _listener(tmp_path)
    assert _chain(listener, "127.0.0.1", "pg.shop.example.com") == "listener-::-8080-2/one"
    secure = "listener-::-8080-3/gw-system_secure"
    assert _chain(listener, "10.1.2.3", "www.shop.example.com") == secure


def test_the_virtual_hosts_of_hybrid_parts_have_their_origins(tmp_path: Path) -> None:
    _, result = translate_case(CASES / "gateway-hybrid-matched.in.yaml", tmp_path)
    sources = sources_from_proxy(proxy_to_data(result.proxies[0]))
    assert sources.virtual_hosts["gw-system_default"].resource == "VirtualService gw-system.default"
    assert "gw-system_secure" in sources.virtual_hosts


def test_tcp_chains_are_proxied_and_tls_on_a_plain_http_chain_is_closed(tmp_path: Path) -> None:
    _, result = translate_case(CASES / "gateway-hybrid-matched.in.yaml", tmp_path)
    xds = result.served["gw-system~gateway-proxy"].resources
    served = Served.from_messages([m for by_name in xds.values() for m in by_name.values()])
    passed = explain(served, _request("127.0.0.1", "pg.shop.example.com"), port=8080, now=0)
    assert passed.outcome.action == "forward"
    assert passed.outcome.summary() == "proxied over TCP to pg_gw-system (TLS passed through)"
    tls = explain(served, _request("127.0.0.1", "other.example.com"), port=8080, now=0)
    assert tls.outcome.action == "close"
    assert "serves plain HTTP: a TLS client's handshake gets no answer" in tls.outcome.reason
