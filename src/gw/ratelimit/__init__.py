"""The rate-limit server: Envoy's global rate-limit gRPC service, counting in Redis.

It takes its configuration (each RateLimitConfig's descriptor tree, `gw.wire.ratelimit`)
from the control plane over xDS (`config`), finds the limit of each descriptor Envoy sends
(`limits`), and counts hits in fixed windows in Redis (`counter`). Like the extauth server,
it must not import the translator, the API models, the store, the control plane, the CLI or
the extauth server, only `gw.wire` and the xDS client; the translator must not import it
(import-linter).
"""
