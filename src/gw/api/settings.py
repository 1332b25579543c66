"""Settings (`gw.vendor.io/v1`, object `default` in `gw-system`): installation-wide options.

The fields gw acts on are typed. The established gateway's other fields are accepted (so an
existing Settings manifest loads); stage 1 (`translator/gateway/settings.py`) gives every
one it does not act on a status saying so and why.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field

from gw.api.duration import Duration
from gw.api.extproc import ExtProcSettings
from gw.api.meta import Model, Resource, ResourceRef
from gw.api.names import label
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


class SessionPass(Model):
    """`sessionPass` (a gw extension, not a field of the established API): after the
    extauth server allows an OIDC session, Envoy lets that session's requests through by
    itself for `ttl` (at most 5m), with a signed cookie (docs/extauth.md#session-passes)."""

    ttl: Duration


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
    session_pass: SessionPass | None = None


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


class InvalidConfigPolicy(Model):
    """`replaceInvalidRoutes`: a route gw cannot build (or whose destination does not
    exist) answers `invalidRouteResponseCode` with `invalidRouteResponseBody`, and the rest
    of its VirtualService keeps updating."""

    replace_invalid_routes: bool = False
    invalid_route_response_code: int = Field(default=404, ge=0, le=999)
    invalid_route_response_body: str = (
        "gw has invalid configuration. Administrators should run `gwctl check` to find and "
        "fix config errors."
    )


class GlooOptions(Model):
    """`spec.gloo`, the control plane's section (the established name). What each field
    does under gw: `translator/gateway/settings.py` and docs/settings.md."""

    xds_bind_addr: str | None = None
    validation_bind_addr: str | None = None
    rest_xds_bind_addr: str | None = None
    proxy_debug_bind_addr: str | None = None
    circuit_breakers: dict[str, Any] | None = None
    endpoints_warming_timeout: Duration | None = None
    aws_options: dict[str, Any] | None = None
    invalid_config_policy: InvalidConfigPolicy | None = None
    disable_kubernetes_destinations: bool = False
    disable_grpc_web: bool | None = None
    disable_proxy_garbage_collection: bool | None = None
    regex_max_program_size: int | None = Field(default=None, ge=0, le=2**32 - 1)
    enable_rest_eds: bool | None = None
    failover_upstream_dns_polling_interval: Duration | None = None
    remove_unused_filters: bool | None = None
    log_transformation_request_response_info: bool | None = None
    transformation_escape_characters: bool | None = None
    istio_options: dict[str, Any] | None = None
    enable_auto_websocket_transformation_passthrough: bool | None = None


class GatewayValidation(Model):
    proxy_validation_server_addr: str | None = None
    validation_webhook_tls_cert: str | None = None
    validation_webhook_tls_key: str | None = None
    ignore_gloo_validation_failure: bool | None = None
    always_accept: bool | None = None
    allow_warnings: bool | None = None
    warn_route_short_circuiting: bool | None = None
    disable_transformation_validation: bool | None = None
    validation_server_grpc_max_size_bytes: int | None = None
    server_enabled: bool | None = None
    warn_missing_tls_secret: bool | None = None
    full_envoy_validation: bool | None = None


class GatewayOptions(Model):
    """`spec.gateway`: how Gateways and VirtualServices are read and validated."""

    validation_server_addr: str | None = None
    validation: GatewayValidation | None = None
    read_gateways_from_all_namespaces: bool | None = None
    always_sort_route_table_routes: bool | None = None
    compressed_proxy_spec: bool | None = None
    virtual_service_options: dict[str, Any] | None = None
    persist_proxy_spec: bool | None = None
    enable_gateway_controller: bool | None = None
    isolate_virtual_hosts_by_ssl_config: bool | None = None
    translate_empty_gateways: bool | None = None


def _namespace_or_empty(value: str | None) -> str | None:
    return label(value) if value else value


class SettingsSpec(Model):
    extauth: ExtAuthSettings | None = None
    dev_mode: bool = False
    #: Where discovered Upstreams are written (empty: the install's namespace): a
    #: namespace, since they are resources there.
    discovery_namespace: Annotated[str | None, AfterValidator(_namespace_or_empty)] = None
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
    gloo: GlooOptions | None = None
    #: `gloo` under this project's neutral name (read the same way; set only one).
    gw: GlooOptions | None = None
    gateway: GatewayOptions | None = None
    # Accepted so that an established manifest loads; stage 1 says what gw does with them.
    kubernetes_config_source: dict[str, Any] | None = None
    kubernetes_secret_source: dict[str, Any] | None = None
    kubernetes_artifact_source: dict[str, Any] | None = None
    #: Further auth servers, chosen per host or route by `extauth.customAuth.name`.
    named_extauth: dict[str, ExtAuthSettings] = {}
    observability_options: dict[str, Any] | None = None
    upstream_options: dict[str, Any] | None = None
    linkerd: bool | None = None
    secret_options: Any = None
    vault_secret_source: Any = None
    directory_secret_source: Any = None
    consul_kv_source: Any = None
    consul_kv_artifact_source: Any = None
    directory_artifact_source: Any = None
    watch_namespace_selectors: Any = None
    consul: Any = None
    consul_discovery: Any = None
    kubernetes: Any = None
    extensions: Any = None
    caching_server: Any = None
    ip_v4_only: Any = None
    console_options: Any = None
    knative: Any = None


class Settings(Resource):
    API_VERSION: ClassVar[str] = "gw.vendor.io/v1"
    KIND: ClassVar[str] = "Settings"
    PLURAL: ClassVar[str] = "settings"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("st",)

    spec: SettingsSpec = SettingsSpec()
