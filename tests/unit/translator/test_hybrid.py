"""Hybrid gateways' building blocks: how a delegating Gateway's defaults meet a selected
gateway's own fields, and how an HTTP matcher's TLS defaults meet a VirtualService's TLS."""

from __future__ import annotations

from gw.api import ResourceKey
from gw.api.hcm import CidrRange, HttpConnectionManagerSettings
from gw.api.status import State
from gw.api.tls import SslConfig
from gw.translator import ir
from gw.translator.gateway.hybrid_matcher import build_matcher
from gw.translator.gateway.matchable import merge_fields
from gw.translator.reports import ResourceReport
from gw.translator.translation import translate
from tests.unit.translator.test_fallback import snapshot, vs

WEB = vs("web", "web.test", "web")


def test_the_childs_fields_win_unless_the_parent_prevents_it() -> None:
    """The established example: {a: a1, b: b1} over {b: b2, c: c2}."""
    parent = HttpConnectionManagerSettings.model_validate({"serverName": "a1", "via": "b1"})
    child = HttpConnectionManagerSettings.model_validate({"via": "b2", "idleTimeout": "3s"})
    merged = merge_fields(child, parent)
    assert merged is not None
    assert (merged.server_name, merged.via, merged.idle_timeout) == ("a1", "b2", "3s")
    locked = merge_fields(child, parent, parent_wins=True)
    assert locked is not None
    assert (locked.server_name, locked.via, locked.idle_timeout) == ("a1", "b1", "3s")
    assert merge_fields(None, parent) == parent
    assert merge_fields(child, None) == child


def test_source_ranges_are_masked_and_deduplicated() -> None:
    report = ResourceReport()
    ranges = [("10.1.2.3", 8), ("10.0.0.0", 8), ("::1", 128)]
    matched = build_matcher(
        [CidrRange(address_prefix=a, prefix_len=n) for a, n in ranges],
        None,
        [],
        tcp=False,
        field="spec.matcher",
        report=report,
    )
    assert report.errors == ()
    assert matched is not None
    assert matched.match.source_ranges == (("10.0.0.0", 8), ("::1", 128))


def _tls(alpn: tuple[str, ...] = ("h2", "http/1.1")) -> ir.TlsTermination:
    return ir.TlsTermination(
        server_names=("a.test",),
        secret="default_a",
        validate_clients=True,
        require_client_certificate=True,
        alpn_protocols=alpn,
    )


def test_matcher_tls_fills_only_what_the_virtual_service_leaves_unset() -> None:
    report = ResourceReport()
    matched = build_matcher(
        [],
        SslConfig.model_validate(
            {
                "sniDomains": ["*.shop.test"],
                "oneWayTls": True,
                "alpnProtocols": ["http/1.1"],
                "parameters": {"minimumProtocolVersion": "TLSv1_3"},
            }
        ),
        [],
        tcp=False,
        field="spec.matcher",
        report=report,
    )
    assert report.errors == () and matched is not None and matched.tls is not None
    own = SslConfig.model_validate({"secretRef": {"name": "a"}, "alpnProtocols": ["h2"]})
    applied = matched.tls.apply(_tls(("h2",)), own)
    assert applied.server_names == ("*.shop.test",)  # the VirtualService names none
    assert applied.alpn_protocols == ("h2",)  # its own
    assert applied.minimum_version == "TLSv1_3"
    assert applied.require_client_certificate is False  # oneWayTls from the matcher
    named = SslConfig.model_validate({"secretRef": {"name": "a"}, "sniDomains": ["a.test"]})
    assert matched.tls.apply(_tls(), named).server_names == ("a.test",)


HYBRID = """
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {name: hybrid, namespace: gw-system}
spec:
  bindPort: 9000
  hybridGateway:
    delegatedHttpGateways: {selector: {labels: {team: web}}}
"""
PART = """
apiVersion: gateway.vendor.io/v1
kind: MatchableHttpGateway
metadata: {name: web, namespace: web, labels: {team: web}}
spec:
  matcher:
    sourcePrefixRanges: [{addressPrefix: 10.0.0.0, prefixLen: 8}]
  httpGateway: {}
"""


def test_a_broken_part_keeps_the_last_listener_and_no_part_leaves_none() -> None:
    """A rejected MatchableHttpGateway rejects its Gateway, which keeps serving its last
    accepted listener; once no resource is selected at all the Gateway only warns, and a
    listener it no longer has is not kept."""
    key = ResourceKey("Gateway", "gw-system", "hybrid")
    first = translate(snapshot(HYBRID, PART, WEB))
    assert [lis.name for lis in first.proxies[0].listeners] == ["listener-::-9000"]
    broken = PART.replace("10.0.0.0", "ten")
    second = translate(snapshot(HYBRID, broken, WEB), previous=first.accepted)
    assert second.statuses[key].state is State.REJECTED
    assert second.proxies[0].listeners == first.proxies[0].listeners
    third = translate(snapshot(HYBRID, WEB), previous=second.accepted)
    assert third.statuses[key].state is State.WARNING
    assert "does not have any populated matched gateways" in third.statuses[key].reason
    assert third.proxies[0].listeners == ()
