"""`passThroughAuth` of an AuthConfig: a service of the user's decides, over gRPC (Envoy's
`Authorization/Check`) or HTTP (a POST)."""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from gw.api.duration import Duration
from gw.api.meta import Model, ResourceRef


class BackoffStrategy(Model):
    base_interval: Duration | None = None
    max_interval: Duration | None = None


class RetryPolicy(Model):
    num_retries: int | None = None
    retry_back_off: BackoffStrategy | None = None


class PassThroughTls(Model):
    secret_ref: ResourceRef | None = None
    ssl_params: dict[str, Any] | None = None


class PassThroughGrpc(Model):
    address: str
    connection_timeout: Duration | None = None
    tls_config: PassThroughTls | None = None
    retry_policy: RetryPolicy | None = None


class HttpRequest(Model):
    allowed_headers: list[str] = []
    headers_to_add: dict[str, str] = {}
    pass_through_state: bool = False
    pass_through_filter_metadata: bool = False
    pass_through_body: bool = False


class HttpResponse(Model):
    allowed_upstream_headers: list[str] = []
    allowed_client_headers_on_denied: list[str] = []
    read_state_from_response: bool = False
    allowed_upstream_headers_to_overwrite: list[str] = []
    allowed_client_headers_on_success: list[str] = []


class ConnectionPool(Model):
    max_conns: int | None = None
    idle_timeout: Duration | None = None


class PassThroughHttp(Model):
    url: str
    request: HttpRequest | None = None
    response: HttpResponse | None = None
    connection_timeout: Duration | None = None
    tls_config: PassThroughTls | None = None
    response_header_timeout: Duration | None = None
    connection_pool: ConnectionPool | None = None


class PassThroughAuth(Model):
    grpc: PassThroughGrpc | None = None
    http: PassThroughHttp | None = None
    #: Passed to the service with every request, as it is (any JSON object).
    config: dict[str, JsonValue] | None = None
    failure_mode_allow: bool = False
