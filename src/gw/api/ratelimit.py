"""Rate limits: the RateLimitConfig kind (`ratelimit.vendor.io/v1alpha1`), the options of
virtual hosts and routes (`rateLimitConfigs`, inline `ratelimit` / `ratelimitEarly` /
`ratelimitRegular`, `ratelimitBasic`, `localRatelimit`), and Settings `ratelimitServer` and
`ratelimit` (the descriptors inline actions are matched against).

Fields of the established API that gw does not act on are typed `Any` so that a manifest
using them still parses; stage 1 then refuses them with a status naming the field
(`translator/gateway/ratelimit.py`), which says more than "unknown field".
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model, Resource, ResourceRef, UInt32

Unit = Literal["SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"]


class RateLimit(Model):
    unit: Unit
    requests_per_unit: int = Field(ge=0)


class Descriptor(Model):
    """A node of the descriptor tree: `key` (and `value`; none matches any value, each
    value counted apart) with the limit of requests whose descriptor ends here."""

    key: str
    value: str | None = None
    rate_limit: RateLimit | None = None
    descriptors: list[Descriptor] = []
    weight: int = Field(default=0, ge=0)
    always_apply: bool = False


class GenericKey(Model):
    descriptor_value: str
    descriptor_key: str | None = None


class RequestHeaders(Model):
    header_name: str
    descriptor_key: str
    skip_if_absent: bool = False


class HeaderMatcher(Model):
    """One header condition of `headerValueMatch` (one of the `*Match` fields, or none:
    the header must be present)."""

    name: str
    exact_match: str | None = None
    regex_match: str | None = None
    prefix_match: str | None = None
    suffix_match: str | None = None
    present_match: bool | None = None
    invert_match: bool = False
    range_match: Any = None  # refused in stage 1


class HeaderValueMatch(Model):
    descriptor_value: str
    descriptor_key: str | None = None
    expect_match: bool = True
    headers: list[HeaderMatcher] = []


class NoFields(Model):
    """An action without settings (`remoteAddress: {}`, `destinationCluster: {}`): its
    presence is the setting."""


class Action(Model):
    """One descriptor entry a request produces. Exactly one field is set."""

    generic_key: GenericKey | None = None
    request_headers: RequestHeaders | None = None
    remote_address: NoFields | None = None
    header_value_match: HeaderValueMatch | None = None
    destination_cluster: NoFields | None = None
    # Accepted by the parser, refused in stage 1.
    source_cluster: Any = None
    metadata: Any = None


class RateLimitActions(Model):
    """`actions` make one ordered descriptor (matched against `descriptors`); `setActions`
    one unordered set (matched against `setDescriptors`)."""

    actions: list[Action] = []
    set_actions: list[Action] = []
    # Accepted by the parser, refused in stage 1.
    limit: Any = None
    type: Any = None


class SimpleDescriptor(Model):
    """One entry a set rule needs: `key`, and `value` (none: any value, counted apart)."""

    key: str
    value: str | None = None


class SetDescriptor(Model):
    """A set rule: a request's set-style descriptor matches when it holds every one of
    `simpleDescriptors` (none: every request), whatever else it holds and in any order."""

    simple_descriptors: list[SimpleDescriptor] = []
    rate_limit: RateLimit | None = None
    always_apply: bool = False


class RawRateLimit(Model):
    descriptors: list[Descriptor] = []
    rate_limits: list[RateLimitActions] = []
    set_descriptors: list[SetDescriptor] = []


class RateLimitConfigSpec(Model):
    raw: RawRateLimit


class RateLimitConfig(Resource):
    API_VERSION: ClassVar[str] = "ratelimit.vendor.io/v1alpha1"
    KIND: ClassVar[str] = "RateLimitConfig"
    PLURAL: ClassVar[str] = "ratelimitconfigs"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("rlc",)

    spec: RateLimitConfigSpec


# --- on virtual host and route options -------------------------------------------------------


class RateLimitConfigRefs(Model):
    """`rateLimitConfigs`: the RateLimitConfigs whose `rateLimits` apply here."""

    refs: list[ResourceRef] = []


class LocalRateLimit(Model):
    """`localRatelimit`: a token bucket in each Envoy, no server involved. Checked in
    stage 1 (Envoy refuses a fill interval under 50 ms and an empty bucket)."""

    max_tokens: UInt32
    tokens_per_fill: UInt32 | None = None
    fill_interval: Duration


class RateLimitVhostExtension(Model):
    """Virtual host `ratelimit` / `ratelimitEarly` / `ratelimitRegular`: inline actions,
    matched against Settings `ratelimit`, and a local token bucket."""

    rate_limits: list[RateLimitActions] = []
    local_ratelimit: LocalRateLimit | None = None


class RateLimitRouteExtension(RateLimitVhostExtension):
    """Route `ratelimit` / `ratelimitEarly` / `ratelimitRegular`; `includeVhRateLimits`
    keeps the virtual host's actions of the same place as well as the route's."""

    include_vh_rate_limits: bool = False


class IngressRateLimit(Model):
    """`ratelimitBasic`: per user (the extauth server's user id) and per client address
    (requests without one)."""

    authorized_limits: RateLimit | None = None
    anonymous_limits: RateLimit | None = None


# --- Settings ------------------------------------------------------------------------------


class RateLimitServiceSettings(Model):
    """Settings `ratelimit`: what inline `rateLimits` actions are matched against."""

    descriptors: list[Descriptor] = []
    set_descriptors: list[SetDescriptor] = []


class RateLimitGrpcService(Model):
    """How Envoy's gRPC calls to the server are addressed: `authority` is their `:authority`
    (default: the cluster's name)."""

    authority: str = ""


class RateLimitServerSettings(Model):
    """Settings `ratelimitServer`: the rate-limit server's Upstream and how Envoy calls it."""

    ratelimit_server_ref: ResourceRef | None = None
    request_timeout: Duration = "100ms"
    deny_on_fail: bool = False
    enable_x_ratelimit_headers: bool = False
    rate_limit_before_auth: bool = False
    grpc_service: RateLimitGrpcService | None = None
