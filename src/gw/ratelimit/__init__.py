"""The rate-limit server: Envoy's global rate-limit gRPC service, counting in Redis.

It takes its configuration (each RateLimitConfig's descriptor tree) from the control plane
over xDS (`config`), finds the limit of each descriptor Envoy sends (`limits`), and counts
hits in fixed windows in Redis (`counter`). Like the extauth server, it must not import the
control plane, the store or the CLI, and the translator must not import it (import-linter).
"""
