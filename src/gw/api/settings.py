"""Settings (`gw.vendor.io/v1`, object `default` in `gw-system`): installation-wide options.

Only the fields gw acts on are typed. The established gateway's other top-level fields are
accepted (so an existing Settings manifest loads) and kept as plain data.
"""

from __future__ import annotations

from typing import Any, ClassVar

from gw.api.duration import Duration
from gw.api.extproc import ExtProcSettings
from gw.api.meta import Model, Resource, ResourceRef
from gw.api.ratelimit import RateLimitServerSettings


class ExtAuthSettings(Model):
    extauthz_server_ref: ResourceRef | None = None
    request_timeout: Duration = "200ms"
    failure_mode_allow: bool = False
    status_on_error: int | None = None
    user_id_header: str | None = None
    clear_route_cache: bool = False
    transport_api_version: str | None = None
    stat_prefix: str | None = None


class UdsOptions(Model):
    """Upstream discovery: on unless `enabled: false`; `watchLabels` narrows the services."""

    enabled: bool | None = None
    watch_labels: dict[str, str] = {}


class DiscoverySettings(Model):
    uds_options: UdsOptions | None = None
    # Accepted, not acted on: gw does no function discovery.
    fds_mode: str | None = None
    fds_options: dict[str, Any] | None = None


class RbacSettings(Model):
    require_rbac: bool = False


class SettingsSpec(Model):
    extauth: ExtAuthSettings | None = None
    dev_mode: bool = False
    discovery_namespace: str | None = None
    watch_namespaces: list[str] = []
    discovery: DiscoverySettings | None = None
    rbac: RbacSettings | None = None
    refresh_rate: Duration | None = None
    ratelimit_server: RateLimitServerSettings | None = None
    ext_proc_early: ExtProcSettings | None = None
    ext_proc: ExtProcSettings | None = None
    ext_proc_late: ExtProcSettings | None = None
    # Accepted, not acted on (the established gateway's other Settings families).
    gw: dict[str, Any] | None = None
    gateway: dict[str, Any] | None = None
    kubernetes_config_source: dict[str, Any] | None = None
    kubernetes_secret_source: dict[str, Any] | None = None
    kubernetes_artifact_source: dict[str, Any] | None = None
    directory_config_source: dict[str, Any] | None = None
    named_extauth: dict[str, Any] | None = None
    observability_options: dict[str, Any] | None = None
    upstream_options: dict[str, Any] | None = None
    linkerd: bool | None = None


class Settings(Resource):
    API_VERSION: ClassVar[str] = "gw.vendor.io/v1"
    KIND: ClassVar[str] = "Settings"
    PLURAL: ClassVar[str] = "settings"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("st",)

    spec: SettingsSpec = SettingsSpec()
