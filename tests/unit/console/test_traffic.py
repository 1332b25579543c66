"""The traffic page's arithmetic: Envoy's `/stats?format=json` (as Envoy 1.40 answers it,
histograms included) read into samples, rates between samples, latencies, and the charts'
geometry; and the proxies page's ACK/NACK verdicts from the xDS server's connection data."""

from __future__ import annotations

from typing import Any

from gw.console import charts, proxies, traffic

QUANTILES = [0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 100]


def stats(total: int, e4xx: int, p50: float | None, p99: float | None) -> dict[str, Any]:
    """An answer of Envoy's admin, shaped as Envoy 1.40 shapes it."""
    values = [{"cumulative": 1.0, "interval": None} for _ in QUANTILES]
    values[2] = {"cumulative": 1.0, "interval": p50}
    values[6] = {"cumulative": 9.0, "interval": p99}
    return {
        "stats": [
            {"name": "cluster.echo.upstream_rq_total", "value": total},
            {"name": "cluster.echo.upstream_rq_4xx", "value": e4xx},
            {"name": "http.listener.downstream_rq_total", "value": total + 5},
            {
                "histograms": {
                    "supported_quantiles": QUANTILES,
                    "computed_quantiles": [
                        {"name": "cluster.echo.upstream_rq_time", "values": values}
                    ],
                }
            },
        ]
    }


def test_rates_and_latencies_between_samples() -> None:
    samples = [
        traffic.parse_stats(stats(100, 0, None, None), at=10.0),
        traffic.parse_stats(stats(120, 2, 1.5, 7.0), at=12.0),
        traffic.parse_stats(stats(120, 2, None, None), at=14.0),
        traffic.parse_stats(stats(3, 0, 2.0, 2.5), at=16.0),  # Envoy restarted: counters reset
    ]
    series = traffic.series(samples, "cluster.echo.", "upstream")
    assert series.rps == (10.0, 0.0, None)
    assert series.rps_4xx == (1.0, 0.0, None)
    assert series.rps_5xx == (0.0, 0.0, 0.0)  # never counted: none
    assert series.p50 == (1.5, None, 2.0) and series.p99 == (7.0, None, 2.5)
    assert series.latest == {"rps": 0.0, "4xx": 0.0, "5xx": 0.0, "p50": 2.0, "p99": 2.5}
    assert series.busy
    listener = traffic.series(samples, "http.listener.", "downstream")
    assert listener.rps == (10.0, 0.0, None)


def test_one_sample_gives_no_rate() -> None:
    series = traffic.series(
        [traffic.parse_stats(stats(5, 0, 1, 1), at=1)], "cluster.echo.", "upstream"
    )
    assert series.rps == () and not series.busy and series.latest["rps"] is None


def test_stat_names_write_colons_as_underscores() -> None:
    assert traffic.stat_name("orch-svc:ns-svc-80") == "orch-svc_ns-svc-80"


def test_a_chart_scales_to_its_top_and_breaks_on_unknown_values() -> None:
    chart = charts.chart(
        [("rps", [0.0, 5.0, None, 10.0, 10.0]), ("e4xx", [1.0])], width=40, height=12
    )
    assert chart.top == 10.0
    rps, e4xx = chart.lines
    # A lone point before the gap is dropped (a line needs two); the run after it is drawn.
    assert rps.segments == ("0.0,11.0 10.0,6.0", "30.0,1.0 40.0,1.0")
    assert e4xx.segments == ("40.0,10.0",)  # the newest value at the right edge


def test_an_empty_chart_has_a_top() -> None:
    assert charts.chart([("rps", [])]).top == 1.0


def test_ack_nack_and_waiting_per_type() -> None:
    connection = {
        "node": "proxy-1",
        "role": "gw-system~gateway-proxy",
        "peer": "ipv4:127.0.0.1:5000",
        "connectedAt": 1000.0,
        "types": {
            "envoy.config.cluster.v3.Cluster": {"sent": "a", "acked": "a", "applyMs": 1.5},
            "envoy.config.listener.v3.Listener": {
                "sent": "b",
                "acked": "a",
                "nack": {"version": "b", "message": "bad listener"},
            },
            "envoy.config.route.v3.RouteConfiguration": {"sent": "c", "acked": "b"},
            "envoy.config.endpoint.v3.ClusterLoadAssignment": {"sent": "", "acked": ""},
        },
    }
    (client,) = proxies.clients([connection], now=1125.0)
    verdicts = {t.type: (t.state, t.message) for t in client.types}
    assert verdicts == {
        "Cluster": ("ACK", ""),
        "Listener": ("NACK", "version b: bad listener"),
        "RouteConfiguration": ("waiting", ""),
        "ClusterLoadAssignment": ("requested", ""),
    }
    assert client.state == "NACK" and client.connected_for == "2m"


async def test_a_proxy_that_does_not_answer_is_said_so() -> None:
    from tests.support.ports import free_port

    sampler = traffic.Sampler(f"http://127.0.0.1:{free_port()}")  # nothing listens there
    await sampler.refresh()
    assert not sampler.samples
    assert sampler.error is not None
    assert sampler.error.startswith("the proxy's statistics could not be read: ")


async def test_no_admin_url_takes_no_sample() -> None:
    sampler = traffic.Sampler(None)
    await sampler.refresh()
    assert not sampler.samples and sampler.error is None
