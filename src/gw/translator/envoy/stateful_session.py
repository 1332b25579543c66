"""`ir.StatefulSession` → Envoy's stateful session filter: the upstream host that served a
session is kept in a cookie or a header, and later requests of the session go back to it."""

from __future__ import annotations

from collections.abc import Sequence

from envoy.config.core.v3 import extension_pb2
from envoy.extensions.filters.http.stateful_session.v3 import stateful_session_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.extensions.http.stateful_session.cookie.v3 import cookie_pb2
from envoy.extensions.http.stateful_session.header.v3 import header_pb2
from envoy.type.http.v3 import cookie_pb2 as http_cookie_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.listener_filter import ListenerOnly
from gw.translator.envoy.packing import duration, pack


class StatefulSessionFilter(ListenerOnly):
    name = names.STATEFUL_SESSION

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        session = listener.plugins.stateful_session
        if session is None:
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(build_session(session)))


def build_session(session: ir.StatefulSession) -> stateful_session_pb2.StatefulSession:
    if session.kind == "cookie":
        state = extension_pb2.TypedExtensionConfig(
            name=names.COOKIE_SESSION_STATE,
            typed_config=pack(
                cookie_pb2.CookieBasedSessionState(
                    cookie=http_cookie_pb2.Cookie(
                        name=session.cookie_name,
                        path=session.cookie_path,
                        ttl=duration(session.cookie_ttl_ms),
                    )
                )
            ),
        )
    else:
        state = extension_pb2.TypedExtensionConfig(
            name=names.HEADER_SESSION_STATE,
            typed_config=pack(header_pb2.HeaderBasedSessionState(name=session.header_name)),
        )
    return stateful_session_pb2.StatefulSession(session_state=state, strict=session.strict)
