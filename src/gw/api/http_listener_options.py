"""A Gateway's `spec.httpGateway.options` (the established `HttpListenerOptions`).

Typed and built: `httpConnectionManagerSettings` (`api/hcm.py`) and `connectionLimit`.
Every other established field is parsed as plain data, so that a manifest using it loads
and gets a status naming it ("not supported"), while a misspelt field stays an unknown
field. Building one of them means typing it here and translating it.
"""

from __future__ import annotations

from typing import Any

from gw.api.hcm import HttpConnectionManagerSettings
from gw.api.listener_options import ConnectionLimit
from gw.api.meta import Model

#: The established fields gw does not build yet, by their manifest names.
NOT_BUILT = (
    "grpcWeb",
    "healthCheck",
    "extensions",
    "waf",
    "dlp",
    "wasm",
    "extauth",
    "ratelimitServer",
    "caching",
    "disableExtProcEarly",
    "extProcEarly",
    "disableExtProc",
    "extProc",
    "disableExtProcLate",
    "extProcLate",
    "gzip",
    "proxyLatency",
    "buffer",
    "csrf",
    "grpcJsonTranscoder",
    "sanitizeClusterHeader",
    "leftmostXffAddress",
    "dynamicForwardProxy",
    "networkLocalRatelimit",
    "httpLocalRatelimit",
    "router",
    "tap",
    "statefulSession",
    "headerValidationSettings",
)


class HttpListenerOptions(Model):
    http_connection_manager_settings: HttpConnectionManagerSettings | None = None
    connection_limit: ConnectionLimit | None = None
    grpc_web: Any = None
    health_check: Any = None
    extensions: Any = None
    waf: Any = None
    dlp: Any = None
    wasm: Any = None
    extauth: Any = None
    ratelimit_server: Any = None
    caching: Any = None
    disable_ext_proc_early: Any = None
    ext_proc_early: Any = None
    disable_ext_proc: Any = None
    ext_proc: Any = None
    disable_ext_proc_late: Any = None
    ext_proc_late: Any = None
    gzip: Any = None
    proxy_latency: Any = None
    buffer: Any = None
    csrf: Any = None
    grpc_json_transcoder: Any = None
    sanitize_cluster_header: Any = None
    leftmost_xff_address: Any = None
    dynamic_forward_proxy: Any = None
    network_local_ratelimit: Any = None
    http_local_ratelimit: Any = None
    router: Any = None
    tap: Any = None
    stateful_session: Any = None
    header_validation_settings: Any = None
