"""How gwctl reaches an installation.

A folder install (`gw up`) leaves a state file, `$GW_HOME/up.json`, saying where the proxy,
the control plane admin server and the Envoy admin interface listen. `--admin-url` (or
`GW_ADMIN_URL`) points gwctl at a control plane directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx


class InstallError(Exception):
    """gwctl cannot reach or understand the installation; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Install:
    admin_url: str
    proxy_url: str | None = None
    proxy_https_url: str | None = None
    proxy_admin_url: str | None = None
    state: dict[str, Any] | None = None

    @classmethod
    def locate(cls, home: Path, admin_url: str | None = None) -> Install:
        state_path = home / "up.json"
        state: dict[str, Any] | None = None
        if state_path.exists():
            try:
                state = json.loads(state_path.read_text())
            except json.JSONDecodeError as exc:
                raise InstallError(
                    f"{state_path} is not valid JSON ({exc}); delete it and run `gw up` again"
                ) from None
        if admin_url:
            return cls(admin_url=admin_url.rstrip("/"), state=state)
        if state is None:
            raise InstallError(
                f"no gw installation found: {state_path} does not exist. Start one with "
                "`gw up DIR`, or point gwctl at a control plane with --admin-url"
            )
        return cls(
            admin_url=state["adminUrl"],
            proxy_url=state.get("proxyUrl"),
            proxy_https_url=state.get("proxyHttpsUrl"),
            proxy_admin_url=state.get("proxyAdminUrl"),
            state=state,
        )

    def admin(self, path: str) -> Any:
        """GET an admin endpoint and unwrap its envelope."""
        url = self.admin_url + path
        try:
            response = httpx.get(url, timeout=10)
        except httpx.HTTPError as exc:
            raise InstallError(
                f"cannot reach the gw control plane at {self.admin_url} ({exc}); "
                "is `gw up` running?"
            ) from None
        try:
            body = response.json()
        except ValueError:
            raise InstallError(f"{url} answered {response.status_code} with no JSON") from None
        if body.get("error"):
            raise InstallError(f"{url}: {body['error']}")
        return body.get("data")
