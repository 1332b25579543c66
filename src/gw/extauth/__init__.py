"""The extauth server: Envoy's `ext_authz` gRPC service doing OIDC authorization-code logins.

It owns the login flow (`flow`), the identity provider's metadata, keys and token endpoint
(`oidc`), where sessions live (`sessions`: cookies or Redis), the signed login state
(`state`), and its configuration, which it takes from the control plane over xDS like every
other data-plane component (`config`), in the types of `gw.wire.extauth`. It is on the
request path: it must not import the translator, the API models, the store, the control
plane, the CLI or the rate-limit server, only `gw.wire` and the xDS client; the translator
must not import it (import-linter enforces both).
"""
