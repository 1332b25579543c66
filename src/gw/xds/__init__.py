"""The xDS server: state-of-the-world ADS over gRPC, one snapshot per proxy role.

Envoy proxies (and the extauth server) connect here and receive what the translator built.
This package knows nothing of resources or translation: it serves whatever messages it
is given, keyed by type URL and name.
"""
