"""What the translator is told besides the resources: where the proxy listens, who it is,
and which of gw's own servers the install runs.

These come from the command line or the install (never from the environment inside the
translator), so that the same snapshot and options always give the same output.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from gw import defaults

#: The default `shard_routes_from`. At 981 virtual hosts in one route configuration Envoy
#: took 7-13 ms to apply an edit (`bench/propagation.py`), a shard of about 128 well under
#: one.
SHARD_ROUTES_FROM = 256


@dataclass(frozen=True, slots=True)
class InstalledServer:
    """Where a server listens: one the install runs (`gw up`: in its own process), or one
    the proxies call (the GCP metadata server)."""

    host: str
    port: int

    @classmethod
    def parse(cls, address: str, default_port: int) -> InstalledServer:
        """`host`, `host:port` or `[v6]:port`; raises ValueError for anything else."""
        host, colon, port = address.strip().rpartition(":")
        if not colon or (":" in host and not host.startswith("[")):
            host, port = address.strip(), str(default_port)
        host = host.strip("[]")
        if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValueError(f"{address!r} is not host[:port]")
        return cls(host, int(port))


#: Google's metadata server, where any workload on Google Cloud gets identity tokens.
GCP_METADATA = InstalledServer.parse(defaults.GCP_METADATA_SERVER, 80)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    namespace: str = defaults.NAMESPACE
    proxy_name: str = defaults.PROXY_NAME
    bind_address: str = defaults.PROXY_BIND
    http_port: int = defaults.HTTP_PORT
    https_port: int = defaults.HTTPS_PORT
    #: The time (Unix seconds) certificates are checked against; None skips expiry checks.
    #: Passed in, never read from a clock, so that translation stays a pure function.
    now: float | None = None
    #: gw's own servers the install runs. Stage 1 declares each as an Upstream in
    #: `namespace` (`extauth`, `rate-limit`: `gateway/install.py`) that the Settings name
    #: unless they name another; None declares nothing (`gw controlplane`: the install
    #: writes its own resources).
    extauth_server: InstalledServer | None = None
    #: The extauth server's plain-HTTP checks, declared as the Upstream `extauth-http`
    #: (HTTP/1.1) next to `extauth` (`envoy/extauth_http.py` uses it).
    extauth_http_server: InstalledServer | None = None
    ratelimit_server: InstalledServer | None = None
    #: A plain listener with this many virtual hosts or more is served in shards chosen by
    #: the `Host` when it can be (`envoy/shards.py`); 0 never shards.
    shard_routes_from: int = SHARD_ROUTES_FROM
    #: Every route gets Envoy statistics of its own (`ir.Route.stat_prefix`, the route's
    #: name), which the console charts; off by default for their cost.
    route_stats: bool = False
    #: The metadata server `gcp` Upstreams get identity tokens from (through the proxy).
    gcp_metadata_server: InstalledServer = GCP_METADATA
    #: The key session passes are signed with (Settings `extauth.sessionPass`), made by
    #: the control plane at start (`new_session_pass_key`); None: no passes. Never shown.
    session_pass_key: bytes | None = field(default=None, repr=False)


def new_session_pass_key() -> bytes:
    """A random key for this run: a restart only sends clients through the extauth
    server once more, for a new pass."""
    return secrets.token_bytes(32)


#: The servers `gw up` runs when given no ports (what `gwctl validate` assumes).
UP_EXTAUTH = InstalledServer(defaults.LOOPBACK, defaults.EXTAUTH_PORT)
UP_RATELIMIT = InstalledServer(defaults.LOOPBACK, defaults.RATELIMIT_PORT)
