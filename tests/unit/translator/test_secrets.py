"""TLS secret checks: what makes a secret unusable is a finding, never an Envoy NACK."""

from __future__ import annotations

import collections
import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization

from gw.api import ResourceKey, ResourceRef, Secret, parse_document
from gw.api.status import State
from gw.store.directory import DirectoryStore
from gw.translator.clock import Clock
from gw.translator.gateway import secrets
from gw.translator.gateway.secrets import resolve_tls_secret
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport
from gw.translator.translation import translate
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


def test_a_key_that_does_not_load() -> None:
    pair = make_cert(["a.test"])
    broken = dataclasses.replace(pair, key_pem="-----BEGIN PRIVATE KEY-----\nAAAA\n")
    found, report = resolve(tls_secret_yaml("tls", "default", broken))
    assert found is None
    assert [str(e) for e in report.errors][0].startswith(
        "spec.sslConfig.secretRef: default.tls is not a valid TLS secret: tls.key is not a PEM "
        "private key without a passphrase ("
    )


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The private keys loaded from now on (each check starts from an empty cache)."""
    monkeypatch.setattr(secrets, "_CHECKED", collections.OrderedDict())
    loaded: list[bytes] = []
    real = serialization.load_pem_private_key

    def counted(data: bytes, *args: Any, **kwargs: Any) -> Any:
        loaded.append(data)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(serialization, "load_pem_private_key", counted)
    return loaded


def _tls_vs(i: int, secret: str) -> str:
    return (
        "---\napiVersion: gateway.vendor.io/v1\nkind: VirtualService\n"
        f"metadata: {{name: vs-{i}, namespace: default}}\n"
        f"spec:\n  sslConfig:\n    secretRef: {{name: {secret}, namespace: default}}\n"
        f"    sniDomains: [h{i}.a.test]\n"
        f"  virtualHost:\n    domains: [h{i}.a.test]\n    routes:\n"
        "      - matchers: [{prefix: /}]\n        directResponseAction: {status: 200}\n"
    )


def test_a_secret_many_hosts_name_is_checked_once(loads: list[bytes], tmp_path: Path) -> None:
    """Loading an RSA private key costs about 30 ms (the library checks the key): 200 TLS
    VirtualServices on one wildcard secret took 5.9 s to translate, one key load each.
    Each distinct pair of texts is now checked once, in this translation and the next."""
    wild, other = make_cert(["*.a.test"]), make_cert(["*.a.test"])
    (tmp_path / "secrets.yaml").write_text(
        tls_secret_yaml("wild", "default", wild)
        + "---\n"
        + tls_secret_yaml("other", "default", other)
    )
    (tmp_path / "hosts.yaml").write_text(
        "".join(_tls_vs(i, "wild" if i % 5 else "other") for i in range(20))
    )
    snapshot = DirectoryStore(tmp_path).scan()
    for _ in range(2):
        result = translate(snapshot, Options(now=time.time()))
        assert {s.state for s in result.statuses.values()} == {State.ACCEPTED}
    assert sorted(loads) == sorted([wild.key_pem.encode(), other.key_pem.encode()])


def test_the_checked_pairs_are_bounded_and_keep_no_key(
    loads: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(secrets, "CHECKED_PAIRS", 2)
    one, two, three = (make_cert(["a.test"]) for _ in range(3))
    for pair in (one, two, three, one, three):
        assert secrets.check_key_pair(pair.cert_pem, pair.key_pem).problem is None
    # `one` was dropped when `three` came (the least recently used), then checked again.
    assert loads == [p.key_pem.encode() for p in (one, two, three, one)]
    assert len(secrets._CHECKED) == 2
    kept = repr(list(secrets._CHECKED.items()))
    assert all(len(digest) == 32 for digest in secrets._CHECKED)
    assert "PRIVATE KEY" not in kept and one.key_pem[40:80] not in kept


def test_a_pair_is_told_from_another_with_the_same_certificate(loads: list[bytes]) -> None:
    """The digest covers both texts, unambiguously: the same certificate with another key
    is another pair (here, one that does not match), and so are the same characters split
    otherwise between the two."""
    one, two = make_cert(["a.test"]), make_cert(["a.test"])
    assert secrets.check_key_pair(one.cert_pem, one.key_pem).problem is None
    assert secrets.check_key_pair(one.cert_pem, two.key_pem).problem == "mismatch"
    # The same characters split elsewhere: no key at all.
    assert secrets.check_key_pair(one.cert_pem + two.key_pem, "").problem == "key"
