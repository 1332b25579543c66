"""A corpus of hostile requests sent through Envoy on raw sockets: oversized and malformed
headers, header injection, path traversal, duplicate Host, absolute-URI request lines,
request-smuggling shapes. Each is answered by Envoy itself, or reaches the upstream only in
a harmless shape; the `gw echo` upstream reports what it received, so "harmless" is checked
on what arrived, not assumed.

The virtual host `pub.test` routes only `/public` to the upstream: no path trick may bring
a request for anything else (`/admin`) to it. Real `gw up`, Envoy and `gw echo`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

import pytest

from tests.support import raw_http
from tests.support.files import save
from tests.support.manifests import upstream, virtual_service
from tests.support.processes import Echo, GwUp
from tests.support.raw_http import Answer, get

pytestmark = pytest.mark.e2e

#: The name of the `gw echo` upstream behind `/public`.
ECHO = "public"


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GwUp]:
    work = tmp_path_factory.mktemp("hostile")
    echo = Echo(work, "public")
    folder = work / "config"
    folder.mkdir()
    save(
        folder / "pub.yaml",
        upstream("public", echo.port)
        + "---"
        + virtual_service("pub", "pub.test", "public", "/public"),
    )
    try:
        gw = GwUp(folder, work / "home")
        try:
            gw.wait_status("VirtualService default.pub", "Accepted")
            yield gw
        finally:
            gw.stop()
    finally:
        echo.stop()


def send(gw: GwUp, raw: bytes, answers: int = 1, *, to_the_end: bool = False) -> list[Answer]:
    return raw_http.send(gw.http_port, raw, answers, to_the_end=to_the_end)


def one(gw: GwUp, raw: bytes) -> Answer:
    return raw_http.one(gw.http_port, raw)


def assert_refused(answer: Answer, status: int) -> None:
    """Envoy answered by itself: the upstream never saw the request."""
    assert (answer.status, answer.echoed(ECHO)) == (status, None), answer


def test_a_plain_request_reaches_the_upstream(gw: GwUp) -> None:
    answer = one(gw, get("/public/x", "Host: pub.test"))
    assert answer.echoed(ECHO) is not None and answer.echoed(ECHO)["path"] == "/public/x"


# --- path traversal ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/public/../admin",
        "/public/./../admin",
        "/public/%2e%2e/admin",
        "/public/%2E%2E/admin",
        "//public/../admin",
        "/public/..;/admin",
        "/public/..\\admin",
        "/public/x/../../admin",
    ],
)
def test_dot_segments_are_resolved_before_routing(gw: GwUp, path: str) -> None:
    """`/admin` has no route: 404 from Envoy, never the `/public` upstream."""
    assert_refused(one(gw, get(path, "Host: pub.test")), 404)


@pytest.mark.parametrize(
    "path",
    ["/public/..%2fadmin", "/public/..%2Fadmin", "/public%2f..%2fadmin", "/public/..%5cadmin"],
)
def test_encoded_slashes_are_redirected_to_the_decoded_path(gw: GwUp, path: str) -> None:
    """Without this, `/public/..%2fadmin` went to the `/public` upstream, which decoded it
    to `/public/../admin` (found by this corpus; fixed in the listener settings)."""
    answer = one(gw, get(path, "Host: pub.test"))
    assert_refused(answer, 307)
    assert answer.headers["location"] == "/admin"
    assert_refused(one(gw, get("/admin", "Host: pub.test")), 404)


@pytest.mark.parametrize("path", ["/public/%252e%252e/admin", "/public/%2525252fadmin"])
def test_double_encoding_reaches_the_upstream_still_under_the_prefix(gw: GwUp, path: str) -> None:
    """Envoy decodes nothing but unreserved characters; the upstream's one decoding leaves
    `%2e%2e`, still under `/public`. (An upstream that decodes twice is open to this on its
    own, behind any proxy.)"""
    echoed = one(gw, get(path, "Host: pub.test")).echoed(ECHO)
    assert echoed is not None
    assert posixpath.normpath(echoed["path"]).startswith("/public/")


@pytest.mark.parametrize("path", ["/public/%00", "/public/a b", "/public/\x7f"])
def test_bad_bytes_in_the_path_are_refused(gw: GwUp, path: str) -> None:
    assert_refused(one(gw, get(path, "Host: pub.test")), 400)


# --- headers ----------------------------------------------------------------------------


def test_oversized_headers_are_refused(gw: GwUp) -> None:
    big = one(gw, get("/public/x", "Host: pub.test", "X-Big: " + "a" * 100_000))
    assert_refused(big, 431)
    many = one(gw, get("/public/x", "Host: pub.test", *[f"X-H{i}: v" for i in range(150)]))
    assert_refused(many, 431)
    long_uri = one(gw, get("/public/" + "a" * 70_000, "Host: pub.test"))
    assert_refused(long_uri, 431)


def test_header_injection_cannot_split_a_header(gw: GwUp) -> None:
    """A CR inside a value is dropped, a folded line joins its header: either way the
    upstream sees one header, never a second one made from the value."""
    cr = one(gw, get("/public/x", "Host: pub.test", "X-A: a\rX-Injected: b")).echoed(ECHO)
    assert cr is not None and "x-injected" not in cr["headers"]
    assert cr["headers"]["x-a"] == "aX-Injected: b"
    folded = one(gw, get("/public/x", "Host: pub.test", "X-A: a", " X-Injected: b")).echoed(ECHO)
    assert folded is not None and "x-injected" not in folded["headers"]
    assert_refused(one(gw, get("/public/x", "Host: pub.test", "X-A: a\x00b")), 400)
    assert_refused(one(gw, get("/public/x", "Host: pub.test", "X-A : b")), 400)


def test_headers_with_underscores_are_dropped(gw: GwUp) -> None:
    """Some upstreams read `x_user` as `x-user` (found by this corpus: they used to pass)."""
    echoed = one(gw, get("/public/x", "Host: pub.test", "X_User: admin", "X-Ok: 1")).echoed(ECHO)
    assert echoed is not None
    assert "x_user" not in echoed["headers"] and echoed["headers"]["x-ok"] == "1"


# --- Host -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines",
    [
        ("Host: pub.test", "Host: evil.test"),
        ("Host: evil.test", "Host: pub.test"),
        ("Host: evil@pub.test",),
    ],
)
def test_duplicate_or_userinfo_host_is_refused(gw: GwUp, lines: tuple[str, ...]) -> None:
    """400 from Envoy, whatever virtual hosts exist (`tests/reliability/
    test_listener_security.py` shows them refused next to a `*` virtual host)."""
    answer = one(gw, get("/public/x", *lines))
    assert_refused(answer, 400)
    assert answer.body == b"invalid Host header"


def test_absolute_uri_request_line_wins_over_host(gw: GwUp) -> None:
    """RFC 9112: the authority of an absolute-form target replaces Host."""
    echoed = one(gw, get("http://pub.test/public/x", "Host: evil.test")).echoed(ECHO)
    assert echoed is not None
    assert (echoed["headers"]["host"], echoed["path"]) == ("pub.test", "/public/x")
    assert_refused(one(gw, get("http://evil.test/public/x", "Host: pub.test")), 404)


def test_missing_host_and_old_protocols_are_refused(gw: GwUp) -> None:
    assert_refused(one(gw, get("/public/x")), 400)
    assert_refused(one(gw, get("/public/x", version="HTTP/1.0")), 426)
    assert_refused(one(gw, b"GET /public/x\r\n\r\n"), 426)  # HTTP/0.9
    assert_refused(one(gw, get("/public/x", "Host: pub.test").replace(b"GET", b"G(T")), 400)


# --- smuggling --------------------------------------------------------------------------

SMUGGLED = b"GET /admin HTTP/1.1\r\nHost: pub.test\r\nConnection: close\r\n\r\n"


def post(*lines: str, body: bytes = b"") -> bytes:
    return (
        "\r\n".join(["POST /public/x HTTP/1.1", "Host: pub.test", *lines, "", ""]).encode() + body
    )


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (
            post("Content-Length: 4", "Transfer-Encoding: chunked", body=b"0\r\n\r\n" + SMUGGLED),
            400,
        ),
        (post("Content-Length: 4", "Content-Length: 40", body=b"abcd"), 400),
        (post("Content-Length: 4", "Content-Length: 4", body=b"abcd"), 400),
        (post("Transfer-Encoding: xchunked", body=b"0\r\n\r\n" + SMUGGLED), 501),
        (post("Transfer-Encoding : chunked", body=b"0\r\n\r\n" + SMUGGLED), 400),
        (post("Transfer-Encoding: chunked, identity", body=b"0\r\n\r\n" + SMUGGLED), 501),
        (post("Transfer-Encoding: chunked", "Transfer-Encoding: identity", body=SMUGGLED), 501),
        (post("Transfer-Encoding: chunked", body=b"zz\r\nabc\r\n0\r\n\r\n" + SMUGGLED), 400),
    ],
    ids=[
        "CL+TE",
        "two different CL",
        "two equal CL",
        "TE xchunked",
        "TE space before colon",
        "TE chunked,identity",
        "TE twice",
        "bad chunk size",
    ],
)
def test_smuggling_shapes_are_refused_and_the_connection_closed(
    gw: GwUp, raw: bytes, status: int
) -> None:
    """Envoy answers the ambiguous request itself and closes: the bytes after it are never
    read as a second request."""
    answers = send(gw, raw, answers=2, to_the_end=True)
    assert len(answers) == 1, answers
    assert_refused(answers[0], status)


def test_a_request_after_a_chunked_body_is_routed_on_its_own(gw: GwUp) -> None:
    """Well-formed pipelining: the second request is routed by Envoy like any request (404
    for `/admin`), not passed through inside the first one's body."""
    first, second = send(gw, post("Transfer-Encoding: chunked", body=b"0\r\n\r\n" + SMUGGLED), 2)
    assert first.echoed(ECHO) is not None and first.echoed(ECHO)["body"] == ""
    assert_refused(second, 404)
