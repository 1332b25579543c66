"""Every golden's xDS output is configuration Envoy accepts: `envoy --mode validate` on a
bootstrap holding the case's listeners, clusters and secrets.

In validate mode Envoy fetches nothing over ADS, so TLS contexts that name SDS secrets would
never be built; the bootstrap therefore serves the secrets statically (same names, the
`sds_config` dropped), which makes Envoy check certificates, keys, ciphers and curves as it
would on an SDS update. Routes stay on RDS: the route tables are covered by the e2e tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from gw.translator import ir
from gw.translator.envoy import Xds, build_xds, names
from gw.translator.gateway import tls_parameters
from tests.golden.test_golden import CASES, translate_case
from tests.support.certs import make_cert

pytestmark = pytest.mark.e2e

ENVOY = Path(sys.executable).with_name("envoy")
#: Never dialled: validate mode connects to nothing.
ADS_ADDRESS = {"address": "127.0.0.1", "port_value": 9}
HTTP_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"


def _data(message: Any) -> Any:
    return _static_sds(json_format.MessageToDict(message, preserving_proto_field_name=True))


def _static_sds(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _static_sds(v) for k, v in data.items() if k != "sds_config"}
    if isinstance(data, list):
        return [_static_sds(v) for v in data]
    return data


def _bootstrap(xds_resources: Xds) -> dict[str, Any]:
    ads_cluster = {
        "name": "xds_cluster",
        "type": "STATIC",
        "load_assignment": {
            "cluster_name": "xds_cluster",
            "endpoints": [
                {"lb_endpoints": [{"endpoint": {"address": {"socket_address": ADS_ADDRESS}}}]}
            ],
        },
        "typed_extension_protocol_options": {
            HTTP_OPTIONS: {
                "@type": f"type.googleapis.com/{HTTP_OPTIONS}",
                "explicit_http_config": {"http2_protocol_options": {}},
            }
        },
    }
    return {
        "node": {"id": "golden", "cluster": "golden"},
        "dynamic_resources": {
            "ads_config": {
                "api_type": "GRPC",
                "transport_api_version": "V3",
                "grpc_services": [{"envoy_grpc": {"cluster_name": "xds_cluster"}}],
            }
        },
        "static_resources": {
            "listeners": [_data(m) for m in xds_resources.of(names.LISTENER).values()],
            "clusters": [_data(m) for m in xds_resources.of(names.CLUSTER).values()]
            + [ads_cluster],
            "secrets": [_data(m) for m in xds_resources.of(names.SECRET).values()],
        },
    }


@pytest.mark.parametrize("case", sorted(CASES.glob("*.in.yaml")), ids=lambda p: p.name[:-8])
def test_envoy_accepts_the_golden_xds(case: Path, tmp_path: Path) -> None:
    _, result = translate_case(case, tmp_path)
    _validate(result.xds, tmp_path)


CURVES = tls_parameters.ECDH_CURVES


@pytest.mark.parametrize(
    "curves",
    [
        tuple(sorted(set(CURVES.values()))),
        tuple(sorted(name for name, curve in CURVES.items() if name != curve)),
    ],
    ids=["curves", "curve-aliases"],
)
def test_envoy_accepts_every_cipher_and_curve_gw_accepts(
    curves: tuple[str, ...], tmp_path: Path
) -> None:
    """The allow-lists in gateway/tls.py are what stands between a manifest and a NACK."""
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
    _validate(build_xds(proxy), tmp_path)


def _validate(xds_resources: Xds, tmp_path: Path) -> None:
    bootstrap = tmp_path / "bootstrap.json"
    bootstrap.write_text(json.dumps(_bootstrap(xds_resources)))
    run = subprocess.run(
        [str(ENVOY), "--mode", "validate", "-c", str(bootstrap), "--disable-hot-restart"]
        + ["-l", "critical"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
