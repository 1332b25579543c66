"""`Agent`: a scripted browser over httpx for the extauth failure tests (the whole login
also runs in headless Chromium, tests/support/browser_oidc.py).

It keeps cookies by name (as `set-cookie` says, Max-Age=0 deletes), sends them to the
gateway whatever their `Secure` or `Path` attribute, and talks to the gateway with the
virtual host's name in `Host`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from tests.support.wait import wait_until


class Agent:
    def __init__(self, gateway_url: str, host: str) -> None:
        self.gateway_url = gateway_url
        self.host = host
        self.cookies: dict[str, str] = {}

    def get(self, url: str, *, cookies: dict[str, str] | None = None) -> httpx.Response:
        """GET a path (or an absolute URL of the app) through the gateway."""
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        jar = self.cookies if cookies is None else cookies
        headers = {"host": self.host}
        if jar:
            headers["cookie"] = "; ".join(f"{k}={v}" for k, v in jar.items())
        response = httpx.get(self.gateway_url + path, headers=headers, timeout=15)
        for value in response.headers.get_list("set-cookie"):
            self.remember(value)
        return response

    def remember(self, set_cookie: str) -> None:
        pair, *attributes = [p.strip() for p in set_cookie.split(";")]
        name, _, value = pair.partition("=")
        if any(a.lower() == "max-age=0" for a in attributes):
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = value

    def start_login(self, path: str = "/private") -> httpx.Response:
        """The redirect to the provider for `path`, once the extauth server has its config
        (until then, checks answer 503)."""

        def redirected() -> httpx.Response | None:
            response = self.get(path)
            return response if response.status_code == 302 else None

        return wait_until(redirected, what=f"a login redirect for {path}")
