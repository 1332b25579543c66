"""AuthConfig (`enterprise.gw.vendor.io/v1`): how the extauth server authenticates.

`spec.configs[]` is a chain of checks, each entry one kind (its model in
`authconfig_<kind>.py`), combined in order or by `spec.booleanExpr`. Kinds gw does not run
(yet) are accepted as data, so that stage 1 can refuse them by name rather than the parser
calling them unknown.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from gw.api.authconfig_accesstoken import AccessTokenValidation
from gw.api.authconfig_apikey import ApiKeyAuth
from gw.api.authconfig_basic import BasicAuth
from gw.api.authconfig_ldap import Ldap
from gw.api.authconfig_oidc import OidcAuthorizationCode
from gw.api.authconfig_opa import OpaAuth
from gw.api.authconfig_passthrough import PassThroughAuth
from gw.api.meta import Empty, Model, Resource


class OAuth2(Model):
    oidc_authorization_code: OidcAuthorizationCode | None = None
    access_token_validation: AccessTokenValidation | None = None
    oauth2: dict[str, Any] | None = None


class AuthConfigEntry(Model):
    name: str | None = None
    basic_auth: BasicAuth | None = None
    oauth2: OAuth2 | None = None
    api_key_auth: ApiKeyAuth | None = None
    pass_through_auth: PassThroughAuth | None = None
    opa_auth: OpaAuth | None = None
    ldap: Ldap | None = None
    #: `jwt: {}`: the JWT options of the host or route do the verifying.
    jwt: Empty | None = None
    # Kinds of the established API that this build does not run: refused by name.
    oauth: dict[str, Any] | None = None
    plugin_auth: dict[str, Any] | None = None
    opa_server_auth: dict[str, Any] | None = None
    hmac_auth: dict[str, Any] | None = None
    portal_auth: dict[str, Any] | None = None


class AuthConfigSpec(Model):
    configs: list[AuthConfigEntry] = Field(min_length=1)
    boolean_expr: str | None = None
    fail_on_redirect: bool = False


class AuthConfig(Resource):
    API_VERSION: ClassVar[str] = "enterprise.gw.vendor.io/v1"
    KIND: ClassVar[str] = "AuthConfig"
    PLURAL: ClassVar[str] = "authconfigs"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("ac",)
    #: basicAuth's salts and hashes are as secret as the passwords they protect.
    SECRET_FIELDS: ClassVar[frozenset[str]] = frozenset({"salt", "hashedPassword"})

    spec: AuthConfigSpec
