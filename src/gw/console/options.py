"""What the install tells the console: what this process can reach besides the control
plane's own state."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsoleOptions:
    #: The proxy's Envoy admin interface, when this process reaches it (`gw up`): the
    #: traffic page reads its statistics. None: no traffic numbers here.
    proxy_admin_url: str | None = None
    #: Where this process reaches the proxy's listeners, for explain's "send" button;
    #: None (the default): the console never sends anything.
    send_host: str | None = None
