"""External auth in the IR: which AuthConfig guards a virtual host or route, and how Envoy
calls the extauth server. The AuthConfigs themselves are that server's contract
(`gw.wire.extauth`), carried by `Proxy.auth_configs`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtAuth:
    """External auth on a virtual host or route: the AuthConfig the extauth server checks
    requests against (`config_id`, `<namespace>.<name>`), or None to switch it off here."""

    config_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtAuthServer:
    """Settings `extauth`: the gRPC cluster of the extauth server and how Envoy calls it."""

    cluster: str
    timeout_ms: int = 200
    failure_mode_allow: bool = False
    status_on_error: int | None = None
    #: The request headers the server's checks read (None: all of them; fewer headers make
    #: each check cheaper to encode, send and parse), and the dynamic metadata namespaces.
    request_headers: tuple[str, ...] | None = ("cookie",)
    metadata_namespaces: tuple[str, ...] = ()
