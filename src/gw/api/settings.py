"""Settings (`gw.vendor.io/v1`, object `default` in `gw-system`): installation-wide options.

Only the fields gw acts on are typed. The established gateway's other top-level fields are
accepted (so an existing Settings manifest loads) and kept as plain data.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from gw.api.duration import Duration
from gw.api.extproc import ExtProcSettings
from gw.api.meta import Model, Resource, ResourceRef
from gw.api.ratelimit import RateLimitServerSettings, RateLimitServiceSettings


class ExtAuthHttpRequest(Model):
    allowed_headers: list[str] = []
    headers_to_add: dict[str, str] = {}
    allowed_headers_regex: list[str] = []


class ExtAuthHttpResponse(Model):
    allowed_upstream_headers: list[str] = []
    allowed_client_headers: list[str] = []
    allowed_upstream_headers_to_append: list[str] = []


class ExtAuthHttpService(Model):
    """`httpService`: ask the server over plain HTTP (a custom auth server) instead of gRPC."""

    path_prefix: str = ""
    request: ExtAuthHttpRequest | None = None
    response: ExtAuthHttpResponse | None = None


class ExtAuthGrpcService(Model):
    authority: str | None = None


class ExtAuthRequestBody(Model):
    max_request_bytes: int | None = None
    allow_partial_message: bool = False
    pack_as_bytes: bool = False


class ExtAuthSettings(Model):
    extauthz_server_ref: ResourceRef | None = None
    http_service: ExtAuthHttpService | None = None
    grpc_service: ExtAuthGrpcService | None = None
    request_timeout: Duration = "200ms"
    failure_mode_allow: bool = False
    request_body: ExtAuthRequestBody | None = None
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


class DirectoryConfigSource(Model):
    """The folder store (`gw up DIR`, `gw controlplane --dir DIR`): what reading one
    manifest file may cost. A file beyond a limit is an input error (its resources are
    `Rejected` and keep serving their last accepted versions), never a stall of the control
    plane. The defaults fit any folder that would also apply to a cluster: the orchestrator's
    API server takes requests up to 3 MiB.

    `directory` is the established field that names the folder; gw serves the folder given
    on its command line, and a Settings that sets it gets a warning saying so.
    """

    directory: str | None = None
    #: Larger files are refused without being read.
    max_file_bytes: int = Field(default=4 * 1024 * 1024, ge=1)
    #: Documents in one file, `kind: List` items included.
    max_documents: int = Field(default=10_000, ge=1)
    #: Values the YAML aliases (`*name`) of one document may add when expanded; a scalar
    #: counts once per started KiB. Guards against alias bombs.
    max_alias_expansions: int = Field(default=10_000, ge=0)
    #: Mappings and lists nested in one document. At most 500, to stay clear of Python's
    #: recursion limit in whatever walks a resource.
    max_nesting_depth: int = Field(default=100, ge=1, le=500)


class SettingsSpec(Model):
    extauth: ExtAuthSettings | None = None
    dev_mode: bool = False
    discovery_namespace: str | None = None
    watch_namespaces: list[str] = []
    discovery: DiscoverySettings | None = None
    rbac: RbacSettings | None = None
    refresh_rate: Duration | None = None
    directory_config_source: DirectoryConfigSource | None = None
    ratelimit_server: RateLimitServerSettings | None = None
    ratelimit: RateLimitServiceSettings | None = None
    ext_proc_early: ExtProcSettings | None = None
    ext_proc: ExtProcSettings | None = None
    ext_proc_late: ExtProcSettings | None = None
    # Accepted, not acted on (the established gateway's other Settings families).
    gw: dict[str, Any] | None = None
    gateway: dict[str, Any] | None = None
    kubernetes_config_source: dict[str, Any] | None = None
    kubernetes_secret_source: dict[str, Any] | None = None
    kubernetes_artifact_source: dict[str, Any] | None = None
    #: Further auth servers, chosen per host or route by `extauth.customAuth.name`.
    named_extauth: dict[str, ExtAuthSettings] = {}
    observability_options: dict[str, Any] | None = None
    upstream_options: dict[str, Any] | None = None
    linkerd: bool | None = None


class Settings(Resource):
    API_VERSION: ClassVar[str] = "gw.vendor.io/v1"
    KIND: ClassVar[str] = "Settings"
    PLURAL: ClassVar[str] = "settings"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("st",)

    spec: SettingsSpec = SettingsSpec()
