"""`Request.parse`: requests as an operator writes them."""

from __future__ import annotations

import pytest

from gw.explain.request import Request, RequestError


def test_url_gives_host_port_and_sni() -> None:
    r = Request.parse("get", "https://shop.example.com:8443/a?b=1", ["X-User: ann"])
    assert (r.method, r.authority, r.port, r.target, r.sni) == (
        "GET",
        "shop.example.com:8443",
        8443,
        "/a?b=1",
        "shop.example.com",
    )
    assert r.values("x-user") == ["ann"]
    assert r.values(":path") == ["/a?b=1"]


def test_host_header_cookies_and_sni_overrides() -> None:
    r = Request.parse(
        "GET", "https://127.0.0.1/", ["Host: api.example.com"], cookies=["s=1"], sni="x.test"
    )
    assert r.authority == "api.example.com" and r.port is None
    assert r.values("cookie") == ["s=1"] and r.sni == "x.test"
    assert Request.parse("GET", "https://127.0.0.1/").sni is None  # no SNI for an address


@pytest.mark.parametrize(
    ("url", "headers", "source", "message"),
    [
        ("ftp://x/", [], None, "'ftp://x/': only http and https URLs can be explained"),
        ("http://x/", ["nope"], None, "header 'nope' is not 'Name: value'"),
        ("http://x/", [], "not-an-ip", "--from 'not-an-ip' is not an IP address"),
    ],
)
def test_what_cannot_be_formed(
    url: str, headers: list[str], source: str | None, message: str
) -> None:
    with pytest.raises(RequestError) as error:
        Request.parse("GET", url, headers, source_ip=source)
    assert str(error.value) == message
