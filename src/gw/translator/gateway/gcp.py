"""Google Cloud: a `gcp` Upstream → a cluster to the service over TLS whose requests carry a
Google identity token, and what a route to it adds (the service's Host).

Cloud Run (and the other services behind Google's front ends) take a request only with
`Authorization: Bearer <ID token>` minted for their audience, and find the service by its
Host. The proxy asks the GCP metadata server for the token, as any workload on Google
Cloud does (`.../service-accounts/default/identity?audience=<audience>`, through the
cluster `gw~gcp-metadata`), with the identity of the machine or of the Kubernetes service
account it runs as (Workload Identity); Envoy keeps each token until it expires. The
metadata server is Google's unless the control plane is told another
(`Options.gcp_metadata_server`).

`host` may carry a port (`name:port`, gw's addition; 443 otherwise). The audience defaults
to the service's URL, `https://<host>`, as Cloud Run expects.
"""

from __future__ import annotations

from typing import Any

from gw import api, defaults
from gw.api.gcp import GcpUpstreamSpec
from gw.translator import ir
from gw.translator.gateway.hosts import is_hostname, is_ip
from gw.translator.options import Options
from gw.translator.reports import ResourceReport

HTTPS_PORT = 443
#: Characters that would change the metadata server's URL: Envoy puts the audience in its
#: query string as it is.
_URL_BREAKING = frozenset(" &#\t\r\n")


def check_gcp_upstream(upstream: api.Upstream, report: ResourceReport) -> tuple[ir.Endpoint, ...]:
    """The service's endpoint for a valid `gcp` upstream; () after reporting what is wrong."""
    spec = upstream.spec.gcp
    assert spec is not None
    errors = len(report.errors)
    address = _address(spec.host, report)
    audience = spec.audience
    if audience and (audience != audience.strip() or _URL_BREAKING & set(audience)):
        report.error(
            "spec.gcp.audience",
            "the audience cannot hold spaces, '&' or '#': it goes into the metadata server's "
            "URL as it is; give the receiving service's URL (https://...) or its custom "
            "audience",
        )
    if address is None or len(report.errors) > errors:
        return ()
    return (ir.Endpoint(address=address[0], port=address[1]),)


def _address(host: str, report: ResourceReport) -> tuple[str, int] | None:
    field = "spec.gcp.host"
    raw = host.strip()
    if not raw:
        report.error(
            field, "a gcp upstream needs host: the service's host name (hello-abc123-uc.a.run.app)"
        )
        return None
    if "/" in raw:
        report.error(
            field,
            f"{raw!r} is a URL: host is the service's host name alone "
            "(hello-abc123-uc.a.run.app), without https:// or a path",
        )
        return None
    name, colon, port = raw.rpartition(":")
    if not colon:
        name, port = raw, str(HTTPS_PORT)
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        report.error(field, f"{raw!r}: the port after ':' must be a number from 1 to 65535")
        return None
    if not is_hostname(name) and not is_ip(name):
        report.error(field, f"{name!r} is neither a host name nor an IP address")
        return None
    return name, int(port)


def service_host(spec: GcpUpstreamSpec) -> str:
    """The Host the service is reached by: its name, with the port unless it is 443."""
    raw = spec.host.strip()
    return raw.removesuffix(f":{HTTPS_PORT}")


def gcp_audience(spec: GcpUpstreamSpec) -> str:
    return spec.audience or f"https://{service_host(spec)}"


def with_metadata_cluster(cluster: ir.Cluster, options: Options) -> tuple[ir.Cluster, ...]:
    """`cluster`, and for a `gcp` upstream's the cluster Envoy's gcp_authn filter reaches
    the metadata server through (plain HTTP, as every client of that server speaks it)."""
    if cluster.gcp_audience is None:
        return (cluster,)
    server = options.gcp_metadata_server
    metadata = ir.Cluster(
        name=defaults.GCP_METADATA_CLUSTER,
        source=cluster.source,
        discovery="static" if is_ip(server.host) else "dns",
        endpoints=(ir.Endpoint(address=server.host, port=server.port),),
    )
    return cluster, metadata


def gcp_destination(upstream: api.Upstream | None) -> dict[str, Any]:
    """What a route's destination adds when it is a `gcp` upstream: the service's Host and
    its identity token (as `ir.WeightedCluster` fields)."""
    spec = upstream.spec.gcp if upstream is not None else None
    if spec is None:
        return {}
    return {"host_rewrite": service_host(spec), "gcp_identity_token": True}
