"""Benchmark: the floor of an ext_authz check, by transport: Envoy asking a Python server
that answers every check with a constant "allow", over gRPC (as gw's extauth server does:
grpc.aio on uvloop) and over HTTP/1.1 (a bare asyncio protocol on uvloop), against the same
listener without ext_authz. It measures what any check costs before gw's code runs.

Run from the repository root: `python -m bench.authz_transport [--duration 5] [--rounds 3]`.
It writes `bench/results/authz_transport.json` and `.md`. Envoy (static config, one
worker) answers `200 ok` itself; CPU per request of Envoy and of the server process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.ports import free_port
from tests.support.processes import Process

from bench import peers, report
from bench.report import RESULTS

GRPC_SERVER = """
import sys, uvloop, grpc
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc
from google.rpc import code_pb2, status_pb2
OK = external_auth_pb2.CheckResponse(status=status_pb2.Status(code=code_pb2.OK))
class Allow(external_auth_pb2_grpc.AuthorizationServicer):
    async def Check(self, request, context):
        return OK
async def main():
    server = grpc.aio.server()
    external_auth_pb2_grpc.add_AuthorizationServicer_to_server(Allow(), server)
    server.add_insecure_port(f"127.0.0.1:{sys.argv[1]}")
    await server.start()
    await server.wait_for_termination()
uvloop.run(main())
"""
HTTP_SERVER = """
import asyncio, sys, uvloop
OK = b"HTTP/1.1 200 OK\\r\\ncontent-length: 0\\r\\n\\r\\n"
class Allow(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""
    def data_received(self, data):
        self.buffer += data
        while (end := self.buffer.find(b"\\r\\n\\r\\n")) >= 0:  # checks carry no body
            self.buffer = self.buffer[end + 4 :]
            self.transport.write(OK)
async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Allow, "127.0.0.1", int(sys.argv[1]))
    await server.serve_forever()
uvloop.run(main())
"""
SCENARIOS = ("plain", "grpc", "http")
DIRECT = "direct_response: {status: 200, body: {inline_string: ok}}"


def _authz(service: str) -> str:
    return f"""
          - name: envoy.filters.http.ext_authz
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz
              transport_api_version: V3
              {service}"""


def _cluster(name: str, port: int, http2: bool) -> str:
    h2 = (
        """
    typed_extension_protocol_options:
      envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
        "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
        explicit_http_config: {http2_protocol_options: {}}"""
        if http2
        else ""
    )
    address = f"{{socket_address: {{address: 127.0.0.1, port_value: {port}}}}}"
    return f"""
  - name: {name}
    type: STATIC
    connect_timeout: 5s{h2}
    load_assignment:
      cluster_name: {name}
      endpoints: [{{lb_endpoints: [{{endpoint: {{address: {address}}}}}]}}]"""


def envoy_config(ports: dict[str, int], admin: int, grpc: int, http: int) -> str:
    listeners = (
        peers.envoy_listener("plain", ports["plain"], DIRECT)
        + peers.envoy_listener(
            "grpc",
            ports["grpc"],
            DIRECT,
            filters=_authz("grpc_service: {envoy_grpc: {cluster_name: authz_grpc}, timeout: 5s}"),
        )
        + peers.envoy_listener(
            "http",
            ports["http"],
            DIRECT,
            filters=_authz(
                "http_service: {server_uri: {uri: 'http://authz', cluster: authz_http, "
                "timeout: 5s}}"
            ),
        )
    )
    clusters = (
        "\n  clusters:" + _cluster("authz_grpc", grpc, True) + _cluster("authz_http", http, False)
    )
    return peers.envoy_static(admin, listeners).replace(
        "static_resources:", "static_resources:" + clusters, 1
    )


def run(seconds: float, rounds: int, connections: int) -> dict[str, Any]:
    started, load_start = peers.now(), peers.load_average()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in SCENARIOS}
    with tempfile.TemporaryDirectory(prefix="gw-bench-transport-") as tmp:
        work = Path(tmp)
        servers: dict[str, Process] = {}
        envoy = None
        try:
            ports = {name: free_port() for name in (*SCENARIOS, "grpc-server", "http-server")}
            for kind, code in (("grpc", GRPC_SERVER), ("http", HTTP_SERVER)):
                script = work / f"{kind}_server.py"
                script.write_text(code)
                port = str(ports[f"{kind}-server"])
                servers[kind] = Process(
                    [sys.executable, str(script), port], {}, work / f"{kind}.log"
                )
            config = envoy_config(ports, free_port(), ports["grpc-server"], ports["http-server"])
            envoy = peers.start_envoy("envoy", config, work, ports["plain"])
            for name in SCENARIOS:  # warm up (and the servers are up once this answers 200)
                peers.wrk(f"http://127.0.0.1:{ports[name]}/", {}, 1, connections)
            for _ in range(rounds):
                for name in SCENARIOS:
                    pids = {"envoy": [envoy.pid]}
                    if name in servers:
                        pids["server"] = [servers[name].popen.pid]
                    before = {k: peers.cpu_seconds(v) for k, v in pids.items()}
                    done = peers.wrk(f"http://127.0.0.1:{ports[name]}/", {}, seconds, connections)
                    if done["non_2xx"] or done["socket_errors"]:
                        raise RuntimeError(f"{name}: not every answer was a 200: {done}")
                    n = max(done["requests"], 1)
                    cpu = {k: (peers.cpu_seconds(v) - before[k]) / n * 1e6 for k, v in pids.items()}
                    runs[name].append({"rps": done["rps"], "p99_ms": done["p99_ms"], "cpu_us": cpu})
                    print(f"{name:6} {done['rps']:8.0f} req/s  cpu {cpu}", flush=True)
        finally:
            if envoy is not None:
                envoy.stop()
            for server in servers.values():
                server.stop()
    summary = {
        name: {
            "rps": round(statistics.median(r["rps"] for r in mine)),
            "p99_ms": round(statistics.median(r["p99_ms"] for r in mine), 2),
            "cpu_us": {
                k: round(statistics.median(r["cpu_us"][k] for r in mine), 1)
                for k in mine[0]["cpu_us"]
            },
        }
        for name, mine in runs.items()
    }
    return {
        **peers.run_record("authz_transport", started, load_start),
        "settings": {"seconds": seconds, "rounds": rounds, "connections": connections},
        "summary": summary,
        "runs": runs,
    }


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    lines = [
        "# The floor of an ext_authz check, by transport",
        "",
        f"`python -m bench.authz_transport --duration {s['seconds']:g} --rounds {s['rounds']}`, "
        f"{result['started']}; wrk -t1 -c{s['connections']}; Envoy answers `200 ok` itself, "
        "after asking a Python server that always allows; medians over the rounds. Load "
        f"average at start {result['load_average']['start']}, at end "
        f"{result['load_average']['end']}.",
        "",
        "| scenario | req/s | p99 ms | Envoy CPU µs/req | server CPU µs/req |",
        "|---|---|---|---|---|",
    ]
    for name, data in result["summary"].items():
        cpu = data["cpu_us"]
        lines.append(
            f"| {name} | {data['rps']:,} | {data['p99_ms']:.2f} | {cpu['envoy']:.1f} | "
            f"{cpu.get('server', 0.0):.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.duration, args.rounds, args.connections)
    report.write_part(args.out, "authz_transport", result, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
