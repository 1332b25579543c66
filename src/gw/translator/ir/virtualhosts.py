"""A virtual host: one VirtualService on one listener, its routes and its options."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.cors import CorsPolicy
from gw.translator.ir.extauth import ExtAuth, ExtAuthServer
from gw.translator.ir.extproc import ExtProcServer
from gw.translator.ir.headers import HeaderManipulation
from gw.translator.ir.jwt import JwtVerification
from gw.translator.ir.ratelimit import RateLimits, RateLimitServer
from gw.translator.ir.rbac import Rbac
from gw.translator.ir.retries import RetryPolicy
from gw.translator.ir.routes import Route
from gw.translator.ir.source import SourceRef
from gw.translator.ir.tls import TlsTermination
from gw.translator.ir.traffic import HostTraffic
from gw.translator.ir.transform import StagedTransformations


@dataclass(frozen=True, slots=True, kw_only=True)
class VirtualHost:
    """One VirtualService on one listener. `name` is Envoy-safe: `<namespace>_<name>`.

    `tls` is set for virtual hosts on the HTTPS listener."""

    name: str
    source: SourceRef
    domains: tuple[str, ...]
    routes: tuple[Route, ...]
    transformations: StagedTransformations | None = None
    headers: HeaderManipulation | None = None
    tls: TlsTermination | None = None
    #: The JWT check after the extauth filter (`jwt`, `jwtStaged.afterExtAuth`).
    jwt: JwtVerification | None = None
    #: The JWT check before the extauth filter (`jwtStaged.beforeExtAuth`).
    jwt_before_extauth: JwtVerification | None = None
    rbac: Rbac | None = None
    extauth: ExtAuth | None = None
    #: Set (from Settings) when the host or one of its routes uses extauth.
    extauth_server: ExtAuthServer | None = None
    retries: RetryPolicy | None = None
    cors: CorsPolicy | None = None
    ratelimit: RateLimits | None = None
    #: Set (from Settings) when the host or one of its routes has rate limits.
    ratelimit_server: RateLimitServer | None = None
    #: CSRF, buffer and ext_proc settings, attempt counts.
    traffic: HostTraffic | None = None
    #: The Settings' external processors (every host gets them), by variant; None: none.
    ext_proc_servers: tuple[ExtProcServer, ...] | None = None

    # The three below are asked of every host by several filters of each listener: plain
    # loops, the host's own block first, then each route's.

    @property
    def uses_extauth(self) -> bool:
        """True when some request on this host may be sent to the extauth server."""
        if self.extauth is not None and self.extauth.active:
            return True
        for route in self.routes:
            if route.extauth is not None and route.extauth.active:
                return True
        return False

    @property
    def uses_global_ratelimit(self) -> bool:
        """True when some request on this host may be sent to the rate-limit server."""
        if self.ratelimit is not None and self.ratelimit.has_global:
            return True
        for route in self.routes:
            if route.ratelimit is not None and route.ratelimit.has_global:
                return True
        return False

    @property
    def uses_local_ratelimit(self) -> bool:
        if self.ratelimit is not None and self.ratelimit.local is not None:
            return True
        for route in self.routes:
            if route.ratelimit is not None and route.ratelimit.local is not None:
                return True
        return False
