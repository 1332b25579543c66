"""`ldap` end to end: `gw up` with its extauth server, Envoy and an echo app, against a real
OpenLDAP `slapd` the test starts with its own configuration and data (the guide's users and
groups, with the `memberof` overlay; tests/support/slapd.py).

- `ldap.test`: the guide's user binding (`ldap://` address, managers only).
- `sa.test`: the API reference's `host:port`, group lookup as a service account whose
  credentials are in an `extauth.vendor.io/accountcredentials` Secret, a small pool.
- `open.test`: `disableGroupChecking`; `bad-sa.test`: a service account that cannot bind;
  `down.test`: an address nothing listens on.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import chain
from tests.support.ports import free_port
from tests.support.slapd import BASE, READER_DN, USER_DN_TEMPLATE, Slapd, group_dn
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

READER_PASSWORD = "reader-" + "pwd-for-gw"


def basic(user: str, password: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def credentials_secret(name: str, password: str) -> str:
    return f"""
apiVersion: v1
kind: Secret
metadata: {{name: {name}, namespace: gw-system}}
type: extauth.vendor.io/accountcredentials
stringData: {{username: "{READER_DN}", password: "{password}"}}
---"""


def ldap_step(address: str, groups: list[str], extra: str = "") -> str:
    allowed = ", ".join(f'"{group_dn(g)}"' for g in groups)
    return f"""
  - ldap:
      address: "{address}"
      userDnTemplate: "{USER_DN_TEMPLATE}"
      allowedGroups: [{allowed}]{extra}"""


def lookup(secret: str) -> str:
    return f"""
      groupLookupSettings:
        checkGroupsWithServiceAccount: true
        credentialsSecretRef: {{name: {secret}, namespace: gw-system}}"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("ldap")
    slapd = Slapd(work, READER_PASSWORD)
    gateway = None
    try:
        gateway = ExtauthGateway(work)
        gateway.write(
            "ldap",
            credentials_secret("reader", READER_PASSWORD)
            + credentials_secret("wrong-reader", "not-the-password")
            + chain(
                "ldap",
                ldap_step(slapd.url, ["managers"], '\n      searchFilter: "(objectClass=*)"'),
            )
            + "---"
            + chain(
                "sa",
                ldap_step(
                    slapd.address,
                    ["sales"],
                    lookup("reader") + "\n      pool: {maxSize: 2, initialSize: 1}",
                ),
            )
            + "---"
            + chain("open", ldap_step(slapd.url, [], "\n      disableGroupChecking: true"))
            + "---"
            + chain("bad-sa", ldap_step(slapd.url, ["sales"], lookup("wrong-reader")))
            + "---"
            + chain("down", ldap_step(f"127.0.0.1:{free_port()}", ["sales"])),
        )
        names = ("ldap", "sa", "open", "bad-sa", "down")
        for name in names:
            gateway.gw.wait_status(f"AuthConfig gw-system.{name}", "Accepted")
        for name in names:
            gateway.guard(name, name)
        yield {"gateway": gateway, "slapd": slapd}
    finally:
        if gateway is not None:
            gateway.stop()
        slapd.stop()


def test_the_guide_with_user_binding(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    nothing = gateway.get("ldap.test", "/echo")
    assert (nothing.status_code, nothing.text) == (401, "")
    assert gateway.get("ldap.test", "/echo", headers=basic("john", "doe")).status_code == 401
    developer = gateway.get("ldap.test", "/echo", headers=basic("marco", "marcopwd"))
    assert (developer.status_code, developer.text) == (403, "")
    manager = gateway.get("ldap.test", "/echo", headers=basic("rick", "rickpwd"))
    assert manager.status_code == 200 and manager.headers["x-echo-name"] == "app"
    assert manager.json()["headers"]["x-user-id"] == "rick"
    assert gateway.get("ldap.test", "/", headers=basic("rick", "rickpwdx")).status_code == 401


def test_credentials_cannot_name_another_entry(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    for user, password in (
        ("rick,ou=people", "rickpwd"),  # escaped: no such entry
        (f"rick,ou=people,{BASE}", "rickpwd"),
        ("rick", ""),  # an empty password would be an anonymous bind
        ("*", "rickpwd"),
    ):
        assert gateway.get("ldap.test", "/", headers=basic(user, password)).status_code == 401
    assert gateway.get("ldap.test", "/", headers={"authorization": "Basic !!"}).status_code == 401


def test_groups_read_by_a_service_account(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    for _ in range(3):  # more requests than the pool keeps connections
        ok = gateway.get("sa.test", "/", headers=basic("scottc", "scottcpwd"))
        assert ok.status_code == 200 and ok.json()["headers"]["x-user-id"] == "scottc"
    assert gateway.get("sa.test", "/", headers=basic("rick", "rickpwd")).status_code == 403
    assert gateway.get("sa.test", "/", headers=basic("scottc", "wrong")).status_code == 401
    refused = gateway.get("bad-sa.test", "/", headers=basic("scottc", "scottcpwd"))
    assert (refused.status_code, refused.text) == (500, "LDAP service account cannot bind")


def test_group_checking_disabled(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    assert gateway.get("open.test", "/", headers=basic("marco", "marcopwd")).status_code == 200
    assert gateway.get("open.test", "/", headers=basic("marco", "nope")).status_code == 401


def test_unreachable_server_fails_closed(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    down = gateway.get("down.test", "/", headers=basic("scottc", "scottcpwd"))
    assert (down.status_code, down.text) == (500, "LDAP server unavailable")
    assert "x-echo-name" not in down.headers


def test_outage_and_recovery(env: dict[str, Any]) -> None:
    """A restarted server: kept connections are dead, replaced on the next check."""
    gateway: ExtauthGateway = env["gateway"]
    slapd: Slapd = env["slapd"]
    rick = basic("rick", "rickpwd")
    assert gateway.get("ldap.test", "/", headers=rick).status_code == 200
    slapd.stop()
    try:
        outage = gateway.get("ldap.test", "/", headers=rick)
        assert (outage.status_code, outage.text) == (500, "LDAP server unavailable")
    finally:
        slapd.start()
    wait_until(
        lambda: gateway.get("ldap.test", "/", headers=rick).status_code == 200,
        what="LDAP checks to pass again",
    )
    assert gateway.get("sa.test", "/", headers=basic("scottc", "scottcpwd")).status_code == 200
