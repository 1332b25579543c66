"""What gw uses when told nothing else: ports, addresses, names, in one place.

The command line (`gw`, `gwctl`), the options of each component (`UpOptions`, the
translator's `Options`, `OrchOptions`, `BootstrapOptions`, the extauth and rate-limit
servers' `Placement`) and gwctl's view of an install all read them here; the values
are the established gateway's (docs/architecture.md, Ports). Constants only: importing this
costs nothing, so the CLI can show them in `--help` without loading any component.
"""

from __future__ import annotations

#: The gateway (controller) namespace, where gw's own resources and Settings live.
NAMESPACE = "gw-system"
#: The proxy a Gateway serves unless its `proxyNames` says otherwise.
PROXY_NAME = "gateway-proxy"

HTTP_PORT = 8080
HTTPS_PORT = 8443
XDS_PORT = 9977
EXTAUTH_PORT = 8083
RATELIMIT_PORT = 18081
#: The control plane's debug/admin server.
DEBUG_PORT = 9091
#: The developer API, open while Settings say `devMode: true` (port name `dev-admin`).
DEV_PORT = 10010
PROXY_ADMIN_PORT = 19000
#: Envoy clusters every proxy's bootstrap defines for gw itself. `~` cannot appear in an
#: orchestrator name and every cluster made from a resource is `<name>_<namespace>`, so no
#: resource can name one of these (and route client traffic to the control plane).
XDS_CLUSTER = "gw~xds"
PROXY_ADMIN_CLUSTER = "gw~proxy-admin"
#: The cluster through which proxies ask the GCP metadata server for identity tokens.
GCP_METADATA_CLUSTER = "gw~gcp-metadata"
#: Where that server is (`host:port`): Google's own, as its client libraries find it.
GCP_METADATA_SERVER = "metadata.google.internal:80"
#: Downstream connections one proxy accepts across all its listeners (the established
#: install's `globalDownstreamMaxConnections`); more are closed as soon as they open.
GLOBAL_DOWNSTREAM_MAX_CONNECTIONS = 250_000
#: The validation webhook (HTTPS) of `gw controlplane --orch`.
WEBHOOK_PORT = 8443

#: Where `gw up` listens: this machine only.
LOOPBACK = "127.0.0.1"
#: Where a component listens in a pod: every address.
ANY_ADDRESS = "0.0.0.0"
#: The address the proxies' listeners bind (IPv6 any, which takes IPv4 too).
PROXY_BIND = "::"
XDS_ADDRESS = f"{LOOPBACK}:{XDS_PORT}"
#: The Redis the rate-limit server counts in.
REDIS = f"{LOOPBACK}:6379"
#: The Upstreams (in NAMESPACE) by which `gw up` declares its extauth and rate-limit
#: servers, as the established gateway's install names them.
EXTAUTH_UPSTREAM = "extauth"
RATELIMIT_UPSTREAM = "rate-limit"

LOG_LEVEL = "info"
#: Leader election's Lease duration, in seconds (renewal and retry scale with it).
LEASE_DURATION = 15.0


def role(name: str, namespace: str = NAMESPACE) -> str:
    """The xDS role `<namespace>~<name>` a proxy or component asks its configuration for."""
    return f"{namespace}~{name}"


PROXY_ROLE = role(PROXY_NAME)
EXTAUTH_ROLE = role("extauth")
RATELIMIT_ROLE = role("ratelimit")
