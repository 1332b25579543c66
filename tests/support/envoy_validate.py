"""`envoy --mode validate` over translator output: does the real Envoy accept this xDS?

The xDS resources are put into a static bootstrap (RDS routes inlined into their listener,
EDS clusters given their endpoints, SDS secrets made static), which is what Envoy checks
the same way it checks resources that arrive over ADS.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from gw.proxy.supervisor import envoy_path
from gw.translator.envoy import Xds, names, protos


def _data(message: Any) -> dict[str, Any]:
    # Through Envoy 1.40's fields (`protos.POOL`), which Envoy reads from the JSON: those in
    # `Any`s, and those a generated message carries as unknown fields (`protos.merge_added`).
    data: dict[str, Any] = json_format.MessageToDict(
        protos.readable(message), preserving_proto_field_name=True, descriptor_pool=protos.POOL
    )
    return data


def _drop_sds_sources(data: Any) -> Any:
    """Static secrets are referenced by name only."""
    if isinstance(data, dict):
        return {k: _drop_sds_sources(v) for k, v in data.items() if k != "sds_config"}
    if isinstance(data, list):
        return [_drop_sds_sources(v) for v in data]
    return data


def static_bootstrap(xds: Xds) -> dict[str, Any]:
    routes = {name: _data(m) for name, m in xds.of(names.ROUTE).items()}
    endpoints = {name: _data(m) for name, m in xds.of(names.ENDPOINT).items()}
    listeners = []
    for message in xds.of(names.LISTENER).values():
        listener = _data(message)
        for chain in listener.get("filter_chains", []):
            for network_filter in chain.get("filters", []):
                manager = network_filter.get("typed_config", {})
                rds = manager.pop("rds", None)
                if rds is not None:
                    manager["route_config"] = routes[rds["route_config_name"]]
        listeners.append(listener)
    clusters = []
    for name, message in xds.of(names.CLUSTER).items():
        cluster = _data(message)
        if cluster.get("type") == "EDS":
            cluster.pop("eds_cluster_config", None)
            cluster["type"] = "STATIC"
            cluster["load_assignment"] = endpoints.get(name, {"cluster_name": name})
        clusters.append(cluster)
    secrets = [_data(m) for m in xds.of(names.SECRET).values()]
    static = {"listeners": listeners, "clusters": clusters, "secrets": secrets}
    return {"static_resources": _drop_sds_sources(static)}


def envoy_refusal(xds: Xds) -> str | None:
    """None when Envoy accepts the configuration, else the reason Envoy gives."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bootstrap.json"
        path.write_text(json.dumps(static_bootstrap(xds)))
        done = subprocess.run(
            [
                envoy_path(),
                "--mode",
                "validate",
                "-c",
                str(path),
                "--disable-hot-restart",
                "-l",
                "warning",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    output = done.stderr.strip() or done.stdout.strip()
    if done.returncode == 0:
        # Deprecated fields work today and break on an Envoy upgrade: refuse them too.
        deprecated = [line for line in output.splitlines() if "deprecated" in line.lower()]
        return "\n".join(deprecated)[-2000:] or None
    return (output or f"exit {done.returncode}")[-2000:]
