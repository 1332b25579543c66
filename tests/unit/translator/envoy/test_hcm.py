"""The HTTP connection manager's fixed checks and the headers it strips for gw's servers."""

from __future__ import annotations

from gw.translator import ir
from gw.translator.envoy.extauth import server_headers
from gw.translator.envoy.hcm import build_manager
from gw.wire.extauth import AuthConfig, Check, Step
from gw.wire.extauth_apikey import ApiKeyAuth, MetadataHeader
from gw.wire.extauth_oidc import ClaimToHeader, OidcAuthorizationCode


def _auth_config(
    name: str, *more: Check, user_id_header: str | None = None, **headers: str
) -> AuthConfig:
    oidc = OidcAuthorizationCode(
        app_url="http://app.test",
        callback_path="/callback",
        redirect_uri="http://app.test/callback",
        client_id="gw",
        issuer_url="http://idp.test",
        after_logout_url="http://app.test/",
        **headers,  # type: ignore[arg-type]
    )
    steps = tuple(Step(name=f"config_{i}", check=c) for i, c in enumerate((oidc, *more)))
    return AuthConfig(
        config_id=f"gw-system.{name}",
        namespace="gw-system",
        name=name,
        steps=steps,
        user_id_header=user_id_header,
    )


def test_the_token_headers_of_every_auth_config_are_stripped_but_not_client_credentials() -> None:
    configs = [
        _auth_config("a", id_token_header="X-Id-Token", access_token_header="authorization"),
        _auth_config("b", access_token_header="x-access-token"),
        _auth_config("c"),
    ]
    assert server_headers(configs) == ("x-access-token", "x-id-token")


def test_the_headers_every_kind_of_check_sets_are_stripped() -> None:
    """Also the user id header, claims copied into headers (not appended ones), an API
    key's metadata headers: no client can hand an upstream its own copy."""
    keys = ApiKeyAuth(headers_from_metadata=(MetadataHeader(header="x-team", key="team"),))
    oidc_claims = {
        "identity_token_claims": (
            ClaimToHeader(claim="email", header="x-email"),
            ClaimToHeader(claim="sub", header="x-sub", append=True),
        )
    }
    config = _auth_config("a", keys, user_id_header="x-user-id", **oidc_claims)  # type: ignore[arg-type]
    assert server_headers([config]) == ("x-email", "x-team", "x-user-id")


def test_every_manager_strips_them_early_and_checks_the_host_first() -> None:
    listener = ir.Listener(name="listener-::-8080", address="::", port=8080, virtual_hosts=())
    manager = build_manager(listener, "routes", [], ("x-id-token",))
    (early,) = manager.early_header_mutation_extensions
    assert early.typed_config.value  # a HeaderMutation removing the header
    assert b"x-id-token" in early.typed_config.value
    assert manager.http_filters[0].name == "gw.host_check"
    assert manager.strip_trailing_host_dot
    assert manager.local_reply_config.mappers[0].status_code.value == 400
