"""The manifests the console tests serve: a host that delegates to a route table and
forwards to an upstream, a JWT-protected host, a host whose upstream is missing (Warning),
and a resource whose name is markup (Rejected), to check escaping."""

from __future__ import annotations

import textwrap

#: What a hostile resource name or value might try: markup that runs script.
XSS = "<img src=x onerror=alert(1)>"


def shop(echo_port: int) -> str:
    """An upstream, a host delegating `/api` to a route table, a route matching a header, and
    a host whose upstream does not exist (Warning)."""
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: echo, namespace: default}}
spec:
  static: {{hosts: [{{addr: 127.0.0.1, port: {echo_port}}}]}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: shop, namespace: default}}
spec:
  virtualHost:
    domains: [shop.example.com]
    routes:
      - matchers: [{{prefix: /api}}]
        delegateAction: {{ref: {{name: api}}}}
      - matchers: [{{prefix: /flag, headers: [{{name: x-flag, value: "yes"}}]}}]
        directResponseAction: {{status: 200, body: flagged}}
      - matchers: [{{exact: /}}]
        directResponseAction: {{status: 200, body: home}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {{name: api, namespace: default}}
spec:
  routes:
    - matchers: [{{prefix: /api/users}}]
      routeAction: {{single: {{upstream: {{name: echo}}}}}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: lost, namespace: default}}
spec:
  virtualHost:
    domains: [lost.example.com]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: missing}}}}}}
"""


HOSTILE = f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: "{XSS}", namespace: default}}
spec:
  virtualHost:
    domains: [hostile.example.com]
    routes: [{{matchers: [{{prefix: /}}], directResponseAction: {{status: 200}}}}]
"""


def secure(pem: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: secure, namespace: default}}
spec:
  virtualHost:
    domains: [secure.example.com]
    options:
      jwt:
        providers:
          main:
            issuer: https://issuer.example.com
            jwks:
              local:
                key: |
{textwrap.indent(pem.strip(), " " * 18)}
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: echo}}}}}}
"""


def explain_page(admin_url: str, **fields: str) -> str:
    """The console's answer to its explain form (the form's token taken from its page, as
    a browser sends it): the HTML page."""
    import re

    import httpx

    page = httpx.get(f"{admin_url}/console/explain", timeout=10).text
    token = re.search(r'name="token" value="([^"]+)"', page)
    assert token is not None, "the explain page has no form token"
    response = httpx.post(
        f"{admin_url}/console/explain",
        data={"token": token.group(1), "method": "GET", **fields},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.text
