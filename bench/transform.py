"""Benchmark: a route whose transformation runs as a Lua script, the same route with a
transformation Envoy's header filters serve, and the same route without any.

Run from the repository root: `python -m bench.transform [--duration 2] [--reps 9]`. It
writes `bench/results/transform.json` and `bench/results/transform.md`.

One `gw up` serves four virtual services routing to the same upstream (an Envoy answering
`200 hello` by itself), measured side by side, interleaved, with the order rotated every
repetition (only ratios within one run mean anything on a small, shared machine):

- `gw-lua`: request templates of the established guides, compiled to Lua: the path chosen
  with `{% if header("foo") == "bar" %}`, a header from an extractor with a regex, and a
  base64-decoded substring;
- `gw-lua-response`: the same, and a response header from `{% if header(":status") ...
  %}{{ request_header() }}{% endif %}` (a second script hook, on the response, reading
  the request headers from Envoy);
- `gw-native`: a header from a regex extractor (Envoy's header_to_metadata and
  header_mutation, no script);
- `gw-plain`: no transformation.

The goal: the Lua path costs less than 1.5 times the plain route's proxy CPU per request,
with request templates only and with a response template too.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx
import yaml
from tests.support.ports import free_port
from tests.support.processes import GwUp
from tests.support.wait import wait_until

from bench import peers, report
from bench.jwt import (
    Target,
    arguments,
    envoy_child,
    finish,
    measure,
    run_wrk,
    scenario_rows,
    upstream_config,
)

RESULTS = report.RESULTS
SCENARIOS = ("gw-lua", "gw-lua-response", "gw-native", "gw-plain")
GOAL = 1.5

REQUEST_TEMPLATE = {
    "requestTransformation": {
        "transformationTemplate": {
            "extractors": {
                "tenant": {"header": "x-user", "regex": ".*tenant=([a-z]+).*", "subgroup": 1}
            },
            "headers": {
                ":path": {
                    "text": '{% if header("foo") == "bar" %}/post{% else %}'
                    '{{ header(":path") }}{% endif %}'
                },
                "x-tenant": {"text": "{{ tenant }}"},
                "x-decoded": {"text": '{{ substring(base64_decode(header("x-token")), 4) }}'},
            },
        }
    }
}
RESPONSE_TEMPLATE = {
    **REQUEST_TEMPLATE,
    "responseTransformation": {
        "transformationTemplate": {
            "headers": {
                "x-asked": {
                    "text": '{% if header(":status") == "200" %}'
                    '{{ request_header("x-user") }}{% endif %}'
                }
            }
        }
    },
}
NATIVE_TEMPLATE = {
    "requestTransformation": {
        "transformationTemplate": {
            "extractors": {
                "tenant": {"header": "x-user", "regex": ".*tenant=([a-z]+).*", "subgroup": 1}
            },
            "headers": {"x-tenant": {"text": "{{ tenant }}"}},
        }
    }
}
HEADERS = {"x-user": "name=ann;tenant=acme", "x-token": "dXNlcjphbm4="}


def gw_manifests(upstream_port: int) -> list[dict[str, Any]]:
    to_upstream = {"single": {"upstream": {"name": "hello", "namespace": "gw-system"}}}

    def vs(name: str, transformations: dict[str, Any] | None) -> dict[str, Any]:
        host: dict[str, Any] = {
            "domains": [f"{name}.bench"],
            "routes": [{"matchers": [{"prefix": "/"}], "routeAction": to_upstream}],
        }
        if transformations:
            host["options"] = {"transformations": transformations}
        return {
            "apiVersion": "gateway.vendor.io/v1",
            "kind": "VirtualService",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"virtualHost": host},
        }

    upstream = {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Upstream",
        "metadata": {"name": "hello", "namespace": "gw-system"},
        "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": upstream_port}]}},
    }
    return [
        upstream,
        vs("lua", REQUEST_TEMPLATE),
        vs("lua-response", RESPONSE_TEMPLATE),
        vs("native", NATIVE_TEMPLATE),
        vs("plain", None),
    ]


def check_answers(targets: dict[str, Target]) -> None:
    """Each scenario answers 200, and the transformations happen (a response header)."""
    for name, target in targets.items():
        response = httpx.get(target.url, headers=target.headers, timeout=5)
        assert response.status_code == 200, (name, response.status_code, response.text)
    target = targets["gw-lua-response"]
    answered = httpx.get(target.url, headers=target.headers, timeout=5)
    assert answered.headers.get("x-asked") == HEADERS["x-user"], answered.headers


def summarize(targets: dict[str, Target], load_at_start: list[float]) -> dict[str, Any]:
    def ratio(a: str, b: str) -> dict[str, float]:
        pairs = list(zip(targets[a].runs, targets[b].runs, strict=True))
        keys = ("rps", "p50_ms", "p99_ms", "cpu_us_per_req")
        return {k: round(statistics.median(x[k] / y[k] for x, y in pairs), 3) for k in keys}

    def cpu_spread(a: str) -> list[float]:
        """The CPU ratio to the plain route in each repetition, lowest to highest."""
        pairs = zip(targets[a].runs, targets["gw-plain"].runs, strict=True)
        return sorted(round(x["cpu_us_per_req"] / y["cpu_us_per_req"], 3) for x, y in pairs)

    ratios = {
        "gw-lua / gw-plain": ratio("gw-lua", "gw-plain"),
        "gw-lua-response / gw-plain": ratio("gw-lua-response", "gw-plain"),
        "gw-native / gw-plain": ratio("gw-native", "gw-plain"),
        "gw-lua / gw-native": ratio("gw-lua", "gw-native"),
    }
    cpu = max(
        ratios[f"{name} / gw-plain"]["cpu_us_per_req"] for name in ("gw-lua", "gw-lua-response")
    )
    return {
        "scenarios": {
            name: {
                "runs": t.runs,
                "median": {k: round(statistics.median(r[k] for r in t.runs), 3) for k in t.runs[0]},
            }
            for name, t in targets.items()
        },
        "ratios": ratios,
        "cpu_ratio_by_repetition": {
            f"{name} / gw-plain": cpu_spread(name) for name in ("gw-lua", "gw-lua-response")
        },
        "load_average_at_start": load_at_start,
        "goal": {
            "text": f"the Lua path under {GOAL}x the plain route's proxy CPU per request "
            "(request templates, and with a response template too)",
            "met": cpu < GOAL,
        },
    }


def markdown(result: dict[str, Any]) -> str:
    s, host = result["settings"], result["machine"]
    lines = [
        "# Transformation benchmark",
        "",
        f"`python -m bench.transform` on {host['date']}, {host['cpus']} CPUs, Envoy "
        f"{host['envoy']}. wrk -t1 -c{s['connections']}, {s['seconds']}s per run, {s['reps']} "
        "interleaved repetitions (order rotated); medians. One `gw up` (one Envoy worker) "
        "serves the four virtual services; the upstream is an Envoy answering by itself. CPU "
        "is the proxy process's own time per request.",
        "",
        *scenario_rows(result["scenarios"]),
    ]
    goal = result["goal"]
    spread = result["cpu_ratio_by_repetition"]
    lines += [
        "",
        "Ratios: the median over repetitions of the ratio within each repetition.",
        "",
        *report.ratio_table(result["ratios"]),
        "",
        "CPU per request against the plain route, each repetition (lowest to highest):",
        "",
        *(f"- {name}: {', '.join(f'{r:.2f}' for r in runs)}" for name, runs in spread.items()),
        "",
        f"Load average (1, 5, 15 min) at the start {result['load_average_at_start']}, "
        f"at the end {host['load_average_at_write']}.",
        "",
        f"Goal — {goal['text']}: **{'met' if goal['met'] else 'not met'}** "
        f"({result['ratios']['gw-lua / gw-plain']['cpu_us_per_req']:.2f}x; with a response "
        f"template too: {result['ratios']['gw-lua-response / gw-plain']['cpu_us_per_req']:.2f}x).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = arguments(__doc__, argv)
    with tempfile.TemporaryDirectory(prefix="gw-bench-") as tmp:
        work = Path(tmp)
        hello_port = free_port()
        upstream = peers.start_envoy(
            "upstream", upstream_config(admin=free_port(), port=hello_port), work, hello_port
        )
        folder = work / "config"
        folder.mkdir()
        (folder / "bench.yaml").write_text(yaml.safe_dump_all(gw_manifests(hello_port)))
        gw = GwUp(folder, work / "home", "--envoy-log-level", "error", "--log-level", "warning")
        try:
            wait_until(
                lambda: (
                    httpx.get(gw.url, headers={"host": "lua.bench"}, timeout=1).status_code == 200
                ),
                what="gw to route",
            )
            pid = envoy_child(gw.process.popen.pid)
            targets = {
                f"gw-{name}": Target(gw.url + "/bench", {"host": f"{name}.bench", **HEADERS}, pid)
                for name in ("lua", "lua-response", "native", "plain")
            }
            check_answers(targets)
            for target in targets.values():  # warm up connections and the Lua states
                run_wrk(target, 1, args.connections)
            load_at_start = peers.load_average()
            measure(targets, SCENARIOS, args.reps, args.duration, args.connections)
        finally:
            gw.stop()
            upstream.stop()
    return finish("transform", args, summarize(targets, load_at_start), markdown)


if __name__ == "__main__":
    raise SystemExit(main())
