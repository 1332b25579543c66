"""What `explain` predicts for the traffic options, from configurations the translator makes
out of the goldens' manifests: fault aborts (every request, or a share of them), external
processors, CSRF, the buffer limit, CONNECT routes, the dynamic forward proxy and
clusterHeader (each also compared with a real Envoy by tests/e2e/test_explain.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gw.cli.offline import run
from gw.explain.explainer import explain
from gw.explain.explanation import Explanation
from gw.explain.request import Request
from gw.explain.served import Served

CASES = Path(__file__).resolve().parents[2] / "golden" / "cases"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Served]:
    """Each case's default proxy configuration, by case name."""
    out = {}
    for case in (
        "faults-abort-and-delay",
        "extproc-settings-processors",
        "csrf-vhost-route-destination",
        "buffer-vhost-and-route",
        "dynamicforwardproxy-route",
    ):
        folder = tmp_path_factory.mktemp(case)
        (folder / "case.yaml").write_text((CASES / f"{case}.in.yaml").read_text())
        _, result = run(folder, discovery=False)
        xds = result.served["gw-system~gateway-proxy"]
        messages = [m for by_name in xds.resources.values() for m in by_name.values()]
        out[case] = Served.from_messages(messages)
    return out


def ask(served: Served, method: str, url: str, *headers: str) -> Explanation:
    request = Request.parse(method, url, list(headers))
    return explain(served, request, port=8080, now=0.0)


def step(explanation: Explanation, kind: str) -> tuple[str, str, tuple[str, ...]]:
    found = next(f for f in explanation.filters if f.kind == kind)
    return found.summary, found.verdict, found.details


def test_an_abort_every_request_gets_is_the_answer(served: dict[str, Served]) -> None:
    out = ask(served["faults-abort-and-delay"], "GET", "http://any.example.org:8080/teapot")
    assert out.outcome.summary() == "418 fault filter abort"
    assert out.outcome.by == "fault"


def test_an_abort_a_share_of_requests_gets_is_a_chance(served: dict[str, Served]) -> None:
    out = ask(served["faults-abort-and-delay"], "GET", "http://any.example.org:8080/petstore")
    assert out.outcome.action == "forward"
    summary, verdict, details = step(out, "fault")
    assert verdict == "may respond 503 fault filter abort (2.5% of requests)"
    assert details == (
        "delays 5.3% of requests by 5000 ms",
        "aborts 2.5% of requests with 503",
    )
    assert out.may_answer(503, "fault filter abort")
    assert not out.may_answer(418, "fault filter abort")


def test_a_route_without_faults_passes_the_filter(served: dict[str, Served]) -> None:
    out = ask(served["faults-abort-and-delay"], "GET", "http://any.example.org:8080/")
    found = next(f for f in out.filters if f.kind == "fault")
    assert not found.acts and found.summary == "no fault on this route"


def test_external_processors_see_the_request(served: dict[str, Served]) -> None:
    out = ask(served["extproc-settings-processors"], "GET", "http://any.example.org:8080/")
    processors = [f for f in out.filters if f.kind == "ext_proc"]
    assert [f.verdict for f in processors] == ["asks the external processor"] * 3
    assert processors[0].details[1] == "if it cannot be reached, Envoy answers 500"
    assert out.asks_a_processor()
    assert out.outcome.action == "forward"  # what the processors do is theirs to decide


def test_a_route_turning_a_processor_off(served: dict[str, Served]) -> None:
    out = ask(served["extproc-settings-processors"], "GET", "http://any.example.org:8080/quiet")
    processors = [f for f in out.filters if f.kind == "ext_proc"]
    assert [(f.name, f.acts) for f in processors if not f.acts] == [("gw.ext_proc.regular", False)]
    assert sum(f.acts for f in processors) == 2


def test_csrf_refuses_an_unsafe_request_from_another_origin(served: dict[str, Served]) -> None:
    case = served["csrf-vhost-route-destination"]
    url = "http://any.example.org:8080/"
    refused = ask(case, "POST", url, "Origin: http://evil.example.org")
    assert refused.outcome.summary() == "403 Invalid origin"
    assert ask(case, "POST", url).outcome.summary() == "403 Invalid origin"  # no origin at all
    listed = ask(case, "POST", url, "Origin: https://shop.example.com")  # additionalOrigins
    assert listed.outcome.action == "forward"
    same = ask(case, "POST", url, "Origin: http://any.example.org:8080")
    assert same.outcome.action == "forward"
    assert ask(case, "GET", url, "Origin: http://evil.example.org").outcome.action == "forward"
    off = ask(case, "POST", "http://any.example.org:8080/open", "Origin: http://evil.example.org")
    assert off.outcome.action == "forward"


def test_the_buffer_limit_is_named(served: dict[str, Served]) -> None:
    case = served["buffer-vhost-and-route"]
    out = ask(case, "POST", "http://any.example.org:8080/api/pets/1")
    summary, verdict, _ = step(out, "buffer")
    assert summary == "holds the whole request body first (at most 10485760 bytes)"
    assert verdict == "passes"
    stream = ask(case, "POST", "http://any.example.org:8080/stream")
    assert not next(f for f in stream.filters if f.kind == "buffer").acts


def test_the_dynamic_forward_proxy_connects_where_the_request_says(
    served: dict[str, Served],
) -> None:
    case = served["dynamicforwardproxy-route"]
    own = ask(case, "GET", "http://foo:8080/")
    assert [d.endpoints for d in own.outcome.destinations] == [("foo:8080",)]
    named = ask(case, "GET", "http://foo:8080/rewrite", "x-rewrite-me: backend.test")
    assert named.outcome.destinations[0].endpoints == ("backend.test:80",)
    fixed = ask(case, "GET", "http://foo:8080/fixed")
    assert fixed.outcome.destinations[0].endpoints == ("127.0.0.1:9001",)


def test_cluster_header_names_the_cluster(served: dict[str, Served]) -> None:
    case = served["dynamicforwardproxy-route"]
    missing = ask(case, "GET", "http://foo:8080/by-cluster")
    assert missing.outcome.summary() == "503"
    unknown = ask(case, "GET", "http://foo:8080/by-cluster", "x-cluster: nope_default")
    assert unknown.outcome.destinations[0].note == "not served: Envoy answers 503"


def test_connect_requests_take_connect_routes_only(served: dict[str, Served]) -> None:
    case = served["dynamicforwardproxy-route"]
    out = ask(case, "CONNECT", "http://other.test:443")
    assert out.route is not None and out.route.matcher == "CONNECT requests"
    assert out.outcome.destinations[0].endpoints == ("other.test:443",)
    assert ask(case, "GET", "http://other.test:8080/").outcome.summary() == "404"
