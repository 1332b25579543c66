"""The Proxy: everything one proxy (an Envoy fleet sharing a role) is configured with, and
the configs of gw's own servers that go with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.clusters import Cluster
from gw.translator.ir.listeners import Listener
from gw.translator.ir.secrets import TlsSecret
from gw.wire.extauth import AuthConfig
from gw.wire.ratelimit import RateLimitConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class Proxy:
    """Everything one proxy (an Envoy fleet sharing a role) is configured with."""

    name: str
    namespace: str
    listeners: tuple[Listener, ...] = ()
    clusters: tuple[Cluster, ...] = ()
    secrets: tuple[TlsSecret, ...] = ()
    #: Served to the extauth server (role `extauth_role`), not to Envoy.
    auth_configs: tuple[AuthConfig, ...] = ()
    #: Served to the rate-limit server (role `ratelimit_role`), not to Envoy.
    rate_limit_configs: tuple[RateLimitConfig, ...] = ()

    @property
    def role(self) -> str:
        """The xDS snapshot key; Envoy announces it in its node metadata."""
        return f"{self.namespace}~{self.name}"

    @property
    def extauth_role(self) -> str:
        """The xDS snapshot key of the extauth servers."""
        return f"{self.namespace}~extauth"

    @property
    def ratelimit_role(self) -> str:
        """The xDS snapshot key of the rate-limit servers."""
        return f"{self.namespace}~ratelimit"
