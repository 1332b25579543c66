"""TLS termination across translations: what the goldens (one snapshot each) cannot show.

A rejected TLS virtual service keeps its last accepted filter chain, and with it its SNI
names; a secret rotation reaches every virtual service that uses the secret.
"""

from __future__ import annotations

import time

import yaml

from gw.api import ResourceKey, parse_document
from gw.api.status import State
from gw.snapshot import Snapshot
from gw.translator.options import Options
from gw.translator.translation import Result, translate
from tests.support.certs import KeyPair, make_ca, make_cert, tls_secret_yaml

NOW = Options(now=time.time())
CA = make_ca()
A = ResourceKey("VirtualService", "default", "a")
B = ResourceKey("VirtualService", "default", "b")


def snapshot(*docs: str) -> Snapshot:
    resources = {}
    for doc in docs:
        resource = parse_document(yaml.safe_load(doc))
        resources[resource.key] = resource
    return Snapshot(resources=resources)


def tls_vs(name: str, domain: str, secret: str, sni: str | None = None, prefix: str = "/") -> str:
    sni_line = f"\n    sniDomains: [{sni}]" if sni else ""
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{domain}]
    routes:
      - matchers: [{{prefix: {prefix}}}]
        directResponseAction: {{status: 200, body: {name}}}
  sslConfig:
    secretRef: {{name: {secret}}}{sni_line}
"""


def served_certificate(result: Result, secret: str) -> str:
    (found,) = [s for s in result.proxy.secrets if s.name == f"default_{secret}"]
    return found.certificate_chain


def chains(result: Result) -> dict[str, tuple[str, ...]]:
    https = [listener for listener in result.proxy.listeners if listener.port == NOW.https_port]
    return {
        v.name: v.tls.server_names for listener in https for v in listener.virtual_hosts if v.tls
    }


def test_sni_of_a_rejected_virtual_service_stays_with_its_last_accepted_version() -> None:
    pair = make_cert(["a.test"], CA)
    first = translate(
        snapshot(tls_secret_yaml("tls-a", "default", pair), tls_vs("a", "a.test", "tls-a")),
        NOW,
    )
    assert chains(first) == {"default_a": ("a.test",)}
    # a's secret disappears (a is rejected, its last accepted chain serves on), and b
    # claims a's SNI name: b must wait, or Envoy would get two chains for one name.
    second = translate(
        snapshot(
            tls_secret_yaml("tls-b", "default", make_cert(["b.test"], CA)),
            tls_vs("a", "a.test", "tls-a"),
            tls_vs("b", "b.test", "tls-b", sni="a.test"),
        ),
        NOW,
        previous=first.accepted,
    )
    assert second.statuses[A].state is State.REJECTED
    assert "SSL secret not found: list did not find secret default.tls-a" in (
        second.statuses[A].reason
    )
    assert second.statuses[B].state is State.REJECTED
    assert (
        "spec.sslConfig.sniDomains: gateway has conflicting sni domains [a.test]: the name is "
        "still served by the last accepted version of virtual service default.a, which is "
        "rejected" in second.statuses[B].reason
    )
    assert chains(second) == {"default_a": ("a.test",)}
    assert served_certificate(second, "tls-a") == pair.cert_pem


def test_rotation_reaches_a_virtual_service_served_from_its_last_accepted_version() -> None:
    old, new = make_cert(["a.test"], CA), make_cert(["a.test"], CA)

    def docs(pair: KeyPair, prefix: str) -> Snapshot:
        return snapshot(
            tls_secret_yaml("shared", "default", pair),
            tls_vs("a", "a.test", "shared", prefix=prefix),
            tls_vs("b", "b.test", "shared"),
        )

    first = translate(docs(old, "/"), NOW)
    # a is now rejected for an unrelated reason (a bad prefix), and the secret is rotated:
    # b uses the new certificate, and so does a's last accepted chain (same SDS secret).
    second = translate(docs(new, "no-slash"), NOW, previous=first.accepted)
    assert second.statuses[A].state is State.REJECTED
    assert second.statuses[B].state is State.ACCEPTED
    assert set(chains(second)) == {"default_a", "default_b"}
    assert served_certificate(second, "shared") == new.cert_pem


def test_tls_virtual_services_may_share_domains_when_their_sni_differs() -> None:
    """Each TLS virtual host has its own filter chain and routes: domains `*` twice is fine
    when SNI tells them apart (the established gateway would reject it: it shares one
    route table across the HTTPS listener)."""
    result = translate(
        snapshot(
            tls_secret_yaml("tls", "default", make_cert(["a.test", "b.test"], CA)),
            tls_vs("a", '"*"', "tls"),
            tls_vs("b", '"*"', "tls", sni="b.test"),
        ),
        NOW,
    )
    assert result.statuses[A].state is State.ACCEPTED
    assert result.statuses[B].state is State.ACCEPTED
    assert chains(result) == {"default_a": (), "default_b": ("b.test",)}
