"""A real OpenID Connect provider for the extauth tests: `oidc-provider-mock` (authlib)
as a process on a free loopback port. Its login page takes any subject; `login()` fills it
in over HTTP for tests that need no browser."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.support.ports import free_port
from tests.support.processes import Process
from tests.support.wait import wait_until


class OidcProvider:
    def __init__(self, workdir: Path, *args: str) -> None:
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.process = Process(
            [sys.executable, "-m", "oidc_provider_mock", "--port", str(self.port), *args],
            {**os.environ, "PYTHONWARNINGS": "ignore", "NO_COLOR": "1"},
            workdir / f"oidc-provider-{self.port}.log",
        )
        wait_until(
            lambda: httpx.get(self.issuer + "/.well-known/openid-configuration").is_success,
            what=f"the OIDC provider on {self.port}",
        )

    def set_user(self, sub: str, claims: dict[str, Any]) -> None:
        httpx.put(f"{self.issuer}/users/{sub}", json=claims).raise_for_status()

    def login(self, authorize_url: str, sub: str) -> str:
        """Sign in as `sub` on the provider's page; returns the callback URL it redirects
        the browser to (with `code` and `state`)."""
        page = httpx.get(authorize_url, timeout=10)
        assert page.status_code == 200, page.text
        answer = httpx.post(authorize_url, data={"sub": sub}, timeout=10)
        assert answer.status_code == 302, answer.text
        return str(answer.headers["location"])

    def stop(self) -> None:
        self.process.stop()
