"""`ExtauthGateway`: `gw up` with its extauth server, an echo app (`app` in gw-system) and a
folder that tests add AuthConfigs, secrets and VirtualServices to, for the extauth tests of
every kind of check. Real processes on free loopback ports, stopped at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.support.extauth_manifests import extauth_backends, extauth_settings, protected_app
from tests.support.files import save
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

CLIENT_SECRET = "extauth-gateway-client-secret"


class ExtauthGateway:
    def __init__(self, work: Path, *, request_timeout: str = "5s", settings: str = "") -> None:
        """`settings` replaces the default Settings (extauth pointing at gw's server)."""
        self.work = work
        self.folder = work / "config"
        self.folder.mkdir()
        self.echo = Echo(work, "app")
        self.extauth_port = free_port()
        save(
            self.folder / "base.yaml",
            (settings or extauth_settings(request_timeout))
            + "---"
            + extauth_backends(self.extauth_port, self.echo.port, CLIENT_SECRET),
        )
        try:
            self.gw = GwUp(self.folder, work / "home", extauth_port=self.extauth_port)
        except BaseException:
            self.echo.stop()
            raise

    def write(self, name: str, manifests: str) -> None:
        save(self.folder / f"{name}.yaml", manifests)

    def guard(self, name: str, auth_config: str, domain: str | None = None) -> str:
        """A VirtualService `name` for `<name>.test` guarded by AuthConfig `auth_config` (in
        gw-system), once it serves; returns the domain."""
        domain = domain or f"{name}.test"
        self.write(f"vs-{name}", protected_app(name, domain, auth_config, "/public"))
        self.gw.wait_status(f"VirtualService default.{name}", "Accepted")
        wait_until(
            lambda: (
                "is not loaded" not in self.get(domain, "/public/x").text
                and "is not loaded" not in self.get(domain, "/").text
            ),
            what=f"the extauth server to get {auth_config}",
        )
        return domain

    def get(self, host: str, path: str = "/", **kwargs: Any) -> httpx.Response:
        return self.gw.get(path, host=host, **kwargs)

    def stop(self) -> None:
        self.gw.stop()
        self.echo.stop()
