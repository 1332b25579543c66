"""Gateways across translations: a rejected Gateway keeps its last accepted listener, a
fresh one cannot take the port that listener holds, and the built-in gateways come back
when the last Gateway goes. (One-snapshot behaviour is in the `gateway-*` goldens.)"""

from __future__ import annotations

from gw.api import ResourceKey
from gw.api.status import State
from gw.snapshot import InputError
from gw.translator.translation import FALLBACK_MESSAGE, Result, translate
from tests.unit.translator.test_fallback import snapshot, vs

FIRST = ResourceKey("Gateway", "gw-system", "first")
SECOND = ResourceKey("Gateway", "gw-system", "second")


def gateway(name: str, port: int, address: str = "::", proxies: str = "[gateway-proxy]") -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: {name}, namespace: gw-system}}
spec:
  bindAddress: "{address}"
  bindPort: {port}
  proxyNames: {proxies}
  httpGateway: {{}}
"""


def listeners(result: Result, proxy: int = 0) -> list[str]:
    return [listener.name for listener in result.proxies[proxy].listeners]


WEB = vs("web", "web.test", "web")


def test_rejected_gateway_keeps_its_last_accepted_listener() -> None:
    first = translate(snapshot(gateway("first", 9000), WEB))
    assert listeners(first) == ["listener-::-9000"]
    second = translate(snapshot(gateway("first", 9001, "localhost"), WEB), previous=first.accepted)
    assert second.statuses[FIRST].state is State.REJECTED
    assert second.statuses[FIRST].messages == [FALLBACK_MESSAGE]
    assert "bindAddress localhost is not a valid IP address" in second.statuses[FIRST].reason
    assert listeners(second) == ["listener-::-9000"]
    broken = snapshot(WEB, errors=(InputError(None, "unreadable", FIRST),))
    third = translate(broken, previous=second.accepted)
    assert third.statuses[FIRST].state is State.REJECTED
    assert listeners(third) == ["listener-::-9000"]


def test_fresh_gateway_cannot_take_the_port_a_rejected_one_still_holds() -> None:
    first = translate(snapshot(gateway("first", 9000), WEB))
    second = translate(
        snapshot(gateway("first", 9000, "nowhere"), gateway("second", 9000, "127.0.0.1"), WEB),
        previous=first.accepted,
    )
    assert second.statuses[SECOND].state is State.REJECTED
    assert "gateway gw-system.first is rejected and its last accepted version keeps the port" in (
        second.statuses[SECOND].reason
    )
    assert listeners(second) == ["listener-::-9000"]
    assert second.proxy_statuses["gateway-proxy"].state is State.REJECTED


def test_builtin_gateways_come_back_when_the_last_gateway_goes() -> None:
    first = translate(snapshot(gateway("first", 9000), WEB))
    second = translate(snapshot(WEB), previous=first.accepted)
    assert listeners(second) == ["listener-::-8080"]
    assert second.statuses[ResourceKey("VirtualService", "default", "web")].state is State.ACCEPTED


def test_a_proxy_no_gateway_names_any_more_is_gone_but_the_default_stays() -> None:
    one = translate(snapshot(gateway("first", 9000, proxies="[edge]"), WEB))
    assert [p.name for p in one.proxies] == ["gateway-proxy", "edge"]
    assert listeners(one, 0) == [] and listeners(one, 1) == ["listener-::-9000"]
    assert set(one.served) == {"gw-system~gateway-proxy", "gw-system~edge"}
    web = one.statuses[ResourceKey("VirtualService", "default", "web")]
    assert list(web.subresource_statuses) == ["*v1.Proxy.edge_gw-system"]
    two = translate(snapshot(gateway("first", 9000), WEB), previous=one.accepted)
    assert [p.name for p in two.proxies] == ["gateway-proxy"]
    assert listeners(two) == ["listener-::-9000"]


SETTINGS = """
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {name: default, namespace: gw-system}
spec:
  gateway: {translateEmptyGateways: true}
"""


def test_translate_empty_gateways_makes_an_idle_gateway_listen() -> None:
    idle = gateway("first", 9000).replace("httpGateway: {}", "httpGateway: {virtualServices: []}")
    ssl = gateway("second", 9443).replace("httpGateway: {}", "ssl: true\n  httpGateway: {}")
    assert listeners(translate(snapshot(idle, ssl, WEB))) == ["listener-::-9000"]
    assert listeners(translate(snapshot(idle, ssl, WEB, SETTINGS))) == [
        "listener-::-9000",
        "listener-::-9443",
    ]


def labelled(name: str, domain: str, color: str) -> str:
    return vs(name, domain, name).replace(
        "namespace: default}", f"namespace: default, labels: {{color: {color}}}}}"
    )


def selecting(name: str, port: int, color: str) -> str:
    return gateway(name, port).replace(
        "httpGateway: {}", f"httpGateway: {{virtualServiceSelector: {{color: {color}}}}}"
    )


def test_a_rejected_hosts_domain_is_held_on_its_own_listener_only() -> None:
    """`old` is rejected and keeps serving a.test on the blue listener: a new host claiming
    a.test there is refused, one claiming it on the green listener is not."""
    gateways = (selecting("blue", 9001, "blue"), selecting("green", 9002, "green"))
    first = translate(snapshot(*gateways, labelled("old", "a.test", "blue")))
    broken = InputError(None, "unreadable", ResourceKey("VirtualService", "default", "old"))
    second = translate(
        snapshot(
            *gateways,
            labelled("same", "a.test", "blue"),
            labelled("other", "a.test", "green"),
            errors=(broken,),
        ),
        previous=first.accepted,
    )
    same = second.statuses[ResourceKey("VirtualService", "default", "same")]
    other = second.statuses[ResourceKey("VirtualService", "default", "other")]
    assert same.state is State.REJECTED
    assert "still served by the last accepted version of virtual service default.old" in (
        same.reason
    )
    assert other.state is State.ACCEPTED
    hosts = {
        listener.name: [v.name for v in listener.virtual_hosts]
        for listener in second.proxy.listeners
    }
    assert hosts == {"listener-::-9001": ["default_old"], "listener-::-9002": ["default_other"]}


def traced_gateway(timeout: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: first, namespace: gw-system}}
spec:
  bindPort: 9000
  httpGateway:
    options:
      httpConnectionManagerSettings:
        requestHeadersTimeout: {timeout}
        tracing:
          zipkinConfig:
            collectorUpstreamRef: {{name: zipkin, namespace: gw-system}}
            collectorEndpoint: /api/v2/spans
"""


def zipkin(hosts: str) -> str:
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: zipkin, namespace: gw-system}}
spec: {{static: {{hosts: {hosts}}}}}
"""


def test_a_gateway_rejected_through_its_collector_keeps_its_last_accepted_listener() -> None:
    """The collector Upstream is built after the gateways: its rejection reaches the
    Gateway by propagation, and the listener served is still the last accepted one (never
    one whose tracer names a cluster that is not served, which Envoy would refuse)."""
    good = zipkin("[{addr: 127.0.0.1, port: 9411}]")
    first = translate(snapshot(traced_gateway("5s"), good, WEB))
    (listener,) = first.proxies[0].listeners
    assert (listener.http.request_headers_timeout_ms, first.statuses[FIRST].state) == (
        5000,
        State.ACCEPTED,
    )
    second = translate(snapshot(traced_gateway("7s"), zipkin("[]"), WEB), previous=first.accepted)
    assert second.statuses[FIRST].state is State.REJECTED
    (listener,) = second.proxies[0].listeners
    assert listener.http.request_headers_timeout_ms == 5000
    assert listener.http.tracing is not None
    assert listener.http.tracing.collector_cluster == "zipkin_gw-system"
