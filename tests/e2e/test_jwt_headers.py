"""JWT together with header manipulation and transformations on one virtual host.

The token header is verified and then stripped (SPEC.md: header removal after
verification), and claims copied to headers feed a regular-stage transformation. Real
Envoy through `gw up`; tokens signed here with PyJWT; the echo upstream shows what arrived.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.support.processes import Echo, GwUp
from tests.support.tokens import SigningKey

pytestmark = pytest.mark.e2e

ISSUER = "https://issuer.test"


def manifests(echo_port: int, key: SigningKey) -> list[dict[str, Any]]:
    to_echo = {"single": {"upstream": {"name": "echo", "namespace": "gw-system"}}}
    return [
        {
            "apiVersion": "gw.vendor.io/v1",
            "kind": "Upstream",
            "metadata": {"name": "echo", "namespace": "gw-system"},
            "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": echo_port}]}},
        },
        {
            "apiVersion": "gateway.vendor.io/v1",
            "kind": "VirtualService",
            "metadata": {"name": "api", "namespace": "default"},
            "spec": {
                "virtualHost": {
                    "domains": ["api.test"],
                    "options": {
                        "jwt": {
                            "providers": {
                                "main": {
                                    "issuer": ISSUER,
                                    "jwks": {"local": {"key": key.public_pem()}},
                                    "tokenSource": {"headers": [{"header": "x-token"}]},
                                    "keepToken": True,
                                    "claimsToHeaders": [
                                        {"claim": "org", "header": "x-org"},
                                        {"claim": "email", "header": "x-email"},
                                    ],
                                }
                            }
                        },
                        "headerManipulation": {"requestHeadersToRemove": ["x-token"]},
                        "stagedTransformations": {
                            "regular": {
                                "requestTransforms": [
                                    {
                                        "requestTransformation": {
                                            "transformationTemplate": {
                                                "extractors": {
                                                    "domain": {
                                                        "header": "x-email",
                                                        "regex": "[^@]+@(.+)",
                                                        "subgroup": 1,
                                                    }
                                                },
                                                "headers": {
                                                    "x-tenant": {"text": "{{ domain }}/{{domain}}"}
                                                },
                                            }
                                        }
                                    }
                                ]
                            }
                        },
                    },
                    "routes": [{"matchers": [{"prefix": "/"}], "routeAction": to_echo}],
                }
            },
        },
    ]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GwUp, SigningKey]]:
    tmp = tmp_path_factory.mktemp("jwt-headers")
    echo = Echo(tmp)
    key = SigningKey()
    folder = tmp / "config"
    folder.mkdir()
    (folder / "api.yaml").write_text(yaml.safe_dump_all(manifests(echo.port, key)))
    gw = GwUp(folder, tmp / "home")
    try:
        gw.wait_status("VirtualService default.api", "Accepted")
        yield gw, key
    finally:
        gw.stop()
        echo.stop()


def token(key: SigningKey, **claims: Any) -> str:
    now = int(time.time())
    return key.sign({"iss": ISSUER, "iat": now, "exp": now + 300, **claims})


def test_token_header_is_verified_then_removed(env: tuple[GwUp, SigningKey]) -> None:
    gw, key = env
    missing = gw.get("/x", host="api.test")
    assert (missing.status_code, missing.text) == (401, "Jwt is missing")
    bad = gw.get("/x", host="api.test", headers={"x-token": token(SigningKey(), org="o")})
    assert (bad.status_code, bad.text) == (401, "Jwt verification fails")
    good = gw.get("/x", host="api.test", headers={"x-token": token(key, org="acme")})
    assert good.status_code == 200
    headers = good.json()["headers"]
    assert "x-token" not in headers  # verified with keepToken, then stripped
    assert headers["x-org"] == "acme"


def test_claims_feed_a_transformation(env: tuple[GwUp, SigningKey]) -> None:
    gw, key = env
    response = gw.get(
        "/x",
        host="api.test",
        headers={
            "x-token": token(key, org="acme", email="ana@example.org"),
            "x-tenant": "spoofed",
            "x-email": "mallory@evil.test",
        },
    )
    assert response.status_code == 200
    headers = response.json()["headers"]
    assert headers["x-email"] == "ana@example.org"  # the claim, not the client's copy
    assert headers["x-tenant"] == "example.org/example.org"


def test_client_copy_of_a_generated_header_never_survives(
    env: tuple[GwUp, SigningKey],
) -> None:
    gw, key = env
    response = gw.get(
        "/x", host="api.test", headers={"x-token": token(key, org="o"), "x-tenant": "spoofed"}
    )
    assert response.status_code == 200
    # No email claim: the extractor yields "" and the template renders its literal text.
    assert response.json()["headers"]["x-tenant"] == "/"
