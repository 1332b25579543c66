"""Manifests tests share: a virtual service per host, static upstreams, orchestrator services."""

from __future__ import annotations


def upstream(name: str, port: int, namespace: str = "default") -> str:
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: {namespace}}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {port}}}]}}}}
"""


def virtual_service(name: str, domain: str, upstream: str, prefix: str = "/") -> str:
    """`name` in `default`, routing `prefix` on `domain` to Upstream default.`upstream`."""
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: ["{domain}"]
    routes:
    - matchers: [{{prefix: {prefix}}}]
      routeAction: {{single: {{upstream: {{name: {upstream}, namespace: default}}}}}}
"""


def service(name: str, port: int, endpoint_port: int) -> str:
    """A Service `name` in `default` with one port, and its Endpoints: 127.0.0.1:endpoint_port."""
    return f"""
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: default}}
spec:
  ports: [{{name: http, port: {port}}}]
---
apiVersion: v1
kind: Endpoints
metadata: {{name: {name}, namespace: default}}
subsets:
- addresses: [{{ip: 127.0.0.1}}]
  ports: [{{name: http, port: {endpoint_port}}}]
"""


def gateway(name: str, port: int, *, options: str = "{}", http_options: str = "{}") -> str:
    """A Gateway `name` in `gw-system` on 127.0.0.1:`port`, serving every VirtualService, with
    these listener `options` and `httpGateway.options` (flow YAML, or block YAML starting
    with a line break and indented by four)."""
    return f"""
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: {name}, namespace: gw-system}}
spec:
  bindAddress: 127.0.0.1
  bindPort: {port}
  options: {options}
  httpGateway:
    options: {http_options}
"""
