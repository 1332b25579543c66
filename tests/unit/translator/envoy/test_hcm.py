"""The HTTP connection manager's fixed checks and the headers it strips for gw's servers."""

from __future__ import annotations

from gw.translator import ir
from gw.translator.envoy.extauth import server_headers
from gw.translator.envoy.hcm import build_manager
from gw.wire.extauth import AuthConfig
from gw.wire.extauth_oidc import OidcAuthorizationCode


def _auth_config(name: str, **headers: str) -> AuthConfig:
    oidc = OidcAuthorizationCode(
        app_url="http://app.test",
        callback_path="/callback",
        redirect_uri="http://app.test/callback",
        client_id="gw",
        issuer_url="http://idp.test",
        after_logout_url="http://app.test/",
        **headers,  # type: ignore[arg-type]
    )
    return AuthConfig(config_id=f"gw-system.{name}", namespace="gw-system", name=name, oidc=oidc)


def test_the_token_headers_of_every_auth_config_are_stripped_but_not_client_credentials() -> None:
    configs = [
        _auth_config("a", id_token_header="X-Id-Token", access_token_header="authorization"),
        _auth_config("b", access_token_header="x-access-token"),
        _auth_config("c"),
    ]
    assert server_headers(configs) == ("x-access-token", "x-id-token")


def test_every_manager_strips_them_early_and_checks_the_host_first() -> None:
    listener = ir.Listener(name="listener-::-8080", address="::", port=8080, virtual_hosts=())
    manager = build_manager(listener, "routes", [], ("x-id-token",))
    (early,) = manager.early_header_mutation_extensions
    assert early.typed_config.value  # a HeaderMutation removing the header
    assert b"x-id-token" in early.typed_config.value
    assert manager.http_filters[0].name == "gw.host_check"
    assert manager.strip_trailing_host_dot
    assert manager.local_reply_config.mappers[0].status_code.value == 400
