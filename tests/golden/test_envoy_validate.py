"""Every golden's xDS output is configuration a real Envoy accepts (`envoy --mode validate`).

A translator bug that Envoy would NACK — a header name it refuses, a regex beyond its RE2
limits, a bad `%COMMAND%`, a cipher it does not know — fails here, naming the case, instead
of on a live proxy. Deprecated fields count as refusals: they break on the next upgrade.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gw.translator import ir
from gw.translator.envoy import build_xds
from gw.translator.gateway import tls_parameters
from tests.golden.test_golden import ALL_CASES, case_id, translate_case
from tests.support.certs import make_cert
from tests.support.envoy_validate import envoy_refusal


@pytest.mark.parametrize("case", ALL_CASES, ids=case_id)
def test_envoy_accepts_the_golden_xds(case: Path, tmp_path: Path) -> None:
    _, result = translate_case(case, tmp_path)
    for role, xds in result.served.items():  # every proxy's, the default one first
        assert envoy_refusal(xds) is None, role


CURVES = tls_parameters.ECDH_CURVES


@pytest.mark.parametrize(
    "curves",
    [
        tuple(sorted(set(CURVES.values()))),
        tuple(sorted(name for name, curve in CURVES.items() if name != curve)),
    ],
    ids=["curves", "curve-aliases"],
)
def test_envoy_accepts_every_cipher_and_curve_gw_accepts(curves: tuple[str, ...]) -> None:
    """The allow-lists in gateway/tls_parameters.py stand between a manifest and a NACK."""
    pair = make_cert(["a.test"])
    secret = ir.TlsSecret(
        name="default_a",
        source=ir.SourceRef(kind="Secret", namespace="default", name="a"),
        certificate_chain=pair.cert_pem,
        private_key=pair.key_pem,
    )
    tls = ir.TlsTermination(
        server_names=("a.test",),
        secret=secret.name,
        cipher_suites=tuple(sorted(tls_parameters.CIPHER_SUITES)),
        ecdh_curves=curves,
    )
    vhost = ir.VirtualHost(
        name="default_a",
        source=ir.SourceRef(kind="VirtualService", namespace="default", name="a"),
        domains=("a.test",),
        routes=(),
        tls=tls,
    )
    listener = ir.Listener(name="https", address="127.0.0.1", port=9, virtual_hosts=(vhost,))
    proxy = ir.Proxy(name="p", namespace="gw-system", listeners=(listener,), secrets=(secret,))
    assert envoy_refusal(build_xds(proxy)) is None
