"""TLS secret checks: what makes a secret unusable is a finding, never an Envoy NACK."""

from __future__ import annotations

import time

import yaml

from gw.api import ResourceKey, ResourceRef, Secret, parse_document
from gw.translator.clock import Clock
from gw.translator.gateway.secrets import resolve_tls_secret
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport
from tests.support.certs import make_ca, make_cert, tls_secret_yaml

USER = ResourceKey("VirtualService", "default", "web")


def resolve(*manifests: str, ref: str = "tls") -> tuple[object, ResourceReport]:
    secrets = [parse_document(yaml.safe_load(m)) for m in manifests]
    refs = Refs({s.key: s for s in secrets}, set())
    report = ResourceReport()
    found = resolve_tls_secret(
        ResourceRef(name=ref, namespace="default"),
        refs=refs,
        referrer=USER,
        field="spec.sslConfig.secretRef",
        report=report,
        clock=Clock(time.time()),
    )
    return found, report


def test_valid_secret_with_ca() -> None:
    ca = make_ca()
    found, report = resolve(tls_secret_yaml("tls", "default", make_cert(["a.test"], ca), ca))
    assert report.errors == () and report.warnings == ()
    assert found.name == "default_tls" and found.ca == ca.cert_pem  # type: ignore[attr-defined]


def test_missing_secret() -> None:
    found, report = resolve()
    assert found is None
    assert [str(e) for e in report.errors] == [
        "spec.sslConfig.secretRef: SSL secret not found: list did not find secret default.tls"
    ]


def test_key_that_does_not_match() -> None:
    one, two = make_cert(["a.test"]), make_cert(["a.test"])
    mixed = tls_secret_yaml("tls", "default", one).replace(
        tls_secret_yaml("x", "default", one).split("tls.key: ")[1],
        tls_secret_yaml("x", "default", two).split("tls.key: ")[1],
    )
    found, report = resolve(mixed)
    assert found is None
    assert "the private key does not match the certificate" in str(report.errors[0])


def test_unparsable_pem() -> None:
    bad = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: default}\n"
        "type: kubernetes.io/tls\nstringData: {tls.crt: garbage, tls.key: garbage}\n"
    )
    found, report = resolve(bad)
    assert found is None
    assert "is not a valid TLS secret: tls: failed to find any PEM data" in str(report.errors[0])


def test_expired_certificate_is_a_warning() -> None:
    found, report = resolve(tls_secret_yaml("tls", "default", make_cert(["a.test"], expired=True)))
    assert found is not None and report.errors == ()
    assert "expired on" in str(report.warnings[0])


def test_secret_repr_hides_values() -> None:
    secret = parse_document(yaml.safe_load(tls_secret_yaml("tls", "default", make_cert(["a"]))))
    assert isinstance(secret, Secret)
    assert secret.data["tls.key"][:40] not in repr(secret) and "tls.key" not in repr(secret)
