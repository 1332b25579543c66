"""What the translator is told besides the resources: where the proxy listens and who it is.

These come from the command line or the install (never from the environment inside the
translator), so that the same snapshot and options always give the same output.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    namespace: str = "gw-system"
    proxy_name: str = "gateway-proxy"
    bind_address: str = "::"
    http_port: int = 8080
    https_port: int = 8443
    #: The time (Unix seconds) certificates are checked against; None skips expiry checks.
    #: Passed in, never read from a clock, so that translation stays a pure function.
    now: float | None = None
