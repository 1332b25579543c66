"""Who is on the other end of an xDS stream, and what it may be served.

A node announces its role (`<namespace>~<name>`) in its metadata; the control plane serves it
that role's snapshot. Nothing else stops a client from announcing the role that holds the
private keys, so the announcement is checked:

- over mutual TLS, the client certificate names the roles its holder may take, as URI SANs
  `urn:gw:role:<namespace>~<name>` (`gw certgen` issues them); a node announcing any other
  role is refused (`PERMISSION_DENIED`), and so is a certificate naming none
  (`UNAUTHENTICATED`);
- on plaintext (loopback only: `gw up`), the role must be one the control plane knows: a
  component of the gateway namespace (`extauth`, `ratelimit`), the default proxy, or a
  proxy it serves (`PERMISSION_DENIED` otherwise, naming the roles it knows).

Then each role gets only the types it needs: the extauth and rate-limit servers their own
configuration (a `google.protobuf.Struct` each), proxies the Envoy types (listeners,
clusters, routes, endpoints, and their TLS secrets). A subscription to anything else ends the
stream with `PERMISSION_DENIED`, so a rate-limit server never receives a private key, and a
proxy never receives an AuthConfig's client secret.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import grpc

from gw import defaults

#: The URI SAN prefix of an xDS client certificate's roles.
ROLE_URI_PREFIX = "urn:gw:role:"
#: The type of the extauth and rate-limit servers' configurations (`gw.wire.structs`).
COMPONENT_TYPE = "type.googleapis.com/google.protobuf.Struct"
ENVOY_TYPE_PREFIX = "type.googleapis.com/envoy."
#: The components of a gateway namespace: `<namespace>~<name>` roles served `COMPONENT_TYPE`.
COMPONENTS = ("extauth", "ratelimit")


def role_uri(role: str) -> str:
    """The URI SAN that lets a certificate's holder take `role`."""
    return ROLE_URI_PREFIX + role


def certificate_roles(auth_context: Mapping[str, Sequence[bytes]]) -> tuple[str, ...] | None:
    """The roles the peer's verified certificate names; None on a plaintext connection."""
    if b"ssl" not in auth_context.get("transport_security_type", ()):
        return None
    uris = (uri.decode(errors="replace") for uri in auth_context.get("peer_uri", ()))
    return tuple(u[len(ROLE_URI_PREFIX) :] for u in uris if u.startswith(ROLE_URI_PREFIX))


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a stream is ended: the gRPC status and a message for the client and the log."""

    code: grpc.StatusCode
    message: str


@dataclass(frozen=True, slots=True)
class NodePolicy:
    """Which nodes the xDS server admits and what each may subscribe to, for the gateway
    namespace `namespace`."""

    namespace: str = defaults.NAMESPACE

    @property
    def components(self) -> frozenset[str]:
        return frozenset(defaults.role(name, self.namespace) for name in COMPONENTS)

    @property
    def default_proxy(self) -> str:
        return defaults.role(defaults.PROXY_NAME, self.namespace)

    def admit(
        self, role: str, certified: tuple[str, ...] | None, proxies: Collection[str]
    ) -> Refusal | None:
        """None when a node announcing `role` may have it: `certified` are the roles of its
        certificate (None on plaintext), `proxies` the proxy roles the control plane serves."""
        if certified is not None:
            if not certified:
                return Refusal(
                    grpc.StatusCode.UNAUTHENTICATED,
                    f"the client certificate names no gw role (a URI SAN {ROLE_URI_PREFIX}"
                    "<namespace>~<name>): issue xDS client certificates with `gw certgen`",
                )
            if role not in certified:
                return Refusal(
                    grpc.StatusCode.PERMISSION_DENIED,
                    f"node announces role {role!r} but its certificate is for "
                    f"{', '.join(repr(r) for r in certified)}",
                )
            return None
        known = {*self.components, self.default_proxy, *proxies}
        if role in known:
            return None
        return Refusal(
            grpc.StatusCode.PERMISSION_DENIED,
            f"role {role!r} is not a proxy or component this control plane serves "
            f"(known: {', '.join(sorted(known))})",
        )

    def refuse_type(self, role: str, type_url: str) -> Refusal | None:
        """None when `role` may subscribe to `type_url`: components their configuration,
        proxies the Envoy types; nothing else, so secrets reach only who needs them."""
        if role in self.components:
            allowed = type_url == COMPONENT_TYPE
        else:
            allowed = type_url.startswith(ENVOY_TYPE_PREFIX)
        if allowed:
            return None
        return Refusal(
            grpc.StatusCode.PERMISSION_DENIED,
            f"role {role!r} may not subscribe to {type_url.removeprefix('type.googleapis.com/')}",
        )
