"""`basicAuth` end to end: `gw up` with its extauth server, Envoy, an echo app. Password
hashes are made by Debian's `htpasswd -m` (apache2-utils), the SHA-1 case is the one the
established gateway's guide documents (user `user`, password `password`, salt `TYiryv0/`).

Hosts: `apr.test` (the legacy `apr` form, realm `gw`), `ext.test` (the extended form,
`encryption: {apr: {}}`, no realm), `sha.test` (`encryption: {sha1: {}}`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import chain
from tests.support.htpasswd import apr1
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

PASSWORDS = {"alice": "wonder land", "bob": "b0b:s3cret"}
GUIDE_SHA1 = ("TYiryv0/", "010eb058a59f4ac5ba05639b0263cf91b4345fd6")  # "password"


def users_yaml(users: dict[str, tuple[str, str]], indent: int) -> str:
    pad = " " * indent
    return "".join(
        f"\n{pad}{name}: {{salt: {json.dumps(salt)}, hashedPassword: {json.dumps(hashed)}}}"
        for name, (salt, hashed) in users.items()
    )


def basic_config(name: str, body: str) -> str:
    return chain(name, f"\n  - basicAuth:{body}")


def legacy(users: dict[str, tuple[str, str]], realm: str) -> str:
    return f"\n      realm: {realm}\n      apr:\n        users:" + users_yaml(users, 10)


def extended(algorithm: str, users: dict[str, tuple[str, str]]) -> str:
    return (
        f"\n      encryption: {{{algorithm}: {{}}}}\n      userList:\n        users:"
        + users_yaml(users, 10)
    )


def credentials(user: str, password: str, scheme: str = "Basic") -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"authorization": f"{scheme} {token}"}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    gateway = ExtauthGateway(tmp_path_factory.mktemp("basic"))
    try:
        hashes = {u: apr1(u, p) for u, p in PASSWORDS.items()}
        gateway.write("ac-apr", basic_config("apr", legacy(hashes, "gw")))
        gateway.write("ac-extended", basic_config("extended", extended("apr", hashes)))
        gateway.write("ac-sha", basic_config("sha", extended("sha1", {"user": GUIDE_SHA1})))
        for name in ("apr", "extended", "sha"):
            gateway.gw.wait_status(f"AuthConfig gw-system.{name}", "Accepted")
        hosts = {
            "apr": gateway.guard("apr", "apr"),
            "ext": gateway.guard("ext", "extended"),
            "sha": gateway.guard("sha", "sha"),
        }
        yield {"gateway": gateway, "hosts": hosts, "hashes": hashes}
    finally:
        gateway.stop()


def test_no_credentials_get_the_challenge(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    answer = gateway.get("apr.test", "/private")
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == 'Basic realm="gw"'
    assert answer.text == "" and "x-echo-name" not in answer.headers
    unnamed = gateway.get("ext.test", "/private")
    assert (unnamed.status_code, unnamed.headers["www-authenticate"]) == (401, 'Basic realm=""')
    assert unnamed.text == ""


def test_apr_users_made_by_apr1(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    for host in ("apr.test", "ext.test"):
        for user, password in PASSWORDS.items():
            ok = gateway.get(host, "/private", headers=credentials(user, password))
            assert ok.status_code == 200 and ok.headers["x-echo-name"] == "app"
            assert ok.json()["headers"]["x-user-id"] == user
        lowercase = gateway.get(host, "/", headers=credentials("alice", "wonder land", "basic"))
        assert lowercase.status_code == 200  # the scheme as the guide writes it
        for user, password in (("alice", "wonder"), ("alice", "b0b:s3cret"), ("carol", "x")):
            refused = gateway.get(host, "/private", headers=credentials(user, password))
            assert refused.status_code == 401 and "www-authenticate" in refused.headers
    garbage = gateway.get("apr.test", "/", headers={"authorization": "Basic !!notbase64"})
    assert garbage.status_code == 401


def test_sha1_variant_of_the_guide(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    ok = gateway.get("sha.test", "/posts/1", headers=credentials("user", "password"))
    assert ok.status_code == 200 and ok.json()["headers"]["x-user-id"] == "user"
    assert gateway.get("sha.test", "/", headers=credentials("user", "Password")).status_code == 401


def test_proxy_authorization_only_in_the_extended_form(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    token = credentials("bob", PASSWORDS["bob"])["authorization"]
    assert gateway.get("ext.test", "/", headers={"proxy-authorization": token}).status_code == 200
    assert gateway.get("apr.test", "/", headers={"proxy-authorization": token}).status_code == 401


def test_a_client_cannot_pass_off_a_user_id(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    forged = {**credentials("bob", PASSWORDS["bob"]), "x-user-id": "alice"}
    seen = gateway.get("apr.test", "/", headers=forged).json()["headers"]
    assert seen["x-user-id"] == "bob"
    public = gateway.get("apr.test", "/public/x", headers={"x-user-id": "alice"})
    assert public.status_code == 200  # not guarded: nothing to sanitise there


def test_changed_password_takes_effect_without_restart(env: dict[str, Any]) -> None:
    """The server remembers accepted credentials: a new configuration forgets them."""
    gateway: ExtauthGateway = env["gateway"]
    old = credentials("alice", PASSWORDS["alice"])
    assert gateway.get("sha.test", "/", headers=old).status_code == 401
    new_hash = apr1("alice", "new password")
    gateway.write("ac-sha", basic_config("sha", extended("apr", {"alice": new_hash})))
    new = credentials("alice", "new password")
    wait_until(
        lambda: gateway.get("sha.test", "/", headers=new).status_code == 200,
        what="the new password to work",
    )
    assert gateway.get("sha.test", "/", headers=credentials("user", "password")).status_code == 401
