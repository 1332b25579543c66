"""gw: a declarative API gateway. Resources in a folder or in Kubernetes, Envoy on the wire."""

__version__ = "0.1.0"
