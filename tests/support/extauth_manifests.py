"""Manifests every extauth test needs: Settings pointing at the extauth server, the server's
Upstream, the protected app's Upstream, and the OAuth secret holding the client secret."""

from __future__ import annotations


def extauth_settings(request_timeout: str | None) -> str:
    """Settings `extauth` (the default requestTimeout, 200ms, when `request_timeout` is None)."""
    line = f"\n    requestTimeout: {request_timeout}" if request_timeout else ""
    return f"""
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  extauth:
    extauthzServerRef: {{name: extauth, namespace: gw-system}}{line}
"""


def extauth_backends(extauth_port: int, app_port: int, client_secret: str) -> str:
    """Upstreams `extauth` and `app`, and the OAuth secret `oauth`, all in gw-system."""
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: extauth, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {extauth_port}}}]}}}}
---
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
