"""What the HTTP filters of `filters.py` work on and answer with: the request and the route
chosen for it (`Context`), and a filter's own answer (`Stop`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.config.route.v3 import route_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import any_pb2
from google.protobuf.message import Message

from gw.explain.explanation import FilterStep
from gw.explain.paths import PreparedPath
from gw.explain.request import Request


@dataclass(frozen=True, slots=True)
class Stop:
    """A filter answers the request itself (`status`, `body`), or hands the decision to the
    extauth server (`status` None)."""

    by: str
    status: int | None
    body: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    reason: str = ""


@dataclass(slots=True, kw_only=True)
class Context:
    request: Request
    prepared: PreparedPath
    #: None when no route matches (or no virtual host): filters still run, with the
    #: listener's configuration only, before the router answers 404.
    route: rc_pb2.Route | None
    vhost: rc_pb2.VirtualHost | None
    route_config: route_pb2.RouteConfiguration
    now: float
    payloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Headers jwt_authn added from claims, with whether the route is then chosen again.
    claim_headers: list[tuple[str, str]] = field(default_factory=list)
    reselect: bool = False


#: What a filter's handler gives back: its step, and its answer when it answers.
Result = tuple[FilterStep, Stop | None]


def unpack(found: any_pb2.Any | None, message: Message) -> Any:
    if found is None:
        return None
    found.Unpack(message)
    return message


def route_or_listener(
    found: any_pb2.Any | None, listener: hcm_pb2.HttpFilter, message: Message
) -> Any:
    """A filter whose per-route config is its whole config: the route's (`found`), else
    the listener's (`listener.typed_config`), as `message`."""
    if found is not None:
        found.Unpack(message)
    else:
        listener.typed_config.Unpack(message)
    return message
