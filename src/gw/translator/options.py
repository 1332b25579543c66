"""What the translator is told besides the resources: where the proxy listens and who it is.

These come from the command line or the install (never from the environment inside the
translator), so that the same snapshot and options always give the same output.
"""

from __future__ import annotations

from dataclasses import dataclass

from gw import defaults


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    namespace: str = defaults.NAMESPACE
    proxy_name: str = defaults.PROXY_NAME
    bind_address: str = defaults.PROXY_BIND
    http_port: int = defaults.HTTP_PORT
    https_port: int = defaults.HTTPS_PORT
    #: The time (Unix seconds) certificates are checked against; None skips expiry checks.
    #: Passed in, never read from a clock, so that translation stays a pure function.
    now: float | None = None
