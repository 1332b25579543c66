"""The extauth server: Envoy's `ext_authz` gRPC service doing OIDC authorization-code logins.

It owns the login flow (`flow`), the identity provider's metadata, keys and token endpoint
(`oidc`), where sessions live (`sessions`: cookies or Redis), the signed login state
(`state`), and its configuration, which it takes from the control plane over xDS like every
other data-plane component (`config`). It must not import the control plane, the store or
the CLI; the translator must not import it (import-linter enforces both).
"""
