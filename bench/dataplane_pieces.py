"""Benchmark: what each piece of gw's generated listener costs per request, by A/B runs.

Run from the repository root: `python -m bench.dataplane_pieces [--duration 3] [--rounds 7]`.
It writes `bench/results/dataplane_pieces.json` and `.md`.

The listener, routes and cluster that gw generates for `bench.dataplane`'s VirtualService
(translated here as `gw up` translates it) are written into static Envoy configs: `gw` as
generated, and one variant per piece with only that piece changed (a filter left out or put
back, a connection-manager option switched), plus two combinations: every default of gw's
own off (what remains is a hand-written config) and what a user can switch off with the
established fields. The hand-written baseline of `bench.dataplane` runs next to them.
Every Envoy has one worker and forwards to the same nginx upstream; `wrk` loads them in
rounds, the order rotated every round, and the proxy's own CPU time per
request (utime+stime from /proc) is compared with `gw`'s within each round: a variant
below 1 is cheaper than gw. `gw again` is a second, unchanged copy: its spread is the
noise.

Static configs leave out what only `gw up`'s Envoy has (the ADS stream, idle between
changes): the pieces are the same, and this isolates them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.ports import free_port

from bench import peers, report
from bench.dataplane import GW_CONFIG, HOST
from bench.report import RESULTS
from gw.discovery import ServiceDiscovery
from gw.proxy.bootstrap import BootstrapOptions, build_bootstrap
from gw.store.directory import DirectoryStore
from gw.translator.dump import message_to_data, xds_to_data
from gw.translator.options import UP_EXTAUTH, UP_RATELIMIT, Options
from gw.translator.translation import translate

Config = dict[str, Any]
BASELINE = "envoy"
REFERENCE = "gw"


def _filters(config: Config) -> list[Config]:
    return _hcm(config)["http_filters"]  # type: ignore[no-any-return]


def _hcm(config: Config) -> Config:
    chain = config["static_resources"]["listeners"][0]["filter_chains"][0]
    return chain["filters"][0]["typed_config"]  # type: ignore[no-any-return]


def _without_filter(name: str) -> Callable[[Config], None]:
    def change(config: Config) -> None:
        _hcm(config)["http_filters"] = [f for f in _filters(config) if f["name"] != name]

    return change


def _with_grpc_web(config: Config) -> None:
    """gRPC-Web before the router, as gw put it on every listener until it learnt to leave
    it out where no route reaches an HTTP/2 upstream (this benchmark's case)."""
    grpc_web = "envoy.filters.http.grpc_web"
    if all(f["name"] != grpc_web for f in _filters(config)):
        typed = {"@type": "type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb"}
        _filters(config).insert(-1, {"name": grpc_web, "typed_config": typed})


def _hcm_set(**fields: Any) -> Callable[[Config], None]:
    def change(config: Config) -> None:
        for field, value in fields.items():
            if value is None:
                _hcm(config).pop(field, None)
            else:
                _hcm(config)[field] = value

    return change


def _router(**fields: Any) -> Callable[[Config], None]:
    def change(config: Config) -> None:
        _filters(config)[-1]["typed_config"].update(fields)

    return change


def _no_overload_manager(config: Config) -> None:
    config.pop("overload_manager", None)


def _listener_set(**fields: Any) -> Callable[[Config], None]:
    def change(config: Config) -> None:
        listener = config["static_resources"]["listeners"][0]
        for field, value in fields.items():
            if value is None:
                listener.pop(field, None)
            else:
                listener[field] = value

    return change


def _any_domain(config: Config) -> None:
    _hcm(config)["route_config"]["virtual_hosts"][0]["domains"] = ["*"]


def _no_route_name(config: Config) -> None:
    for route in _hcm(config)["route_config"]["virtual_hosts"][0]["routes"]:
        route.pop("name", None)


def _no_stats(config: Config) -> None:
    config["stats_config"] = {"stats_matcher": {"reject_all": True}}


def _no_underscore_check(config: Config) -> None:
    _hcm(config)["common_http_protocol_options"].pop("headers_with_underscores_action", None)


#: Envoy's experimental io_uring socket interface (kernel 5.11 or later), to see whether
#: fewer system calls per request make a lever the listener's options are not.
SOCKET_INTERFACE = "envoy.extensions.network.socket_interface.default_socket_interface"
SOCKET_INTERFACE_TYPE = (
    "type.googleapis.com/envoy.extensions.network.socket_interface.v3.DefaultSocketInterface"
)


def _io_uring(**options: Any) -> Callable[[Config], None]:
    def change(config: Config) -> None:
        typed = {"@type": SOCKET_INTERFACE_TYPE, "io_uring_options": options}
        config["bootstrap_extensions"] = [{"name": SOCKET_INTERFACE, "typed_config": typed}]
        config["default_socket_interface"] = SOCKET_INTERFACE

    return change


def _all(config: Config, *names: str) -> None:
    for name in names:
        VARIANTS[name](config)


#: gw's own defaults over a hand-written config, each with a reason (security, the
#: established gateway's behaviour).
SECURE_DEFAULTS = (
    "no host check",
    "no local reply mapper",
    "no path normalisation",
    "no use_remote_address",
    "no underscore check",
    "no timeouts",
    "no websocket upgrade",
    "no trailing host dot strip",
)
#: What a user can switch off with the established fields (`router.dynamicStats`,
#: `generateRequestId`).
OPT_OUTS = ("router dynamic_stats off", "no request id")

#: Each variant: one piece of the generated listener changed.
VARIANTS: dict[str, Callable[[Config], None]] = {
    "no host check": _without_filter("gw.host_check"),
    "with grpc_web (as before)": _with_grpc_web,
    "no request id": _hcm_set(generate_request_id=False),
    "router dynamic_stats off": _router(dynamic_stats=False),
    "router suppress_envoy_headers": _router(suppress_envoy_headers=True),
    "gw again (noise)": lambda config: None,
    "no local reply mapper": _hcm_set(local_reply_config=None),
    "no path normalisation": _hcm_set(
        normalize_path=None, merge_slashes=None, path_with_escaped_slashes_action=None
    ),
    "no use_remote_address": _hcm_set(use_remote_address=None),
    "no underscore check": _no_underscore_check,
    "no timeouts": _hcm_set(request_headers_timeout=None, stream_idle_timeout=None),
    "no overload manager": _no_overload_manager,
    "server header passed through": _hcm_set(server_header_transformation="PASS_THROUGH"),
    "codec HTTP1 (not AUTO)": _hcm_set(codec_type="HTTP1"),
    "no stats (reject all)": _no_stats,
    "domains [*]": _any_domain,
    "no websocket upgrade": _hcm_set(upgrade_configs=None),
    "no trailing host dot strip": _hcm_set(strip_trailing_host_dot=None),
    "reuse_port default": _listener_set(enable_reuse_port=None),
    "no route name": _no_route_name,
    "every gw default off": lambda config: _all(config, *SECURE_DEFAULTS),
    "established opt-outs": lambda config: _all(config, *OPT_OUTS),
    "io_uring": _io_uring(),
    "io_uring multishot": _io_uring(enable_multishot_receive=True),
    "all of it off": lambda config: _all(config, *SECURE_DEFAULTS, *OPT_OUTS),
}


def generated(upstream: int) -> tuple[Config, Config, Config]:
    """gw's listener, route configuration and cluster for the benchmark's manifests."""
    with tempfile.TemporaryDirectory(prefix="gw-bench-pieces-") as tmp:
        folder = Path(tmp)
        (folder / "bench.yaml").write_text(GW_CONFIG.format(port=upstream, host=HOST))
        snapshot = ServiceDiscovery(Options().namespace)(DirectoryStore(folder).scan())
    options = Options(extauth_server=UP_EXTAUTH, ratelimit_server=UP_RATELIMIT)
    xds = xds_to_data(next(iter(translate(snapshot, options).served.values())))
    (listener,), (routes,) = xds["listeners"], xds["routes"]
    cluster = next(c for c in xds["clusters"] if c["name"].startswith("hello"))
    return listener, routes, cluster


def static_config(port: int, admin: int, upstream: int) -> Config:
    """gw's generated pieces as one static Envoy config on `port`, with `gw up`'s overload
    manager."""
    listener, routes, cluster = generated(upstream)
    listener["address"] = {"socket_address": {"address": "127.0.0.1", "port_value": port}}
    hcm = listener["filter_chains"][0]["filters"][0]["typed_config"]
    del hcm["rds"]
    hcm["route_config"] = routes
    bootstrap = message_to_data(build_bootstrap(BootstrapOptions(node_id="bench")))
    return {
        "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": admin}}},
        "static_resources": {"listeners": [listener], "clusters": [cluster]},
        "overload_manager": bootstrap["overload_manager"],
    }


class Target:
    def __init__(self, peer: peers.Peer) -> None:
        self.peer = peer
        self.runs: list[float] = []

    def measure(self, seconds: float, connections: int) -> float:
        before = peers.cpu_seconds([self.peer.pid])
        run = peers.wrk(self.peer.url + "bench", {"Host": HOST}, seconds, connections)
        cpu = peers.cpu_seconds([self.peer.pid]) - before
        if run["non_2xx"] or run["socket_errors"]:
            raise RuntimeError(f"{self.peer.name}: not every answer was a 200: {run}")
        return cpu / max(run["requests"], 1) * 1e6


def start(work: Path, names: list[str]) -> tuple[peers.Peer, dict[str, Target]]:
    up_port = free_port()
    upstream = peers.start_nginx(
        "upstream", peers.nginx_upstream_config(up_port, work / "upstream"), work, up_port
    )
    targets: dict[str, Target] = {}
    try:
        port, admin = free_port(), free_port()
        config = peers.envoy_config(port, admin, up_port)
        targets[BASELINE] = Target(peers.start_envoy(BASELINE, config, work, port))
        for name in names:
            targets[name] = Target(_start_variant(name, work, up_port))
    except BaseException:
        for target in targets.values():
            target.peer.stop()
        upstream.stop()
        raise
    return upstream, targets


def _start_variant(name: str, work: Path, upstream: int, attempts: int = 3) -> peers.Peer:
    """The Envoy of one variant; on a port another process took meanwhile (the machine is
    shared), again on other free ports."""
    for attempt in range(attempts):
        port, admin = free_port(), free_port()
        data = static_config(port, admin, upstream)
        if name != REFERENCE:
            VARIANTS[name](data)
        file_name = f"{name.replace(' ', '-')}-{attempt}"
        try:
            return peers.start_envoy(file_name, json.dumps(data), work, port)
        except TimeoutError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def run(seconds: float, rounds: int, connections: int, only: list[str]) -> dict[str, Any]:
    names = [REFERENCE, *(only or VARIANTS)]
    started, load_start = peers.now(), peers.load_average()
    with tempfile.TemporaryDirectory(prefix="gw-bench-pieces-") as tmp:
        upstream, targets = start(Path(tmp), names)
        try:
            for target in targets.values():
                target.measure(1, connections)
            order = list(targets)
            for n in range(rounds):
                rotated = order[n % len(order) :] + order[: n % len(order)]
                for name in rotated:
                    targets[name].runs.append(targets[name].measure(seconds, connections))
                print(f"round {n + 1}: " + ", ".join(
                    f"{k} {t.runs[-1]:.1f}" for k, t in targets.items()), flush=True)  # fmt: skip
        finally:
            for target in targets.values():
                target.peer.stop()
            upstream.stop()
    return {
        **peers.run_record("dataplane_pieces", started, load_start),
        "settings": {"seconds": seconds, "rounds": rounds, "connections": connections},
        "variants": summarize(targets),
    }


def summarize(targets: dict[str, Target]) -> dict[str, Any]:
    ref, base = targets[REFERENCE].runs, targets[BASELINE].runs
    out: dict[str, Any] = {}
    for name, target in targets.items():
        to_gw = [x / y for x, y in zip(target.runs, ref, strict=True)]
        to_envoy = [x / y for x, y in zip(target.runs, base, strict=True)]
        out[name] = {
            "cpu_us_per_req": round(statistics.median(target.runs), 2),
            "vs_gw": round(statistics.median(to_gw), 3),
            "vs_gw_range": [round(min(to_gw), 3), round(max(to_gw), 3)],
            "vs_envoy": round(statistics.median(to_envoy), 3),
            "runs": target.runs,
        }
    return out


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    lines = [
        "# Data plane: what each generated piece costs",
        "",
        f"`python -m bench.dataplane_pieces --duration {s['seconds']:g} --rounds "
        f"{s['rounds']}`, {result['started']}; wrk -t1 -c{s['connections']}; one worker per "
        "Envoy; static configs; the order rotated every round. Load average at start "
        f"{result['load_average']['start']}, at end {result['load_average']['end']}.",
        "",
        "`gw` is the generated listener as is; every other row changes one piece of it "
        "(`envoy` is the hand-written baseline). Ratios are medians of the per-round ratios "
        "of proxy CPU per request; below 1 is cheaper than `gw`.",
        "",
        "| variant | CPU µs/req | / gw (min–max) | / envoy |",
        "|---|---|---|---|",
    ]
    for name, v in result["variants"].items():
        low, high = v["vs_gw_range"]
        lines.append(
            f"| {name} | {v['cpu_us_per_req']:.1f} | {v['vs_gw']:.3f} ({low:.3f}–{high:.3f}) "
            f"| {v['vs_envoy']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=3, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--only", default="", help="comma-separated variants (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    only = [n for n in args.only.split(",") if n]
    result = run(args.duration, args.rounds, args.connections, only)
    report.write_part(args.out, "dataplane_pieces", result, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
