"""Manifests every extauth test needs: Settings pointing at the extauth server, the server's
Upstream, the protected app's Upstream, and the OAuth secret holding the client secret."""

from __future__ import annotations

import json


def extauth_settings(request_timeout: str | None, *, server: bool = True) -> str:
    """Settings `extauth` (the default requestTimeout, 200ms, when `request_timeout` is None);
    without `server`, no `extauthzServerRef`: `gw up`'s own server stays named."""
    lines = ["\n    extauthzServerRef: {name: extauth, namespace: gw-system}"] if server else []
    lines += [f"\n    requestTimeout: {request_timeout}"] if request_timeout else []
    return f"""
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  extauth:{"".join(lines) or " {}"}
"""


def extauth_backends(extauth_port: int | None, app_port: int, client_secret: str) -> str:
    """Upstreams `extauth` and `app`, and the OAuth secret `oauth`, all in gw-system. With
    `extauth_port` None there is no `extauth` Upstream: `gw up` declares its own server's."""
    server = (
        f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: extauth, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {extauth_port}}}]}}}}
---"""
        if extauth_port is not None
        else ""
    )
    return f"""{server}
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: app, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {app_port}}}]}}}}
---
apiVersion: v1
kind: Secret
metadata: {{name: oauth, namespace: gw-system}}
type: extauth.vendor.io/oauth
stringData: {{client-secret: {client_secret}}}
"""


def auth_config(
    name: str,
    app_url: str,
    issuer: str,
    *,
    client_id: str | None = None,
    callback_path: str = "/callback",
    **fields: str,
) -> str:
    """An OIDC AuthConfig `name` in gw-system using the `oauth` secret; `fields` add lines
    under `oidcAuthorizationCode` (`session`, `headers`, `scopes`, `logoutPath`, ...)."""
    lines = "".join(f"\n        {k}: {v}" for k, v in fields.items())
    return f"""
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: {name}, namespace: gw-system}}
spec:
  configs:
  - oauth2:
      oidcAuthorizationCode:
        appUrl: {app_url}
        callbackPath: {callback_path}
        clientId: {client_id or f"gw-{name}"}
        clientSecretRef: {{name: oauth, namespace: gw-system}}
        issuerUrl: {issuer}{lines}
"""


def chain(name: str, configs: str, boolean_expr: str | None = None) -> str:
    """An AuthConfig `name` in gw-system with `configs` (the YAML of its entries, each
    starting `\n  - `) and a `booleanExpr`."""
    expr = f"\n  booleanExpr: {json.dumps(boolean_expr)}" if boolean_expr else ""
    return f"""
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: {name}, namespace: gw-system}}
spec:{expr}
  configs:{configs}
"""


def protected_app(name: str, domain: str, config: str, public_prefix: str | None = None) -> str:
    """A VirtualService in `default` guarded by AuthConfig `config`, routing to `app`;
    `public_prefix` adds a first route with extauth disabled."""
    to_app = "routeAction: {single: {upstream: {name: app, namespace: gw-system}}}"
    public = (
        f"\n    - matchers: [{{prefix: {public_prefix}}}]\n      {to_app}"
        "\n      options: {extauth: {disable: true}}"
        if public_prefix
        else ""
    )
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: ["{domain}"]
    options: {{extauth: {{configRef: {{name: {config}, namespace: gw-system}}}}}}
    routes:{public}
    - matchers: [{{prefix: /}}]
      {to_app}
"""
