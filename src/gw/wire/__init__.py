"""The contracts the control plane sends over xDS to gw's own servers, and their encoding.

`extauth` (the resolved AuthConfigs, one module per kind of check: `extauth_oidc`, ...) and
`ratelimit` (the RateLimitConfigs' descriptor trees) are frozen dataclasses that the
translator builds and the extauth and rate-limit servers read back; `structs` turns them into
`google.protobuf.Struct`s and back. Both sides import these same types, so they cannot drift
apart, and neither side imports the other.

A leaf: it must not import any other gw package (import-linter enforces it), and this
`__init__` stays empty, so that a server importing `gw.wire.extauth` loads nothing else.
"""
